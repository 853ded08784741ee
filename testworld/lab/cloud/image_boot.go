package cloud

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Booting from an image's file: when the Hypervisor is a DiskUnpacker, a
// server (or a volume) made from an image that has a file gets a disk
// unpacked from that file, the bytes Glance stores and serves, whether the
// file was exported from a disk (snapshots, volume uploads, the base
// image) or uploaded (PUT .../file, import). Data that is not a bootable
// disk fails the boot, as Nova fails it (the server goes to ERROR with the
// reason as its fault; a volume goes to error). Without an unpacker, or
// for an image without a file, the disk is a clone of the image's disk.

// DiskUnpacker may be implemented by a Hypervisor to make a disk from an
// image file of diskFormat; key names the file's content (for a cache).
type DiskUnpacker interface {
	UnpackDisk(path, diskFormat, key string) (string, error)
}

// diskSource is what a new disk is made from: an image's file, or a disk.
type diskSource struct {
	disk                      string // cloned when there is no file
	image, file, format, hash string
}

// imageSource is where a disk made from image img comes from.
func imageSource(img *image) diskSource {
	return diskSource{disk: img.Disk, image: img.ID, file: img.file, format: img.DiskFormat, hash: img.HashValue}
}

// bootSource is the disk source of image id (empty when it is gone).
func (gl *glance) bootSource(id string) diskSource {
	gl.mu.Lock()
	defer gl.mu.Unlock()
	if img := gl.images[id]; img != nil {
		return imageSource(img)
	}
	return diskSource{}
}

// makeDisk makes a new disk from src. Called without service locks: an
// unpack takes a moment the first time an image is booted.
func (c *Cloud) makeDisk(src diskSource) (string, error) {
	if u, ok := c.o.Hypervisor.(DiskUnpacker); ok && src.file != "" {
		d, err := u.UnpackDisk(src.file, src.format, src.hash)
		if err != nil {
			// Nova's ImageUnacceptable
			return "", fmt.Errorf("Image %s is unacceptable: %v", src.image, err)
		}
		return d, nil
	}
	return c.o.Hypervisor.CloneDisk(src.disk)
}

// keepsUploads: uploaded data is stored as an image file (and booted from
// it) rather than kept in memory.
func (gl *glance) keepsUploads() bool {
	_, imp := gl.c.o.Hypervisor.(DiskImporter)
	_, unp := gl.c.o.Hypervisor.(DiskUnpacker)
	return unp && !imp
}

// uploadFile stores uploaded data r as a new file in the image directory.
func (gl *glance) uploadFile(r io.Reader) (string, error) {
	dir, err := gl.fileDir()
	if err != nil {
		return "", err
	}
	f, err := os.Create(filepath.Join(dir, "upload-"+newHexID()[:16]))
	if err != nil {
		return "", err
	}
	if _, err = io.Copy(f, r); err == nil {
		err = f.Close()
	} else {
		f.Close()
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}
