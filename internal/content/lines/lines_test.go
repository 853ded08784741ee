package lines

import (
	"strings"
	"testing"
)

func TestLineEditValidation(t *testing.T) {
	var k Kind
	for _, tc := range []struct {
		edit LineEdit
		want string // "" = valid
	}{
		{LineEdit{Path: "/etc/profile", Regexp: "^HOSTNAME=", Absent: true}, ""},
		{LineEdit{Path: "/etc/profile.d/sh.local", Line: "export PATH=$PATH"}, ""},
		{LineEdit{Path: "/usr/lib/tuned/hpc-compute/tuned.conf", Section: "sysctl", Regexp: `^vm\.min_free_kbytes[[:space:]]*=`, Line: "vm.min_free_kbytes=>135168"}, ""},
		{LineEdit{Path: "etc/profile", Line: "x"}, `path "etc/profile" must be a clean absolute path`},
		{LineEdit{Path: "/etc/x", Regexp: `a\s+b`, Line: "x"}, "is not a POSIX extended regular expression"},
		{LineEdit{Path: "/etc/x", Regexp: "(", Line: "x"}, "is not a POSIX extended regular expression"},
		{LineEdit{Path: "/etc/x", Absent: true}, "absent needs regexp"},
		{LineEdit{Path: "/etc/x", Regexp: "a", Line: "x", Absent: true}, "line and absent are exclusive"},
		{LineEdit{Path: "/etc/x", Regexp: "a"}, "line is required"},
		{LineEdit{Path: "/etc/x", Line: "a\nb"}, "line must be one line"},
		{LineEdit{Path: "/etc/x", Line: "a", Section: "[sysctl]"}, "must be a plain INI section name"},
		{LineEdit{Path: "/etc/x", Regexp: "a", Absent: true, Create: true}, "create with absent"},
	} {
		errs := k.Validate([]LineEdit{tc.edit})
		if tc.want == "" {
			if len(errs) > 0 {
				t.Errorf("%+v: unexpected %v", tc.edit, errs)
			}
			continue
		}
		if len(errs) == 0 || !strings.Contains(errs[0].Error(), tc.want) || !strings.HasPrefix(errs[0].Error(), "line_edits[0]: ") {
			t.Errorf("%+v: got %v, want line_edits[0]: ...%s", tc.edit, errs, tc.want)
		}
	}
	dup := []LineEdit{{Path: "/etc/x", Line: "a"}, {Path: "/etc/x", Line: "a"}}
	if errs := k.Validate(dup); len(errs) != 1 || !strings.Contains(errs[0].Error(), "line_edits[1]: edits the same line of /etc/x as line_edits[0]") {
		t.Errorf("duplicate: %v", errs)
	}
}
