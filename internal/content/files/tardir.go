package files

import (
	"archive/tar"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// tarDir packs the tree under root for a `files` entry: directories
// 0755, files with mode (executables 0755), symlinks as they are; owners
// are set on the VM.
func tarDir(root, mode string) ([]byte, error) {
	m, err := strconv.ParseInt(mode, 8, 32)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		h := &tar.Header{Name: filepath.ToSlash(rel), ModTime: info.ModTime(), Format: tar.FormatPAX}
		switch {
		case d.IsDir():
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, h.Name+"/", 0o755
		case d.Type()&fs.ModeSymlink != 0:
			if h.Linkname, err = os.Readlink(p); err != nil {
				return err
			}
			h.Typeflag, h.Mode = tar.TypeSymlink, 0o777
		case d.Type().IsRegular():
			h.Typeflag, h.Size, h.Mode = tar.TypeReg, info.Size(), m
			if info.Mode()&0o111 != 0 {
				h.Mode = 0o755
			}
		default:
			return nil // sockets, devices: not image content
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if h.Typeflag == tar.TypeReg {
			data, err := os.ReadFile(p) //nolint:gosec // the template author's own files directory on the build host
			if err != nil {
				return err
			}
			_, err = tw.Write(data)
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
