package rpms

import (
	"context"
	_ "embed"
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
)

// Kind is the rpm_urls kind.
type Kind struct{}

var (
	_ content.Kind[RPMURL]     = Kind{}
	_ content.Fetcher[RPMURL]  = Kind{}
	_ content.Recorder[RPMURL] = Kind{}
)

//go:embed rpms.sh
var shell string

// Option implements content.Kind.
func (Kind) Option() string { return "rpm_urls" }

// ID is the file name: a template entry for the same file (e.g. with its
// sha256 pinned, or from a mirror) replaces a group's.
func (Kind) ID(r RPMURL) string { return "file " + path.Base(r.URL) }

// Shell implements content.Kind: rpms.sh.
func (Kind) Shell() string { return shell }

// Staged is where rpm_urls[i] lands in the work dir; the .rpm suffix
// makes dnf take the argument as a file.
func Staged(workDir string, i int) string {
	return path.Join(workDir, fmt.Sprintf("rpm-url-%d.rpm", i))
}

// Validate checks the URLs and pins without network or VM.
func (Kind) Validate(rs []RPMURL) []error {
	var errs []error
	seen := map[string]int{}
	for i, r := range rs {
		add := content.ItemErrs(&errs, "rpm_urls", i)
		if msg := content.CheckURL("url", r.URL); msg != "" {
			add("%s", msg)
		} else if msg := checkRPMName(r.URL); msg != "" {
			add("%s", msg)
		} else if j, dup := seen[r.URL]; dup {
			add("url %s is also rpm_urls[%d]'s", r.URL, j)
		}
		seen[r.URL] = i
		if msg := content.CheckPinnedSHA256(r.SHA256, r.InsecureSkipChecksum, "the file is checked before any package work"); msg != "" {
			add("%s", msg)
		}
	}
	return errs
}

// checkRPMName is the problem with an rpm_urls url (a valid one) that
// does not name an .rpm file, "" when none: what it serves is installed
// as a package, so a page or an archive is refused here, not by dnf
// after the download.
func checkRPMName(s string) string {
	if u, err := url.Parse(s); err == nil && !strings.HasSuffix(u.Path, ".rpm") {
		return fmt.Sprintf("url %q does not name an .rpm file (its path must end in .rpm; other files are downloads)", s)
	}
	return ""
}

// Fetch stages every RPM in the work dir and checks each one's sha256
// and signature, all before any package work; every opt-out is warned
// about.
func (Kind) Fetch(_ context.Context, env content.Env, rs []RPMURL) (content.Fetch, error) {
	f := content.Fetch{Check: func(out string) error {
		_, err := ParseFetched(out, len(rs))
		return err
	}}
	f.Script.Say = fmt.Sprintf("rpm_urls: fetching and checking %d RPMs (content_source = %s)", len(rs), env.Source)
	for i, r := range rs {
		if r.InsecureSkipChecksum {
			f.Warnings = append(f.Warnings, fmt.Sprintf("rpm_urls[%d]: insecure_skip_checksum = true: %s is installed without a pinned sha256: not verified", i, r.URL))
		}
		if r.DisableGPGCheck {
			f.Warnings = append(f.Warnings, fmt.Sprintf("rpm_urls[%d]: disable_gpg_check = true: the signature of %s is not checked", i, r.URL))
		}
		f.URLs = append(f.URLs, content.URL{What: fmt.Sprintf("rpm_urls[%d]", i), URL: r.URL, SHA256: r.SHA256, Dst: Staged(env.WorkDir, i)})
	}
	for i, r := range rs {
		f.Script.Call("fatimage_rpm_check", fmt.Sprintf("rpm_urls[%d] (%s)", i, r.URL), strconv.Itoa(i), Staged(env.WorkDir, i), content.Flag(!r.DisableGPGCheck))
	}
	return f, nil
}

// Install is empty: the provisioner's packages step installs the staged
// files (Staged) in its one transaction with the repositories' packages.
func (Kind) Install(content.Env, []RPMURL) (content.Script, error) { return content.Script{}, nil }

// Fetched is what the fetch learnt of rpm_urls[i].
type Fetched struct {
	SHA256 string // of the file, checked or (insecure_skip_checksum) as found
	NVR    string // name-version-release from the file's header
	Name   string
}

// ParseFetched reads the "RPM-URL <i> <sha256> <name> <nvr>" lines of
// the fetch of n RPMs and refuses two URLs of one package.
func ParseFetched(out string, n int) ([]Fetched, error) {
	rpms := make([]Fetched, n)
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) != 5 || f[0] != "RPM-URL" {
			continue
		}
		i, err := strconv.Atoi(f[1])
		if err != nil || i < 0 || i >= n {
			continue
		}
		rpms[i] = Fetched{SHA256: f[2], Name: f[3], NVR: f[4]}
	}
	byName := map[string]int{}
	for i, r := range rpms {
		if r.NVR == "" {
			return nil, fmt.Errorf("rpm_urls[%d]: the fetch did not report the package", i)
		}
		if j, dup := byName[r.Name]; dup {
			return nil, fmt.Errorf("rpm_urls[%d]: package %s is also rpm_urls[%d]'s", i, r.Name, j)
		}
		byName[r.Name] = i
	}
	return rpms, nil
}

// Record is an RPM by URL in image.json, by package name.
type Record struct {
	URL string `json:"url"`
	NVR string `json:"nvr"`
	// SHA256 of the installed file; ChecksumVerified says whether it was
	// checked against a pinned one.
	SHA256           string `json:"sha256"`
	ChecksumVerified bool   `json:"checksum_verified"`
	GPGCheck         bool   `json:"gpgcheck"`
}

// Record is image.json's rpms, from the fetch's reports.
func (Kind) Record(env content.Env, rs []RPMURL) (map[string]any, error) {
	if len(rs) == 0 {
		return nil, nil
	}
	fetched, err := ParseFetched(env.Fetched, len(rs))
	if err != nil {
		return nil, err
	}
	out := map[string]Record{}
	for i, r := range rs {
		f := fetched[i]
		out[f.Name] = Record{URL: r.URL, NVR: f.NVR, SHA256: f.SHA256, ChecksumVerified: !r.InsecureSkipChecksum, GPGCheck: !r.DisableGPGCheck}
	}
	return map[string]any{"rpms": out}, nil
}
