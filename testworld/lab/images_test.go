package lab_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/vm"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
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

// TestServersBootFromTheImageFile: a server boots what the image's file
// holds. The base image is downloaded, a marker written into its
// filesystem with debugfs, and the result uploaded as a new raw image: the
// server booted from it has the marker, which exists in no disk directory
// of the lab. Data that is no disk fails the boot with Nova's
// ImageUnacceptable fault, and a volume made from it ends in error. On the
// old lab uploaded data was never booted (servers got an empty disk).
func TestServersBootFromTheImageFile(t *testing.T) {
	labtest.Require(t)
	needs.Tools(t, "openstack", "debugfs", "qemu-img")
	dir := t.TempDir()
	qcow := filepath.Join(dir, "base.qcow2")
	openstack(t, nil, "image", "save", "--file", qcow, lab.BaseImageName)
	raw := filepath.Join(dir, "marked.raw")
	if out, err := exec.Command("qemu-img", "convert", "-f", "qcow2", "-O", "raw", qcow, raw).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img convert: %v: %s", err, out)
	}
	marker := "from-the-file-" + filepath.Base(dir)
	src := filepath.Join(dir, "marker")
	if err := os.WriteFile(src, []byte(marker+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("debugfs", "-w", "-R", "write "+src+" fatlab-marker", raw).CombinedOutput(); err != nil || strings.Contains(string(out), "rror") {
		t.Fatalf("debugfs write: %v: %s", err, out)
	}
	var img struct {
		ID string `json:"id"`
	}
	openstack(t, &img, "image", "create", "--disk-format", "raw", "--container-format", "bare", "--file", raw, "-f", "json", "marked-"+filepath.Base(dir))
	t.Cleanup(func() { openstack(t, nil, "image", "delete", img.ID) })

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, c, stop := labtest.BootDial(ctx, t, theLab, "from-file", img.ID)
	if got := c.Run(t, "cat /fatlab-marker; . /etc/os-release; echo $ID"); got != marker+"\nrocky" {
		t.Errorf("the server booted from the uploaded file shows %q, want the marker and Rocky's os-release", got)
	}
	stop()

	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, bytes.Repeat([]byte("no disk here "), 50000), 0o644); err != nil {
		t.Fatal(err)
	}
	var bad struct {
		ID string `json:"id"`
	}
	openstack(t, &bad, "image", "create", "--disk-format", "qcow2", "--container-format", "bare", "--file", garbage, "-f", "json", "garbage-"+filepath.Base(dir))
	t.Cleanup(func() { openstack(t, nil, "image", "delete", bad.ID) })
	_, cleanup, err := labtest.Boot(ctx, t, theLab, "from-garbage", bad.ID)
	if err == nil {
		cleanup()
		t.Fatal("a server booted from garbage data went ACTIVE")
	}
	if want := "Image " + bad.ID + " is unacceptable: Image not in a supported format"; !strings.Contains(err.Error(), want) {
		t.Errorf("boot from garbage: %v, want a fault with %q", err, want)
	}
	var vol struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	openstack(t, &vol, "volume", "create", "--image", bad.ID, "--size", "1", "-f", "json", "garbage-vol")
	t.Cleanup(func() { openstack(t, nil, "volume", "delete", vol.ID) })
	for vol.Status != "error" {
		if vol.Status != "creating" {
			t.Fatalf("a volume from garbage data is %q, want error", vol.Status)
		}
		select {
		case <-ctx.Done():
			t.Fatal("the volume from garbage data stayed creating")
		case <-time.After(100 * time.Millisecond):
		}
		openstack(t, &vol, "volume", "show", "-f", "json", vol.ID)
	}
}
