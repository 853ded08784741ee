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
	// minRebootTimeout is the shortest reboot_timeout: a reboot takes
	// longer on every cloud.
	minRebootTimeout = time.Minute
)

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
