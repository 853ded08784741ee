package fatimage

import "github.com/stackhpc/packer-plugin-fatimage/internal/content/dashboards"

// grafanaDashboardsURL is grafana_dashboards_url, defaulted.
func (c *Config) grafanaDashboardsURL() string {
	if c.GrafanaDashboardsURL == "" {
		return dashboards.DefaultURL
	}
	return c.GrafanaDashboardsURL
}

// defaultNetlibURL is where the hpctests group's HPL source comes from.
const defaultNetlibURL = "http://www.netlib.org/benchmark/hpl"
