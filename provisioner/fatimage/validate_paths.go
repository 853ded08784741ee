package fatimage

import (
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
