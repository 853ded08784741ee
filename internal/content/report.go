package content

import (
	"fmt"
	"strings"
)

// Reports reads the "<marker> <option>[i] <value>" lines a kind's calls
// print for n items (a commit, a sha256); a value ok rejects is left "".
func Reports(out, marker, option string, n int, ok func(string) bool) []string {
	vals := make([]string, n)
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) != 3 || f[0] != marker || !ok(f[2]) {
			continue
		}
		var i int
		if _, err := fmt.Sscanf(f[1], option+"[%d]", &i); err == nil && i >= 0 && i < n {
			vals[i] = f[2]
		}
	}
	return vals
}

// RequireReports fails naming the first item Reports found no value
// for: a script that exited 0 without reporting is a bug, not a result.
func RequireReports(vals []string, option, why string) error {
	for i, v := range vals {
		if v == "" {
			return fmt.Errorf("%s[%d]: %s", option, i, why)
		}
	}
	return nil
}

// Tail is the last n lines of s.
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
