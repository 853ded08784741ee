package bench

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/gpgkeys"
	"github.com/stackhpc/packer-plugin-fatimage/internal/packagesets"
)

// TestControlContent: the control group's content reaches the playbooks
// with the provisioner's defaults filled in, and every standard
// repository's key for both OS majors.
func TestControlContent(t *testing.T) {
	groups, err := packagesets.Resolve([]string{"control"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := GroupContent(groups, "http://releases.lab/")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]FileSpec{}
	for _, f := range c.Files {
		files[f.Destination] = f
	}
	for dst, want := range map[string]FileSpec{
		"/etc/systemd/journald.conf.d":                              {Kind: "directory", Mode: "0770"},
		"/etc/systemd/journald.conf.d/ansible-slurm-appliance.conf": {Kind: "file", Mode: "0660", Content: "# Keep the journal across reboots (packer-plugin-fatimage, as the appliance's journald role)\n[Journal]\nStorage=persistent\n"},
		"/etc/systemd/system/slurmdbd.service.d":                    {Kind: "directory", Mode: "0755"},
	} {
		want.Destination = dst
		if files[dst] != want {
			t.Errorf("%s: %+v, want %+v", dst, files[dst], want)
		}
	}
	if f := files["/etc/grafana/provisioning/dashboards/ansible.yml"]; f.Owner != "root:grafana" || f.Mode != "0640" {
		t.Errorf("grafana provisioning file: %+v", f)
	}
	if len(c.Tmpfiles) != 1 || !strings.HasSuffix(c.Tmpfiles[0].Content, "-\n") {
		t.Errorf("tmpfiles (content ends in a newline): %+v", c.Tmpfiles)
	}
	if len(c.ModprobeBlacklist) != 1 || c.ModprobeBlacklist[0].Name != "appliance" || len(c.ModprobeBlacklist[0].Modules) == 0 {
		t.Errorf("modprobe_blacklist: %+v", c.ModprobeBlacklist)
	}
	if len(c.SystemdUnits) != 1 || c.SystemdUnits[0].Name != "node_exporter.service" || c.SystemdUnits[0].State != "enabled" {
		t.Errorf("systemd_units: %+v", c.SystemdUnits)
	}
	if len(c.LineEdits) != 1 || c.LineEdits[0].Path != "/etc/profile" || !c.LineEdits[0].Absent {
		t.Errorf("line_edits: %+v", c.LineEdits)
	}
	if len(c.Dashboards) != 2 || c.Dashboards[0].URL != "http://releases.lab/api/dashboards/13427/revisions/1/download" ||
		c.Dashboards[0].File != "13427.json" || c.Dashboards[0].Replacements[0] != [2]string{"DS_ELASTICSEARCH", "slurmstats"} {
		t.Errorf("grafana_dashboards: %+v", c.Dashboards)
	}
	// the extra vars the playbooks loop over: lists, never null
	vars := (&Workload{Content: c}).AnsibleVars()
	for _, k := range []string{"files", "line_edits", "systemd_units", "modprobe_blacklist", "tmpfiles", "limits", "sysctl", "grafana_dashboards"} {
		if data, _ := json.Marshal(vars[k]); string(data) == "null" {
			t.Errorf("extra var %s is null", k)
		}
	}

	site := []map[string]string{{"path": "/etc/pki/rpm-gpg/RPM-GPG-KEY-EPEL-9", "key": "site"}}
	keys := ImageKeys([]string{"baseos", "epel", "epel-cisco-openh264", "openhpc", "ceph"}, site, nil)
	var got []string
	for _, k := range keys {
		got = append(got, k.Major+" "+k.Path)
	}
	want := []string{"8 /etc/pki/rpm-gpg/RPM-GPG-KEY-EPEL-8", "8 /etc/pki/rpm-gpg/RPM-GPG-KEY-OpenHPC-2", "9 /etc/pki/rpm-gpg/RPM-GPG-KEY-OpenHPC-3",
		"8 /etc/pki/rpm-gpg/RPM-GPG-KEY-centos-storage-sig", "9 /etc/pki/rpm-gpg/RPM-GPG-KEY-centos-storage-sig", " /etc/pki/rpm-gpg/RPM-GPG-KEY-EPEL-9"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("keys:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if k, _ := gpgkeys.ByName("ceph", "9"); keys[3].Key != string(k.Armored()) {
		t.Error("a built-in key's block is not the provisioner's")
	}
}

// TestContentRefusesWhatPlaybooksLack: a kind the playbooks do not
// implement fails the workload instead of leaving the images unequal.
func TestContentRefusesWhatPlaybooksLack(t *testing.T) {
	for name, content := range map[string]map[string]any{
		"git_checkouts":   {"git_checkouts": []any{map[string]any{"repo": "x", "destination": "/opt/x"}}},
		"placeholder":     {"files": []any{map[string]any{"destination": "/x", "content": "{{git_base_url}}"}}},
		"section":         {"line_edits": []any{map[string]any{"path": "/x", "line": "a=1", "section": "s"}}},
		"local dashboard": {"grafana_dashboards": []any{map[string]any{"source": "/tmp/d.json"}}},
	} {
		_, err := GroupContent([]packagesets.Group{{Name: "g", Set: packagesets.Set{Content: content}}}, "http://x")
		if err == nil || !strings.Contains(err.Error(), `group "g"`) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestRcloneStub(t *testing.T) {
	s, err := RcloneStub()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s, "#!/bin/sh\n") || !strings.HasSuffix(s, "exit 1\n") {
		t.Errorf("%q", s)
	}
}
