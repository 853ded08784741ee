package fatimage

import (
	"context"
	"strings"
)

// stepGrafanaPlugins unpacks the pinned plugins' checked zips and installs
// the others ("<id> <version>") with grafana-cli, each unless that
// version is there already.
func stepGrafanaPlugins(ctx context.Context, s *state) error {
	s.say("grafana plugins")
	for _, w := range s.plan.grafanaWarnings() {
		s.say("WARNING: " + w)
	}
	sc := newScript("grafana-plugins")
	if s.cfg.GrafanaPluginURL != "" {
		sc.set("GRAFANA_REPO", s.cfg.GrafanaPluginURL)
	}
	pins, unpinned := s.plan.grafanaPins()
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
