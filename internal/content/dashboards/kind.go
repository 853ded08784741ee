package dashboards

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
)

// Kind is the grafana_dashboards kind.
type Kind struct{}

var (
	_ content.Kind[GrafanaDashboard]     = Kind{}
	_ content.Fetcher[GrafanaDashboard]  = Kind{}
	_ content.Recorder[GrafanaDashboard] = Kind{}
)

const (
	// URLOption is the option of grafana.com's mirror, in Env.Options.
	URLOption = "grafana_dashboards_url"
	// DefaultURL is its default.
	DefaultURL = "https://grafana.com"
	// Dir is where Grafana's file provider (the provisioning file of the
	// grafana group) reads dashboards, the appliance's
	// grafana_data_dir/dashboards.
	Dir = "/var/lib/grafana/dashboards"
)

var (
	rePlaceholder = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	// a data source name as it goes into a JSON string through sed
	reDataSource = regexp.MustCompile(`^[A-Za-z0-9_. -]+$`)
	reSHA256Hex  = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

//go:embed dashboards.sh
var shell string

// Option implements content.Kind.
func (Kind) Option() string { return "grafana_dashboards" }

// ID is the file: a template entry for it replaces a group's.
func (Kind) ID(d GrafanaDashboard) string { return "file " + d.Name() }

// Shell implements content.Kind: dashboards.sh.
func (Kind) Shell() string { return shell }

// Name is the dashboard's file name in Dir.
func (d GrafanaDashboard) Name() string {
	if d.Source != "" {
		return filepath.Base(d.Source)
	}
	return fmt.Sprintf("%d.json", d.ID)
}

// Destination is where the dashboard goes.
func (d GrafanaDashboard) Destination() string { return path.Join(Dir, d.Name()) }

// url is where dashboard id's revision is downloaded, as grafana.com serves it.
func (d GrafanaDashboard) url(base string) string {
	return fmt.Sprintf("%s/api/dashboards/%d/revisions/%d/download", strings.TrimRight(base, "/"), d.ID, d.Revision)
}

// Origin is the URL (from the mirror base) or local file the dashboard
// comes from.
func (d GrafanaDashboard) Origin(base string) string {
	if d.Source != "" {
		return d.Source
	}
	return d.url(base)
}

// staged is where dashboard i lands in the work dir (its name relative to it).
func staged(i int) string { return fmt.Sprintf("grafana-dashboard-%d.json", i) }

// Validate checks the dashboards; a source must be a file on the build host.
func (Kind) Validate(ds []GrafanaDashboard) []error {
	var errs []error
	names := map[string]int{}
	for i, d := range ds {
		add := content.ItemErrs(&errs, "grafana_dashboards", i)
		checkSource(d, add)
		if d.SHA256 != "" {
			if h, err := hex.DecodeString(d.SHA256); err != nil || len(h) != sha256.Size {
				add("sha256 must be 64 hex digits")
			}
		}
		for _, k := range slices.Sorted(maps.Keys(d.Replacements)) {
			if !rePlaceholder.MatchString(k) {
				add("replacements: placeholder %q must be letters, digits, _ and - (e.g. DS_PROMETHEUS)", k)
			}
			if !reDataSource.MatchString(d.Replacements[k]) {
				add("replacements: %s: data source name %q must be letters, digits, space, _, . and -", k, d.Replacements[k])
			}
		}
		if j, dup := names[d.Name()]; dup {
			add("%s is also grafana_dashboards[%d]'s file", d.Destination(), j)
		}
		names[d.Name()] = i
	}
	return errs
}

// checkSource checks where the dashboard comes from: grafana.com or a file.
func checkSource(d GrafanaDashboard, add func(string, ...any)) {
	switch {
	case d.Source != "" && (d.ID != 0 || d.Revision != 0):
		add("source and id/revision exclude each other")
	case d.Source != "":
		if st, err := os.Stat(d.Source); err != nil {
			add("source: %v", err)
		} else if !st.Mode().IsRegular() {
			add("source %s is not a regular file", d.Source)
		}
	case d.ID <= 0:
		add("id (a grafana.com dashboard id) or source is required")
	case d.Revision <= 0:
		add("revision is required with id %d (grafana.com keeps every revision; the build takes the one pinned)", d.ID)
	}
}

// Fetch stages every dashboard: the downloads as every URL-based content
// is fetched, with their sha256 checked when pinned, the local files
// checked here and uploaded.
func (Kind) Fetch(_ context.Context, env content.Env, ds []GrafanaDashboard) (content.Fetch, error) {
	var f content.Fetch
	for i, d := range ds {
		what := fmt.Sprintf("grafana_dashboards[%d]", i)
		f.Owners = append(f.Owners, content.Owner{What: what, User: "grafana", Group: "grafana"})
		if d.Source == "" {
			f.URLs = append(f.URLs, content.URL{What: what, URL: d.url(env.Options[URLOption]), SHA256: d.SHA256, Dst: path.Join(env.WorkDir, staged(i))})
			continue
		}
		data, err := os.ReadFile(d.Source)
		if err != nil {
			return f, fmt.Errorf("%s: %w", what, err)
		}
		if d.SHA256 != "" {
			if got := sha256.Sum256(data); !strings.EqualFold(hex.EncodeToString(got[:]), d.SHA256) {
				return f, fmt.Errorf("%s: sha256 mismatch: want %s, got %x (%s); nothing installed", what, strings.ToLower(d.SHA256), got, d.Source)
			}
		}
		f.Script.Staged = append(f.Script.Staged, content.Staged{Name: staged(i), Data: data})
	}
	return f, nil
}

// Install places the staged dashboards; each reports "DASHBOARD
// grafana_dashboards[i] <sha256 as fetched>".
func (Kind) Install(env content.Env, ds []GrafanaDashboard) (content.Script, error) {
	var sc content.Script
	for i, d := range ds {
		args := []string{fmt.Sprintf("grafana_dashboards[%d]", i), path.Join(env.WorkDir, staged(i)), d.Destination()}
		for _, k := range slices.Sorted(maps.Keys(d.Replacements)) {
			args = append(args, k, d.Replacements[k])
		}
		sc.Call("fatimage_grafana_dashboard", args...)
	}
	return sc, nil
}

// Record is a dashboard in image.json, by file name.
type Record struct {
	Origin string `json:"origin"` // URL or local file
	// SHA256 of the file as fetched, before the replacements;
	// ChecksumVerified says whether it was checked against a pin.
	SHA256           string            `json:"sha256"`
	ChecksumVerified bool              `json:"checksum_verified"`
	Replacements     map[string]string `json:"replacements,omitempty"`
}

// Record is image.json's grafana_dashboards, from the sha256 each
// dashboard had as fetched (the install's reports).
func (Kind) Record(env content.Env, ds []GrafanaDashboard) (map[string]any, error) {
	if len(ds) == 0 {
		return nil, nil
	}
	sums := ParseSums(env.Installed, len(ds))
	if err := content.RequireReports(sums, "grafana_dashboards", "the install did not report the dashboard's sha256"); err != nil {
		return nil, err
	}
	out := map[string]Record{}
	for i, d := range ds {
		out[d.Name()] = Record{Origin: d.Origin(env.Options[URLOption]), SHA256: sums[i], ChecksumVerified: d.SHA256 != "", Replacements: d.Replacements}
	}
	return map[string]any{"grafana_dashboards": out}, nil
}

// ParseSums reads the sha256 each of n dashboards had as fetched.
func ParseSums(out string, n int) []string {
	return content.Reports(out, "DASHBOARD", "grafana_dashboards", n, reSHA256Hex.MatchString)
}
