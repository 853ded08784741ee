//go:generate packer-sdc struct-markdown

package fatimage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// GrafanaDashboard is a Grafana dashboard JSON file placed in
// /var/lib/grafana/dashboards (grafana:grafana, 0640, the directory
// 0755) for Grafana's file provider: a grafana.com dashboard by id and
// revision, fetched like every URL-based content, or a local file. Its
// datasource placeholders (`DS_*`, as a dashboard exported for sharing
// carries them) are replaced with the data source names the cluster
// configures, as the appliance's grafana-dashboards role does.
type GrafanaDashboard struct {
	// grafana.com dashboard id, fetched from
	// `<grafana_dashboards_url>/api/dashboards/<id>/revisions/<revision>/download`
	// into `<id>.json`. Not with `source`.
	ID int `mapstructure:"id"`
	// Revision of the dashboard `id`; required with it.
	Revision int `mapstructure:"revision"`
	// Local dashboard JSON file (e.g. from an appliance checkout), placed
	// under its own file name. Not with `id`.
	Source string `mapstructure:"source"`
	// sha256 (hex) of the file as fetched, before the replacements: the
	// download is checked against it before anything is installed.
	// grafana.com publishes none, so the built-in grafana group leaves it
	// unset as the appliance does; the sha256 found is recorded in
	// image.json either way.
	SHA256 string `mapstructure:"sha256"`
	// Placeholder -> data source name, e.g. { DS_PROMETHEUS = "prometheus" }:
	// every `"DS_PROMETHEUS"` and `"${DS_PROMETHEUS}"` JSON string becomes
	// `"prometheus"`.
	Replacements map[string]string `mapstructure:"replacements"`
}

const (
	defaultGrafanaDashboardsURL = "https://grafana.com"
	// grafanaDashboardsDir is where Grafana's file provider (the
	// provisioning file of the grafana group) reads dashboards, the
	// appliance's grafana_data_dir/dashboards.
	grafanaDashboardsDir = "/var/lib/grafana/dashboards"
)

var (
	rePlaceholder = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	// a data source name as it goes into a JSON string through sed
	reDataSource = regexp.MustCompile(`^[A-Za-z0-9_. -]+$`)
)

// name is the dashboard's file name in grafanaDashboardsDir.
func (d GrafanaDashboard) name() string {
	if d.Source != "" {
		return filepath.Base(d.Source)
	}
	return fmt.Sprintf("%d.json", d.ID)
}

func (d GrafanaDashboard) destination() string { return path.Join(grafanaDashboardsDir, d.name()) }

// url is where dashboard id's revision is downloaded, as grafana.com serves it.
func (d GrafanaDashboard) url(base string) string {
	return fmt.Sprintf("%s/api/dashboards/%d/revisions/%d/download", strings.TrimRight(base, "/"), d.ID, d.Revision)
}

// origin is the URL or local file the dashboard comes from.
func (d GrafanaDashboard) origin(base string) string {
	if d.Source != "" {
		return d.Source
	}
	return d.url(base)
}

// staged is where dashboard i lands in the work dir (its name relative to it).
func (d GrafanaDashboard) staged(i int) string { return fmt.Sprintf("grafana-dashboard-%d.json", i) }

func (c *Config) grafanaDashboardsURL() string {
	if c.GrafanaDashboardsURL == "" {
		return defaultGrafanaDashboardsURL
	}
	return c.GrafanaDashboardsURL
}

func validateGrafanaDashboards(ds []GrafanaDashboard) []error {
	var errs []error
	names := map[string]int{}
	for i, d := range ds {
		add := itemErrs(&errs, "grafana_dashboards", i)
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
		if j, dup := names[d.name()]; dup {
			add("%s is also grafana_dashboards[%d]'s file", d.destination(), j)
		}
		names[d.name()] = i
	}
	return errs
}

// fetchGrafanaDashboards stages every dashboard (sc): the downloads as
// every URL-based content is fetched, with their sha256 checked when
// pinned, the local files uploaded.
func (s *state) fetchGrafanaDashboards(ctx context.Context, sc *vmScript) error {
	c, p := s.cfg, s.plan
	var items []fetchItem
	var local []staged
	for i, d := range p.GrafanaDashboards {
		what := fmt.Sprintf("grafana_dashboards[%d]", i)
		if d.Source == "" {
			items = append(items, fetchItem{What: what, URL: d.url(c.grafanaDashboardsURL()), SHA256: d.SHA256, Dst: path.Join(s.workDir, d.staged(i))})
			continue
		}
		data, err := os.ReadFile(d.Source)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if d.SHA256 != "" {
			if got := sha256.Sum256(data); !strings.EqualFold(hex.EncodeToString(got[:]), d.SHA256) {
				return fmt.Errorf("%s: sha256 mismatch: want %s, got %x (%s); nothing installed", what, strings.ToLower(d.SHA256), got, d.Source)
			}
		}
		local = append(local, staged{Name: d.staged(i), Data: data})
	}
	if err := s.stage(sc, local...); err != nil {
		return err
	}
	return s.stageFetches(ctx, sc, c.contentSource(), items)
}

// scriptInstallGrafanaDashboards places the staged dashboards; each
// reports "DASHBOARD grafana_dashboards[i] <sha256 as fetched>".
func scriptInstallGrafanaDashboards(ds []GrafanaDashboard, workDir string) *vmScript {
	sc := newScript("dashboards")
	for i, d := range ds {
		args := []string{fmt.Sprintf("grafana_dashboards[%d]", i), path.Join(workDir, d.staged(i)), d.destination()}
		for _, k := range slices.Sorted(maps.Keys(d.Replacements)) {
			args = append(args, k, d.Replacements[k])
		}
		sc.call("fatimage_grafana_dashboard", args...)
	}
	return sc
}

// parseDashboardSums reads the sha256 each dashboard had as fetched.
func parseDashboardSums(out string, n int) []string {
	return parseReports(out, "DASHBOARD", "grafana_dashboards", n, func(v string) bool { return reSHA256Hex.MatchString(v) })
}

var reSHA256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// imageDashboardsRecord is image.json's grafana_dashboards, nil without any.
func (s *state) imageDashboardsRecord() map[string]imageDashboard {
	c, p := s.cfg, s.plan
	if len(p.GrafanaDashboards) == 0 {
		return nil
	}
	out := map[string]imageDashboard{}
	for i, d := range p.GrafanaDashboards {
		sum := ""
		if i < len(s.content.dashboardSums) {
			sum = s.content.dashboardSums[i]
		}
		out[d.name()] = imageDashboard{Origin: d.origin(c.grafanaDashboardsURL()), SHA256: sum, ChecksumVerified: d.SHA256 != "", Replacements: d.Replacements}
	}
	return out
}

// defaultNetlibURL is where the hpctests group's HPL source comes from.
const defaultNetlibURL = "http://www.netlib.org/benchmark/hpl"
