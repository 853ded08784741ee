package guests

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// writeBack writes a guest's disk into the file of the volume it booted
// from (Spec.Volume; nothing for a guest from an image): its filesystem
// from the file's first byte, zeros after it up to the volume's size, as
// the volume of a real server holds what the server wrote. Cinder's
// upload of the volume (os-volume_upload_image) then sends that.
func (h *Host) writeBack(g *guest) error {
	if g.spec.Volume == "" {
		return nil
	}
	tmp := filepath.Join(h.opts.StateDir, g.spec.UUID+".volume.raw")
	defer os.Remove(tmp)
	if _, err := h.vms.ExportDisk(g.disk, "raw", tmp); err != nil {
		return err
	}
	src, err := os.Open(tmp)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(g.spec.Volume, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	st, err := dst.Stat()
	if err == nil {
		err = copyInto(dst, src, st.Size())
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("guests: writing the disk of %s into its volume %s: %w", g.spec.UUID, g.spec.Volume, err)
	}
	h.opts.Logf("guests: %s's disk written into its volume %s", g.spec.UUID, g.spec.Volume)
	return nil
}

// copyInto copies src to the start of dst, a file of size bytes: what
// does not fit is an error, and the rest of dst is zeros (a hole), as
// the old filesystem's bytes beyond the new one must not stay.
func copyInto(dst *os.File, src io.Reader, size int64) error {
	n, err := io.Copy(dst, io.LimitReader(src, size+1))
	switch {
	case err != nil:
		return err
	case n > size:
		return fmt.Errorf("the disk does not fit the volume's %d bytes", size)
	}
	if err := dst.Truncate(n); err != nil {
		return err
	}
	return dst.Truncate(size)
}
