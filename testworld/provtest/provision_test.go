package provtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	packersdk "github.com/hashicorp/packer-plugin-sdk/packer"

	"github.com/stackhpc/packer-plugin-fatimage/provisioner/fatimage"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/repos"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/logtail"
)

var theLab *lab.Lab

func TestMain(m *testing.M) {
	os.Exit(labtest.Main(m, &theLab))
}

func requireLab(t *testing.T) {
	t.Helper()
	labtest.Require(t)
}

// labVM boots a lab VM for one test and connects the SDK's SSH
// communicator to it; the VM is deleted, and the cloud checked clean,
// when the test ends.
func labVM(t *testing.T, name string, timeout time.Duration) (context.Context, *labtest.Server, packersdk.Communicator) {
	t.Helper()
	requireLab(t)
	t.Cleanup(func() { labtest.RequireClean(t, theLab) })
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	srv, cleanup, err := labtest.Boot(ctx, t, theLab, name, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	return ctx, srv, labtest.Communicator(t, srv.IP, srv.Signer)
}

// run runs a command over the communicator and returns its stdout.
func run(t *testing.T, comm packersdk.Communicator, command string) string {
	t.Helper()
	var stdout, stderr logtail.Buffer
	cmd := &packersdk.RemoteCmd{Command: command, Stdout: &stdout, Stderr: &stderr}
	if err := comm.Start(context.Background(), cmd); err != nil {
		t.Fatalf("%s: %v", command, err)
	}
	if status := cmd.Wait(); status != 0 {
		t.Fatalf("%s: exit status %d\n%s%s", command, status, stdout.String(), stderr.String())
	}
	return strings.TrimSpace(stdout.String())
}

func clearArkEnv(t *testing.T) {
	t.Setenv("ARK_USERNAME", "")
	t.Setenv("ARK_PASSWORD", "")
}

func labRepos(t *testing.T) []any {
	out := theLab.SnapshotRepos(repos.NewerTimestamp)
	if len(out) == 0 {
		t.Fatal("no newer snapshots in the lab")
	}
	return out
}

// labBinaries override the built-in binaries' checksums with those of
// the lab's stand-in tarballs (same names, versions and files).
func labBinaries() []any {
	var out []any
	for name, sum := range theLab.BinaryChecksums() {
		out = append(out, map[string]any{"name": name, "sha256": sum})
	}
	return out
}

// imageJSON is the part of /var/lib/image/image.json the tests check.
type imageJSON struct {
	PackageCount int               `json:"package_count"`
	Snapshots    map[string]string `json:"snapshots"`
	Binaries     map[string]struct {
		SHA256 string `json:"sha256"`
	} `json:"binaries"`
}

// labManifest is the part of manifest_output the tests check.
type labManifest struct {
	Image struct {
		Kernel        string            `json:"kernel"`
		PackageCount  int               `json:"package_count"`
		PackageDigest string            `json:"package_digest"`
		Snapshots     map[string]string `json:"snapshots"`
	} `json:"image"`
	Packages []string `json:"packages"`
	DNFRuns  int      `json:"dnf_runs"`
	Reboots  int      `json:"reboots"`
	Reboot   struct {
		Rebooted bool     `json:"rebooted"`
		Why      []string `json:"why"`
		Pending  []string `json:"pending_at_snapshot"`
	} `json:"reboot"`
}

func readManifest(t *testing.T, f string) labManifest {
	var m labManifest
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestProvisionLab(t *testing.T) {
	ctx, _, comm := labVM(t, "fatimage-prov", 15*time.Minute)
	password := theLab.Env["ARK_PASSWORD"]
	t.Setenv("ARK_USERNAME", theLab.Env["ARK_USERNAME"])
	t.Setenv("ARK_PASSWORD", password)
	dir := t.TempDir()
	upload := filepath.Join(dir, "hello.conf")
	if err := os.WriteFile(upload, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// a directory source, like the ansible-init playbooks
	tree := filepath.Join(dir, "playbooks")
	for _, err := range []error{
		os.MkdirAll(filepath.Join(tree, "roles", "compute_init"), 0o700),
		os.WriteFile(filepath.Join(tree, "10-compute-init.yml"), []byte("- hosts: localhost\n"), 0o600),
		os.WriteFile(filepath.Join(tree, "roles", "compute_init", "run.sh"), []byte("#!/bin/sh\n"), 0o700),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	raw := func(manifest string) map[string]any {
		return map[string]any{
			"binaries":         labBinaries(),
			"release_base_url": theLab.Env["LAB_RELEASES_URL"],
			// control's grafana dashboards from the lab
			"grafana_dashboards_url": theLab.Env["LAB_GRAFANA_URL"],
			"files": []any{
				map[string]any{"source": upload, "destination": "/etc/fatimage/hello.conf", "owner": "slurm", "mode": "0640"},
				map[string]any{"source": tree, "destination": "/etc/ansible-init/playbooks"},
			},
			"repos": labRepos(t),
			"gpg_keys": []any{map[string]any{
				"path": "/etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9", "key": string(theLab.Repos.GPGKeyFiles["RPM-GPG-KEY-Rocky-9"]),
			}},
			// firewalld: its package enables the unit, the build must not
			// (a control node's built-in sets: without an inventory or a
			// checkout "control" itself is refused)
			"groups": []string{"kernel_modules", "dnf_repos", "journald", "cluster", "openhpc", "always", "node_exporter", "prometheus", "alertmanager", "grafana", "firewalld"},
			// installed in the image already: with the update, the newest
			"packages": []string{"python3"},
			// keep SSH working for the checks and the second run
			"skip_cleanup_steps": []string{"ssh-host-keys", "login-ssh-keys", "resolv-conf"},
			"manifest_output":    manifest,
		}
	}
	bootBefore := run(t, comm, "cat /proc/sys/kernel/random/boot_id")

	var uiOut logtail.Buffer
	ui := &packersdk.BasicUi{Writer: &uiOut, ErrorWriter: &uiOut}
	var p1 fatimage.Provisioner
	m1 := filepath.Join(dir, "m1.json")
	if err := p1.Prepare(raw(m1)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := p1.Provision(ctx, ui, comm, nil); err != nil {
		t.Fatal(err)
	}
	man1 := readManifest(t, m1)
	t.Logf("first run: %s, %d dnf commands, %d reboots", time.Since(start).Round(time.Second), man1.DNFRuns, man1.Reboots)
	// reboot = "auto" and no step needs the running kernel: the update's
	// new kernel and the SELinux mode wait for the image's first boot
	if man1.Reboots != 0 || man1.Reboot.Rebooted || len(man1.Reboot.Why) != 0 {
		t.Errorf("reboots = %d (%+v), want 0", man1.Reboots, man1.Reboot)
	}
	if p := strings.Join(man1.Reboot.Pending, "; "); !strings.Contains(p, "kernel-core installed after the boot") || !strings.Contains(p, "SELinux mode set to disabled") {
		t.Errorf("pending reboot reasons %q", p)
	}
	if man1.DNFRuns > 2 {
		t.Errorf("%d dnf commands, want at most 2", man1.DNFRuns)
	}
	if after := run(t, comm, "cat /proc/sys/kernel/random/boot_id"); after != bootBefore {
		t.Error("the VM rebooted")
	}
	// packages at the newer versions
	wantKernel := "5.14.0-570.58.1.el9_6"
	if got := run(t, comm, "rpm -q --qf '%{VERSION}-%{RELEASE}\\n' kernel-core | sort -V | tail -n1"); got != wantKernel {
		t.Errorf("newest kernel-core %q, want %q", got, wantKernel)
	}
	if got := run(t, comm, "rpm -q --qf '%{VERSION}-%{RELEASE}\\n' python3"); got != "3.9.21-2.el9_6.1" {
		t.Errorf("python3 at %q, want the snapshot's 3.9.21-2.el9_6.1 (update on)", got)
	}
	for _, pkg := range []string{"slurm-slurmctld-ohpc", "munge", "epel-release"} {
		run(t, comm, "rpm -q "+pkg)
	}
	if got := run(t, comm, "rpm -q cockpit-ws >/dev/null 2>&1 && echo present || echo absent"); got != "absent" {
		t.Errorf("cockpit-ws %s", got)
	}
	if got := run(t, comm, "id -u slurm; id -u prometheus; getent group prometheus | cut -d: -f3; id -u grafana; getent group grafana | cut -d: -f3"); got != "202\n981\n976\n984\n979" {
		t.Errorf("ids %q", got)
	}
	// their groups made apart, as the appliance's entries: the primary
	// group is useradd -N's
	if got := run(t, comm, "id -gn prometheus; id -gn grafana"); got != "users\nusers" {
		t.Errorf("primary groups of prometheus, grafana: %q, want users (useradd -N's), as the appliance's user module makes them", got)
	}
	// the login user's home moved, SSH still works from it
	if got := run(t, comm, "getent passwd rocky | cut -d: -f6; test -e /home/rocky && echo old-home-left || echo old-home-gone; test -s /var/lib/rocky/.ssh/authorized_keys && echo keys"); got != "/var/lib/rocky\nold-home-gone\nkeys" {
		t.Errorf("login home: %q", got)
	}
	// services installed but left stopped and disabled
	for _, unit := range []string{"firewalld", "grafana-server", "slurmctld"} {
		if got := run(t, comm, "systemctl is-enabled "+unit+" || true; systemctl is-active "+unit+" || true"); got != "disabled\ninactive" {
			t.Errorf("%s: %q", unit, got)
		}
	}
	// grafana from its repo, with its plugin
	if got := run(t, comm, "rpm -q --qf '%{VERSION}\n' grafana; sudo -n grep -o '\"version\":\"[0-9.]*\"' /var/lib/grafana/plugins/grafana-opensearch-datasource/plugin.json"); got != "10.4.18\n\"version\":\"2.8.1\"" {
		t.Errorf("grafana: %q", got)
	}
	// the directory source, root-owned, modes as documented
	if got := run(t, comm, "cd /etc/ansible-init/playbooks && sudo -n stat -c '%n %U %a' 10-compute-init.yml roles roles/compute_init/run.sh"); got != "10-compute-init.yml root 644\nroles root 755\nroles/compute_init/run.sh root 755" {
		t.Errorf("directory source: %q", got)
	}
	// rocky.repo keeps the image's other sections, disabled
	if got := run(t, comm, "sudo -n grep -c '^\\[baseos-source\\]' /etc/yum.repos.d/rocky.repo"); got != "1" {
		t.Errorf("baseos-source section: %q", got)
	}
	// repositories disabled, no password left anywhere under /etc
	if got := run(t, comm, labtest.GrepAsRoot("-rlE '^[[:space:]]*enabled[[:space:]]*=[[:space:]]*1' /etc/yum.repos.d")); got != "" {
		t.Errorf("still enabled: %s", got)
	}
	if got := run(t, comm, labtest.GrepAsRoot("-rlF -e "+labtest.ShQuote(password)+" /etc")); got != "" {
		t.Errorf("password found in %s", got)
	}
	if got := strayFiles(run(t, comm, "ls -A /etc/yum.repos.d")); got != "" {
		t.Errorf("stray files in /etc/yum.repos.d: %s", got)
	}
	if got := run(t, comm, "sudo -n sed -n 's/^SELINUX=//p' /etc/selinux/config"); got != "disabled" {
		t.Errorf("SELINUX=%s", got)
	}
	if got := run(t, comm, "sudo -n stat -c '%U:%G %a' /etc/fatimage/hello.conf /etc/yum.repos.d/rocky.repo; sudo -n cat /etc/fatimage/hello.conf"); got != "slurm:slurm 640\nroot:root 600\nhello" {
		t.Errorf("files: %q", got)
	}
	if got := run(t, comm, "sudo -n stat -c '%U %a' /usr/local/bin/node_exporter /usr/local/bin/prometheus /usr/local/bin/promtool /usr/local/bin/alertmanager /usr/local/bin/amtool | sort -u"); got != "root 755" {
		t.Errorf("binaries: %q", got)
	}
	// node_exporter as the appliance's role leaves it: its directories the
	// user's, the systemd and textfile collectors on, the unit enabled
	if got := run(t, comm, "sudo -n stat -c '%n %U:%G %a' /etc/node_exporter /var/lib/node_exporter; systemctl is-enabled node_exporter.service; "+
		"grep -c -- '^ExecStart=/usr/local/bin/node_exporter --collector.systemd --collector.textfile --collector.textfile.directory=/var/lib/node_exporter ' /etc/systemd/system/node_exporter.service"); got != "/etc/node_exporter node-exp:node-exp 775\n/var/lib/node_exporter node-exp:node-exp 775\nenabled\n1" {
		t.Errorf("node_exporter: %q", got)
	}
	img := run(t, comm, "cat /var/lib/image/image.json")
	var info imageJSON
	if err := json.Unmarshal([]byte(img), &info); err != nil || info.PackageCount == 0 || info.Snapshots["baseos"] != repos.NewerTimestamp ||
		info.Binaries["node_exporter"].SHA256 != theLab.Releases.Checksums()["node_exporter-1.11.1.linux-amd64.tar.gz"] {
		t.Errorf("image.json %v: %s", err, img)
	}
	if man1.Image.PackageCount != len(man1.Packages) || man1.Reboots != 0 {
		t.Errorf("manifest %+v", man1.Image)
	}

	// cleanup steps ran
	if got := run(t, comm, "wc -c < /etc/machine-id; ls -A /tmp | wc -l; test -e /etc/NetworkManager/conf.d/99-cloud-init.conf && echo nm || echo no-nm"); got != "0\n0\nno-nm" {
		t.Errorf("cleanup: %q", got)
	}
	first := uiOut.String()
	for _, want := range []string{"fatimage: repositories", "a reboot is pending", "fatimage: packages: update, ", "created user slurm", "disabled firewalld.service", fmt.Sprintf("fatimage: done: %d dnf command(s), 0 reboot(s)", man1.DNFRuns)} {
		if !strings.Contains(first, want) {
			t.Errorf("first run output lacks %q", want)
		}
	}

	// A second run changes nothing.
	var p2 fatimage.Provisioner
	m2 := filepath.Join(dir, "m2.json")
	if err := p2.Prepare(raw(m2)); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if err := p2.Provision(ctx, ui, comm, nil); err != nil {
		t.Fatal(err)
	}
	man2 := readManifest(t, m2)
	t.Logf("second run: %s, %d dnf commands", time.Since(start).Round(time.Second), man2.DNFRuns)
	if man2.Reboots != 0 {
		t.Errorf("second run rebooted %d times", man2.Reboots)
	}
	if man2.Image.PackageCount != man1.Image.PackageCount || man2.Image.PackageDigest != man1.Image.PackageDigest {
		t.Errorf("second run changed packages: %d %s -> %d %s", man1.Image.PackageCount, man1.Image.PackageDigest, man2.Image.PackageCount, man2.Image.PackageDigest)
	}
	if got := run(t, comm, labtest.GrepAsRoot("-rlF -e "+labtest.ShQuote(password)+" /etc")); got != "" {
		t.Errorf("password found in %s after the second run", got)
	}
	second := strings.TrimPrefix(uiOut.String(), first)
	for _, want := range []string{"unchanged /usr/local/bin/prometheus", "SELinux already disabled", "user slurm exists", "user prometheus exists", "Nothing to do.", "home of rocky already /var/lib/rocky", "unchanged grafana plugin"} {
		if !strings.Contains(second, want) {
			t.Errorf("second run output lacks %q", want)
		}
	}
	for _, bad := range []string{"created user", "created group", "fatimage: reboot", "remove cockpit-ws", "+fatimage", "disabled firewalld"} {
		if strings.Contains(second, bad) {
			t.Errorf("second run output has %q", bad)
		}
	}
	if strings.Contains(uiOut.String(), password) {
		t.Error("the ui output carries the password")
	}
}

// reboot = "always" reboots even when nothing asks for it; "never" does
// not even when the update would.
func TestProvisionLabRebootModes(t *testing.T) {
	ctx, _, comm := labVM(t, "fatimage-reboot", 5*time.Minute)
	t.Setenv("ARK_USERNAME", theLab.Env["ARK_USERNAME"])
	t.Setenv("ARK_PASSWORD", theLab.Env["ARK_PASSWORD"])
	dir := t.TempDir()
	base := func(reboot string, update bool) map[string]any {
		return map[string]any{
			"manifest_output": filepath.Join(dir, reboot+".json"),
			"repos":           labRepos(t), "update": update, "reboot": reboot, "reboot_timeout": "2m",
			"gpg_keys": []any{map[string]any{
				"path": "/etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9", "key": string(theLab.Repos.GPGKeyFiles["RPM-GPG-KEY-Rocky-9"]),
			}},
			"skip_cleanup_steps": []string{"ssh-host-keys", "login-ssh-keys"},
		}
	}
	var never fatimage.Provisioner
	if err := never.Prepare(base("never", true)); err != nil {
		t.Fatal(err)
	}
	before := run(t, comm, "cat /proc/sys/kernel/random/boot_id")
	if err := never.Provision(ctx, packersdk.TestUi(t), comm, nil); err != nil {
		t.Fatal(err)
	}
	if readManifest(t, filepath.Join(dir, "never.json")).Reboots != 0 || run(t, comm, "cat /proc/sys/kernel/random/boot_id") != before {
		t.Errorf("reboot = never rebooted")
	}
	var always fatimage.Provisioner
	if err := always.Prepare(base("always", false)); err != nil {
		t.Fatal(err)
	}
	if err := always.Provision(ctx, packersdk.TestUi(t), comm, nil); err != nil {
		t.Fatal(err)
	}
	if readManifest(t, filepath.Join(dir, "always.json")).Reboots != 1 || run(t, comm, "cat /proc/sys/kernel/random/boot_id") == before {
		t.Errorf("reboot = always did not reboot")
	}
}

// With every cleanup step on, the login user's keys and the host keys go
// last: Provision still finishes, and the image keeps no build key.
func TestProvisionLabFinalCleanup(t *testing.T) {
	ctx, srv, comm := labVM(t, "fatimage-final", 5*time.Minute)
	clearArkEnv(t)
	var p fatimage.Provisioner
	if err := p.Prepare(map[string]any{"update": false, "selinux": "unchanged", "reboot": "never"}); err != nil {
		t.Fatal(err)
	}
	run(t, comm, "sudo -n sh -c 'touch /etc/ssh/ssh_host_test_key /etc/munge/munge.key 2>/dev/null || true'")
	if err := p.Provision(ctx, packersdk.TestUi(t), comm, nil); err != nil {
		t.Fatal(err)
	}
	// the open connection still works; a new login must not
	if got := run(t, comm, "test -e ~/.ssh && echo keys || echo no-keys; ls /etc/ssh/ssh_host_* 2>/dev/null | wc -l; ls -d /tmp/fatimage-* 2>/dev/null | wc -l"); got != "no-keys\n0\n0" {
		t.Errorf("after final cleanup: %q", got)
	}
	dctx, dcancel := context.WithTimeout(ctx, 3*time.Second)
	defer dcancel()
	if c, err := srv.Dial(dctx); err == nil {
		c.Close()
		t.Error("a new SSH login with the build key still works")
	}
}

// strayFiles are the names in an `ls -A` listing that are not *.repo.
func strayFiles(listing string) string {
	var stray []string
	for _, f := range strings.Fields(listing) {
		if !strings.HasSuffix(f, ".repo") {
			stray = append(stray, f)
		}
	}
	return strings.Join(stray, " ")
}
