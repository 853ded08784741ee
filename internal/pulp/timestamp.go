// Package pulp reads Pulp 3 content-app listings and picks repository
// snapshots from them, the way a careful client should: every listing
// format, stray entries ignored, unreadable snapshots passed over.
package pulp

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// TimestampLayout is how Pulp snapshot and checkpoint names spell a UTC time.
const TimestampLayout = "20060102T150405"

var timestampRE = regexp.MustCompile(`^\d{8}T\d{6}Z?$`)

// ParseTimestamp parses a snapshot name such as 20251106T211545 (a
// checkpoint's trailing Z is allowed) as a UTC time. time.Parse refuses
// impossible dates and times (month 13, 30 February, hour 24), which the
// form alone lets through.
func ParseTimestamp(s string) (time.Time, error) {
	if !timestampRE.MatchString(s) {
		return time.Time{}, fmt.Errorf("%q is not a snapshot timestamp of the form YYYYMMDDThhmmss", s)
	}
	t, err := time.ParseInLocation(TimestampLayout, strings.TrimSuffix(s, "Z"), time.UTC)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a real UTC time: %v", s, err)
	}
	return t, nil
}

// ParseCutoff accepts either a snapshot timestamp or an RFC 3339 time.
func ParseCutoff(s string) (time.Time, error) {
	if t, err := ParseTimestamp(s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither a timestamp like 20250101T000000 nor an RFC 3339 time like 2025-01-01T00:00:00Z", s)
	}
	return t.UTC(), nil
}

// SnapshotRef names one repository's chosen snapshot.
type SnapshotRef struct{ Name, Path, Timestamp string }

// SnapshotID identifies a set of chosen snapshots (in order): the same
// repositories at the same timestamps give the same id, so an image can
// name the set it was built from and two builds can be compared.
func SnapshotID(refs []SnapshotRef) string {
	h := sha256.New()
	for _, r := range refs {
		fmt.Fprintf(h, "%s\x00%s\x00%s\n", r.Name, r.Path, r.Timestamp)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}
