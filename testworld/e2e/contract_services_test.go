package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/releases"
)

// servicesContractRows are the outside checks of the rows of the service
// groups (mysql, opensearch, filebeat, node_exporter, grafana, hpctests):
// our units and their states, the python3.9 client libraries at their
// pins, the dashboards with no placeholder left, the HPL source.
func servicesContractRows(t *testing.T) []contractRow {
	t.Helper()
	hpl, err := releases.HPLTarball()
	if err != nil {
		t.Fatal(err)
	}
	hplSum := sha256.Sum256(hpl)
	// a podman unit of ours: mode, left disabled and not running, as the podman user
	unit := func(name string) string {
		f := "/etc/systemd/system/" + name
		return "stat -c %a " + f + "; systemctl is-enabled " + name + " || true; systemctl is-active " + name + " || true; grep -c '^\\(User\\|Group\\)=podman$' " + f + "; "
	}
	return []contractRow{
		{"mysql: python39, python3-pip; pymysql and cryptography in python3.9 at the pins",
			"rpm -q --qf '%{NAME}\\n' --whatprovides python39 python3-pip; python3.9 -c 'import pymysql, cryptography; print(pymysql.__version__, cryptography.__version__)'",
			"python3\npython3-pip\n1.1.1 43.0.3"},
		{"mysql: mysql.service, podman unit, not enabled",
			unit("mysql.service") + "grep -c '^EnvironmentFile=/etc/sysconfig/mysqld$' /etc/systemd/system/mysql.service; grep -c -- '--volume /var/lib/mysql:/var/lib/mysql:U \\|/library/mysql:8.0.30$' /etc/systemd/system/mysql.service",
			"644\ndisabled\ninactive\n2\n1\n2"},
		{"opensearch: opensearch.service, volumes under /usr/share/opensearch, not enabled",
			unit("opensearch.service") + "grep -c -- '--volume /usr/share/opensearch/\\(data\\|config\\)' /etc/systemd/system/opensearch.service; grep -c '/opensearchproject/opensearch:2.9.0$' /etc/systemd/system/opensearch.service",
			"644\ndisabled\ninactive\n2\n4\n1"},
		{"filebeat: filebeat.service, not enabled",
			unit("filebeat.service") + "grep -c '/beats/filebeat-oss:7.12.1 ' /etc/systemd/system/filebeat.service",
			"644\ndisabled\ninactive\n2\n1"},
		{"node_exporter: node-exp, /usr/local/bin/node_exporter, unit enabled with the role's collectors and directories",
			"getent passwd node-exp | cut -d: -f3,4,7; id -gn node-exp; stat -c '%U %a' /usr/local/bin/node_exporter; systemctl is-enabled node_exporter.service; grep -c '^User=node-exp$' /etc/systemd/system/node_exporter.service; " +
				"grep -c -- '^ExecStart=/usr/local/bin/node_exporter --collector.systemd --collector.textfile --collector.textfile.directory=/var/lib/node_exporter ' /etc/systemd/system/node_exporter.service; " +
				"stat -c '%U:%G %a' /etc/node_exporter /var/lib/node_exporter",
			"975:975:/usr/sbin/nologin\nnode-exp\nroot 755\nenabled\n1\n1\nnode-exp:node-exp 775\nnode-exp:node-exp 775"},
		{"grafana: grafana-10.4.18, chkconfig, no grafana-data, grafana-server disabled",
			"rpm -q --qf '%{NAME}-%{VERSION}-%{RELEASE}\\n' grafana chkconfig; rpm -q grafana-data >/dev/null || echo no grafana-data; systemctl is-enabled grafana-server.service || true",
			"grafana-10.4.18-1\nchkconfig-1.24-2.el9\nno grafana-data\ndisabled"},
		{"grafana: dashboards 13427, 4323, 13465 and the appliance's two, DS_* replaced",
			"cd /var/lib/grafana/dashboards && LC_ALL=C ls; sudo stat -c '%U:%G %a' . *.json | sort -u; sudo grep -l 'DS_' *.json | wc -l; sudo grep -ho '\"datasource\": *\"[^\"]*\"' *.json | tr -d ' ' | sort -u",
			"13427.json\n13465.json\n4323.json\nopenhpc-slurm.json\nslurm-jobs.json\ngrafana:grafana 640\ngrafana:grafana 755\n0\n\"datasource\":\"prometheus\"\n\"datasource\":\"slurmstats\""},
		{"grafana: provisioning file",
			"sudo stat -c '%U:%G %a' /etc/grafana/provisioning/dashboards/ansible.yml; sudo grep -c '^ *\\(type: file\\|path: /var/lib/grafana/dashboards\\)$' /etc/grafana/provisioning/dashboards/ansible.yml",
			"root:grafana 640\n2"},
		{"hpctests: /opt/hpl/hpl-2.3.tar.gz",
			"stat -c '%U %a' /opt/hpl /opt/hpl/hpl-2.3.tar.gz; sha256sum /opt/hpl/hpl-2.3.tar.gz | cut -d' ' -f1",
			"root 755\nroot 644\n" + hex.EncodeToString(hplSum[:])},
	}
}

// checkServicesImageJSON: image.json records every dashboard by the
// sha256 it had as fetched, and the HPL source by its pin.
func checkServicesImageJSON(t *testing.T, info map[string]any) {
	t.Helper()
	content, _ := info["content"].(map[string]any)
	dashboards, _ := content["grafana_dashboards"].(map[string]any)
	want := map[string]string{}
	for _, d := range releases.DefaultGrafanaDashboards() {
		data, err := releases.DashboardJSON(d)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		want[strconv.Itoa(d.ID)+".json"] = hex.EncodeToString(sum[:])
	}
	for _, name := range []string{"openhpc-slurm.json", "slurm-jobs.json"} {
		want[name] = "" // a local file: any sha256, recorded
	}
	if len(dashboards) != len(want) {
		t.Errorf("image.json grafana_dashboards %v, want %d", dashboards, len(want))
	}
	for name, sum := range want {
		d, _ := dashboards[name].(map[string]any)
		got, _ := d["sha256"].(string)
		if len(got) != 64 || (sum != "" && got != sum) {
			t.Errorf("image.json grafana_dashboards[%s] = %v, want sha256 %s", name, d, sum)
		}
	}
	downloads, _ := content["downloads"].(map[string]any)
	if d, _ := downloads["/opt/hpl/hpl-2.3.tar.gz"].(map[string]any); d["sha256"] != theLab.Releases.SHA256(releases.HPLPath) {
		t.Errorf("image.json downloads /opt/hpl/hpl-2.3.tar.gz = %v", d)
	}
}
