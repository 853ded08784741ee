package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

// Table is a figure printed side by side.
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
	Notes  []string
}

// Print writes t as an aligned text table.
func (t *Table) Print(w io.Writer) {
	width := make([]int, len(t.Header))
	for _, r := range append([][]string{t.Header}, t.Rows...) {
		for i, c := range r {
			if i < len(width) && len(c) > width[i] {
				width[i] = len(c)
			}
		}
	}
	line := func(r []string) string {
		var b strings.Builder
		for i, c := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			fmt.Fprintf(&b, "%-*s", width[i], c)
		}
		return strings.TrimRight(b.String(), " ")
	}
	fmt.Fprintf(w, "\n== %s\n%s\n", t.Title, line(t.Header))
	for _, r := range t.Rows {
		fmt.Fprintln(w, line(r))
	}
	for _, n := range t.Notes {
		fmt.Fprintln(w, "   "+n)
	}
	fmt.Fprintln(w)
}

// median is the result with the median wall time (the lower middle one
// of an even count).
func median(rs []Result) Result {
	if len(rs) == 0 {
		return Result{}
	}
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b Result) int { return int(a.Wall - b.Wall) })
	return s[(len(s)-1)/2]
}

// MedianDuration is the median of ds.
func MedianDuration(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// Packages lists v's installed packages (name-version-release.arch), sorted.
func (v *VM) Packages(tb testing.TB) []string {
	tb.Helper()
	return strings.Fields(v.Run(tb, "rpm -qa | LC_ALL=C sort"))
}

// diff names what is only in a or only in b.
func diff(a, b []string) string {
	var onlyA, onlyB []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			onlyA = append(onlyA, x)
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			onlyB = append(onlyB, x)
		}
	}
	return fmt.Sprintf("only in the provisioner's: %v; only in this one: %v", onlyA, onlyB)
}
