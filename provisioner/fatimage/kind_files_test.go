package fatimage

import (
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content/files"
)

// A symlink entry makes the link (its directory too), replaces a link
// already there, and refuses to replace a real file.
func TestFilesMakeLink(t *testing.T) {
	owner, group := currentOwner(t)
	dir := t.TempDir()
	dst := filepath.Join(dir, "websockify", "run")
	link := func(target string) (string, error) {
		sc := newScript(kindBody(files.Kind{}))
		sc.call("make_link", target, dst, owner, group)
		return runLocal(t, dir, sc)
	}
	for _, target := range []string{"/opt/websockify-py39/bin/websockify", "/opt/other/bin/websockify"} {
		if out, err := link(target); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if got, err := os.Readlink(dst); err != nil || got != target {
			t.Fatalf("link %s = %q, %v; want %s", dst, got, err, target)
		}
	}
	if err := os.Remove(dst); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, []byte("a real file"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := link("/opt/websockify-py39/bin/websockify")
	if err == nil || !strings.Contains(out, "!fatimage: files: "+dst+" exists and is not a symbolic link") {
		t.Fatalf("replacing a file: err %v, output:\n%s", err, out)
	}
	if data, _ := os.ReadFile(dst); string(data) != "a real file" {
		t.Errorf("the file was changed: %q", data)
	}
}

// currentOwner is the test process's user and group names, for scripts
// that chown what they make (run here without root's other users).
func currentOwner(t *testing.T) (string, string) {
	t.Helper()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	g, err := user.LookupGroupId(u.Gid)
	if err != nil {
		t.Fatal(err)
	}
	return u.Username, g.Name
}
