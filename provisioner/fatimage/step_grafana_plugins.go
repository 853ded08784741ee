package fatimage

import (
	"context"
	"slices"
	"strings"
)

// grafanaPlugins are the groups' plugins and grafana_plugins.
func (c *Config) grafanaPlugins() []string {
	return appendUnique(slices.Clone(c.groupSets().GrafanaPlugins), c.GrafanaPlugins...)
}

// stepGrafanaPlugins unpacks the pinned plugins' checked zips and installs
// the others ("<id> <version>") with grafana-cli, each unless that
// version is there already.
func stepGrafanaPlugins(ctx context.Context, s *state) error {
	s.say("grafana plugins")
	for _, w := range s.cfg.grafanaWarnings() {
		s.say("WARNING: " + w)
	}
	sc := newScript("grafana-plugins")
	if s.cfg.GrafanaPluginURL != "" {
		sc.set("GRAFANA_REPO", s.cfg.GrafanaPluginURL)
	}
	pins, unpinned := s.cfg.grafanaPins()
	for _, g := range pins {
		sc.call("grafana_plugin_zip", g.ID, g.Version, g.staged(s.workDir))
	}
	for _, pl := range unpinned {
		id, ver, _ := strings.Cut(pl, " ")
		sc.call("grafana_plugin", id, ver)
	}
	_, err := s.runScript(ctx, sc)
	return err
}
