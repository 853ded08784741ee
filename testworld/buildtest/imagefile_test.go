package buildtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

// TestFindInFileAcrossChunks: a needle that straddles the scanner's 1 MiB
// reads is found, at its true offset.
func TestFindInFileAcrossChunks(t *testing.T) {
	p := filepath.Join(t.TempDir(), "disk")
	data := make([]byte, 3<<20)
	copy(data[1<<20-3:], "s3cr%t #@")
	copy(data[2<<20+5:], "other")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	found, n, err := FindInFile(p, map[string][]byte{"a": []byte("s3cr%t #@"), "b": []byte("other"), "c": []byte("absent")})
	if err != nil || n != int64(len(data)) {
		t.Fatalf("FindInFile: %v, read %d", err, n)
	}
	if len(found) != 2 || found["a"] != 1<<20-3 || found["b"] != 2<<20+5 {
		t.Fatalf("found %v", found)
	}
}

// TestWholeDiskAuditSeesFreedBlocks: on an ext4 disk, a file deleted
// before the image was taken is gone from the tree but its data stays in
// the freed blocks, raw or qcow2; the whole-disk scan finds it there.
// This is the leak a tree scan cannot see, and why a real snapshot
// (a block copy of the build VM's disk) needs this audit.
func TestWholeDiskAuditSeesFreedBlocks(t *testing.T) {
	needs.Tools(t, "mkfs.ext4", "debugfs", "qemu-img")
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	if err := os.MkdirAll(filepath.Join(tree, "etc/yum.repos.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	secret := []byte("password=p%#:@ \"'é-" + filepath.Base(dir))
	repo := append(append([]byte("[baseos]\nusername=lab\n"), secret...), '\n')
	if err := os.WriteFile(filepath.Join(tree, "etc/yum.repos.d/ark.repo"), repo, 0o644); err != nil {
		t.Fatal(err)
	}
	raw := filepath.Join(dir, "disk.raw")
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", "-d", tree, raw, "16m").CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v: %s", err, out)
	}
	// the build's cleanup deletes the file, as rm in the VM would
	if out, err := exec.Command("debugfs", "-w", "-R", "rm /etc/yum.repos.d/ark.repo", raw).CombinedOutput(); err != nil || strings.Contains(string(out), "not found") {
		t.Fatalf("debugfs rm: %v: %s", err, out)
	}
	if out, _ := exec.Command("debugfs", "-R", "ls -l /etc/yum.repos.d", raw).CombinedOutput(); bytes.Contains(out, []byte("ark.repo")) {
		t.Fatalf("the file is still in the tree:\n%s", out)
	}
	qcow := filepath.Join(dir, "disk.qcow2")
	if out, err := exec.Command("qemu-img", "convert", "-f", "raw", "-O", "qcow2", raw, qcow).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img: %v: %s", err, out)
	}
	for _, c := range []struct{ path, format string }{{raw, "raw"}, {qcow, "qcow2"}} {
		found, _, err := FindInFile(RawDisk(t, c.path, c.format, t.TempDir()), map[string][]byte{"secret": secret})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := found["secret"]; !ok {
			t.Errorf("%s: the deleted file's secret was not found in the freed blocks", c.format)
		}
	}
}
