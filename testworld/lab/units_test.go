package lab_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/labtest"
	"github.com/stackhpc/packer-plugin-fatimage/testworld/lab/repos"
)

// rebootAndDial reboots the VM from inside and logs in to the new boot
// (told apart from the old one by its boot id).
func rebootAndDial(ctx context.Context, t *testing.T, srv *labtest.Server, c *labtest.Client) *labtest.Client {
	t.Helper()
	before := c.Run(t, "cat /proc/sys/kernel/random/boot_id")
	if s, err := c.NewSession(); err == nil {
		s.Run("sudo -n reboot") //nolint:errcheck // the connection may drop first
		s.Close()
	}
	c.Close()
	for {
		nc, err := srv.Dial(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s, err := nc.NewSession()
		if err == nil {
			out, err := s.Output("cat /proc/sys/kernel/random/boot_id")
			s.Close()
			if err == nil && strings.TrimSpace(string(out)) != before {
				return nc
			}
		}
		nc.Close()
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServiceUnitsFromDnf installs service packages with the VM's own dnf:
// their %post enables what Rocky's presets enable through the VM's
// systemd, nothing is started, and a unit disabled with --now stays
// disabled and inactive over a reboot while an enabled one comes up active.
func TestServiceUnitsFromDnf(t *testing.T) {
	labtest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, c, _ := labtest.BootDial(ctx, t, theLab, "units", "")
	defer func() { c.Close() }()
	var repo strings.Builder
	for _, r := range []struct{ key, path string }{{"baseos", "rocky/9.6/BaseOS/x86_64/os"}, {"appstream", "rocky/9.6/AppStream/x86_64/os"}} {
		fmt.Fprintf(&repo, "[lab-%s]\nname=lab %s\nbaseurl=%s/%s/%s\nusername=%s\npassword=%s\ngpgcheck=1\n\n",
			r.key, r.key, theLab.Env["ARK_CONTENT_URL"], r.path, repos.NewerTimestamp, lab.ArkUser, theLab.ArkPassword)
	}
	c.Run(t, "sudo tee /etc/yum.repos.d/lab.repo >/dev/null <<'EOF'\n"+repo.String()+"EOF")
	c.Run(t, "sudo rpm --import /etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9")
	// firewalld's library and daemon are Debian's, put aside in the VM
	// userland: the VM has them only once the RPMs hold them
	if got := c.Run(t, "python3 -c 'import firewall' 2>&1 | tail -1; ls /usr/sbin/firewalld /usr/lib/firewalld 2>&1 | wc -l"); !strings.Contains(got, "No module named 'firewall'") || !strings.HasSuffix(got, "2") {
		t.Errorf("before installing firewalld: %q, want no firewall module, no daemon and no /usr/lib/firewalld", got)
	}
	out := c.Run(t, "sudo dnf -y --disablerepo='*' --enablerepo='lab-*' install firewalld sssd-common munge 2>&1")
	// (Debian's systemd finds the units as /lib/systemd/system/..., Rocky's
	// as /usr/lib/systemd/system/...: the same files on a merged /usr.)
	for _, want := range []string{
		"Created symlink /etc/systemd/system/multi-user.target.wants/firewalld.service → ",
		"Created symlink /etc/systemd/system/multi-user.target.wants/sssd.service → ",
		"/lib/systemd/system/firewalld.service.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dnf install output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "scriptlet failed") || strings.Contains(out, "Error") || strings.Contains(out, "warning") {
		t.Errorf("dnf reports scriptlet trouble:\n%s", out)
	}
	check := func(cmd, want string) {
		t.Helper()
		if got := c.Run(t, cmd+"; true"); got != want {
			t.Errorf("%s: %q, want %q", cmd, got, want)
		}
	}
	check("systemctl is-enabled firewalld sssd munge", "enabled\nenabled\ndisabled")
	check("systemctl is-active firewalld sssd munge", "inactive\ninactive\ninactive") // installing starts nothing
	check("systemctl list-unit-files --no-legend firewalld.service munge.service | awk '{print $1, $2}'", "firewalld.service enabled\nmunge.service disabled")

	check("rpm -qf --qf '%{NAME}\\n' /usr/lib/python3/dist-packages/firewall /usr/sbin/firewalld /usr/lib/firewalld/zones/public.xml 2>&1",
		"python3-firewall\nfirewalld\nfirewalld")

	// the real daemon, in the VM's network namespace: its public zone
	// keeps SSH open, and the host's network is not its to change
	c.Run(t, "sudo systemctl start firewalld")
	check("sudo firewall-cmd --state; sudo firewall-cmd --get-default-zone; sudo firewall-cmd --list-services", "running\npublic\ncockpit dhcpv6-client ssh")
	if d, err := srv.Dial(ctx); err != nil {
		t.Errorf("a new SSH connection with firewalld running: %v", err)
	} else {
		d.Close()
	}
	c.Run(t, "sudo systemctl disable --now firewalld")
	check("systemctl is-enabled firewalld; systemctl is-active firewalld", "disabled\ninactive")
	c = rebootAndDial(ctx, t, srv, c)
	check("systemctl is-enabled firewalld sssd; systemctl is-active firewalld sssd", "disabled\nenabled\ninactive\nactive")

	// Erasing a package disables its units (%preun), leaving no dangling link.
	c.Run(t, "sudo dnf -y -q remove sssd-common")
	check("ls /etc/systemd/system/multi-user.target.wants | grep -c sssd", "0")
	check("systemctl is-enabled sssd 2>&1", "Failed to get unit file state for sssd.service: No such file or directory")
}

// TestReleasesUnreachableFromVMs blocks the release server for VMs only,
// directly and through $LAB_CONTROL_URL/releases.
func TestReleasesUnreachableFromVMs(t *testing.T) {
	labtest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, c, _ := labtest.BootDial(ctx, t, theLab, "no-releases", "")
	url := theLab.Env["LAB_RELEASES_URL"] + "/node_exporter/releases/download/v1.11.1/sha256sums.txt"
	curl := "curl -sS --max-time 5 -o /dev/null " + url
	host := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 5 * time.Second}
	hostGet := func() {
		t.Helper()
		resp, err := host.Get(url)
		if err != nil {
			t.Fatalf("host GET %s: %v", url, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("host GET %s: %s", url, resp.Status)
		}
	}
	c.Run(t, curl)

	if err := theLab.SetReleasesReachableFromVMs(false); err != nil {
		t.Fatal(err)
	}
	defer theLab.SetReleasesReachableFromVMs(true) //nolint:errcheck // checked below; Close removes it anyway
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err := sess.CombinedOutput(curl)
	took := time.Since(start)
	sess.Close()
	t.Logf("blocked curl after %v: %v: %s", took, err, out)
	// curl 7 "Couldn't connect to server" is its word for ECONNREFUSED.
	if err == nil || !(bytes.Contains(out, []byte("(7)")) || bytes.Contains(out, []byte("refused")) || bytes.Contains(out, []byte("reset"))) {
		t.Errorf("curl from the VM got through or failed oddly: %v: %s", err, out)
	}
	if took > 2*time.Second {
		t.Errorf("blocked curl took %v; want a fast failure", took)
	}
	hostGet()
	if err := theLab.SetReleasesReachableFromVMs(false); err != nil { // idempotent
		t.Fatal(err)
	}

	// Unblock through the control API, as another process would.
	req, _ := http.NewRequest(http.MethodPut, theLab.Env["LAB_CONTROL_URL"]+"/releases", strings.NewReader(`{"reachable_from_vms": true}`))
	resp, err := host.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	body.ReadFrom(resp.Body) //nolint:errcheck // compared below
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(body.String(), `"reachable_from_vms":true`) {
		t.Fatalf("PUT /_control/releases: %s %s", resp.Status, body.String())
	}
	if !theLab.ReleasesReachableFromVMs() {
		t.Fatal("ReleasesReachableFromVMs false after PUT true")
	}
	c.Run(t, curl)
	hostGet()
	// the test's VM still runs, and its security groups' chains name the
	// bridge too: only the blocking rule must be gone
	if out, err := exec.Command("iptables-save", "-t", "filter").CombinedOutput(); err == nil && hasRejectRule(string(out), theLab.Network.Bridge) {
		t.Errorf("the release server's REJECT rule is left:\n%s", out)
	}
}

// hasRejectRule: iptables-save's output has a rule refusing the VMs on
// bridge (SetServerReachableFromVMs's).
func hasRejectRule(save, bridge string) bool {
	for _, l := range strings.Split(save, "\n") {
		if strings.Contains(l, "-i "+bridge+" ") && strings.Contains(l, "-j REJECT") {
			return true
		}
	}
	return false
}

// TestCloseUnblocksReleases: a lab closed while the release server is
// blocked leaves no host iptables rule behind.
func TestCloseUnblocksReleases(t *testing.T) {
	labtest.Require(t)
	l, err := lab.Start(context.Background(), lab.Options{Dir: t.TempDir(), CacheDir: labtest.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.SetReleasesReachableFromVMs(false); err != nil {
		l.Close()
		t.Fatal(err)
	}
	if out, _ := exec.Command("iptables-save").CombinedOutput(); !strings.Contains(string(out), l.Network.Bridge) {
		t.Errorf("no rule for %s after SetReleasesReachableFromVMs(false):\n%s", l.Network.Bridge, out)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if out, _ := exec.Command("iptables-save").CombinedOutput(); strings.Contains(string(out), l.Network.Bridge) {
		t.Errorf("host iptables rules left after Close:\n%s", out)
	}
}

// TestBaseImageAsRocky checks what roles rely on in a Rocky GenericCloud
// image: /bin/sh is bash (shell tasks with `set -o pipefail`, `source`),
// libuser's tools and libselinux's Python module are there, and chrony is installed with chronyd enabled and running
// (mrlesmithjr.chrony writes /etc/chrony.conf and restarts chronyd). The
// daemon is the real chronyd; it keeps its hands off the clock, which is
// the host's, and only the package puts it in place.
func TestBaseImageAsRocky(t *testing.T) {
	labtest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, c, _ := labtest.BootDial(ctx, t, theLab, "as-rocky", "")
	defer func() { c.Close() }()
	check := func(cmd, want string) {
		t.Helper()
		// the whole list's stderr into stdout: ls's error and its listing
		// arrive over SSH's two channels in either order otherwise
		if got := c.Run(t, "{ "+cmd+"; } 2>&1; true"); got != want {
			t.Errorf("%s: %q, want %q", cmd, got, want)
		}
	}
	check("readlink -f /bin/sh", "/usr/bin/bash")
	// libuser, which Ansible's user module runs for a local user (the
	// appliance's rocky user, whose home it moves while rocky is logged in)
	check("sudo -n luseradd -M lab-local && sudo -n mkdir /home/lab-local && sudo -n touch /home/lab-local/f && "+
		"sudo -n lusermod -d /var/lib/lab-local -m lab-local && sudo -n lgroupmod -M lab-local adm && "+
		"getent passwd lab-local | cut -d: -f6; ls /var/lib/lab-local /home/lab-local; id -nG lab-local",
		"/var/lib/lab-local\nls: cannot access '/home/lab-local': No such file or directory\n/var/lib/lab-local:\nf\nlab-local adm")
	check(`sh -c 'set -o pipefail && false | true; echo "pipefail $?"; source /dev/null && echo sourced'`, "pipefail 1\nsourced")
	// libselinux's Python module, which ansible.posix.selinux (bootstrap.yml's
	// selinux play) imports: the policy from /etc/selinux/config, and SELinux
	// off at runtime (the host's kernel; the lab does not simulate it)
	check(`python3 -c 'import selinux; print(selinux.selinux_getpolicytype()[1], selinux.is_selinux_enabled())'`, "targeted 0")

	// the boot's end: chronyd may still be starting when sshd answers
	c.Run(t, "timeout 60 systemctl is-system-running --wait >/dev/null 2>&1; true")
	check("rpm -qf --qf '%{NAME}\\n' /usr/sbin/chronyd /usr/bin/chronyc /etc/chrony.conf /usr/lib/systemd/system/chronyd.service", "chrony\nchrony\nchrony\nchrony")
	check("systemctl is-enabled chronyd; systemctl is-active chronyd", "enabled\nactive")
	defer func() {
		if t.Failed() {
			t.Logf("chronyd's journal:\n%s", c.Run(t, "sudo -n journalctl -b -u chronyd --no-pager 2>&1; true"))
		}
	}()
	before := c.Run(t, "systemctl show -P MainPID chronyd")
	// what the appliance's chrony role writes, then its handler's restart
	c.Run(t, "printf 'allow 10/8\\ncommandkey 1\\ndriftfile /var/lib/chrony/chrony.drift\\ndumpdir /var/lib/chrony\\ndumponexit\\nkeyfile /etc/chrony/chrony.keys\\nlocal stratum 10\\nlog tracking measurements statistics\\nlogdir /var/log/chrony\\nrtconutc\\nrtcsync\\nserver 192.0.2.1 iburst minpoll 8\\n' | sudo -n tee /etc/chrony.conf >/dev/null")
	c.Run(t, "sudo -n systemctl restart chronyd; true")
	check("systemctl is-active chronyd", "active")
	pid := c.Run(t, "systemctl show -P MainPID chronyd")
	if pid == before || pid == "0" {
		t.Errorf("chronyd's main PID %s after the restart, %s before", pid, before)
	}
	check("ps -o user= -p "+pid, "chrony")
	check("chronyc -n sources | grep -c '^^. 192.0.2.1 '", "1") // the daemon answers, with the new configuration
	// (the journal is written asynchronously: wait for the restart's line)
	check("timeout 30 sh -c 'until [ \"$(sudo -n journalctl -b -u chronyd -o cat | grep -c \"Disabled control of system clock\")\" -ge 2 ]; do sleep 0.2; done'; "+
		"sudo -n journalctl -b -u chronyd -o cat | grep -c 'Disabled control of system clock'", "2")

	// without the package, no daemon: Debian's is not in the VM's way
	c.Run(t, "sudo -n rpm -e --nodeps chrony")
	check("ls /usr/sbin/chronyd /usr/bin/chronyc; systemctl is-enabled chronyd; systemctl is-active chronyd",
		"ls: cannot access '/usr/sbin/chronyd': No such file or directory\nls: cannot access '/usr/bin/chronyc': No such file or directory\nFailed to get unit file state for chronyd.service: No such file or directory\ninactive")
}
