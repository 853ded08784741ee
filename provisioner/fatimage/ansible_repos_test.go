package fatimage

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAnsibleReposKeepsPhaseEdits: ansible_repos_off takes out only what
// ansible_repos_on put into dnf.conf, so what the site's roles write
// there during an Ansible phase (the proxy role's proxy=) stays, and a
// phase that writes nothing leaves the file as it was, reposdir included.
func TestAnsibleReposKeepsPhaseEdits(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "dnf.conf")
	secret := filepath.Join(dir, "secret")
	if err := os.MkdirAll(filepath.Join(secret, "repos"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(secret, "repos", "lab.repo"), []byte("[lab]\npassword=pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	phase := filepath.Join(dir, "phase-repos") // /run/fatimage-ansible-repos on the VM
	orig := "[main]\ngpgcheck=1\nreposdir=/srv/site.repos.d\ninstallonly_limit=3\n"
	run := func(during string) string {
		t.Helper()
		if err := os.WriteFile(conf, []byte(orig), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("sh", "-c", scriptBody("repofiles")+"ansible_repos_on\n"+during+"\nansible_repos_off\nansible_repos_off\n")
		cmd.Env = append(os.Environ(), "DNF_CONF="+conf, "FATIMAGE_SECRETDIR="+secret, "FATIMAGE_WORKDIR="+dir, "FATIMAGE_ANSIBLE_REPOS="+phase)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		b, err := os.ReadFile(conf)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// during the phase dnf.conf names the build's repositories only
	// (the script's secret dir goes with its script: the phase reads a
	// root-only copy, removed after)
	during := run(`grep -qx "reposdir=$FATIMAGE_ANSIBLE_REPOS,/etc/yum.repos.d,/etc/yum/repos.d,/etc/distro.repos.d" "$DNF_CONF" &&
! grep -q '^reposdir=/srv' "$DNF_CONF" && rm -rf "$FATIMAGE_SECRETDIR" && grep -qx password=pw "$FATIMAGE_ANSIBLE_REPOS/lab.repo" &&
[ "$(stat -c %a "$FATIMAGE_ANSIBLE_REPOS")" = 700 ]`)
	if _, err := os.Stat(phase); !os.IsNotExist(err) {
		t.Errorf("the phase's repositories left after off: %v", err)
	}
	if during != orig {
		t.Errorf("on, off: %q, want the file as it was %q", during, orig)
	}
	if err := os.MkdirAll(filepath.Join(secret, "repos"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(secret, "repos", "lab.repo"), []byte("[lab]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// the proxy role appends proxy= to [main] (ini_file); it survives
	got := run(`printf 'proxy=http://user:pw@proxy.example:3128\n' >> "$DNF_CONF"`)
	if want := orig + "proxy=http://user:pw@proxy.example:3128\n"; got != want {
		t.Errorf("with the role's line: %q, want %q", got, want)
	}
	if strings.Contains(got, "fatimage") {
		t.Errorf("marker left: %q", got)
	}
}
