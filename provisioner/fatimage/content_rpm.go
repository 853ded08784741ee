//go:generate packer-sdc struct-markdown

package fatimage

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
)

// RPMURL is an RPM package fetched by URL (a release asset, a vendor's
// download) and installed in the same dnf transaction as the
// repositories' packages. The file is checked before any package work:
// its sha256, then its signature against the keys imported from
// `gpg_keys` (as dnf checks the repositories' packages).
type RPMURL struct {
	// http(s) URL of the .rpm file (its path ends in .rpm).
	URL string `mapstructure:"url" required:"true"`
	// sha256 (hex) of the file. Required unless `insecure_skip_checksum`.
	SHA256 string `mapstructure:"sha256"`
	// Install the file without a sha256 to check it against: whatever the
	// URL serves on the day goes into the image. Warned about in the build
	// output and recorded in image.json (with the sha256 the file had).
	InsecureSkipChecksum bool `mapstructure:"insecure_skip_checksum"`
	// Install the package without checking its signature, as the appliance
	// does for its unsigned downloads (prometheus-slurm-exporter,
	// code-server, k3s-selinux, nvidia-mig-manager). An unsigned package
	// needs it; warned about and recorded in image.json.
	DisableGPGCheck bool `mapstructure:"disable_gpg_check"`
}

// staged is where rpm_urls[i] lands in the work dir; the .rpm suffix
// makes dnf take the argument as a file.
func (r RPMURL) staged(workDir string, i int) string {
	return path.Join(workDir, fmt.Sprintf("rpm-url-%d.rpm", i))
}

func validateRPMURLs(rs []RPMURL) []error {
	var errs []error
	seen := map[string]int{}
	for i, r := range rs {
		add := itemErrs(&errs, "rpm_urls", i)
		if msg := checkHTTPURL("url", r.URL); msg != "" {
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

// rpmURLWarnings are said when the RPMs are fetched: every opt-out.
func rpmURLWarnings(rs []RPMURL) []string {
	var out []string
	for i, r := range rs {
		if r.InsecureSkipChecksum {
			out = append(out, fmt.Sprintf("rpm_urls[%d]: insecure_skip_checksum = true: %s is installed without a pinned sha256: not verified", i, r.URL))
		}
		if r.DisableGPGCheck {
			out = append(out, fmt.Sprintf("rpm_urls[%d]: disable_gpg_check = true: the signature of %s is not checked", i, r.URL))
		}
	}
	return out
}

// rpmURLFiles are the staged RPMs, installed with the packages.
func (s *state) rpmURLFiles() []string {
	var out []string
	for i, r := range s.plan.RPMURLs {
		out = append(out, r.staged(s.workDir, i))
	}
	return out
}

// stepFetchRPMs stages every RPM by URL in the work dir (downloaded by the
// VM, or by the plugin through its cache and uploaded) and checks each
// one's sha256 and signature, all before any package work.
func stepFetchRPMs(ctx context.Context, s *state) error {
	c, p := s.cfg, s.plan
	s.say(fmt.Sprintf("rpm_urls: fetching and checking %d RPMs (content_source = %s)", len(p.RPMURLs), c.contentSource()))
	for _, w := range rpmURLWarnings(p.RPMURLs) {
		s.say("WARNING: " + w)
	}
	sc := newScript("content", "rpm")
	var items []fetchItem
	for i, r := range p.RPMURLs {
		items = append(items, fetchItem{What: fmt.Sprintf("rpm_urls[%d]", i), URL: r.URL, SHA256: r.SHA256, Dst: r.staged(s.workDir, i)})
	}
	if err := s.stageFetches(ctx, sc, c.contentSource(), items); err != nil {
		return err
	}
	for i, r := range p.RPMURLs {
		sc.call("fatimage_rpm_check", fmt.Sprintf("rpm_urls[%d] (%s)", i, r.URL), strconv.Itoa(i), r.staged(s.workDir, i), flag01(!r.DisableGPGCheck))
	}
	out, err := s.runScript(ctx, sc)
	if err != nil {
		return err
	}
	s.content.rpms, err = parseFetchedRPMs(out, len(p.RPMURLs))
	return err
}

// parseFetchedRPMs reads the "RPM-URL <i> <sha256> <name> <nvr>" lines
// of the fetch and refuses two URLs of one package.
func parseFetchedRPMs(out string, n int) ([]fetchedRPM, error) {
	rpms := make([]fetchedRPM, n)
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) != 5 || f[0] != "RPM-URL" {
			continue
		}
		i, err := strconv.Atoi(f[1])
		if err != nil || i < 0 || i >= n {
			continue
		}
		rpms[i] = fetchedRPM{SHA256: f[2], Name: f[3], NVR: f[4]}
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

// imageRPMRecord is image.json's content.rpms, nil without rpm_urls.
func (s *state) imageRPMRecord() map[string]imageRPM {
	if len(s.content.rpms) == 0 {
		return nil
	}
	out := map[string]imageRPM{}
	for i, r := range s.plan.RPMURLs {
		f := s.content.rpms[i]
		out[f.Name] = imageRPM{URL: r.URL, NVR: f.NVR, SHA256: f.SHA256, ChecksumVerified: !r.InsecureSkipChecksum, GPGCheck: !r.DisableGPGCheck}
	}
	return out
}
