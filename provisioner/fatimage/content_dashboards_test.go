package fatimage

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content/system"
)

func TestGrafanaDashboardValidation(t *testing.T) {
	src := filepath.Join(t.TempDir(), "mine.json")
	if err := os.WriteFile(src, []byte(`{"datasource":"${DS_PROMETHEUS}"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	dash := func(d ...map[string]any) map[string]any { return map[string]any{"grafana_dashboards": d} }
	runPrepareCases(t, []prepareCase{
		{"ok", dash(map[string]any{"id": 13427, "revision": 1, "replacements": map[string]string{"DS_PROMETHEUS": "prometheus"}},
			map[string]any{"source": src, "sha256": strings.Repeat("a", 64)}), ""},
		{"neither", dash(map[string]any{"replacements": map[string]string{"DS_X": "x"}}), "grafana_dashboards[0]: id (a grafana.com dashboard id) or source is required"},
		{"no revision", dash(map[string]any{"id": 4323}), "grafana_dashboards[0]: revision is required with id 4323"},
		{"both", dash(map[string]any{"id": 1, "revision": 1, "source": src}), "grafana_dashboards[0]: source and id/revision exclude each other"},
		{"missing source", dash(map[string]any{"source": src + ".gone"}), "grafana_dashboards[0]: source: stat " + src + ".gone: no such file or directory"},
		{"bad sha", dash(map[string]any{"id": 1, "revision": 1, "sha256": "abc"}), "grafana_dashboards[0]: sha256 must be 64 hex digits"},
		{"placeholder", dash(map[string]any{"id": 1, "revision": 1, "replacements": map[string]string{"DS/X": "x"}}),
			`grafana_dashboards[0]: replacements: placeholder "DS/X" must be letters, digits, _ and - (e.g. DS_PROMETHEUS)`},
		{"name", dash(map[string]any{"id": 1, "revision": 1, "replacements": map[string]string{"DS_X": "a&b"}}),
			`grafana_dashboards[0]: replacements: DS_X: data source name "a&b" must be letters, digits, space, _, . and -`},
		{"same file", dash(map[string]any{"id": 7, "revision": 1}, map[string]any{"id": 7, "revision": 2}),
			"grafana_dashboards[1]: /var/lib/grafana/dashboards/7.json is also grafana_dashboards[0]'s file"},
		{"url", map[string]any{"grafana_dashboards_url": "ftp://mirror"}, `grafana_dashboards_url "ftp://mirror" must be an http(s) URL`},
		{"netlib url", map[string]any{"netlib_url": "mirror/hpl"}, `netlib_url "mirror/hpl" must be an http(s) URL`},
	})
}

func dashboardNames(c *plan) []string {
	var out []string
	for _, d := range c.GrafanaDashboards {
		out = append(out, d.Name()+" "+d.Origin(c.cfg.grafanaDashboardsURL()))
	}
	return out
}

// The grafana group's dashboards: grafana.com's always, the Open
// OnDemand one only with openondemand, the appliance's own only from a
// checkout; the provisioning file for Grafana's file provider.
func TestGrafanaGroupDashboards(t *testing.T) {
	c := mustGroups(t, []string{"grafana"}, map[string]any{"grafana_dashboards_url": "http://mirror.example/"})
	want := []string{"13427.json http://mirror.example/api/dashboards/13427/revisions/1/download", "4323.json http://mirror.example/api/dashboards/4323/revisions/3/download"}
	if got := dashboardNames(c); !slices.Equal(got, want) {
		t.Errorf("grafana alone: %q", got)
	}
	if r := c.GrafanaDashboards[0].Replacements; len(r) != 2 || r["DS_PROMETHEUS"] != "prometheus" || r["DS_ELASTICSEARCH"] != "slurmstats" {
		t.Errorf("13427 replacements %v", r)
	}
	f, ok := fileAt(c, "/etc/grafana/provisioning/dashboards/ansible.yml")
	if !ok || f.Owner != "root:grafana" || f.Mode != "0640" || !strings.Contains(f.Content, "type: file") || !strings.Contains(f.Content, "path: /var/lib/grafana/dashboards\n") {
		t.Errorf("provisioning file %+v", f)
	}
	c = mustGroups(t, []string{"grafana", "openondemand"}, map[string]any{"appliance_dir": applianceDir})
	want = []string{"13427.json https://grafana.com/api/dashboards/13427/revisions/1/download", "4323.json https://grafana.com/api/dashboards/4323/revisions/3/download",
		"openhpc-slurm.json " + applianceDir + "/ansible/roles/grafana-dashboards/files/openhpc-slurm.json",
		"slurm-jobs.json " + applianceDir + "/ansible/roles/grafana-dashboards/files/slurm-jobs.json",
		"13465.json https://grafana.com/api/dashboards/13465/revisions/1/download"}
	if got := dashboardNames(c); !slices.Equal(got, want) {
		t.Errorf("grafana, openondemand and a checkout: %q", got)
	}
	// a template's entry for the same file replaces the group's (a pin)
	c = mustGroups(t, []string{"grafana"}, map[string]any{"grafana_dashboards": []map[string]any{{"id": 4323, "revision": 3, "sha256": strings.Repeat("b", 64)}}})
	if n := len(c.GrafanaDashboards); n != 2 || c.GrafanaDashboards[1].SHA256 != strings.Repeat("b", 64) {
		t.Errorf("pinned 4323: %+v", c.GrafanaDashboards)
	}
}

// mysql, opensearch and filebeat: our units, disabled, running the
// pulled image as podman; node_exporter's enabled, as node-exp.
func TestServiceGroupUnits(t *testing.T) {
	c := mustGroups(t, []string{"mysql", "opensearch", "filebeat", "node_exporter"}, map[string]any{"container_registry": "registry.lab:5000"})
	units := map[string]system.SystemdUnit{}
	for _, u := range c.SystemdUnits {
		units[u.Name] = u
	}
	for name, want := range map[string][]string{
		"mysql.service": {"User=podman", "EnvironmentFile=/etc/sysconfig/mysqld", "--volume /var/lib/mysql:/var/lib/mysql:U", " registry.lab:5000/library/mysql:8.0.30\n"},
		"opensearch.service": {"User=podman", "--volume /usr/share/opensearch/data:/usr/share/opensearch/data:U",
			"/usr/share/opensearch/config/opensearch.yml:/usr/share/opensearch/config/opensearch.yml:U", " registry.lab:5000/opensearchproject/opensearch:2.9.0\n"},
		"filebeat.service":      {"User=podman", "--volume /var/log/:/logs:ro", " registry.lab:5000/beats/filebeat-oss:7.12.1 "},
		"node_exporter.service": {"User=node-exp", "ExecStart=/usr/local/bin/node_exporter --collector.systemd "},
	} {
		u, ok := units[name]
		if !ok {
			t.Errorf("no %s in %v", name, c.SystemdUnits)
			continue
		}
		for _, w := range want {
			if !strings.Contains(u.Content, w) {
				t.Errorf("%s lacks %q:\n%s", name, w, u.Content)
			}
		}
		wantState := "disabled"
		if name == "node_exporter.service" {
			wantState = "enabled"
		}
		if u.UnitState() != wantState {
			t.Errorf("%s is %s", name, u.UnitState())
		}
	}
	// the client libraries in python3.9 itself, at their pins
	if len(c.PythonEnvs) != 1 || !c.PythonEnvs[0].System || c.PythonEnvs[0].Interpreter != "/usr/bin/python3.9" ||
		strings.Join(c.PythonEnvs[0].Requirements, ",") != "PyMySQL==1.1.1,cryptography==43.0.3" {
		t.Errorf("python_envs %+v", c.PythonEnvs)
	}
	if !slices.Contains(c.sets.Packages, "python39") || !slices.Contains(c.sets.Packages, "python3-pip") {
		t.Errorf("packages %v", c.sets.Packages)
	}
	var nodeExp *User
	for i, u := range c.users {
		if u.Name == "node-exp" {
			nodeExp = &c.users[i]
		}
	}
	if nodeExp == nil || !nodeExp.System || nodeExp.Group != "node-exp" || nodeExp.Shell != "/usr/sbin/nologin" {
		t.Errorf("node-exp user %+v", nodeExp)
	}
}

// node_exporter's unit runs what prometheus.prometheus.node_exporter
// (0.28.0, the collection the appliance pins, with the defaults the
// appliance leaves alone) writes into its unit: the systemd and textfile
// collectors, the textfile directory, the listen address and path, and
// the role's sandboxing; the role's directories are the user's. Without
// the systemd collector the appliance's node_systemd_unit_state alert
// has nothing to read.
func TestNodeExporterUnitHasTheRolesFlags(t *testing.T) {
	c := mustGroups(t, []string{"node_exporter"}, nil)
	var unit string
	for _, u := range c.SystemdUnits {
		if u.Name == "node_exporter.service" {
			unit = u.Content
		}
	}
	var flags []string
	for _, line := range strings.Split(unit, "\n") {
		if rest, ok := strings.CutPrefix(line, "ExecStart=/usr/local/bin/node_exporter "); ok {
			flags = strings.Fields(rest)
		}
	}
	want := []string{"--collector.systemd", "--collector.textfile", "--collector.textfile.directory=/var/lib/node_exporter",
		"--web.listen-address=0.0.0.0:9100", "--web.telemetry-path=/metrics"}
	if !slices.Equal(flags, want) {
		t.Errorf("ExecStart flags %q, want the role's %q:\n%s", flags, want, unit)
	}
	for _, line := range []string{"User=node-exp", "Group=node-exp", "SyslogIdentifier=node_exporter", "Restart=always", "StartLimitInterval=0",
		"ProtectHome=yes", "NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectControlGroups=true", "ProtectKernelModules=true", "ProtectKernelTunables=yes"} {
		if !slices.Contains(strings.Split(unit, "\n"), line) {
			t.Errorf("unit lacks the role's %q:\n%s", line, unit)
		}
	}
	for _, dir := range []string{"/etc/node_exporter", "/var/lib/node_exporter"} {
		if f, ok := fileAt(c, dir); !ok || !f.Directory || f.Owner != "node-exp:node-exp" || f.EffectiveMode() != "0775" {
			t.Errorf("%s: %+v, want a directory node-exp:node-exp 0775", dir, f)
		}
	}
}

// hpctests: the HPL source under /opt/hpl, pinned, from netlib or a mirror.
func TestHPCTestsDownload(t *testing.T) {
	for base, url := range map[string]string{
		"":                           "http://www.netlib.org/benchmark/hpl/hpl-2.3.tar.gz",
		"http://mirror.example/hpl/": "http://mirror.example/hpl/hpl-2.3.tar.gz",
	} {
		extra := map[string]any{}
		if base != "" {
			extra["netlib_url"] = base
		}
		c := mustGroups(t, []string{"hpctests"}, extra)
		if len(c.Downloads) != 1 || c.Downloads[0].URL != url || c.Downloads[0].Destination != "/opt/hpl/hpl-2.3.tar.gz" || c.Downloads[0].ModeOrDefault() != "0644" ||
			c.Downloads[0].SHA256 != "32c5c17d22330e6f2337b681aded51637fb6008d3f0eb7c277b163fadd612830" {
			t.Errorf("netlib_url %q: downloads %+v", base, c.Downloads)
		}
		if d, ok := fileAt(c, "/opt/hpl"); !ok || !d.Directory {
			t.Errorf("/opt/hpl %+v", d)
		}
	}
}
