package fatimage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content/dashboards"
)

func TestScriptInstallGrafanaDashboards(t *testing.T) {
	got := installScript(t, dashboards.Kind{}, []dashboards.GrafanaDashboard{{ID: 1, Revision: 2, Replacements: map[string]string{"DS_B": "b", "DS_A": "a"}}, {Source: "/x/my dash.json"}}).calls.String()
	want := "fatimage_grafana_dashboard 'grafana_dashboards[0]' '/w/grafana-dashboard-0.json' '/var/lib/grafana/dashboards/1.json' 'DS_A' 'a' 'DS_B' 'b'\n" +
		"fatimage_grafana_dashboard 'grafana_dashboards[1]' '/w/grafana-dashboard-1.json' '/var/lib/grafana/dashboards/my dash.json'\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	sums := dashboards.ParseSums("DASHBOARD grafana_dashboards[1] "+strings.Repeat("c", 64)+"\nDASHBOARD grafana_dashboards[0] nope\n", 2)
	if sums[0] != "" || sums[1] != strings.Repeat("c", 64) {
		t.Errorf("sums %q", sums)
	}
}

// The placeholder rule the VM applies, run here by sh on a dashboard:
// whole JSON strings, bare or ${...}; nothing else changes.
func TestDashboardReplaceShell(t *testing.T) {
	f := filepath.Join(t.TempDir(), "d.json")
	in := `{"__inputs":[{"name":"DS_PROMETHEUS"}],"a":"${DS_PROMETHEUS}","b":"DS_SLURMSTATS","c":"${DS_PROMETHEUS_OTHER}","d":"x DS_PROMETHEUS"}`
	if err := os.WriteFile(f, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	sc := newScript(kindBody(dashboards.Kind{})).call("fatimage_dashboard_replace", f, "DS_PROMETHEUS", "prometheus", "DS_SLURMSTATS", "slurm stats")
	if out, err := runLocal(t, t.TempDir(), sc); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got, _ := os.ReadFile(f)
	want := `{"__inputs":[{"name":"prometheus"}],"a":"prometheus","b":"slurm stats","c":"${DS_PROMETHEUS_OTHER}","d":"x DS_PROMETHEUS"}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
