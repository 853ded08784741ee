package lab_test

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/vm"
)

// TestImageDataIsARealDisk: `openstack image save` downloads the base
// image as what its disk_format says (qcow2), with the size, checksum and
// virtual_size Glance reports, and the filesystem inside holds the
// image's tree. On the old lab the download failed (GET .../file answered
// 204 with no data) and the figures were synthetic.
func TestImageDataIsARealDisk(t *testing.T) {
	labtest.Require(t)
	var img struct {
		DiskFormat  string `json:"disk_format"`
		Size        int64  `json:"size"`
		VirtualSize int64  `json:"virtual_size"`
		Checksum    string `json:"checksum"`
	}
	openstack(t, &img, "image", "show", lab.BaseImageName, "-f", "json")
	file := filepath.Join(t.TempDir(), "base.qcow2")
	openstack(t, nil, "image", "save", "--file", file, lab.BaseImageName)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(data)
	if img.DiskFormat != "qcow2" || int64(len(data)) != img.Size || hex.EncodeToString(sum[:]) != img.Checksum {
		t.Fatalf("downloaded %d bytes md5 %x; Glance says %+v", len(data), sum, img)
	}
	format, vsize, err := vm.ImageInfo(file)
	if err != nil || format != "qcow2" || vsize != img.VirtualSize || vsize < img.Size {
		t.Fatalf("qemu-img: format %q virtual size %d (%v); Glance says %+v", format, vsize, err, img)
	}
	raw := filepath.Join(t.TempDir(), "base.raw")
	if out, err := exec.Command("qemu-img", "convert", "-f", "qcow2", "-O", "raw", file, raw).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img convert: %v: %s", err, out)
	}
	if f, ok := theLab.Cloud.ImageFile(theLab.BaseImageID); !ok {
		t.Error("Cloud.ImageFile has no file for the base image")
	} else if b, err := os.ReadFile(f); err != nil || !bytes.Equal(b, data) {
		t.Errorf("Cloud.ImageFile %s differs from the download (%v)", f, err)
	}
	out, err := exec.Command("debugfs", "-R", "cat /etc/os-release", raw).Output()
	if err != nil || !strings.Contains(string(out), `NAME="Rocky Linux"`) {
		t.Fatalf("the image's filesystem lacks /etc/os-release: %v\n%s", err, out)
	}
}
