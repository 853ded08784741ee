package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/needs"
)

func TestParseCounts(t *testing.T) {
	sessions := "1.0\t10.0.0.1 40000 10.0.0.2 22\tid -un\n" +
		"1.1\t10.0.0.1 40000 10.0.0.2 22\tscp -vt /var/tmp/x\n" +
		"2.0\t10.0.0.1 40002 10.0.0.2 22\t/usr/lib/openssh/sftp-server\n\n"
	dnf := "123\t/usr/bin/dnf -y update\n456\t/tmp/ansible_dnf_payload.zip\n"
	c := ParseCounts(sessions, dnf)
	if c.Sessions != 3 || c.Connections != 2 || c.DNF != 2 {
		t.Errorf("%+v", c)
	}
	if c := ParseCounts("", ""); c.Sessions != 0 || c.DNF != 0 {
		t.Errorf("empty: %+v", c)
	}
}

func TestFloorScripts(t *testing.T) {
	r := Recording{Events: []Event{
		{Command: "id -un"},
		{Command: "umask 077 && mkdir -p '/var/tmp/w'"},
		{Path: "/var/tmp/w/01-update.sh", Data: []byte("dnf -y update\n")},
		{Command: "sudo -n sh -eu /var/tmp/w/01-update.sh"},
		{Command: bootIDCmd},
		{Path: "/var/tmp/w/02-reboot.sh", Data: []byte("nohup sh -c 'sleep 2; systemctl reboot || reboot' &\n")},
		{Command: "sudo -n sh -eu /var/tmp/w/02-reboot.sh"},
		{Command: bootIDCmd},
		{Command: "umask 077 && mkdir -p '/var/tmp/w'"},
		{Path: "/var/tmp/w/03-final.sh", Data: []byte("rm -rf /var/tmp/w\n")},
		{Command: "sudo -n sh -eu /var/tmp/w/03-final.sh"},
	}}
	s := r.FloorScripts()
	if len(s) != 2 {
		t.Fatalf("%d scripts", len(s))
	}
	if strings.Contains(s[0], "id -un") || strings.Contains(s[0], "boot_id") || strings.Contains(s[0], "02-reboot") ||
		!strings.HasSuffix(s[0], "sudo -n systemctl reboot\n") || !strings.Contains(s[0], "base64 -d > '/var/tmp/w/01-update.sh'") {
		t.Errorf("first script:\n%s", s[0])
	}
	if !strings.Contains(s[1], "mkdir -p") || !strings.Contains(s[1], "03-final.sh") || strings.Contains(s[1], "reboot") {
		t.Errorf("second script:\n%s", s[1])
	}
	// a script without a reboot stays one
	if got := (&Recording{Events: r.Events[:4]}).FloorScripts(); len(got) != 1 {
		t.Errorf("%d scripts without a reboot", len(got))
	}
}

func TestTableAndMedian(t *testing.T) {
	var b strings.Builder
	(&Table{Title: "T", Header: []string{"a", "bb"}, Rows: [][]string{{"xxx", "1"}}, Notes: []string{"n"}}).Print(&b)
	if want := "\n== T\na    bb\nxxx  1\n   n\n\n"; b.String() != want {
		t.Errorf("%q", b.String())
	}
	rs := []Result{{Wall: 3 * time.Second}, {Wall: time.Second}, {Wall: 2 * time.Second}}
	if m := median(rs); m.Wall != 2*time.Second {
		t.Errorf("median %s", m.Wall)
	}
	if m := MedianDuration([]time.Duration{4, 1, 3, 2}); m != 2 {
		t.Errorf("median %d", m)
	}
}

func TestPlaybook(t *testing.T) {
	for name, pb := range map[string][]byte{"fatimage.yml": Playbook, "expert.yml": ExpertPlaybook} {
		t.Run(name, func(t *testing.T) { checkPlaybook(t, pb) })
	}
}

func checkPlaybook(t *testing.T, pb []byte) {
	var plays []map[string]any
	if err := yaml.Unmarshal(pb, &plays); err != nil || len(plays) != 1 {
		t.Fatalf("%v (%d plays)", err, len(plays))
	}
	needs.Tools(t, "/usr/bin/ansible-playbook")
	dir := t.TempDir()
	f := filepath.Join(dir, "fatimage.yml")
	if err := os.WriteFile(f, pb, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hosts"), []byte("[build]\nvm ansible_host=127.0.0.1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/usr/bin/ansible-playbook", "--syntax-check", "-i", filepath.Join(dir, "hosts"), f)
	cmd.Env = append(os.Environ(), AnsibleEnv(dir)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
