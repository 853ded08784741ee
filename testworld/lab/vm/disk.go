package vm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// A disk is a directory below StateDir/disks holding
//
//	upper/   the overlay upper directory: everything the VM ever wrote
//	work/    the overlay work directory (emptied before every mount)
//	merged/  the mount point used while the VM runs (inside its mount namespace)
//
// The DiskID is the absolute path of that directory.

// CloneDisk creates a new disk, a copy of src (src "" = empty disk).
func (m *Manager) CloneDisk(src string) (string, error) {
	if src == "" {
		return m.newDiskFrom("")
	}
	if err := m.checkDisk(src); err != nil {
		return "", err
	}
	return m.newDiskFrom(filepath.Join(src, "upper"))
}

// newDiskFrom creates a new disk whose tree is a copy of directory tree
// ("" = empty).
func (m *Manager) newDiskFrom(tree string) (string, error) {
	dst := filepath.Join(m.diskDir, "disk-"+randHex(8))
	if err := os.Mkdir(dst, 0o700); err != nil {
		return "", err
	}
	for _, d := range []string{"work", "merged"} {
		if err := os.Mkdir(filepath.Join(dst, d), 0o755); err != nil {
			os.RemoveAll(dst)
			return "", err
		}
	}
	if tree == "" {
		if err := os.Mkdir(filepath.Join(dst, "upper"), 0o755); err != nil {
			os.RemoveAll(dst)
			return "", err
		}
		return dst, nil
	}
	// cp -a keeps ownership, modes, xattrs (trusted.overlay.*) and the
	// overlay whiteouts (0/0 character devices).
	// A running VM may delete files during the copy: retry a few times.
	var out []byte
	var err error
	for try := 0; try < 3; try++ {
		os.RemoveAll(filepath.Join(dst, "upper"))
		out, err = exec.Command("cp", "-a", "--", tree, filepath.Join(dst, "upper")).CombinedOutput()
		if err == nil {
			return dst, nil
		}
	}
	os.RemoveAll(dst)
	return "", fmt.Errorf("vm: copying disk: %v: %s", err, strings.TrimSpace(string(out)))
}

// DeleteDisk removes a disk. It fails while a machine that is not destroyed
// uses it.
func (m *Manager) DeleteDisk(id string) error {
	if err := m.checkDisk(id); err != nil {
		return err
	}
	m.mu.Lock()
	for vm := range m.machines {
		if vm.spec.Disk == id || filepath.Clean(vm.spec.Disk) == filepath.Clean(id) {
			m.mu.Unlock()
			return fmt.Errorf("vm: disk %s is in use by machine %s", id, vm.spec.ID)
		}
	}
	m.mu.Unlock()
	return os.RemoveAll(id)
}

// DiskSize returns the bytes the disk's upper directory uses.
func (m *Manager) DiskSize(id string) (int64, error) {
	if err := m.checkDisk(id); err != nil {
		return 0, err
	}
	var total int64
	err := filepath.WalkDir(filepath.Join(id, "upper"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			total += st.Blocks * 512
		} else {
			total += fi.Size()
		}
		return nil
	})
	return total, err
}

func (m *Manager) checkDisk(id string) error {
	if !filepath.IsAbs(id) || filepath.Dir(filepath.Clean(id)) != m.diskDir {
		return fmt.Errorf("vm: %q is not a disk of this manager", id)
	}
	if fi, err := os.Stat(filepath.Join(id, "upper")); err != nil || !fi.IsDir() {
		return fmt.Errorf("vm: disk %q does not exist", id)
	}
	return nil
}

// resetWork empties the overlay work directory; it must be empty before each mount.
func resetWork(disk string) error {
	w := filepath.Join(disk, "work")
	if err := os.RemoveAll(w); err != nil {
		return err
	}
	if err := os.Mkdir(w, 0o755); err != nil {
		return err
	}
	return os.MkdirAll(filepath.Join(disk, "merged"), 0o755)
}
