package bench

import (
	"strings"
	"sync"
	"time"
)

// stampWriter stamps each complete line written to it as it arrives, as
// Build does for packer's output: the in-process provisioner's steps are
// timed from its own UI lines the same way.
type stampWriter struct {
	mu      sync.Mutex
	partial strings.Builder
	lines   []Line
}

func (s *stampWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	rest := string(p)
	for {
		l, after, ok := strings.Cut(rest, "\n")
		if !ok {
			s.partial.WriteString(l)
			return len(p), nil
		}
		s.partial.WriteString(l)
		s.lines = append(s.lines, Line{At: now, Text: s.partial.String()})
		s.partial.Reset()
		rest = after
	}
}

// Lines are the complete lines written so far.
func (s *stampWriter) Lines() []Line {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Line(nil), s.lines...)
}

// The sbom step's headline and the next step's ("final", always run
// after it): the step's time is between them. The lines in between
// ("fatimage: changes: ...") are the step's own.
const (
	sbomStepMark  = "fatimage: sbom and change report"
	afterSBOMMark = "fatimage: done: "
)

// StepSpan is the time from the first line containing from to the first
// later line containing to; ok is false when either is missing.
func StepSpan(lines []Line, from, to string) (d time.Duration, ok bool) {
	var start time.Time
	for _, l := range lines {
		switch {
		case start.IsZero() && strings.Contains(l.Text, from):
			start = l.At
		case !start.IsZero() && strings.Contains(l.Text, to):
			return l.At.Sub(start), true
		}
	}
	return 0, false
}

// StepTimes sums the in-process provisioner's output by headline: each
// "fatimage: <name>[: detail]" line starts a span lasting until the next
// such line, counted under <name> (the last line has no end).
func StepTimes(lines []Line) map[string]time.Duration {
	m := map[string]time.Duration{}
	var cur string
	var at time.Time
	for _, l := range lines {
		text, ok := strings.CutPrefix(l.Text, "fatimage: ")
		if !ok {
			continue
		}
		if cur != "" {
			m[cur] += l.At.Sub(at)
		}
		cur, _, _ = strings.Cut(text, ":")
		at = l.At
	}
	return m
}

// largestGap names the headline outside the sbom step whose time grew
// most from without to with: where a difference between the two runs'
// provisioning went, when it is not the step's.
func largestGap(without, with []Line) (string, time.Duration) {
	a, b := StepTimes(without), StepTimes(with)
	var name string
	var gap time.Duration
	for n, d := range b {
		if n == "sbom and change report" || n == "changes" || strings.HasPrefix(n, "previous_manifest") {
			continue
		}
		if g := d - a[n]; g > gap {
			name, gap = n, g
		}
	}
	return name, gap
}
