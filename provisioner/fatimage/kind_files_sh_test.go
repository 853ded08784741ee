package fatimage

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content/files"
)

// files.sh under the steps' umask 077: the parents a file, directory or
// link needs are made 0755 (a modulefile's new directories must be
// readable by every user), and an existing parent keeps its mode.
func TestFilesShParentsReadable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root (install -o root)")
	}
	root := t.TempDir()
	kept := filepath.Join(root, "kept")
	if err := os.Mkdir(kept, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(kept, 0o750); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(root, "upload")
	if err := os.WriteFile(src, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := files.Kind{}.Shell() + `
umask 077
place_file "$1" "$2/a/b/modulefile" root root 0644
make_dir "$2/c/d" root root 0755
make_link /target "$2/e/f/link" root root
make_link /target "$2/kept/link" root root
`
	if out, err := exec.Command("sh", "-c", script, "sh", src, root).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for dir, want := range map[string]os.FileMode{"a": 0o755, "a/b": 0o755, "c": 0o755, "c/d": 0o755, "e/f": 0o755, "kept": 0o750} {
		fi, err := os.Stat(filepath.Join(root, dir))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %o, want %o", dir, got, want)
		}
	}
}
