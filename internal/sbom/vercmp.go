package sbom

import (
	"strconv"
	"strings"
)

// Vercmp compares two version (or release) strings as rpm's rpmvercmp
// does: -1, 0 or 1. The strings are split into runs of ASCII digits and
// of ASCII letters, other characters only separating them; numeric runs
// compare as numbers (leading zeros ignored) and beat alphabetic ones;
// '~' sorts before anything, even the end of the string (1.0~rc1 <
// 1.0), and '^' after the end of the string but before anything else
// (1.0 < 1.0^git1 < 1.0.1).
func Vercmp(a, b string) int {
	if a == b {
		return 0
	}
	for len(a) > 0 || len(b) > 0 {
		a, b = strings.TrimLeftFunc(a, isSeparator), strings.TrimLeftFunc(b, isSeparator)
		if c, done := compareMarks(&a, &b); done {
			return c
		} else if c == 2 {
			continue
		}
		if a == "" || b == "" {
			break
		}
		isNum := isDigit(rune(a[0]))
		run := isAlpha
		if isNum {
			run = isDigit
		}
		sa, sb := leading(a, run), leading(b, run)
		a, b = a[len(sa):], b[len(sb):]
		if sb == "" { // different kinds of run: a number beats letters
			if isNum {
				return 1
			}
			return -1
		}
		if c := compareRun(sa, sb, isNum); c != 0 {
			return c
		}
	}
	switch {
	case a == "" && b == "":
		return 0
	case a != "":
		return 1
	}
	return -1
}

// compareMarks handles '~' and '^' at the heads of a and b: done with
// the result when they decide, or c == 2 when both were consumed.
func compareMarks(a, b *string) (c int, done bool) {
	ha, hb := head(*a), head(*b)
	if ha == '~' || hb == '~' {
		if ha != '~' {
			return 1, true
		}
		if hb != '~' {
			return -1, true
		}
		*a, *b = (*a)[1:], (*b)[1:]
		return 2, false
	}
	if ha == '^' || hb == '^' {
		switch {
		case *a == "":
			return -1, true
		case *b == "":
			return 1, true
		case ha != '^':
			return 1, true
		case hb != '^':
			return -1, true
		}
		*a, *b = (*a)[1:], (*b)[1:]
		return 2, false
	}
	return 0, false
}

func compareRun(sa, sb string, isNum bool) int {
	if isNum {
		sa, sb = strings.TrimLeft(sa, "0"), strings.TrimLeft(sb, "0")
		if len(sa) != len(sb) {
			if len(sa) > len(sb) {
				return 1
			}
			return -1
		}
	}
	return strings.Compare(sa, sb)
}

func head(s string) byte {
	if s == "" {
		return 0
	}
	return s[0]
}

func leading(s string, f func(rune) bool) string {
	i := 0
	for i < len(s) && f(rune(s[i])) {
		i++
	}
	return s[:i]
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }
func isAlpha(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }
func isSeparator(r rune) bool {
	return !isDigit(r) && !isAlpha(r) && r != '~' && r != '^'
}

// EVR is an RPM's epoch, version and release. Epoch "" is unknown (a
// manifest's `rpm -qa` names omit it) and compares as equal to any.
type EVR struct {
	Epoch, Version, Release string
}

// Compare orders two EVRs as rpm does: epoch numerically (an unknown
// epoch on either side is skipped), then version, then release.
func (e EVR) Compare(o EVR) int {
	if e.Epoch != "" && o.Epoch != "" {
		x, _ := strconv.Atoi(e.Epoch)
		y, _ := strconv.Atoi(o.Epoch)
		if x != y {
			if x > y {
				return 1
			}
			return -1
		}
	}
	if c := Vercmp(e.Version, o.Version); c != 0 {
		return c
	}
	return Vercmp(e.Release, o.Release)
}

// String is [epoch:]version-release, the epoch only when not 0 or unknown.
func (e EVR) String() string {
	s := e.Version + "-" + e.Release
	if e.Epoch != "" && e.Epoch != "0" {
		s = e.Epoch + ":" + s
	}
	return s
}
