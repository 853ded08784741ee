//go:generate packer-sdc struct-markdown

package fatimage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/safepath"
)

// Download is a file fetched by URL and checked against its sha256 before
// anything is installed: put at a path, or (extract) a tar archive
// unpacked into a directory.
type Download struct {
	// http(s) URL of the file.
	URL string `mapstructure:"url" required:"true"`
	// sha256 (hex) of the file. Required unless `insecure_skip_checksum`.
	SHA256 string `mapstructure:"sha256"`
	// Install the file without a sha256 to check it against, as the
	// appliance fetches its k3s, helm, k9s and opkssh downloads: whatever
	// the URL serves on the day goes into the image. Warned about in the
	// build output and marked unchecked in image.json (with the sha256
	// the file had).
	InsecureSkipChecksum bool `mapstructure:"insecure_skip_checksum"`
	// Absolute path of the file, or with `extract` the directory the
	// archive is unpacked into (files already there and not in the
	// archive are kept). Not a system directory (/usr, /etc, ...), except
	// for `members` of an archive added to one as root (/usr/bin).
	Destination string `mapstructure:"destination" required:"true"`
	// Unpack the file as a tar archive (gzip, bzip2 and xz compression
	// are recognised) instead of copying it.
	Extract bool `mapstructure:"extract"`
	// With `extract`: leading path components dropped from each entry,
	// like tar's --strip-components (1 drops an archive's top
	// directory), at most 16.
	StripComponents int `mapstructure:"strip_components"`
	// With `extract`: only these members of the archive (paths as the
	// archive names them, before strip_components), e.g.
	// ["linux-amd64/helm"]. Default: everything.
	Members []string `mapstructure:"members"`
	// Owner as user or user:group. Default root:root.
	Owner string `mapstructure:"owner"`
	// Octal mode of a file download. Default 0644. With `extract` the
	// archive's modes are kept.
	Mode string `mapstructure:"mode"`
}

// staged is where download i lands in the work dir.
func (d Download) staged(workDir string, i int) string {
	return path.Join(workDir, fmt.Sprintf("download-%d", i))
}

// identity is what a template entry must match to replace a group's:
// the destination, and the members unpacked there (helm and k9s both
// unpack one executable into /usr/bin).
func (d Download) identity() string {
	if len(d.Members) == 0 {
		return d.Destination
	}
	return d.Destination + " (members " + strings.Join(d.Members, ", ") + ")"
}

func (d Download) mode() string {
	if d.Mode == "" {
		return "0644"
	}
	return d.Mode
}

// checkPinnedSHA256 is the problem with a sha256 pin and its opt-out
// (insecure_skip_checksum), or "": one is required (why says why), not
// both, and a pin is 64 hex digits.
func checkPinnedSHA256(sum string, skip bool, why string) string {
	switch {
	case sum == "" && !skip:
		return "sha256 is required: " + why + " (insecure_skip_checksum = true installs whatever the URL serves)"
	case sum != "" && skip:
		return "sha256 and insecure_skip_checksum = true exclude each other"
	case sum != "":
		if h, err := hex.DecodeString(sum); err != nil || len(h) != sha256.Size {
			return "sha256 must be 64 hex digits"
		}
	}
	return ""
}

func validateDownloads(ds []Download) []error {
	var errs []error
	for i, d := range ds {
		add := itemErrs(&errs, "downloads", i)
		if msg := checkHTTPURL("url", d.URL); msg != "" {
			add("%s", msg)
		}
		if msg := checkPinnedSHA256(d.SHA256, d.InsecureSkipChecksum, "the download is checked before anything is installed"); msg != "" {
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
		if msg := safepath.Dest(d.Destination, d.Extract && len(d.Members) > 0 && rootOwner(d.Owner)); msg != "" {
			add("destination %q %s%s", d.Destination, msg, extractHint(d))
		}
		if d.StripComponents < 0 || d.StripComponents > maxStrip {
			add("strip_components %d must be between 0 and %d", d.StripComponents, maxStrip)
		}
		if !d.Extract && d.StripComponents != 0 {
			add("strip_components needs extract = true")
		}
		if d.Extract && d.Mode != "" {
			add("mode applies to a file; with extract = true the archive's modes are kept")
		}
		if msg := safepath.Mode(d.Mode); msg != "" {
			add("mode %s", msg)
		}
		if !validOwner(d.Owner) {
			add("owner %q must be user or user:group", d.Owner)
		}
	}
	return errs
}

// fetchDownloads stages every download and its sha256 check (sc).
func (s *state) fetchDownloads(ctx context.Context, sc *vmScript) error {
	var items []fetchItem
	for i, d := range s.plan.Downloads {
		items = append(items, fetchItem{what: fmt.Sprintf("downloads[%d]", i), url: d.URL, sum: d.SHA256, dst: d.staged(s.workDir, i)})
	}
	if err := s.stageFetches(ctx, sc, s.cfg.contentSource(), items); err != nil {
		return err
	}
	// an unchecked download's sha256, as found, for image.json
	for i, d := range s.plan.Downloads {
		if d.InsecureSkipChecksum {
			sc.use("download").call("fatimage_download_sum", strconv.Itoa(i), d.staged(s.workDir, i))
		}
	}
	return nil
}

// parseDownloadSums reads the "DOWNLOAD-SHA256 <i> <sha256>" lines.
func parseDownloadSums(out string) map[int]string {
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

// downloadWarnings are said when the downloads are fetched: every opt-out.
func downloadWarnings(ds []Download) []string {
	var out []string
	for i, d := range ds {
		if d.InsecureSkipChecksum {
			out = append(out, fmt.Sprintf("downloads[%d]: insecure_skip_checksum = true: %s is installed without a pinned sha256: not verified", i, d.URL))
		}
	}
	return out
}

// scriptInstallDownloads puts each checked download in place.
func scriptInstallDownloads(ds []Download, workDir string) *vmScript {
	sc := newScript("download")
	for i, d := range ds {
		what := fmt.Sprintf("downloads[%d]", i)
		u, g := splitOwner(d.Owner)
		if d.Extract {
			sc.call("fatimage_download_extract", append([]string{what, d.staged(workDir, i), d.Destination, strconv.Itoa(d.StripComponents), u, g}, d.Members...)...)
		} else {
			sc.call("fatimage_download_file", what, d.staged(workDir, i), d.Destination, u, g, d.mode())
		}
	}
	return sc
}
