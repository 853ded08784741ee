package vm

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/stackhpc/packer-plugin-fatimage/testworld/logtail"
)

// RootFSPackages are the Debian packages of the VM userland, the lower
// layer of every VM's disk. Nothing of the host shows through: a VM has
// what is listed here (and what they depend on) plus what the lab image and
// the build put on its disk. Each has a reason:
var RootFSPackages = []string{
	"systemd", "systemd-sysv", "dbus", // PID 1, journald, tmpfiles, sysctl --system, hostnamectl
	"openssh-server", // sshd, started by systemd after cloud-init
	"cloud-init",     // the OpenStack/ConfigDrive data sources, key injection, user_data
	"rpm", "dnf",     // the image's package manager (its own rpm database)
	"python3-dnf", "dnf-plugins-core", // dnf's Python API and config-manager
	"python3", "python3-venv", "python3-pip", // ansible-init, pip installs into venvs
	"sudo",                    // the login user's passwordless sudo
	"curl", "ca-certificates", // binary downloads
	"gnupg",                              // repository key handling
	"podman", "uidmap", "fuse-overlayfs", // container image pulls
	"git",                              // git checkouts over HTTP
	"make",                             // the lustre role's make rpms (Rocky's kernel-devel requires make)
	"tar", "gzip", "xz-utils", "unzip", // unpacking release archives
	"iproute2", "netbase", "procps", "less", // ip, /etc/services, ps/sysctl, pagers
	"libnss-myhostname", // the hostname resolves (sudo, as on Rocky)
	"chrony",            // chronyd and chronyc for the lab's chrony RPM (rootfsHooks move them aside)
	"libuser",           // luseradd, lusermod, lgroupmod: Ansible's user module with local (the appliance's rocky user), as in Rocky's image
	"rsync",             // as in Rocky's image: the compute_init role's ansible.posix.synchronize runs rsync on the VM
	"firewalld",         // daemon, python3-firewall library and zones for the lab's firewalld RPMs (rootfsHooks move them aside)
	"python3-selinux",   // libselinux's Python module, which Rocky's image has (cloud-init requires it): ansible.posix.selinux imports it
}

// rootfsSuite and rootfsMirrors are the Debian release the VM userland is
// built from.
const rootfsSuite = "bookworm"

var rootfsMirrors = []string{
	"deb http://deb.debian.org/debian bookworm main",
	"deb http://deb.debian.org/debian bookworm-updates main",
	"deb http://deb.debian.org/debian-security bookworm-security main",
}

// rootfsHooks run in the finished tree before it is cached: nothing a VM
// must make its own (host keys, machine-id) is shared by all VMs.
var rootfsHooks = []string{
	`rm -f "$1"/etc/ssh/ssh_host_*`,
	`: > "$1"/etc/machine-id`,
	`rm -f "$1"/var/lib/dbus/machine-id`,
	`rm -f "$1"/etc/resolv.conf`,
	// Rocky's /bin/sh is bash: roles' shell tasks use bash's options
	// (set -o pipefail) and its source builtin
	`ln -sfn bash "$1"/usr/bin/sh`,
	// Debian's chrony lends its daemon to the lab's chrony RPM
	// (testworld/lab/repos), which links it under Rocky's paths with
	// Rocky's unit and configuration: here the binaries go aside and the
	// rest of Debian's packaging (its chrony.service, enabled; init
	// script; /etc/chrony; hooks) goes, so a VM has chronyd only with
	// the RPM. Debian's _chrony user is Rocky's chrony.
	`mkdir -p "$1"/usr/libexec/fatlab-chrony && mv "$1"/usr/sbin/chronyd "$1"/usr/bin/chronyc "$1"/usr/libexec/fatlab-chrony/`,
	`cd "$1" && rm -rf etc/chrony etc/default/chrony etc/init.d/chrony etc/rc?.d/*chrony etc/logrotate.d/chrony ` +
		`etc/dhcp/dhclient-exit-hooks.d/chrony etc/network/if-up.d/chrony etc/network/if-post-down.d/chrony etc/ppp/ip-up.d/chrony etc/ppp/ip-down.d/chrony ` +
		`usr/lib/systemd/system/chrony* etc/systemd/system/chronyd.service etc/systemd/system/*.wants/chrony* usr/lib/systemd/ntp-units.d/50-chrony.list ` +
		`usr/lib/NetworkManager/dispatcher.d/*chrony* usr/lib/networkd-dispatcher/*/chrony*`,
	`sed -i 's/^_chrony:/chrony:/' "$1"/etc/passwd "$1"/etc/group "$1"/etc/shadow "$1"/etc/gshadow && ` +
		`sed -i -e '\# /etc/chrony/#d' -e 's/_chrony /chrony /g' "$1"/var/lib/dpkg/statoverride`,
	// Debian's firewalld likewise lends the lab's firewalld and
	// python3-firewall RPMs the daemon, the commands, the zones and
	// services (/usr/lib/firewalld) and the Python library that
	// ansible.posix.firewalld imports: all go aside, Debian's
	// configuration and unit go, so a VM has them only with the RPMs
	`mkdir -p "$1"/usr/libexec/fatlab-firewalld && cd "$1" && mv usr/sbin/firewalld usr/bin/firewall-cmd usr/bin/firewall-offline-cmd ` +
		`usr/lib/python3/dist-packages/firewall usr/libexec/fatlab-firewalld/ && mv usr/lib/firewalld usr/libexec/fatlab-firewalld/lib`,
	`cd "$1" && rm -rf etc/firewalld etc/logrotate.d/firewalld usr/lib/systemd/system/firewalld.service ` +
		`etc/systemd/system/dbus-org.fedoraproject.FirewallD1.service etc/systemd/system/*.wants/firewalld.service`,
}

// rootfsVersion changes when the build itself changes in a way the package
// list does not show.
const rootfsVersion = "fatlab-rootfs/1"

// rootfsKey names a userland by everything it is built from.
func rootfsKey() string {
	h := sha256.New()
	fmt.Fprintln(h, rootfsVersion, rootfsSuite)
	for _, l := range [][]string{rootfsMirrors, RootFSPackages, rootfsHooks} {
		fmt.Fprintln(h, strings.Join(l, "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// BuildRootFS returns the directory of the VM userland below cacheDir,
// building it with mmdebstrap from Debian's archive when the cache has none
// for this package list (some minutes; later calls return at once). Builds
// of several processes (parallel test binaries) are serialised by a lock.
func BuildRootFS(cacheDir string, logf func(string, ...any)) (string, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", err
	}
	dir := filepath.Join(cacheDir, "rootfs-"+rootfsKey())
	done := dir + ".complete" // beside the tree: the VM must not see it
	if _, err := os.Stat(done); err == nil {
		return dir, nil
	}
	lock, err := os.OpenFile(filepath.Join(cacheDir, "rootfs.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("vm: locking the rootfs cache: %w", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing unlocks too
	if _, err := os.Stat(done); err == nil {
		return dir, nil // another process built it while we waited
	}
	if _, err := exec.LookPath("mmdebstrap"); err != nil {
		return "", errors.New("vm: building the VM userland needs mmdebstrap (apt-get install mmdebstrap; see scripts/deps.sh)")
	}
	tmp := dir + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return "", err
	}
	args := []string{"--mode=root", "--variant=minbase", "--include=" + strings.Join(RootFSPackages, ",")}
	for _, h := range rootfsHooks {
		args = append(args, "--customize-hook="+h)
	}
	args = append(args, rootfsSuite, tmp)
	args = append(args, rootfsMirrors...)
	logf("vm: building the VM userland %s with mmdebstrap (cached afterwards)", filepath.Base(dir))
	start := time.Now()
	cmd := exec.Command("mmdebstrap", args...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("vm: mmdebstrap: %v: %s", err, logtail.Chars(string(out), 2000))
	}
	_ = os.RemoveAll(dir) // an incomplete earlier build
	if err := os.Rename(tmp, dir); err != nil {
		return "", err
	}
	if err := os.WriteFile(done, []byte(strings.Join(RootFSPackages, "\n")+"\n"), 0o644); err != nil {
		return "", err
	}
	logf("vm: VM userland built in %s", time.Since(start).Round(time.Second))
	return dir, nil
}
