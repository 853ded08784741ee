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

// stepGrafanaPlugins installs the plugins ("<id> <version>") not there yet.
func stepGrafanaPlugins(ctx context.Context, s *state) error {
	s.say("grafana plugins")
	sc := newScript("grafana-plugins")
	for _, pl := range s.cfg.grafanaPlugins() {
		id, ver, _ := strings.Cut(pl, " ")
		sc.call("grafana_plugin", id, ver)
	}
	_, err := s.runScript(ctx, sc)
	return err
}
