package keys

import (
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
)

// The repos' built-in keys come first, staged for both OS majors, then
// the entries; Install is the entries alone; Validate names the entry.
func TestScript(t *testing.T) {
	entries := []GPGKey{{Path: "/etc/pki/rpm-gpg/RPM-GPG-KEY-EPEL-9"}, {Builtin: "RStudio"}}
	DefaultPaths(entries)
	sc, err := Script("/w", []string{"baseos", "epel"}, entries)
	if err != nil || len(sc.Calls) != 3 || len(sc.Staged) != 3 ||
		strings.Join(sc.Calls[0], " ") != "install_builtin_key epel 8 /etc/pki/rpm-gpg/RPM-GPG-KEY-EPEL-8 /w/key-0.el8 9 - -" ||
		strings.Join(sc.Calls[1], " ") != "import_key /etc/pki/rpm-gpg/RPM-GPG-KEY-EPEL-9" || sc.Calls[2][1] != "RStudio" {
		t.Fatalf("script %q (%d staged): %v", sc.Calls, len(sc.Staged), err)
	}
	in, err := Kind{}.Install(content.Env{WorkDir: "/w"}, entries)
	if err != nil || len(in.Calls) != 2 || in.Calls[0][0] != "import_key" {
		t.Errorf("install %q: %v", in.Calls, err)
	}
	if errs := (Kind{}).Validate([]GPGKey{{Path: "/etc/x"}}); len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), `gpg_keys[0]: path "/etc/x" must be a file in /etc/pki/rpm-gpg/`) {
		t.Errorf("validate %v", errs)
	}
}
