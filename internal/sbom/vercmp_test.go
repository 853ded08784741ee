package sbom

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// vercmpCases are rpm's documented rpmvercmp behaviour (its tests/rpmvercmp.at
// table and the tilde/caret rules of the rpm spec format docs), written
// out here as (a, b, want).
var vercmpCases = []struct {
	a, b string
	want int
}{
	{"1.0", "1.0", 0}, {"1.0", "2.0", -1}, {"2.0", "1.0", 1},
	{"2.0.1", "2.0.1", 0}, {"2.0", "2.0.1", -1}, {"2.0.1", "2.0", 1},
	{"2.0.1a", "2.0.1a", 0}, {"2.0.1a", "2.0.1", 1}, {"2.0.1", "2.0.1a", -1},
	{"5.5p1", "5.5p1", 0}, {"5.5p1", "5.5p2", -1}, {"5.5p2", "5.5p1", 1},
	{"5.5p10", "5.5p10", 0}, {"5.5p1", "5.5p10", -1}, {"5.5p10", "5.5p1", 1},
	{"10xyz", "10.1xyz", -1}, {"10.1xyz", "10xyz", 1},
	{"xyz10", "xyz10", 0}, {"xyz10", "xyz10.1", -1}, {"xyz10.1", "xyz10", 1},
	{"xyz.4", "xyz.4", 0}, {"xyz.4", "8", -1}, {"8", "xyz.4", 1},
	{"xyz.4", "2", -1}, {"2", "xyz.4", 1},
	{"5.5p2", "5.6p1", -1}, {"5.6p1", "5.5p2", 1},
	{"5.6p1", "6.5p1", -1}, {"6.5p1", "5.6p1", 1},
	{"6.0.rc1", "6.0", 1}, {"6.0", "6.0.rc1", -1},
	{"10b2", "10a1", 1}, {"10a2", "10b2", -1},
	{"1.0aa", "1.0aa", 0}, {"1.0a", "1.0aa", -1}, {"1.0aa", "1.0a", 1},
	{"10.0001", "10.0001", 0}, {"10.0001", "10.1", 0}, {"10.1", "10.0001", 0},
	{"10.0001", "10.0039", -1}, {"10.0039", "10.0001", 1},
	{"4.999.9", "5.0", -1}, {"5.0", "4.999.9", 1},
	{"20101121", "20101121", 0}, {"20101121", "20101122", -1}, {"20101122", "20101121", 1},
	{"2_0", "2_0", 0}, {"2.0", "2_0", 0}, {"2_0", "2.0", 0},
	{"a", "a", 0}, {"a+", "a+", 0}, {"a+", "a_", 0}, {"a_", "a+", 0},
	{"+a", "+a", 0}, {"+a", "_a", 0}, {"_a", "+a", 0},
	{"+_", "+_", 0}, {"_+", "+_", 0}, {"_+", "_+", 0},
	{"+", "_", 0}, {"_", "+", 0},
	{"1.0~rc1", "1.0~rc1", 0}, {"1.0~rc1", "1.0", -1}, {"1.0", "1.0~rc1", 1},
	{"1.0~rc1", "1.0~rc2", -1}, {"1.0~rc2", "1.0~rc1", 1},
	{"1.0~rc1~git123", "1.0~rc1~git123", 0}, {"1.0~rc1~git123", "1.0~rc1", -1},
	{"1.0~rc1", "1.0~rc1~git123", 1},
	{"1.0^", "1.0^", 0}, {"1.0^", "1.0", 1}, {"1.0", "1.0^", -1},
	{"1.0^git1", "1.0^git1", 0}, {"1.0^git1", "1.0", 1}, {"1.0", "1.0^git1", -1},
	{"1.0^git1", "1.0^git2", -1}, {"1.0^git2", "1.0^git1", 1},
	{"1.0^git1", "1.01", -1}, {"1.01", "1.0^git1", 1},
	{"1.0^20160101", "1.0^20160101", 0}, {"1.0^20160101", "1.0.1", -1},
	{"1.0.1", "1.0^20160101", 1},
	{"1.0^20160101^git1", "1.0^20160101^git1", 0},
	{"1.0^20160102", "1.0^20160101^git1", 1}, {"1.0^20160101^git1", "1.0^20160102", -1},
	{"1.0~rc1^git1", "1.0~rc1^git1", 0}, {"1.0~rc1^git1", "1.0~rc1", 1},
	{"1.0~rc1", "1.0~rc1^git1", -1},
	{"1.0^git1~pre", "1.0^git1~pre", 0}, {"1.0^git1", "1.0^git1~pre", 1},
	{"1.0^git1~pre", "1.0^git1", -1},
	// not in rpm's table: multi-run and leading-zero corners
	{"1.el9_4", "1.el9", 1}, {"503.40.1.el9_4", "503.11.1.el9_4", 1},
	{"0.1", "0.01", 0}, {"", "", 0}, {"", "1", -1}, {"1", "", 1}, {"~", "", -1},
}

func TestVercmp(t *testing.T) {
	for _, c := range vercmpCases {
		if got := Vercmp(c.a, c.b); got != c.want {
			t.Errorf("Vercmp(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// TestVercmpAgainstRPM runs every case, and each reversed, through the
// host's rpm (rpm.vercmp in its Lua), so the table cannot drift from rpm.
func TestVercmpAgainstRPM(t *testing.T) {
	rpmBin, err := exec.LookPath("rpm")
	if err != nil {
		if os.Getenv("FATIMAGE_E2E") == "1" {
			t.Fatal("rpm is required (scripts/deps.sh installs it)")
		}
		t.Skip("rpm not installed")
	}
	var lua strings.Builder
	var pairs [][2]string
	for _, c := range vercmpCases {
		if c.a == "" || c.b == "" {
			continue // rpm.vercmp refuses an empty version
		}
		for _, p := range [][2]string{{c.a, c.b}, {c.b, c.a}} {
			pairs = append(pairs, p)
			fmt.Fprintf(&lua, "print(rpm.vercmp(%q, %q), \" \") ", p[0], p[1])
		}
	}
	out, err := exec.Command(rpmBin, "--eval", "%{lua: "+lua.String()+"}").CombinedOutput()
	if err != nil {
		t.Fatalf("rpm --eval: %v: %s", err, out)
	}
	got := strings.Fields(string(out))
	if len(got) != len(pairs) {
		t.Fatalf("rpm printed %d results for %d pairs: %s", len(got), len(pairs), out)
	}
	for i, p := range pairs {
		if want := fmt.Sprint(Vercmp(p[0], p[1])); got[i] != want {
			t.Errorf("Vercmp(%q, %q) = %s, rpm says %s", p[0], p[1], want, got[i])
		}
	}
}

func TestEVRCompare(t *testing.T) {
	for _, c := range []struct {
		a, b EVR
		want int
	}{
		{EVR{"1", "1.0", "1"}, EVR{"0", "9.0", "1"}, 1},
		{EVR{"", "1.0", "1"}, EVR{"2", "1.0", "1"}, 0}, // unknown epoch
		{EVR{"0", "1.0", "1.el9"}, EVR{"0", "1.0", "2.el9"}, -1},
		{EVR{"0", "1.0", "1.el9"}, EVR{"", "1.0", "1.el9"}, 0},
	} {
		if got := c.a.Compare(c.b); got != c.want {
			t.Errorf("%v vs %v: %d, want %d", c.a, c.b, got, c.want)
		}
	}
	if s := (EVR{"2", "1.0", "3"}).String(); s != "2:1.0-3" {
		t.Errorf("String = %q", s)
	}
}
