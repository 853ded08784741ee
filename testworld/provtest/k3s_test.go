package provtest

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"

	"github.com/stackhpc/packer-plugin-fatimage/internal/appliance"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/appliancesite"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/releases"
)

// TestK3sRuntimeLab provisions a lab VM with the k3s group (the lab's
// stand-in k3s, which runs as Type=notify and answers kubectl and `token
// create`), then runs the appliance's own k3s runtime tasks on it through
// the site's Ansible, as a deploy does: server-runtime.yml writes the env
// file and starts and enables k3s, finds its node Ready through the
// kubectl link and, with a second k3s host in the inventory, creates a
// bootstrap token; agent-runtime.yml starts k3s-agent with its env file.
// The units must parse, arrive disabled and stopped, and run k3s with the
// node IP the env file gives.
func TestK3sRuntimeLab(t *testing.T) {
	ctx, srv, comm := labVM(t, "k3s-runtime", 15*time.Minute)
	raw := labConfig(t)
	raw["groups"] = []string{"k3s"}
	raw["github_releases_url"] = theLab.Releases.URL()
	// helm comes from its own host: the template's item for the same
	// place points it at the lab
	raw["downloads"] = []any{map[string]any{
		"url": theLab.Releases.FileURL(releases.HelmPath), "sha256": theLab.Releases.SHA256(releases.HelmPath),
		"destination": "/usr/bin", "extract": true, "strip_components": 1, "members": []string{"linux-amd64/helm"},
	}}
	provisionSite(ctx, t, srv, comm, raw)

	units := "/etc/systemd/system/k3s.service /etc/systemd/system/k3s-agent.service"
	// verify says what it ignores (an unknown value) without failing
	if out := run(t, comm, "sudo systemd-analyze verify "+units+" 2>&1 || echo FAILED"); strings.Contains(out, "FAILED") || strings.Contains(out, "k3s") {
		t.Errorf("systemd-analyze verify:\n%s", out)
	}
	for _, u := range []string{"k3s", "k3s-agent"} {
		// as systemd parsed the unit
		want := "Delegate=yes\nEnvironmentFiles=/etc/systemd/system/" + u + ".service.env (ignore_errors=yes)\nKillMode=process\nLimitNOFILE=1048576\nRestart=always\nTasksMax=infinity\nType=notify"
		if got := run(t, comm, "systemctl show -p Type,KillMode,Delegate,LimitNOFILE,TasksMax,Restart,EnvironmentFiles "+u+" | grep -v '^EnvironmentFiles=/etc/\\(default\\|sysconfig\\)/' | LC_ALL=C sort"); got != want {
			t.Errorf("%s as systemd has it:\n%s\nwant\n%s", u, got, want)
		}
		if got := run(t, comm, "systemctl is-enabled "+u+" || true; systemctl is-active "+u+" || true"); got != "disabled\ninactive" {
			t.Errorf("%s after the build: %q, want disabled and inactive", u, got)
		}
	}
	for _, l := range []string{"kubectl", "crictl", "ctr"} {
		if got := run(t, comm, "readlink /usr/bin/"+l); got != "/usr/bin/k3s" {
			t.Errorf("/usr/bin/%s links to %q", l, got)
		}
	}

	// the role's `set -o pipefail` needs Rocky's /bin/sh, bash; the lab
	// VM's is Debian's dash (docs/lab.md)
	run(t, comm, "sudo ln -sfn bash /bin/sh")
	site := appliancesite.New(t, appliancesite.Overrides, "k3s")
	// a second k3s host not yet joined: the role creates a token for it
	writeFile(t, filepath.Join(site.Environment, "inventory", "k3s-agents"), "[k3s]\nk3s-agent-not-joined ansible_host=192.0.2.10\n")
	tg := applianceTarget(srv)
	var log bytes.Buffer
	if err := site.Run(ctx, tg, appliance.Play{Role: "k3s", TasksFrom: "server-runtime.yml"}, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if !ranTask(log.String(), "Generate new bootstrap token") {
		t.Errorf("the role did not create a token:\n%s", log.String())
	}
	checkK3sRunning(t, comm, "k3s", srv.IP)
	if got := run(t, comm, "sudo kubectl get nodes --no-headers"); !strings.Contains(got, " Ready ") {
		t.Errorf("kubectl get nodes: %q", got)
	}

	log.Reset()
	vars := map[string]any{"k3s_bootstrap_token": "0a1b2c.0123456789abcdef", "k3s_server_name": srv.IP, "vault_k3s_node_password": "lab-node-password"}
	if err := site.Run(ctx, tg, appliance.Play{Role: "k3s", TasksFrom: "agent-runtime.yml", Vars: vars}, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	checkK3sRunning(t, comm, "k3s-agent", srv.IP)
}

// checkK3sRunning checks the unit is enabled and active, and that its
// main process got the env file's node IP.
func checkK3sRunning(t *testing.T, comm packersdk.Communicator, unit, ip string) {
	t.Helper()
	if got := run(t, comm, "systemctl is-enabled "+unit+" || true; systemctl is-active "+unit+" || true"); got != "enabled\nactive" {
		t.Errorf("%s: %q, want enabled and active\n%s", unit, got, run(t, comm, "sudo journalctl -u "+unit+" --no-pager | tail -20"))
		return
	}
	cmdline := run(t, comm, "sudo tr '\\0' ' ' < /proc/$(systemctl show -p MainPID --value "+unit+")/cmdline")
	if !slices.Contains(strings.Fields(cmdline), "--node-ip="+ip) {
		t.Errorf("%s runs %q, want --node-ip=%s from its env file", unit, cmdline, ip)
	}
}

// ranTask is whether Ansible's output shows the task run (changed or ok)
// rather than skipped.
func ranTask(out, task string) bool {
	_, after, ok := strings.Cut(out, task)
	if !ok {
		return false
	}
	for _, l := range strings.Split(after, "\n")[1:] {
		if l = strings.TrimSpace(l); l != "" {
			return strings.HasPrefix(l, "changed:") || strings.HasPrefix(l, "ok:")
		}
	}
	return false
}
