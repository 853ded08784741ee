package fatimage

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/internal/gpgkeys"
	"github.com/stackhpc/packer-plugin-fatimage/internal/safepath"
)

// Paths in the image: every option taking one goes through
// safepath.Dest; what is particular to an option is here.

const (
	// maxStrip bounds downloads' strip_components: no archive nests
	// deeper, and tar takes the number as is.
	maxStrip = 16
	// minRebootTimeout is the shortest reboot_timeout: a reboot takes
	// longer on every cloud.
	minRebootTimeout = time.Minute
)

// rootOwner reports whether an owner option leaves root the owner.
func rootOwner(o string) bool { return o == "" || o == "root" || o == "root:root" }

// fileDestProblems are the problems of a files entry's destination and
// mode. Only `directory = true` may name a system directory (setting its
// owner and mode, as the cluster group does for /etc), and only as
// root without write access for group or others.
func fileDestProblems(f File) []string {
	var out []string
	into := f.Directory && rootOwner(f.Owner)
	if msg := safepath.Dest(f.Destination, into); msg != "" {
		out = append(out, fmt.Sprintf("destination %q %s", f.Destination, msg))
	}
	if msg := safepath.Mode(f.Mode); msg != "" {
		out = append(out, "mode "+msg)
	} else if m, _ := strconv.ParseUint(f.Mode, 8, 32); into && safepath.IsSystem(f.Destination) && m&0o022 != 0 {
		out = append(out, fmt.Sprintf("mode %q lets group or others write the system directory %s", f.Mode, f.Destination))
	}
	return out
}

// duplicateFiles refuses two files entries for one path (as written or
// once cleaned): the second would silently replace the first.
func duplicateFiles(files []File) []error {
	var errs []error
	seen := map[string]int{}
	for i, f := range files {
		d := path.Clean(f.Destination)
		if j, ok := seen[d]; ok && f.Destination != "" {
			errs = append(errs, fmt.Errorf("files[%d]: destination %s is also files[%d]'s", i, d, j))
			continue
		}
		seen[d] = i
	}
	return errs
}

// extractHint says, for a download refused a system directory, how one
// may go there: named members, as root.
func extractHint(d Download) string {
	if d.Extract && safepath.IsSystem(d.Destination) {
		return " (an archive may add to it only with members, owned by root)"
	}
	return ""
}

// checkKeyPath is the problem with a gpg_keys path, "" when none: the key
// is written there, so it must be a file of the keys' directory.
func checkKeyPath(p string) string {
	if msg := safepath.Dest(p, false); msg != "" {
		return msg
	}
	if !strings.HasPrefix(p, gpgkeys.Dir) || strings.Contains(strings.TrimPrefix(p, gpgkeys.Dir), "/") {
		return "must be a file in " + gpgkeys.Dir + " (a key written anywhere else replaces that file)"
	}
	return ""
}
