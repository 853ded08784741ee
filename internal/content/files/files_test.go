package files

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

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
		errs := Kind{}.Validate([]File{tc.f})
		var got []string
		for _, e := range errs {
			got = append(got, e.Error())
		}
		if strings.Join(got, "\n") != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.f, got, tc.want)
		}
	}
}

// A directory source unpacks with the documented modes.
func TestTarDir(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	for _, err := range []error{
		os.MkdirAll(filepath.Join(src, "roles", "x"), 0o700),
		os.WriteFile(filepath.Join(src, "site.yml"), []byte("a"), 0o600),
		os.WriteFile(filepath.Join(src, "roles", "x", "run.sh"), []byte("b"), 0o700),
		os.Symlink("site.yml", filepath.Join(src, "link.yml")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	data, err := tarDir(src, "0640")
	if err != nil {
		t.Fatal(err)
	}
	tarball := filepath.Join(t.TempDir(), "t.tar")
	if err := os.WriteFile(tarball, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("tar", "-xf", tarball, "-C", dst, "--no-same-owner").CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	for rel, want := range map[string]os.FileMode{"site.yml": 0o640, "roles": 0o755 | os.ModeDir, "roles/x/run.sh": 0o755} {
		st, err := os.Stat(filepath.Join(dst, rel))
		if err != nil || st.Mode()&(os.ModePerm|os.ModeDir) != want {
			t.Errorf("%s: %v %v, want %v", rel, st.Mode(), err, want)
		}
	}
	if l, err := os.Readlink(filepath.Join(dst, "link.yml")); err != nil || l != "site.yml" {
		t.Errorf("symlink %q %v", l, err)
	}
}
