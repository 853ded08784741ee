package releases

import (
	"encoding/json"
	"fmt"
	"strings"
)

// What the built-in service groups fetch besides packages: Grafana
// dashboards at grafana.com's API paths, exported for sharing (DS_*
// datasource placeholders), and the HPL source at netlib's path. Each is
// a stand-in of ours, built deterministically so its sha256 is the same
// on every run.

// GrafanaDashboard is a dashboard revision served as grafana.com serves one.
type GrafanaDashboard struct {
	ID, Revision int
	// Placeholders are the DS_* inputs its panels use.
	Placeholders []string
}

// DefaultGrafanaDashboards are the appliance's grafana.com dashboards.
func DefaultGrafanaDashboards() []GrafanaDashboard {
	return []GrafanaDashboard{
		{ID: 13427, Revision: 1, Placeholders: []string{"DS_PROMETHEUS", "DS_ELASTICSEARCH"}},
		{ID: 4323, Revision: 3, Placeholders: []string{"DS_PROMETHEUS"}},
		{ID: 13465, Revision: 1, Placeholders: []string{"DS_PROMETHEUS"}},
	}
}

// Path is the dashboard's download path, as under https://grafana.com.
func (d GrafanaDashboard) Path() string {
	return fmt.Sprintf("/api/dashboards/%d/revisions/%d/download", d.ID, d.Revision)
}

// DashboardJSON is d as an exported dashboard: its inputs name the
// placeholders, and each panel refers to one as "${DS_...}".
func DashboardJSON(d GrafanaDashboard) ([]byte, error) {
	type input struct {
		Name string `json:"name"`
		Type string `json:"type"`
	}
	type panel struct {
		ID         int    `json:"id"`
		Title      string `json:"title"`
		Datasource string `json:"datasource"`
	}
	doc := struct {
		Inputs   []input `json:"__inputs"`
		Title    string  `json:"title"`
		Revision int     `json:"revision"`
		GnetID   int     `json:"gnetId"`
		Panels   []panel `json:"panels"`
	}{Title: fmt.Sprintf("Dashboard %d (lab stand-in)", d.ID), Revision: d.Revision, GnetID: d.ID}
	for i, p := range d.Placeholders {
		doc.Inputs = append(doc.Inputs, input{Name: p, Type: "datasource"})
		doc.Panels = append(doc.Panels, panel{ID: i + 1, Title: strings.ToLower(strings.TrimPrefix(p, "DS_")), Datasource: "${" + p + "}"})
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	return append(b, '\n'), err
}

// HPLPath is the HPL 2.3 source's path, as under http://www.netlib.org.
const HPLPath = "/benchmark/hpl/hpl-2.3.tar.gz"

// HPLTarball is the stand-in HPL 2.3 source tarball.
func HPLTarball() ([]byte, error) {
	return tarGz("hpl-2.3", []tarEntry{
		{"README", "HPL 2.3 (lab stand-in of netlib's source tarball)\n", 0o644},
		{"configure", "#!/bin/sh\necho 'HPL 2.3 configure (lab stand-in)'\n", 0o755},
	})
}

// addServiceFiles serves the dashboards, the HPL source and k3s's files.
func (s *Server) addServiceFiles() error {
	for _, d := range DefaultGrafanaDashboards() {
		data, err := DashboardJSON(d)
		if err != nil {
			return err
		}
		s.files[d.Path()] = data
	}
	data, err := HPLTarball()
	if err != nil {
		return err
	}
	s.files[HPLPath] = data
	return s.addK3sFiles()
}
