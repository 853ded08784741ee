package vm

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

// treeFixture lays out a disk tree with everything an overlay upper
// directory may hold and rdump alone loses: a whiteout (0/0 character
// device), an opaque directory (trusted.* attribute), a file capability
// (security.capability), set-user-ID and set-group-ID files, a sticky
// directory, a hard link, a FIFO, a socket, symlinks and another owner
// (of a file and of a symlink).
func treeFixture(t *testing.T, dir string) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"etc", "usr/bin", "var/tmp", "opaque", "home/rocky"} {
		must(os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	must(os.WriteFile(filepath.Join(dir, "etc/os-release"), []byte("NAME=\"Rocky Linux\"\n"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "usr/bin/suid"), []byte("#!/bin/sh\n"), 0o755))
	must(syscall.Chmod(filepath.Join(dir, "usr/bin/suid"), 0o4755))
	must(os.WriteFile(filepath.Join(dir, "usr/bin/sgid"), []byte("#!/bin/sh\n"), 0o755))
	must(os.Lchown(filepath.Join(dir, "usr/bin/sgid"), 0, 5))
	must(syscall.Chmod(filepath.Join(dir, "usr/bin/sgid"), 0o2755))
	must(os.Link(filepath.Join(dir, "usr/bin/suid"), filepath.Join(dir, "usr/bin/suid-link")))
	must(syscall.Chmod(filepath.Join(dir, "var/tmp"), 0o1777))
	must(syscall.Mknod(filepath.Join(dir, "etc/motd"), syscall.S_IFCHR, 0)) // a whiteout
	must(syscall.Mknod(filepath.Join(dir, "var/fifo"), syscall.S_IFIFO|0o600, 0))
	must(syscall.Mknod(filepath.Join(dir, "var/sock"), syscall.S_IFSOCK|0o666, 0))
	must(syscall.Setxattr(filepath.Join(dir, "opaque"), "trusted.overlay.opaque", []byte("y"), 0))
	// cap_net_raw+ep, as setcap writes it (VFS_CAP_REVISION_2)
	must(syscall.Setxattr(filepath.Join(dir, "usr/bin/sgid"), "security.capability",
		[]byte{0, 0, 0, 2, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0))
	must(os.Symlink("../usr/bin/suid", filepath.Join(dir, "etc/link")))
	must(os.Symlink(".bashrc", filepath.Join(dir, "home/rocky/.profile")))
	must(os.Lchown(filepath.Join(dir, "home/rocky/.profile"), 1000, 1000))
	must(os.WriteFile(filepath.Join(dir, "home/rocky/.bashrc"), []byte("# mine\n"), 0o600))
	must(os.Lchown(filepath.Join(dir, "home/rocky/.bashrc"), 1000, 1000))
	must(os.Lchown(filepath.Join(dir, "home/rocky"), 1000, 1000))
}

// describe is a listing of everything about a tree that matters to a
// disk: type, mode, owner, device numbers, link targets, hard links (as
// link counts), xattrs and content, as find and getcap-free Go see it.
func describe(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("find", dir, "-mindepth", "1", "-printf", `%P %M %U:%G %n %l\n`).Output()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.Write(out)
	err = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		st := fi.Sys().(*syscall.Stat_t)
		if fi.Mode()&os.ModeDevice != 0 {
			fmt.Fprintf(&b, "%s rdev %d\n", rel, st.Rdev)
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return nil
		}
		for _, name := range []string{"trusted.overlay.opaque", "security.capability"} {
			buf := make([]byte, 64)
			if n, err := syscall.Getxattr(p, name, buf); err == nil {
				b.WriteString(rel + " " + name + "=" + string(buf[:n]) + "\n")
			}
		}
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b.WriteString(rel + " data " + string(bytes.TrimSpace(data)) + "\n")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestUnpackImageKeepsTheTree: a disk tree made into an ext4 image
// (raw and qcow2, as ExportDisk writes them) unpacks to the same tree,
// including what debugfs rdump alone drops.
func TestUnpackImageKeepsTheTree(t *testing.T) {
	needs.Root(t, "mknod and trusted.* attributes")
	needs.Tools(t, "mkfs.ext4", "debugfs", "e2fsck", "qemu-img")
	src := filepath.Join(t.TempDir(), "upper")
	treeFixture(t, src)
	want := describe(t, src)
	for _, format := range []string{"raw", "qcow2"} {
		t.Run(format, func(t *testing.T) {
			img := filepath.Join(t.TempDir(), "disk."+format)
			if _, err := exportTree(src, format, img, 0); err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(t.TempDir(), "tree")
			if err := unpackImage(img, format, dst); err != nil {
				t.Fatal(err)
			}
			if got := describe(t, dst); got != want {
				t.Errorf("unpacked tree differs\n--- got\n%s\n--- want\n%s", got, want)
			}
		})
	}
}

// TestUnpackImageRefusesWhatCannotBoot: data that is not a bootable disk
// of the lab's layout is refused with the reason, as Nova refuses an
// image whose data is not its disk_format.
func TestUnpackImageRefusesWhatCannotBoot(t *testing.T) {
	needs.Tools(t, "mkfs.ext4", "debugfs", "e2fsck", "qemu-img")
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, bytes.Repeat([]byte("not a disk "), 100000), 0o644); err != nil {
		t.Fatal(err)
	}
	noOS := filepath.Join(dir, "noos.raw")
	if _, err := exportTree(t.TempDir(), "raw", noOS, 0); err != nil {
		t.Fatal(err)
	}
	osTree := t.TempDir()
	if err := os.MkdirAll(filepath.Join(osTree, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(osTree, "etc/os-release"), []byte("ID=rocky\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	qcow := filepath.Join(dir, "ok.qcow2")
	if _, err := exportTree(osTree, "qcow2", qcow, 0); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, format, want string }{
		{garbage, "qcow2", "Image not in a supported format: the data is raw, the image says disk_format qcow2"},
		{garbage, "raw", "no bootable filesystem in the image"},
		{qcow, "raw", "Image not in a supported format: the data is qcow2, the image says disk_format raw"},
		{noOS, "raw", "no operating system in the image's filesystem"},
		{qcow, "vmdk", "disk format vmdk cannot be booted"},
	} {
		err := unpackImage(c.file, c.format, filepath.Join(t.TempDir(), "tree"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s as %s: %v, want an error with %q", filepath.Base(c.file), c.format, err, c.want)
		}
	}
	if err := unpackImage(qcow, "qcow2", filepath.Join(t.TempDir(), "tree")); err != nil {
		t.Errorf("a good qcow2: %v", err)
	}
}
