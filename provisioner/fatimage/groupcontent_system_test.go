package fatimage

import (
	"strings"
	"testing"

	"github.com/stackhpc/packer-plugin-fatimage/internal/content/lines"
)

// The system rows of the contract (issue #15): the built-in groups'
// line edits, as the appliance's tuned, cluster and cuda do them.
func TestGroupLineEdits(t *testing.T) {
	c := mustGroups(t, []string{"cluster", "tuned"}, nil)
	want := []lines.LineEdit{
		{Path: "/etc/profile", Regexp: `^HOSTNAME=\$\(/usr/bin/hostnamectl --transient`, Absent: true},
		{Path: "/usr/lib/tuned/hpc-compute/tuned.conf", Section: "sysctl", Regexp: `^[[:space:]]*vm\.min_free_kbytes[[:space:]]*=`, Line: "vm.min_free_kbytes=>135168"},
	}
	if len(c.LineEdits) != len(want) || c.LineEdits[0] != want[0] || c.LineEdits[1] != want[1] {
		t.Errorf("line_edits %+v\nwant %+v", c.LineEdits, want)
	}
	if f, ok := fileAt(c, "/etc"); !ok || !f.Directory || f.Mode != "0755" || f.Owner != "" {
		t.Errorf("/etc: %+v (want a root:root 0755 directory)", f)
	}
	// the template's edit of the same line replaces the group's
	c = mustGroups(t, []string{"tuned"}, map[string]any{"line_edits": []map[string]any{{
		"path": "/usr/lib/tuned/hpc-compute/tuned.conf", "section": "sysctl",
		"regexp": `^[[:space:]]*vm\.min_free_kbytes[[:space:]]*=`, "line": "vm.min_free_kbytes=>262144"}}})
	if len(c.LineEdits) != 1 || c.LineEdits[0].Line != "vm.min_free_kbytes=>262144" {
		t.Errorf("template override: %+v", c.LineEdits)
	}
	// the cuda group's PATH line, evaluated at login as the appliance's
	c = mustGroups(t, []string{"cuda"}, map[string]any{"repos": []map[string]string{{"name": "cuda", "repo_file": "cuda", "repo_name": "cuda", "baseurl": "http://lab.invalid/cuda/", "gpgcheck": "0"}}})
	if len(c.LineEdits) != 1 || c.LineEdits[0].Path != "/etc/profile.d/sh.local" ||
		c.LineEdits[0].Line != "export PATH=$PATH:$(ls -1d /usr/local/cuda-* | sort -V | tail -1)/bin" || c.LineEdits[0].Create {
		t.Errorf("cuda line_edits %+v", c.LineEdits)
	}
	// a template's bad edit fails at validate time, naming the field
	_, err := prepareGroups(t, nil, map[string]any{"line_edits": []map[string]any{{"path": "/etc/x", "regexp": `\s+`, "line": "x"}}})
	if err == nil || !strings.Contains(err.Error(), "line_edits[0]: regexp") {
		t.Errorf("bad regexp: %v", err)
	}
}

// systemd (1.9): a slurm_app.conf drop-in holding only a comment for each
// unit whose group the host is in; chrony [CI] (1.7): /etc/chrony.conf
// from the role's defaults.
func TestGroupSlurmAppDropInsAndChrony(t *testing.T) {
	c := mustGroups(t, []string{"opensearch", "grafana", "openhpc", "prometheus", "chrony"}, nil)
	for _, unit := range []string{"opensearch", "grafana-server", "slurmdbd", "slurmctld", "prometheus"} {
		dir := "/etc/systemd/system/" + unit + ".service.d"
		d, ok := fileAt(c, dir)
		if !ok || !d.Directory || d.Mode != "" {
			t.Errorf("%s: %+v (want a directory, default mode 0755)", dir, d)
		}
		f, ok := fileAt(c, dir+"/slurm_app.conf")
		if !ok || f.Mode != "" || !strings.HasPrefix(f.Content, "# ") || strings.Count(f.Content, "\n") != 1 {
			t.Errorf("%s/slurm_app.conf: %+v (want one comment line, 0644)", dir, f)
		}
	}
	f, ok := fileAt(c, "/etc/chrony.conf")
	if !ok || f.Mode != "0644" || strings.Count(f.Content, "iburst minpoll 8\n") != 4 ||
		!strings.HasPrefix(f.Content, "allow 10/8\nallow 192.168/16\nallow 172.16/12\ncommandkey 1\n") ||
		!strings.Contains(f.Content, "\nlocal stratum 10\nlog tracking measurements statistics\nlogchange 0.5\nlogdir /var/log/chrony\nmaxupdateskew 100.0\nrtconutc\nrtcsync\nserver ") {
		t.Errorf("chrony.conf %+v", f)
	}
	// the groups of compute nodes (without Open OnDemand's) write none of them
	for _, f := range mustGroups(t, []string{"kernel_modules", "dnf_repos", "journald", "cluster", "openhpc", "always", "node_exporter"}, nil).Files {
		if strings.HasSuffix(f.Destination, "slurm_app.conf") && !strings.Contains(f.Destination, "slurm") {
			t.Errorf("compute writes %s", f.Destination)
		}
	}
}
