package guests

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyInto puts the disk at the volume's start, zeros after it (none of
// the old bytes left), keeps the volume's size, and refuses a disk larger
// than the volume.
func TestCopyInto(t *testing.T) {
	const size = 1 << 20
	vol := filepath.Join(t.TempDir(), "vol")
	if err := os.WriteFile(vol, bytes.Repeat([]byte{0xff}, size), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(vol, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	disk := bytes.Repeat([]byte("d"), 1000)
	if err := copyInto(f, bytes.NewReader(disk), size); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got, _ := os.ReadFile(vol)
	if len(got) != size || !bytes.Equal(got[:1000], disk) || bytes.ContainsAny(got[1000:], "\xffd") {
		t.Errorf("the volume after the copy: %d bytes, starts %q, rest zeros %v", len(got), got[:10], !bytes.ContainsAny(got[1000:], "\xffd"))
	}
	f, _ = os.OpenFile(vol, os.O_WRONLY, 0)
	defer f.Close()
	err = copyInto(f, bytes.NewReader(make([]byte, size+1)), size)
	if err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Errorf("a disk larger than the volume: %v", err)
	}
}
