package fatimage

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The appliance's cleanup items 8 (scanner-triggering files) and 9 (the
// rclone stub), run with the real sh on a directory standing for /.
func TestCleanupScannerFilesAndRcloneStub(t *testing.T) {
	root, work := t.TempDir(), t.TempDir()
	flagged := []string{
		"opt/ood/ondemand/root/usr/share/gems/3.3/ondemand/4.1.4-1/gems/bootstrap_form-2.7.0/test/dummy/Gemfile.lock",
		"opt/ood/ondemand/root/usr/share/gems/3.3/ondemand/4.1.4-1/gems/bootstrap_form-5.0.0/demo/yarn.lock",
		"var/www/ood/apps/sys/dashboard/node_modules/data-confirm-modal/Gemfile.lock",
		"etc/ansible-init/playbooks/roles/mrlesmithjr.chrony/poetry.lock",
		"etc/ansible-init/playbooks/roles/mrlesmithjr.chrony/requirements-dev.txt",
		"usr/lib/ansible-init/lib/python3.9/site-packages/ansible_collections/netbox/netbox/poetry.lock",
		"var/www/ood/apps/sys/dashboard/node_modules/@esbuild/linux-x64/bin/esbuild",
		"usr/lib/rstudio-server/bin/quarto/bin/tools/x86_64/esbuild",
	}
	kept := []string{
		"opt/ood/ondemand/root/usr/share/gems/3.3/ondemand/4.1.4-1/gems/bootstrap_form-2.7.0/Gemfile.lock",
		"etc/ansible-init/playbooks/roles/mrlesmithjr.chrony/tasks/main.yml",
	}
	for _, f := range append(append([]string{}, flagged...), kept...) {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// a real rclone (here a symlink to another file) is replaced, and the
	// file it pointed to is left alone
	if err := os.MkdirAll(filepath.Join(root, "usr/bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "usr/bin/rclone-real"), []byte("real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("rclone-real", filepath.Join(root, "usr/bin/rclone")); err != nil {
		t.Fatal(err)
	}
	sc := newScript("cleanup").set("FATIMAGE_SYSROOT", root).call("cleanup_step", "scanner-files").call("cleanup_step", "rclone-stub")
	out, err := runLocal(t, work, sc)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, f := range flagged {
		if _, err := os.Lstat(filepath.Join(root, f)); !os.IsNotExist(err) {
			t.Errorf("%s not removed", f)
		}
		if !strings.Contains(out, "removed /"+f+"\n") {
			t.Errorf("removal of /%s not said:\n%s", f, out)
		}
	}
	for _, f := range kept {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("%s removed: %v", f, err)
		}
	}
	stub := filepath.Join(root, "usr/bin/rclone")
	st, err := os.Lstat(stub)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o555 {
		t.Fatalf("stub %v %v: want a regular 0555 file", st, err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "usr/bin/rclone-real")); string(b) != "real" {
		t.Errorf("the symlink's target was overwritten: %q", b)
	}
	cmd := exec.Command(stub, "copy", "a", "b")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || stdout.Len() != 0 || !strings.Contains(stderr.String(), "rclone was removed from this image") {
		t.Errorf("stub: err %v, stdout %q, stderr %q (want exit 1 and the notice on stderr)", err, stdout.String(), stderr.String())
	}
	// on a build without rclone the stub is written too
	if err := os.Remove(stub); err != nil {
		t.Fatal(err)
	}
	if out, err := runLocal(t, work, newScript("cleanup").set("FATIMAGE_SYSROOT", root).call("cleanup_step", "rclone-stub")); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if st, err := os.Stat(stub); err != nil || st.Mode().Perm() != 0o555 {
		t.Errorf("no stub without rclone: %v %v", st, err)
	}
}
