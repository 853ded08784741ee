package cloud

import (
	"crypto/md5"
	"crypto/sha512"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
)

// Image files: when the Hypervisor is a DiskExporter, every image made
// from a disk gets a real disk image file (raw or qcow2) in the cloud's
// image directory, and Glance reports and serves that file; servers and
// volumes made from the image are unpacked from it (image_boot.go).

// imageFile is an exported disk image and its true figures.
type imageFile struct {
	path              string
	size, virtualSize int64
	md5, sha512       string
}

// exportDisk writes disk as an image file in format for image id; nil when
// the hypervisor cannot (then the image keeps synthetic figures). Called
// without gl.mu: mkfs and qemu-img take a moment.
func (gl *glance) exportDisk(disk, format, id string) (*imageFile, error) {
	exp, ok := gl.c.o.Hypervisor.(DiskExporter)
	if !ok || disk == "" || (format != "raw" && format != "qcow2") {
		return nil, nil
	}
	dir, err := gl.fileDir()
	if err != nil {
		return nil, err
	}
	// a suffix of its own: a second AddImage of the same id must not
	// overwrite the first one's file before it is refused
	f := &imageFile{path: filepath.Join(dir, id+"-"+newHexID()[:8]+"."+format)}
	if f.virtualSize, err = exp.ExportDisk(disk, format, f.path); err != nil {
		os.Remove(f.path)
		return nil, err
	}
	in, err := os.Open(f.path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	m, h := md5.New(), sha512.New()
	if f.size, err = io.Copy(io.MultiWriter(m, h), in); err != nil {
		return nil, err
	}
	f.md5, f.sha512 = hex.EncodeToString(m.Sum(nil)), hex.EncodeToString(h.Sum(nil))
	return f, nil
}

// fileDir is the image directory, made on first use and removed by Close.
func (gl *glance) fileDir() (string, error) {
	gl.dirOnce.Do(func() { gl.dir, gl.dirErr = os.MkdirTemp("", "lab-glance-") })
	return gl.dir, gl.dirErr
}

// removeFiles deletes the image directory (Cloud.Close).
func (gl *glance) removeFiles() {
	gl.dirOnce.Do(func() {}) // orders this read after a fileDir that made it
	if gl.dir != "" {
		os.RemoveAll(gl.dir)
	}
}

// setFile gives img the exported file's figures; gl.mu held.
func (i *image) setFile(f *imageFile) {
	i.file, i.Size, i.VirtualSize = f.path, f.size, f.virtualSize
	i.Checksum, i.HashValue = f.md5, f.sha512
}

// serveFile answers GET .../file from the image's file, as Glance streams
// from its store, with the checksum as Content-MD5.
func serveFile(w http.ResponseWriter, i *image) bool {
	if i.file == "" {
		return false
	}
	in, err := os.Open(i.file)
	if err != nil {
		fail(w, SvcImage, http.StatusServiceUnavailable, "", "Image data unavailable: "+err.Error())
		return true
	}
	defer in.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-MD5", i.Checksum)
	w.Header().Set("Content-Length", strconv.FormatInt(i.Size, 10))
	w.WriteHeader(http.StatusOK)
	_, _ = io.Copy(w, in) // the client went away: nothing to tell it
	return true
}

// ImageFile returns the disk image file Glance holds for image id (what
// GET .../file serves), for audits that scan a whole image.
func (c *Cloud) ImageFile(id string) (string, bool) {
	c.image.mu.Lock()
	defer c.image.mu.Unlock()
	if img := c.image.images[id]; img != nil && img.file != "" {
		return img.file, true
	}
	return "", false
}
