package fatimage

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
	"github.com/stackhpc/packer-plugin-fatimage/internal/content/git"
)

// gitRepo makes a repository with tag v1 at one commit and main past it.
func gitRepo(t *testing.T) (dir, tagCommit, branchCommit string) {
	t.Helper()
	dir = t.TempDir()
	env := append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	run := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "VERSION"), []byte("v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("add", "-A")
	run("commit", "-q", "-m", "v1")
	run("tag", "-a", "-m", "v1", "v1")
	tagCommit = run("rev-parse", "HEAD")
	if err := os.WriteFile(filepath.Join(dir, "VERSION"), []byte("dev\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("commit", "-q", "-am", "dev")
	return dir, tagCommit, run("rev-parse", "HEAD")
}

// TestGitScripts runs the fetch and install scripts locally with the real
// git: a wrong commit pin fails before anything is installed, the
// install checks out the pin, a second install changes nothing.
func TestGitScripts(t *testing.T) {
	repo, tagCommit, _ := gitRepo(t)
	work, dest := t.TempDir(), filepath.Join(t.TempDir(), "opt", "b")
	g := git.GitCheckout{Repo: "https://example.invalid/a/b.git", Tag: "v1", Commit: strings.Repeat("0", 40), Destination: dest}
	fetch := func(g git.GitCheckout) (string, error) {
		return runLocal(t, work, newScript("content", kindBody(git.Kind{})).call("fatimage_git_fetch", "git_checkouts[0]", repo, g.Rev(), g.Commit, git.Staging(work, 0)))
	}
	out, err := fetch(g)
	if err == nil || !strings.Contains(out, "git_checkouts[0]: refs/tags/v1 is at commit "+tagCommit+", want "+g.Commit+"; nothing installed") {
		t.Fatalf("wrong pin: %v\n%s", err, out)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Fatal("destination created by a failed fetch")
	}
	g.Commit = tagCommit
	out, err = fetch(g)
	commits := git.ParseCommits(out, 1)
	if err != nil || commits[0] != tagCommit {
		t.Fatalf("fetch: %v %v\n%s", err, commits, out)
	}
	install := func() string {
		cs, err := git.Kind{}.Install(content.Env{WorkDir: work, Fetched: "fatimage-git-commit git_checkouts[0] " + commits[0]}, []git.GitCheckout{g})
		if err != nil {
			t.Fatal(err)
		}
		out, err := runLocal(t, work, newScript("content").add(kindScript(git.Kind{}, cs)))
		if err != nil {
			t.Fatalf("install: %v\n%s", err, out)
		}
		return out
	}
	if os.Geteuid() != 0 {
		t.Skip("the install chowns to root")
	}
	if out := install(); !strings.Contains(out, "installed "+dest+" at "+tagCommit) {
		t.Fatalf("install:\n%s", out)
	}
	head, _ := exec.Command("git", "-C", dest, "rev-parse", "HEAD").Output()
	origin, _ := exec.Command("git", "-C", dest, "remote", "get-url", "origin").Output()
	if strings.TrimSpace(string(head)) != tagCommit || strings.TrimSpace(string(origin)) != g.Repo {
		t.Fatalf("checkout at %s with origin %s", head, origin)
	}
	// again: unchanged
	if _, err := fetch(g); err != nil {
		t.Fatal(err)
	}
	if out := install(); !strings.Contains(out, "unchanged "+dest) {
		t.Fatalf("second install:\n%s", out)
	}
	// a branch resolves to the branch's commit
	g2 := git.GitCheckout{Branch: "main"}
	out, err = fetch(g2)
	if err != nil || git.ParseCommits(out, 1)[0] == tagCommit {
		t.Fatalf("branch fetch: %v\n%s", err, out)
	}
}
