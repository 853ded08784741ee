package dashboards

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content"
)

// The record takes each dashboard's sha256 from the install's reports
// and fails naming the first dashboard without one.
func TestRecord(t *testing.T) {
	ds := []GrafanaDashboard{{ID: 1, Revision: 2, SHA256: strings.Repeat("a", 64)}, {Source: "/x/mine.json"}}
	env := content.Env{Options: map[string]string{URLOption: "http://mirror/"}, Installed: "DASHBOARD grafana_dashboards[0] " + strings.Repeat("c", 64) + "\n"}
	if _, err := (Kind{}).Record(env, ds); err == nil || err.Error() != "grafana_dashboards[1]: the install did not report the dashboard's sha256" {
		t.Errorf("missing report: %v", err)
	}
	env.Installed += "DASHBOARD grafana_dashboards[1] " + strings.Repeat("d", 64) + "\n"
	r, err := Kind{}.Record(env, ds)
	got, _ := r["grafana_dashboards"].(map[string]Record)
	if err != nil || got["1.json"].Origin != "http://mirror/api/dashboards/1/revisions/2/download" || !got["1.json"].ChecksumVerified ||
		got["mine.json"].SHA256 != strings.Repeat("d", 64) || got["mine.json"].ChecksumVerified {
		t.Errorf("record %+v: %v", got, err)
	}
}

// A local dashboard is checked against its pin on the host and staged;
// one from grafana.com is a URL of the mirror.
func TestFetch(t *testing.T) {
	src := filepath.Join(t.TempDir(), "mine.json")
	if err := os.WriteFile(src, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("{}"))
	env := content.Env{WorkDir: "/w", Options: map[string]string{URLOption: DefaultURL}}
	f, err := Kind{}.Fetch(context.Background(), env, []GrafanaDashboard{{ID: 7, Revision: 1}, {Source: src, SHA256: hex.EncodeToString(sum[:])}})
	if err != nil || len(f.URLs) != 1 || f.URLs[0].URL != "https://grafana.com/api/dashboards/7/revisions/1/download" ||
		len(f.Script.Staged) != 1 || f.Script.Staged[0].Name != "grafana-dashboard-1.json" || len(f.Owners) != 2 || f.Owners[1].User != "grafana" {
		t.Errorf("fetch %+v: %v", f, err)
	}
	_, err = Kind{}.Fetch(context.Background(), env, []GrafanaDashboard{{Source: src, SHA256: strings.Repeat("0", 64)}})
	if err == nil || !strings.Contains(err.Error(), "grafana_dashboards[0]: sha256 mismatch: want "+strings.Repeat("0", 64)) {
		t.Errorf("mismatch: %v", err)
	}
}
