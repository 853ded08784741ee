package pulpfake

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"time"
)

// timestampLayout is the snapshot timestamp used in base paths.
const timestampLayout = "20060102T150405"

// fallbackSnapshotTime is used for base paths not ending in a timestamp.
var fallbackSnapshotTime = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// snapshotTime derives a stable time from a base path's last segment so
// synthetic metadata differs between snapshots but never between runs.
func snapshotTime(basePath string) time.Time {
	if t, err := time.Parse(timestampLayout, path.Base(basePath)); err == nil {
		return t
	}
	return fallbackSnapshotTime
}

// syntheticTree is the content of a distribution without Dir or Files: a
// createrepo-style repodata/repomd.xml and nothing else.
func syntheticTree(basePath string) mapTree {
	mod := snapshotTime(basePath)
	return mapTree{
		files: map[string][]byte{"repodata/repomd.xml": syntheticRepomd(basePath, mod)},
		mod:   mod,
	}
}

func syntheticRepomd(basePath string, mod time.Time) []byte {
	// Checksums are derived from the base path: the referenced primary file
	// is not served, but each snapshot gets distinct, well-formed values.
	sum := sha256.Sum256([]byte("primary.xml.gz:" + basePath))
	openSum := sha256.Sum256([]byte("primary.xml:" + basePath))
	cs, ocs := hex.EncodeToString(sum[:]), hex.EncodeToString(openSum[:])
	ts := mod.Unix()
	return fmt.Appendf(nil, `<?xml version="1.0" encoding="UTF-8"?>
<repomd xmlns="http://linux.duke.edu/metadata/repo" xmlns:rpm="http://linux.duke.edu/metadata/rpm">
  <revision>%d</revision>
  <data type="primary">
    <checksum type="sha256">%s</checksum>
    <open-checksum type="sha256">%s</open-checksum>
    <location href="repodata/%s-primary.xml.gz"/>
    <timestamp>%d</timestamp>
    <size>134</size>
    <open-size>167</open-size>
  </data>
</repomd>
`, ts, cs, ocs, cs, ts)
}
