package fatimage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"slices"
	"strings"
)

// Pinned Grafana plugins: a plugin with a sha256 in grafana_plugin_sha256
// is a zip fetched like every URL-based content (by the VM or through the
// host cache), checked before any package work and unpacked where
// grafana-cli puts it; the others are left to grafana-cli on the VM.

const defaultGrafanaPluginURL = "https://grafana.com/api/plugins"

// grafanaPin is one pinned plugin.
type grafanaPin struct {
	ID, Version, SHA256 string
}

func (g grafanaPin) what() string { return "grafana_plugins: " + g.ID + " " + g.Version }

// url is the zip's download URL under base, as grafana-cli asks
// grafana.com for it (the linux-amd64 package).
func (g grafanaPin) url(base string) string {
	return fmt.Sprintf("%s/%s/versions/%s/download?os=linux&arch=amd64", strings.TrimRight(base, "/"), g.ID, g.Version)
}

// staged is where the zip lands in the work dir.
func (g grafanaPin) staged(workDir string) string {
	return path.Join(workDir, "grafana-plugin-"+g.ID+".zip")
}

func (c *Config) grafanaPluginURL() string {
	if c.GrafanaPluginURL == "" {
		return defaultGrafanaPluginURL
	}
	return c.GrafanaPluginURL
}

// grafanaPins are the plugins with a sha256, in grafanaPlugins' order;
// unpinned are the others ("<id> <version>").
func (p *plan) grafanaPins() (pins []grafanaPin, unpinned []string) {
	for _, pl := range p.grafanaPlugins() {
		id, ver, _ := strings.Cut(pl, " ")
		if sum, ok := p.cfg.GrafanaPluginSHA256[id]; ok {
			pins = append(pins, grafanaPin{ID: id, Version: ver, SHA256: strings.ToLower(sum)})
		} else {
			unpinned = append(unpinned, pl)
		}
	}
	return pins, unpinned
}

// validateGrafanaPins checks grafana_plugin_sha256 and grafana_plugin_url.
func validateGrafanaPins(c *Config, p *plan) []error {
	var errs problems
	if c.GrafanaPluginURL != "" {
		if msg := checkHTTPURL("grafana_plugin_url", c.GrafanaPluginURL); msg != "" {
			errs.add("%s", msg)
		}
	}
	var ids []string
	for _, pl := range p.grafanaPlugins() {
		id, _, _ := strings.Cut(pl, " ")
		ids = append(ids, id)
	}
	keys := make([]string, 0, len(c.GrafanaPluginSHA256))
	for id := range c.GrafanaPluginSHA256 {
		keys = append(keys, id)
	}
	slices.Sort(keys)
	for _, id := range keys {
		if !slices.Contains(ids, id) {
			errs.add("grafana_plugin_sha256: %q is not a plugin of grafana_plugins or the groups' (%s)", id, strings.Join(ids, ", "))
		}
		if h, err := hex.DecodeString(c.GrafanaPluginSHA256[id]); err != nil || len(h) != sha256.Size {
			errs.add("grafana_plugin_sha256: %s: sha256 must be 64 hex digits", id)
		}
	}
	return errs
}

// grafanaWarnings: plugins left to grafana-cli in host mode reach
// grafana.com from the VM.
func (p *plan) grafanaWarnings() []string {
	_, unpinned := p.grafanaPins()
	if p.cfg.contentSource() != "host" || len(unpinned) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("grafana_plugins: %s have no sha256 in grafana_plugin_sha256: grafana-cli installs them from the VM, which needs grafana.com although content_source = host",
		strings.Join(unpinned, ", "))}
}

// stepFetchGrafanaPlugins stages and checks the pinned plugins' zips.
func stepFetchGrafanaPlugins(ctx context.Context, s *state) error {
	c := s.cfg
	pins, _ := s.plan.grafanaPins()
	s.say(fmt.Sprintf("grafana plugins: fetching and checking %d zips (content_source = %s)", len(pins), c.contentSource()))
	sc := newScript("content")
	var items []fetchItem
	for _, g := range pins {
		items = append(items, fetchItem{What: g.what(), URL: g.url(c.grafanaPluginURL()), SHA256: g.SHA256, Dst: g.staged(s.workDir)})
	}
	if err := s.stageFetches(ctx, sc, c.contentSource(), items); err != nil {
		return err
	}
	_, err := s.runScript(ctx, sc)
	return err
}

func hasGrafanaPins(s *state) bool {
	pins, _ := s.plan.grafanaPins()
	return len(pins) > 0
}
