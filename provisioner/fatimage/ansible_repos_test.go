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
	orig := "[main]\ngpgcheck=1\nreposdir=/srv/site.repos.d\ninstallonly_limit=3\n"
	run := func(during string) string {
		t.Helper()
		if err := os.WriteFile(conf, []byte(orig), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("sh", "-c", scriptBody("repofiles")+"ansible_repos_on\n"+during+"\nansible_repos_off\nansible_repos_off\n")
		cmd.Env = append(os.Environ(), "DNF_CONF="+conf, "FATIMAGE_SECRETDIR="+secret, "FATIMAGE_WORKDIR="+dir)
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
	during := run(`grep -qx "reposdir=$FATIMAGE_SECRETDIR/repos,/etc/yum.repos.d,/etc/yum/repos.d,/etc/distro.repos.d" "$DNF_CONF" &&
! grep -q '^reposdir=/srv' "$DNF_CONF"`)
	if during != orig {
		t.Errorf("on, off: %q, want the file as it was %q", during, orig)
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
