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
