package gitserver

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCloneAtTag clones over smart HTTP with the real git client: the tag
// is at its own commit, the branch is past it, ids are reproducible.
func TestCloneAtTag(t *testing.T) {
	s, err := Start(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const repo = "stackhpc/slurm-openstack-tools"
	tag, branch := s.Commit(repo, "v3.0"), s.Commit(repo, "main")
	if len(tag) != 40 || len(branch) != 40 || tag == branch {
		t.Fatalf("tag commit %q, branch commit %q", tag, branch)
	}
	dst := filepath.Join(t.TempDir(), "c")
	cmd := exec.Command("git", "clone", "-q", "--depth", "1", "--branch", "v3.0", s.RepoURL(repo), dst)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("clone: %v: %s", err, out)
	}
	out, err := exec.Command("git", "-C", dst, "rev-parse", "HEAD").Output()
	if err != nil || strings.TrimSpace(string(out)) != tag {
		t.Fatalf("HEAD %q (%v), want %s", out, err, tag)
	}
	if v, _ := os.ReadFile(filepath.Join(dst, "VERSION")); string(v) != "v3.0\n" {
		t.Fatalf("VERSION %q", v)
	}

	// a second server over the same directory reuses the repositories,
	// and a fresh one builds the same ids
	s2, err := Start(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.Commit(repo, "v3.0") != tag {
		t.Fatalf("commit ids differ between builds: %s vs %s", s2.Commit(repo, "v3.0"), tag)
	}

	s.SetAvailable(false)
	if err := exec.Command("git", "ls-remote", s.RepoURL(repo)).Run(); err == nil {
		t.Fatal("ls-remote succeeded while the server is switched off")
	}
}
