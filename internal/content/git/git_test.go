package git

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
)

// On the VM: a fetch call per checkout, a warning for a branch, the
// owners; the install refuses to run without the commit the fetch
// reported, and the record carries it.
func TestFetchInstallRecord(t *testing.T) {
	gs := []GitCheckout{{Repo: "https://h/a.git", Tag: "v1", Destination: "/opt/a", Owner: "app"}, {Repo: "https://h/b.git", Branch: "main", Destination: "/opt/b"}}
	f, err := Kind{}.Fetch(context.Background(), content.Env{WorkDir: "/w", Source: "vm"}, gs)
	if err != nil || len(f.Script.Calls) != 2 || f.Script.Calls[0][3] != "refs/tags/v1" || f.Script.Calls[1][3] != "refs/remotes/origin/main" ||
		len(f.Warnings) != 1 || !strings.HasPrefix(f.Warnings[0], "git_checkouts[1]: branch main of https://h/b.git is not reproducible") ||
		len(f.Owners) != 2 || f.Owners[0].User != "app" || f.Owners[0].Group != "app" || len(f.Uploads) != 0 {
		t.Fatalf("fetch %+v: %v", f, err)
	}
	c1, c2 := strings.Repeat("a", 40), strings.Repeat("b", 40)
	out := "fatimage-git-commit git_checkouts[0] " + c1 + "\n"
	if err := f.Check(out); err == nil || err.Error() != "git_checkouts[1]: the fetch did not report a commit" {
		t.Errorf("check: %v", err)
	}
	if _, err := (Kind{}).Install(content.Env{WorkDir: "/w", Fetched: out}, gs); err == nil {
		t.Error("install without a commit")
	}
	out += "fatimage-git-commit git_checkouts[1] " + c2 + "\n"
	sc, err := Kind{}.Install(content.Env{WorkDir: "/w", Fetched: out}, gs)
	if err != nil || len(sc.Calls) != 2 || sc.Calls[1][3] != c2 || sc.Calls[1][2] != "/w/git-1" {
		t.Errorf("install %q: %v", sc.Calls, err)
	}
	r, err := Kind{}.Record(content.Env{Fetched: out}, gs)
	if rec, _ := r["git"].(map[string]Record); err != nil || rec["/opt/b"] != (Record{Repo: "https://h/b.git", Ref: "main", Commit: c2}) {
		t.Errorf("record %+v: %v", r, err)
	}
}

// On the host: the pin is checked in the host's mirror before anything
// is uploaded; a right one gives a bundle to upload, removed after.
func TestFetchHost(t *testing.T) {
	t.Setenv("PACKER_CACHE_DIR", t.TempDir())
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	repo := t.TempDir()
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	git("commit", "-q", "--allow-empty", "-m", "one")
	git("tag", "v1")
	commit := git("rev-parse", "HEAD")
	var said []string
	henv := content.Env{WorkDir: "/w", Source: "host", Say: func(l string) { said = append(said, l) }}
	g := GitCheckout{Repo: repo, Tag: "v1", Commit: strings.Repeat("0", 40), Destination: "/opt/a"}
	if _, err := (Kind{}).Fetch(context.Background(), henv, []GitCheckout{g}); err == nil || !strings.Contains(err.Error(), "git_checkouts[0]: v1 is at commit "+commit+", want "+g.Commit+"; nothing installed") {
		t.Fatalf("wrong pin: %v", err)
	}
	g.Commit = commit
	f, err := Kind{}.Fetch(context.Background(), henv, []GitCheckout{g})
	if err != nil || len(f.Uploads) != 1 || f.Uploads[0].Dst != "/w/git-0.bundle" || !f.Uploads[0].Remove || f.Script.Calls[0][2] != "/w/git-0.bundle" {
		t.Fatalf("fetch %+v: %v", f, err)
	}
	if _, err := os.Stat(f.Uploads[0].Path); err != nil {
		t.Fatal(err)
	}
	content.RemoveUploads(f.Uploads)
	if _, err := os.Stat(f.Uploads[0].Path); !os.IsNotExist(err) {
		t.Errorf("bundle left: %v", err)
	}
	if len(said) != 2 || !strings.HasPrefix(said[0], "cloning ") || !strings.HasPrefix(said[1], "updating the host's mirror") {
		t.Errorf("said %q", said)
	}
}
