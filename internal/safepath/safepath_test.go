package safepath

import (
	"path"
	"strings"
	"testing"
)

func TestDest(t *testing.T) {
	for _, tc := range []struct {
		p    string
		into bool
		want string
	}{
		{"/opt/app", false, ""},
		{"/etc/app.conf", false, ""},
		{"/usr/bin", true, ""},
		{"/etc", true, ""},
		{"", false, "is required"},
		{"opt/app", false, "must be absolute"},
		{"/a/../b", false, "must be a clean path (/b:"},
		{"//opt/app", false, "must be a clean path (/opt/app:"},
		{"/opt/app/", false, "must be a clean path (/opt/app:"},
		{"/opt/./app", false, "must be a clean path"},
		{"/", false, "is the root directory"},
		{"/", true, "is the root directory"},
		{"/etc", false, "is a system directory"},
		{"/usr", false, "is a system directory"},
		{"/var/lib", false, "is a system directory"},
		{"/proc/sys/kernel/x", true, "is under /proc, a runtime filesystem"},
		{"/run/app", false, "is under /run"},
		{"/runner", false, ""},
	} {
		if got := Dest(tc.p, tc.into); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("Dest(%q, %v) = %q, want %q", tc.p, tc.into, got, tc.want)
		}
	}
}

// Every system directory is clean, and its parent is one too: no path
// above a system directory is left unprotected.
func TestSystemIsClosedUnderParents(t *testing.T) {
	for _, p := range System {
		if path.Clean(p) != p || !path.IsAbs(p) {
			t.Errorf("%q is not clean", p)
		}
		if p != "/" && !IsSystem(path.Dir(p)) {
			t.Errorf("%q is protected but its parent %q is not", p, path.Dir(p))
		}
	}
}

func TestMode(t *testing.T) {
	for m, want := range map[string]string{
		"": "", "0644": "", "755": "", "0777": "", "0700": "",
		"7777": "sets setuid, setgid or sticky bits", "04755": "sets setuid", "1777": "sticky",
		"rwx": "must be octal", "08": "must be octal", "0": "must be octal", "77777": "must be octal",
	} {
		if got := Mode(m); (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("Mode(%q) = %q, want %q", m, got, want)
		}
	}
}
