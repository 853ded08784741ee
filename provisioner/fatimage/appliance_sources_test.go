package fatimage

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestForeignSourceSections: foreign_source_sections names the sections
// of the image's repository files that dnf download --source enables for
// the build's enabled repositories (ID-source, and NAME-source-rpms for
// NAME-rpms), leaving out those dnf skips when unreachable and those of
// repositories the build does not enable; sourcesHint names them all,
// with the role and the fix.
func TestForeignSourceSections(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"rocky.repo": "[baseos-source]\nmirrorlist=https://mirrors.rockylinux.org/x\nenabled=0\n\n" +
			"[appstream-source]\nenabled=0\nskip_if_unavailable = True\n\n[plus-source]\nenabled=0\n",
		"epel.repo":  "[epel]\nenabled=0\n[epel-source]\nenabled=0\n",
		"rhel.repo":  "[codeready-builder-for-rhel-9-x86_64-source-rpms]\nenabled=0\n",
		"empty.repo": "",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("sh", "-eu", "-c", scriptBody("repofiles")+`foreign_source_sections "$@"`, "sh",
		"baseos", "appstream", "epel", "codeready-builder-for-rhel-9-x86_64-rpms", "OpenHPC")
	cmd.Env = append(os.Environ(), "REPOS_D="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := "epel.repo [epel-source]\nrhel.repo [codeready-builder-for-rhel-9-x86_64-source-rpms]\nrocky.repo [baseos-source]\n"
	if string(out) != want {
		t.Errorf("foreign_source_sections printed\n%s\nwant\n%s", out, want)
	}
	hint := sourcesHint("slurm_recompile", "noise\n"+string(out))
	for _, s := range []string{"role slurm_recompile: its dnf download --source", "epel.repo [epel-source], rhel.repo [codeready-builder-for-rhel-9-x86_64-source-rpms], rocky.repo [baseos-source];",
		"give the snapshots' source repositories in repos"} {
		if !strings.Contains(hint, s) {
			t.Errorf("hint lacks %q: %s", s, hint)
		}
	}
	if strings.Contains(hint, "noise") || sourcesHint("slurm_recompile", "nothing\n") != "" {
		t.Errorf("hint from other output: %q", hint)
	}
}
