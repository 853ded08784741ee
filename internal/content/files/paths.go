package files

import (
	"fmt"
	"path"
	"strconv"

	"github.com/stackhpc/packer-plugin-fatimage/internal/safepath"
)

// destProblems are the problems of an entry's destination and mode
// (safepath.Dest, the provisioner's one destination check). Only
// `directory = true` may name a system directory, setting its owner and
// mode as the cluster group does for /etc, and only as root without
// write access for group or others.
func destProblems(f File) []string {
	var out []string
	into := f.Directory && (f.Owner == "" || f.Owner == "root" || f.Owner == "root:root")
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

// duplicates refuses two entries for one path (as written or once
// cleaned): the second would silently replace the first.
func duplicates(files []File) []error {
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
