package repos

import (
	_ "embed"
	"os"
	"path"
	"sort"
	"strings"
)

// Stand-in content for the system rows of the image contract (issue #15):
// files that builds edit or run, and weak dependencies that show which
// packages a build installs with install_weak_deps off.

// tunedFiles: the hpc-compute profile, whose [sysctl] vm.min_free_kbytes
// the appliance's tuned role edits in place.
var tunedFiles = map[string]string{
	"/usr/lib/tuned/hpc-compute/tuned.conf": `#
# tuned configuration (lab stand-in of the hpc-compute profile)
#

[main]
summary=Optimize for HPC compute workloads
include=latency-performance

[vm]
transparent_hugepages=always

[disk]
readahead=>4096

[sysctl]
# keep free memory for the network stacks
vm.min_free_kbytes = 135168
kernel.numa_balancing = 0
`,
}

//go:embed standins/cvmfs_config.sh
var cvmfsConfigStandIn string

// cvmfsFiles: cvmfs_config, whose `setup` the eessi group runs, the
// autofs map its setup points autofs at, and the client's default
// configuration in /etc/cvmfs, where the real package keeps it (the
// appliance's eessi role writes /etc/cvmfs/default.local next to it and
// does not create the directory).
var cvmfsFiles = map[string]string{
	"/usr/bin/cvmfs_config":   cvmfsConfigStandIn,
	"/etc/auto.cvmfs":         "#!/bin/sh\n# lab stand-in of the cvmfs autofs map: no repositories to mount\nexit 0\n",
	"/etc/cvmfs/default.conf": "# lab stand-in of the cvmfs client's defaults; site settings go in default.local\nCVMFS_CACHE_BASE=/var/lib/cvmfs\nCVMFS_QUOTA_LIMIT=4000\n",
}

// The weak-dependency probes: slurm-ohpc recommends a package that a
// build installing the Slurm set without weak dependencies (as the
// appliance's openhpc role does) must not install, while
// lab-weakdep-probe, a lab-only package a test installs next to it at
// dnf's default, recommends one that must be installed. No package of
// the appliance's groups other than slurm-ohpc recommends anything, so
// the benchmarks' Ansible runs (weak dependencies off throughout) and
// the plugin's end in the same package set.
var (
	slurmRecommends = []string{"lab-recommended-by-slurm"}
	probeRecommends = []string{"lab-recommended-by-probe"}
)

// extraFiles are a package's Files as staged files, in path order;
// executables are the ones under a bin directory (or the autofs map).
func extraFiles(files map[string]string) []stagedFile {
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out []stagedFile
	for _, p := range paths {
		mode := os.FileMode(0o644)
		if strings.HasSuffix(path.Dir(p), "/bin") || strings.HasSuffix(path.Dir(p), "/sbin") || p == "/etc/auto.cvmfs" {
			mode = 0o755
		}
		// what a package ships in /etc is its configuration, kept on upgrade
		out = append(out, stagedFile{Path: p, Data: files[p], Mode: mode, Config: strings.HasPrefix(p, "/etc/")})
	}
	return out
}

// chronyFiles and chronyLinks: chrony as a Rocky GenericCloud image has
// it, running the real daemon. chronyd and chronyc are Debian's, from the
// VM userland (testworld/lab/vm's rootfsHooks put them aside, so a VM has
// them only with this package); the unit, its options file and the
// configuration are at Rocky's paths. The unit differs from Rocky's in
// its command line (docs/lab.md): chronyd runs with -x, so it never
// steers the clock, which is the host's (the VMs share its kernel and
// have no CAP_SYS_TIME, which Rocky's unit makes a condition), and with
// -u chrony -f /etc/chrony.conf, Rocky's user and configuration, where
// Debian's build defaults to _chrony and /etc/chrony/chrony.conf.
var (
	chronyFiles = map[string]string{
		"/usr/lib/systemd/system/chronyd.service": `[Unit]
Description=NTP client/server (chronyd; lab: Debian's daemon, never steering the clock)
Documentation=man:chronyd(8) man:chrony.conf(5)
After=ntpdate.service sntp.service ntpd.service
Conflicts=ntpd.service systemd-timesyncd.service

[Service]
Type=forking
PIDFile=/run/chrony/chronyd.pid
EnvironmentFile=-/etc/sysconfig/chronyd
ExecStart=/usr/sbin/chronyd -x -u chrony -f /etc/chrony.conf $OPTIONS
PrivateTmp=yes
ProtectHome=yes
ProtectSystem=full

[Install]
WantedBy=multi-user.target
`,
		"/etc/sysconfig/chronyd": "# options of chronyd (lab stand-in of Rocky's file)\nOPTIONS=\"-F 2\"\n",
		"/etc/chrony.conf": `# lab stand-in of Rocky's chrony.conf: its pool and the daemon's state
pool 2.rocky.pool.ntp.org iburst
driftfile /var/lib/chrony/drift
makestep 1.0 3
rtcsync
keyfile /etc/chrony.keys
ntsdumpdir /var/lib/chrony
logdir /var/log/chrony
`,
		"/etc/chrony.keys": "# symmetric keys of chronyd (none)\n",
	}
	chronyLinks = map[string]string{
		"/usr/sbin/chronyd": "/usr/libexec/fatlab-chrony/chronyd",
		"/usr/bin/chronyc":  "/usr/libexec/fatlab-chrony/chronyc",
	}
)

// firewalldFiles, firewalldLinks and pythonFirewallLinks: firewalld as
// Rocky ships it, running the real daemon. Debian's firewalld lends the
// daemon, its commands, the zones and services it reads from
// /usr/lib/firewalld and the Python library (ansible.posix.firewalld
// imports it: offline, without a running daemon, it edits the permanent
// configuration with the library alone); testworld/lab/vm's rootfsHooks
// put them aside, so a VM has them only with these packages, and rpm
// says which package holds what as on Rocky: python3-firewall the
// library, firewalld the rest. The unit, firewalld.conf and the public
// zone are at Rocky's paths, written for the lab with Rocky's values: the
// default zone public, the nftables backend, and the public zone's
// services (Rocky's adds cockpit to upstream's, which Debian ships).
var (
	firewalldFiles = map[string]string{
		"/usr/lib/systemd/system/firewalld.service": `[Unit]
Description=firewalld - dynamic firewall daemon (lab: Debian's daemon in the VM's network namespace)
Before=network-pre.target
Wants=network-pre.target
After=dbus.service
After=polkit.service
Conflicts=iptables.service ip6tables.service ebtables.service ipset.service nftables.service
Documentation=man:firewalld(1)

[Service]
Type=dbus
BusName=org.fedoraproject.FirewallD1
ExecStart=/usr/sbin/firewalld --nofork --nopid
ExecReload=/bin/kill -HUP $MAINPID
KillMode=mixed

[Install]
WantedBy=multi-user.target
Alias=dbus-org.fedoraproject.FirewallD1.service
`,
		"/etc/firewalld/firewalld.conf": "# firewalld's settings (lab stand-in of Rocky's file: its values, none of its comments)\n" +
			"DefaultZone=public\nCleanupOnExit=yes\nCleanupModulesOnExit=no\nLockdown=no\nIPv6_rpfilter=yes\nIndividualCalls=no\n" +
			"LogDenied=off\nFirewallBackend=nftables\nFlushAllOnReload=yes\nRFC3964_IPv4=yes\n",
		"/usr/lib/firewalld/zones/public.xml": `<?xml version="1.0" encoding="utf-8"?>
<zone>
  <short>Public</short>
  <description>Lab stand-in of Rocky's public zone: its services, accepting only those.</description>
  <service name="ssh"/>
  <service name="dhcpv6-client"/>
  <service name="cockpit"/>
  <forward/>
</zone>
`,
	}
	firewalldLinks = func() map[string]string {
		const deb = "/usr/libexec/fatlab-firewalld/"
		out := map[string]string{
			"/usr/sbin/firewalld":           deb + "firewalld",
			"/usr/bin/firewall-cmd":         deb + "firewall-cmd",
			"/usr/bin/firewall-offline-cmd": deb + "firewall-offline-cmd",
		}
		for _, d := range []string{"helpers", "icmptypes", "ipsets", "policies", "services"} {
			out["/usr/lib/firewalld/"+d] = deb + "lib/" + d
		}
		for _, z := range []string{"block", "dmz", "drop", "external", "home", "internal", "trusted", "work"} {
			out["/usr/lib/firewalld/zones/"+z+".xml"] = deb + "lib/zones/" + z + ".xml"
		}
		return out
	}()
	// Debian's python3 reads dist-packages where Rocky's reads
	// /usr/lib/python3.9/site-packages
	pythonFirewallLinks = map[string]string{
		"/usr/lib/python3/dist-packages/firewall": "/usr/libexec/fatlab-firewalld/firewall",
	}
)

// fail2banServerFiles and fail2banFirewalldFiles: fail2ban's configuration
// directory as EPEL's packages ship it, which the appliance's fail2ban
// role writes jail.local into (it creates no directory): the server's
// defaults, and the firewalld package's drop-in making firewalld the
// ban action.
var (
	fail2banServerFiles = map[string]string{
		"/etc/fail2ban/fail2ban.conf": "# fail2ban's own settings (lab stand-in of EPEL's file)\n[DEFAULT]\nloglevel = INFO\nlogtarget = /var/log/fail2ban.log\n" +
			"socket = /run/fail2ban/fail2ban.sock\npidfile = /run/fail2ban/fail2ban.pid\n",
		"/etc/fail2ban/jail.conf": "# fail2ban's jail defaults (lab stand-in of EPEL's file); sites override in jail.local\n[DEFAULT]\nbantime = 10m\nfindtime = 10m\nmaxretry = 5\n",
	}
	fail2banFirewalldFiles = map[string]string{
		"/etc/fail2ban/jail.d/00-firewalld.conf": "# lab stand-in of fail2ban-firewalld's drop-in: bans through firewalld\n[DEFAULT]\nbanaction = firewallcmd-rich-rules\n",
	}
)
