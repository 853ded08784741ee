package buildtest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/imagedata"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
)

// The whole-disk audit: the image's file as Glance serves it (what
// `openstack image save` downloads, what every server of the image boots)
// is scanned byte by byte as a raw disk, so it also sees what a tree scan
// cannot: file names, extended attributes, the journal, and blocks that
// hold data of files deleted or overwritten before the image was taken.

// DownloadImage saves image id's data from Glance into dir, checks it
// against the checksum Glance reports and returns the file and the
// image's disk_format.
func DownloadImage(t testing.TB, l *lab.Lab, id, dir string) (path, format string) {
	t.Helper()
	c := ImageClient(t, l)
	img, err := images.Get(context.Background(), c, id).Extract()
	if err != nil {
		t.Fatalf("image %s: %v", id, err)
	}
	r, err := imagedata.Download(context.Background(), c, id).Extract()
	if err != nil {
		t.Fatalf("downloading image %s: %v", id, err)
	}
	defer r.Close()
	path = filepath.Join(dir, id+"."+img.DiskFormat)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := md5.New()
	n, err := io.Copy(io.MultiWriter(f, sum), r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("downloading image %s: %v", id, err)
	}
	if got := hex.EncodeToString(sum.Sum(nil)); n == 0 || n != img.SizeBytes || got != img.Checksum {
		t.Fatalf("image %s: downloaded %d bytes md5 %s; Glance says %d bytes md5 %s", id, n, got, img.SizeBytes, img.Checksum)
	}
	return path, img.DiskFormat
}

// RawDisk returns the disk in image file path of format as a raw file
// (converted with qemu-img into dir unless it is raw already).
func RawDisk(t testing.TB, path, format, dir string) string {
	t.Helper()
	if format == "raw" {
		return path
	}
	raw := filepath.Join(dir, filepath.Base(path)+".raw")
	if out, err := exec.Command("qemu-img", "convert", "-f", format, "-O", "raw", path, raw).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img convert %s: %v: %s", path, err, out)
	}
	return raw
}

// FindInFile reads file once and returns, for each needle found, the
// offset of its first occurrence, and the bytes read.
func FindInFile(path string, needles map[string][]byte) (map[string]int64, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	longest := 0
	for _, n := range needles {
		if len(n) == 0 {
			return nil, 0, fmt.Errorf("an empty needle matches everything")
		}
		longest = max(longest, len(n))
	}
	found := map[string]int64{}
	r := bufio.NewReaderSize(f, 1<<20)
	buf := make([]byte, 0, 4<<20)
	var base, total int64 // file offset of buf[0]; bytes read
	chunk := make([]byte, 1<<20)
	for {
		n, err := io.ReadFull(r, chunk)
		total += int64(n)
		buf = append(buf, chunk[:n]...)
		for name, needle := range needles {
			if _, ok := found[name]; ok {
				continue
			}
			if i := bytes.Index(buf, needle); i >= 0 {
				found[name] = base + int64(i)
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return found, total, nil
		}
		if err != nil {
			return nil, total, err
		}
		// keep a tail as long as the longest needle but one, so a needle
		// across two chunks is seen
		if keep := longest - 1; len(buf) > keep {
			base += int64(len(buf) - keep)
			buf = append(buf[:0], buf[len(buf)-keep:]...)
		}
	}
}

// ScanImageFile downloads image id and returns which of needles its raw
// disk holds (by name, with offsets) and the disk's size in bytes.
func ScanImageFile(t testing.TB, l *lab.Lab, id string, needles map[string][]byte) (map[string]int64, int64) {
	t.Helper()
	dir := t.TempDir()
	path, format := DownloadImage(t, l, id, dir)
	raw := RawDisk(t, path, format, dir)
	found, n, err := FindInFile(raw, needles)
	if err != nil {
		t.Fatalf("scanning image %s: %v", id, err)
	}
	if n == 0 {
		t.Fatalf("image %s: the raw disk is empty", id)
	}
	return found, n
}

// RequireNoSecretsInImageFile is the whole-disk audit of image id: its
// file, downloaded from Glance, carries none of the lab's secrets anywhere
// on the disk. It returns the bytes scanned.
func RequireNoSecretsInImageFile(t testing.TB, l *lab.Lab, id string) int64 {
	t.Helper()
	found, n := ScanImageFile(t, l, id, Secrets(l))
	var names []string
	for name, off := range found {
		names = append(names, fmt.Sprintf("the %s at byte %d", name, off))
	}
	sort.Strings(names)
	if len(names) > 0 {
		t.Errorf("image %s's disk carries %s", id, strings.Join(names, ", "))
	}
	return n
}
