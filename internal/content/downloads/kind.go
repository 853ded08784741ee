package downloads

import (
	"context"
	_ "embed"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
	"github.com/stackhpc/packer-plugin-fatimage/internal/safepath"
)

// Kind is the downloads kind.
type Kind struct{}

var (
	_ content.Kind[Download]     = Kind{}
	_ content.Fetcher[Download]  = Kind{}
	_ content.Recorder[Download] = Kind{}
)

// maxStrip bounds strip_components: no archive nests deeper, and tar
// takes the number as is.
const maxStrip = 16

//go:embed downloads.sh
var shell string

// Option implements content.Kind.
func (Kind) Option() string { return "downloads" }

// ID is the identity, as a merge error names it.
func (Kind) ID(d Download) string { return "destination " + d.Identity() }

// Identity is what a template entry must match to replace a group's,
// and the key of image.json's record: the destination, and the members
// unpacked there (helm and k9s both unpack one executable into
// /usr/bin).
func (d Download) Identity() string {
	if len(d.Members) == 0 {
		return d.Destination
	}
	return d.Destination + " (members " + strings.Join(d.Members, ", ") + ")"
}

// ModeOrDefault is the mode of a file download, defaulted.
func (d Download) ModeOrDefault() string {
	if d.Mode == "" {
		return "0644"
	}
	return d.Mode
}

// Staged is where download i lands in the work dir.
func Staged(workDir string, i int) string {
	return path.Join(workDir, fmt.Sprintf("download-%d", i))
}

// Shell implements content.Kind: downloads.sh.
func (Kind) Shell() string { return shell }

// Validate checks each download without network or VM.
func (Kind) Validate(ds []Download) []error {
	var errs []error
	for i, d := range ds {
		add := content.ItemErrs(&errs, "downloads", i)
		if msg := content.CheckURL("url", d.URL); msg != "" {
			add("%s", msg)
		}
		if msg := content.CheckPinnedSHA256(d.SHA256, d.InsecureSkipChecksum, "the download is checked before anything is installed"); msg != "" {
			add("%s", msg)
		}
		if len(d.Members) > 0 && !d.Extract {
			add("members needs extract = true")
		}
		for j, m := range d.Members {
			if m == "" || path.IsAbs(m) || path.Clean(m) != m || strings.HasPrefix(m, "../") || m == ".." {
				add("members[%d] %q must be a clean relative path in the archive", j, m)
			}
		}
		if msg := safepath.Dest(d.Destination, d.Extract && len(d.Members) > 0 && content.RootOwner(d.Owner)); msg != "" {
			add("destination %q %s%s", d.Destination, msg, extractHint(d))
		}
		checkArchive(d, add)
		if msg := safepath.Mode(d.Mode); msg != "" {
			add("mode %s", msg)
		}
		if !content.ValidOwner(d.Owner) {
			add("owner %q must be user or user:group", d.Owner)
		}
	}
	return errs
}

// checkArchive checks what applies to an archive or to a file only.
func checkArchive(d Download, add func(string, ...any)) {
	if d.StripComponents < 0 || d.StripComponents > maxStrip {
		add("strip_components %d must be between 0 and %d", d.StripComponents, maxStrip)
	}
	if !d.Extract && d.StripComponents != 0 {
		add("strip_components needs extract = true")
	}
	if d.Extract && d.Mode != "" {
		add("mode applies to a file; with extract = true the archive's modes are kept")
	}
}

// extractHint says, for a download refused a system directory, how one
// may go there: named members, as root.
func extractHint(d Download) string {
	if d.Extract && safepath.IsSystem(d.Destination) {
		return " (an archive may add to it only with members, owned by root)"
	}
	return ""
}

// Fetch stages every download in the work dir with its sha256 checked,
// and reports the sha256 an unchecked one turned out to have.
func (Kind) Fetch(_ context.Context, env content.Env, ds []Download) (content.Fetch, error) {
	var f content.Fetch
	for i, d := range ds {
		what := fmt.Sprintf("downloads[%d]", i)
		u, g := content.SplitOwner(d.Owner)
		f.Owners = append(f.Owners, content.Owner{What: what, User: u, Group: g})
		f.URLs = append(f.URLs, content.URL{What: what, URL: d.URL, SHA256: d.SHA256, Dst: Staged(env.WorkDir, i)})
		if d.InsecureSkipChecksum {
			f.Warnings = append(f.Warnings, fmt.Sprintf("downloads[%d]: insecure_skip_checksum = true: %s is installed without a pinned sha256: not verified", i, d.URL))
			// its sha256, as found, for image.json
			f.Script.Call("fatimage_download_sum", strconv.Itoa(i), Staged(env.WorkDir, i))
		}
	}
	return f, nil
}

// Install puts each checked download in place.
func (Kind) Install(env content.Env, ds []Download) (content.Script, error) {
	var sc content.Script
	for i, d := range ds {
		what := fmt.Sprintf("downloads[%d]", i)
		u, g := content.SplitOwner(d.Owner)
		if d.Extract {
			sc.Call("fatimage_download_extract", append([]string{what, Staged(env.WorkDir, i), d.Destination, strconv.Itoa(d.StripComponents), u, g}, d.Members...)...)
		} else {
			sc.Call("fatimage_download_file", what, Staged(env.WorkDir, i), d.Destination, u, g, d.ModeOrDefault())
		}
	}
	return sc, nil
}

// Record is a download in image.json.
type Record struct {
	URL    string `json:"url"`
	SHA256 string `json:"sha256"`
	// Unchecked: insecure_skip_checksum, no sha256 was pinned; SHA256
	// is then the one the file had.
	Unchecked bool `json:"unchecked,omitempty"`
}

// Record is image.json's `downloads`, by Identity.
func (Kind) Record(env content.Env, ds []Download) (map[string]any, error) {
	if len(ds) == 0 {
		return nil, nil
	}
	sums := ParseSums(env.Fetched)
	r := map[string]Record{}
	for i, d := range ds {
		sum := strings.ToLower(d.SHA256)
		if d.InsecureSkipChecksum {
			sum = sums[i] // as found
		}
		r[d.Identity()] = Record{URL: d.URL, SHA256: sum, Unchecked: d.InsecureSkipChecksum}
	}
	return map[string]any{"downloads": r}, nil
}

// ParseSums reads the "DOWNLOAD-SHA256 <i> <sha256>" lines.
func ParseSums(out string) map[int]string {
	sums := map[int]string{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) != 3 || f[0] != "DOWNLOAD-SHA256" {
			continue
		}
		if i, err := strconv.Atoi(f[1]); err == nil {
			sums[i] = f[2]
		}
	}
	return sums
}
