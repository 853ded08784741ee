//go:generate packer-sdc mapstructure-to-hcl2 -type GrafanaDashboard
//go:generate packer-sdc struct-markdown

// Package dashboards is the `grafana_dashboards` content kind: Grafana
// dashboards from grafana.com or local files, checked before any package
// work and placed for Grafana's file provider with their datasource
// placeholders replaced. Its VM side is dashboards.sh.
package dashboards

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
