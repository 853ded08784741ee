// Package needs decides what a test does when something it needs from the
// host is missing: root, a command from a Debian package, or a working
// kernel feature. With FATIMAGE_E2E=1 (make test, CI) a missing capability
// fails the test with the reason, so a machine that cannot run the lab never
// reports "ok" having run nothing; without it the test skips, visibly and
// with the same reason.
//
// It imports nothing from the lab so that the lab's own packages (vm, repos)
// can use it in their tests.
package needs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// RequireEnv, when set to 1, turns every missing capability into a failure.
const RequireEnv = "FATIMAGE_E2E"

// QuickEnv, when set to 1 (make test-quick), makes root unavailable even
// to root, so the lab and every test needing root skip: the quick loop
// runs what needs neither, the same on a contributor's laptop and as root.
const QuickEnv = "FATIMAGE_QUICK"

// Required reports whether missing capabilities fail tests (FATIMAGE_E2E=1).
func Required() bool { return os.Getenv(RequireEnv) == "1" }

// Unavailable stops tb because something it needs is missing: a failure
// under FATIMAGE_E2E=1, a skip otherwise. why names what is missing.
func Unavailable(tb testing.TB, why string) {
	tb.Helper()
	if Required() {
		tb.Fatalf("%s (and %s=1 requires this test to run)", why, RequireEnv)
	}
	tb.Skip(why)
}

// Root stops tb (see Unavailable) unless it runs as root.
func Root(tb testing.TB, what string) {
	tb.Helper()
	if err := root(what); err != nil {
		Unavailable(tb, err.Error())
	}
}

// Tools stops tb (see Unavailable) unless every command is found (on PATH,
// or at the absolute path given).
func Tools(tb testing.TB, commands ...string) {
	tb.Helper()
	if err := tools(commands...); err != nil {
		Unavailable(tb, err.Error())
	}
}

// packageOf names the Debian package (scripts/deps.sh installs it) that
// provides a command, for the message when it is missing.
var packageOf = map[string]string{
	"ip": "iproute2", "iptables": "iptables", "iptables-restore": "iptables", "iptables-save": "iptables", "unshare": "util-linux", "mount": "mount",
	"sshd": "openssh-server", "ssh-keygen": "openssh-client", "sudo": "sudo",
	"rpm": "rpm", "rpmbuild": "rpm", "rpmsign": "rpm", "dnf": "dnf",
	"createrepo_c": "createrepo-c", "modifyrepo_c": "createrepo-c",
	"gpg": "gnupg", "gpgconf": "gnupg", "tar": "tar",
	"openstack": "python3-openstackclient", "ansible-playbook": "ansible-core",
	"python3": "python3", "tinyproxy": "tinyproxy", "genisoimage": "genisoimage", "isoinfo": "genisoimage",
}

func tools(commands ...string) error {
	var missing []string
	for _, c := range commands {
		if _, err := exec.LookPath(c); err != nil {
			name := filepath.Base(c)
			if pkg, ok := packageOf[name]; ok {
				name += " (Debian package " + pkg + ")"
			}
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("not found: %s; run scripts/deps.sh as root", strings.Join(missing, ", "))
	}
	return nil
}

func root(what string) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%s needs root (running as uid %d)", what, os.Geteuid())
	}
	if os.Getenv(QuickEnv) == "1" {
		return fmt.Errorf("%s needs root, which %s=1 (make test-quick) leaves out", what, QuickEnv)
	}
	return nil
}

// LabCommands are the host commands a lab runs: its VMs' network and
// namespaces, their sshd, sudo and dnf, the repository build, and Glance's
// image files (made with mkfs.ext4 and qemu-img, booted through e2fsck and
// debugfs).
var LabCommands = []string{
	"ip", "iptables", "iptables-restore", "unshare", "mount", "/usr/sbin/sshd", "ssh-keygen", "sudo", "dnf",
	"rpm", "rpmbuild", "rpmsign", "createrepo_c", "modifyrepo_c", "gpg", "gpgconf",
	"mkfs.ext4", "e2fsck", "debugfs", "qemu-img",
}

var (
	labOnce sync.Once
	labErr  error
)

// Lab reports why a lab cannot start on this machine, or nil. The probe
// runs once per process: root, the commands in LabCommands, then the
// kernel features the VMs use, tried for real (a private network and mount
// namespace, an overlay mount inside it, the iptables tables, the physdev
// match and br_netfilter the VMs' security groups use).
func Lab() error {
	labOnce.Do(func() { labErr = probeLab() })
	return labErr
}

func probeLab() error {
	if err := root("the lab (network namespaces, overlay mounts, a bridge)"); err != nil {
		return err
	}
	if err := tools(LabCommands...); err != nil {
		return fmt.Errorf("the lab's host commands: %w", err)
	}
	dir, err := os.MkdirTemp("", "needs-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for _, d := range []string{"lower", "upper", "work", "merged"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			return err
		}
	}
	// The overlay is mounted inside a private mount namespace, so it is
	// gone when the probe's unshare exits.
	overlay := fmt.Sprintf("lowerdir=%[1]s/lower,upperdir=%[1]s/upper,workdir=%[1]s/work", dir)
	for _, c := range []struct {
		what, name string
		args       []string
	}{
		{"network and mount namespaces", "unshare", []string{"--net", "--mount", "--pid", "--fork", "true"}},
		{"overlay mounts", "unshare", []string{"--mount", "--propagation", "private", "mount", "-t", "overlay", "overlay", "-o", overlay, dir + "/merged"}},
		{"iptables", "iptables", []string{"-w", "5", "-t", "nat", "-S"}},
		// the VMs' security groups: iptables' physdev match (tried in a
		// throwaway namespace) on bridged traffic br_netfilter hands over
		{"iptables' physdev match", "unshare", []string{"--net", "iptables", "-w", "5", "-A", "FORWARD", "-m", "physdev", "--physdev-is-bridged", "-j", "RETURN"}},
		{"br_netfilter", "sh", []string{"-c", "test -e /proc/sys/net/bridge/bridge-nf-call-iptables || modprobe br_netfilter"}},
	} {
		if out, err := exec.Command(c.name, c.args...).CombinedOutput(); err != nil {
			return fmt.Errorf("the lab needs %s: %s %s: %v: %s", c.what, c.name, strings.Join(c.args, " "), err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}
