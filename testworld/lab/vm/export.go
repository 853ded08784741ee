package vm

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ExportDisk writes disk id as an image file at path in diskFormat: "raw"
// is an ext4 filesystem holding the disk's tree (its upper directory,
// overlay whiteouts and xattrs included), made with mkfs.ext4 -d;
// "qcow2" is that converted with qemu-img. It returns the virtual size
// (the raw filesystem's size) in bytes.
func (m *Manager) ExportDisk(id, diskFormat, path string) (int64, error) {
	if err := m.checkDisk(id); err != nil {
		return 0, err
	}
	if diskFormat != "raw" && diskFormat != "qcow2" {
		return 0, fmt.Errorf("vm: cannot export disk format %q (raw or qcow2)", diskFormat)
	}
	used, err := m.DiskSize(id)
	if err != nil {
		return 0, err
	}
	return exportTree(filepath.Join(id, "upper"), diskFormat, path, used)
}

// exportTree writes directory tree, which uses used bytes, as an ext4
// image file at path in diskFormat; it returns the virtual size.
func exportTree(tree, diskFormat, path string, used int64) (int64, error) {
	// Room for the filesystem's own metadata; whole MiB.
	size := (used*13/10 + 16<<20 + 1<<20 - 1) &^ (1<<20 - 1)
	raw := path
	if diskFormat == "qcow2" {
		raw = path + ".raw"
		defer os.Remove(raw)
	}
	os.Remove(raw)
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", "-L", "root", "-d", tree,
		raw, fmt.Sprintf("%dk", size>>10)).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("vm: mkfs.ext4 -d: %v: %s", err, strings.TrimSpace(string(out)))
	}
	if diskFormat == "qcow2" {
		if out, err := exec.Command("qemu-img", "convert", "-f", "raw", "-O", "qcow2", raw, path).CombinedOutput(); err != nil {
			return 0, fmt.Errorf("vm: qemu-img convert: %v: %s", err, strings.TrimSpace(string(out)))
		}
	}
	return size, nil
}

// ImageInfo is what qemu-img says about an image file: its format and
// virtual size, for tests that check an exported image.
func ImageInfo(path string) (format string, virtualSize int64, err error) {
	out, err := exec.Command("qemu-img", "info", "--output=json", path).Output()
	if err != nil {
		return "", 0, fmt.Errorf("qemu-img info %s: %v", path, err)
	}
	var info struct {
		Format      string `json:"format"`
		VirtualSize int64  `json:"virtual-size"`
	}
	err = json.Unmarshal(out, &info)
	return info.Format, info.VirtualSize, err
}
