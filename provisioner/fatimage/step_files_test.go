package fatimage

import (
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
)

// A symlink entry makes the link (its directory too), replaces a link
// already there, and refuses to replace a real file.
func TestFilesMakeLink(t *testing.T) {
	owner, group := currentOwner(t)
	dir := t.TempDir()
	dst := filepath.Join(dir, "websockify", "run")
	link := func(target string) (string, error) {
		sc := newScript("files")
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

func TestFilesSymlinkValidation(t *testing.T) {
	for _, tc := range []struct {
		f    File
		want string
	}{
		{File{Symlink: "/opt/a/bin/x", Destination: "/opt/x/run"}, ""},
		{File{Symlink: "bin/x", Destination: "/opt/x/run"}, `files[0]: symlink "bin/x" must be an absolute, clean path`},
		{File{Symlink: "/opt/a/../x", Destination: "/opt/x/run"}, `files[0]: symlink "/opt/a/../x" must be an absolute, clean path`},
		{File{Symlink: "/opt/a", Destination: "/opt/x/run", Mode: "0755"}, "files[0]: mode does not apply to a symlink"},
		{File{Symlink: "/opt/a", Content: "x", Destination: "/opt/x/run"}, "files[0]: source, content, directory = true and symlink exclude each other"},
	} {
		errs := validateFiles([]File{tc.f})
		var got []string
		for _, e := range errs {
			got = append(got, e.Error())
		}
		if strings.Join(got, "\n") != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.f, got, tc.want)
		}
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
