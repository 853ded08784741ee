package fatimage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content/lines"
)

// TestLineEditScript runs the edits with the real sh and awk on files
// shaped like the ones the built-in groups edit.
func TestLineEditScript(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tuned := write("tuned.conf", "[main]\nsummary=HPC\ninclude=latency-performance\n\n[vm]\ntransparent_hugepages=always\n\n[sysctl]\n# keep free memory\nvm.min_free_kbytes = 135168\nkernel.numa_balancing=0\n\n[disk]\nreadahead=>4096\n", 0o644)
	noSection := write("nosec.conf", "[main]\nx=1\n", 0o644)
	profile := write("profile", "pathmunge () {\n:\n}\nHOSTNAME=$(/usr/bin/hostnamectl --transient 2>/dev/null) || \\\nHOSTNAME=$(/usr/bin/hostname 2>/dev/null) || \\\nHOSTNAME=$(/usr/bin/uname -n)\nexport HOSTNAME\n", 0o600)
	shlocal := write("sh.local", "# local settings\n", 0o644)
	cudaLine := "export PATH=$PATH:$(ls -1d /usr/local/cuda-* | sort -V | tail -1)/bin"
	edits := []lines.LineEdit{
		{Path: tuned, Section: "sysctl", Regexp: `^vm\.min_free_kbytes[[:space:]]*=`, Line: "vm.min_free_kbytes=>135168"},
		{Path: tuned, Section: "vm", Regexp: `^readahead=`, Line: "readahead=1"}, // [disk]'s is not [vm]'s
		{Path: noSection, Section: "sysctl", Regexp: `^vm\.x=`, Line: "vm.x=1"},
		{Path: profile, Regexp: `^HOSTNAME=\$\(/usr/bin/hostnamectl --transient`, Absent: true},
		{Path: shlocal, Line: cudaLine},
		{Path: shlocal, Line: cudaLine + " "}, // a second, different line
		{Path: filepath.Join(dir, "new", "created"), Line: "made", Create: true},
	}
	run := func() string {
		out, err := runLocal(t, dir, installScript(t, lines.Kind{}, edits))
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return out
	}
	run()
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for p, want := range map[string]string{
		tuned:                                "[main]\nsummary=HPC\ninclude=latency-performance\n\n[vm]\ntransparent_hugepages=always\nreadahead=1\n\n[sysctl]\n# keep free memory\nvm.min_free_kbytes=>135168\nkernel.numa_balancing=0\n\n[disk]\nreadahead=>4096\n",
		noSection:                            "[main]\nx=1\n[sysctl]\nvm.x=1\n",
		profile:                              "pathmunge () {\n:\n}\nHOSTNAME=$(/usr/bin/hostname 2>/dev/null) || \\\nHOSTNAME=$(/usr/bin/uname -n)\nexport HOSTNAME\n",
		shlocal:                              "# local settings\n" + cudaLine + "\n" + cudaLine + " \n",
		filepath.Join(dir, "new", "created"): "made\n",
	} {
		if got := read(p); got != want {
			t.Errorf("%s:\n got %q\nwant %q", filepath.Base(p), got, want)
		}
	}
	if st, _ := os.Stat(profile); st.Mode().Perm() != 0o600 {
		t.Errorf("profile mode %v: an edit must keep the file's mode", st.Mode().Perm())
	}
	// idempotent: a second run changes nothing
	if out := run(); strings.Contains(out, "edited ") {
		t.Errorf("second run edited again:\n%s", out)
	}
	// a missing file fails naming the edit and the file
	missing := []lines.LineEdit{{Path: filepath.Join(dir, "absent.conf"), Line: "x"}}
	out, err := runLocal(t, dir, installScript(t, lines.Kind{}, missing))
	if err == nil || !strings.Contains(out, "!fatimage: line_edits[0]: "+filepath.Join(dir, "absent.conf")+" does not exist") {
		t.Errorf("missing file: err %v\n%s", err, out)
	}
}
