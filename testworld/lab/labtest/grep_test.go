package labtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

// TestGrepAsRoot runs the command with this host's sh, grep and sudo: a
// match and no match succeed (printing the match), a missing path and a
// refused sudo fail.
func TestGrepAsRoot(t *testing.T) {
	needs.Tools(t, "sh", "grep", "sudo", "setpriv")
	needs.Root(t, "running sudo as root and as another user")
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.repo"), []byte("enabled=0\npassword='it''s'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, args, want string
		fails, other     bool
	}{
		{name: "match", args: "-rlF -e " + ShQuote("password='it''s'") + " " + dir, want: filepath.Join(dir, "a.repo")},
		{name: "no match", args: "-rlE '^enabled=1' " + dir},
		{name: "missing path", args: "-rlE '^enabled=1' " + filepath.Join(dir, "missing"), fails: true},
		{name: "sudo refused", args: "-rlE '^enabled=1' " + dir, fails: true, other: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			argv := []string{"sh", "-c", GrepAsRoot(tc.args)}
			if tc.other {
				argv = append([]string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}, argv...)
			}
			out, err := exec.Command(argv[0], argv[1:]...).Output()
			if tc.fails != (err != nil) {
				t.Fatalf("err %v, want failure %v (output %q)", err, tc.fails, out)
			}
			if !tc.fails && strings.TrimSpace(string(out)) != tc.want {
				t.Errorf("output %q, want %q", out, tc.want)
			}
		})
	}
}
