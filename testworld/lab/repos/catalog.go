package repos

import (
	"os"
	"strings"
)

// The recipe: which repositories the lab mirrors and which stand-in
// packages each carries. Everything here feeds the cache key, so any edit
// rebuilds the repositories on the next Build.

// Snapshot timestamps: every repository has an older and a newer snapshot.
const (
	OlderTimestamp = "20250601T120000"
	NewerTimestamp = "20251106T211545"
)

// Majors are the Rocky majors the lab serves: RL9, whose repositories
// every build uses unless it asks for another, and RL8.
var Majors = []string{"9", "8"}

// repoDef describes one appliance repository.
type repoDef struct {
	Key       string // key under dnf_repos_default, also the .repo section name
	VersionOS string // OS version key in the timestamps file: "9.6" or "9"; its major is the repository's
	PulpPath  string
	RepoFile  string
	RepoName  string // the .repo section name when not Key (RL8's crb is powertools)
	GPGCheck  *bool  // nil: default (true)
	// Vendor: a site's vendor repository (an extra build's doca, cuda),
	// given to builds as a repos entry of its own, not in the
	// appliance's timestamps file.
	Vendor bool
	// Public: served without the Ark content guard, as the vendors serve
	// theirs (a serving matter, not content: not in the cache key).
	Public bool `json:"-"`
	// Source: a `-source` repository of the appliance's timestamps file.
	// The lab's hold no package: the one source package a build fetches,
	// Slurm's, is in OpenHPC's repositories (srpm.go), as upstream.
	Source bool
}

// repoDefs are the appliance's Rocky 9 and 8 repositories (keys, pulp
// paths and repo files as in the appliance's dnf_repo_timestamps.yml).
var repoDefs = []repoDef{
	{Key: "baseos", VersionOS: "9.6", PulpPath: "rocky/9.6/BaseOS/x86_64/os", RepoFile: "rocky"},
	{Key: "appstream", VersionOS: "9.6", PulpPath: "rocky/9.6/AppStream/x86_64/os", RepoFile: "rocky"},
	{Key: "crb", VersionOS: "9.6", PulpPath: "rocky/9.6/CRB/x86_64/os", RepoFile: "rocky"},
	{Key: "extras", VersionOS: "9.6", PulpPath: "rocky/9.6/extras/x86_64/os", RepoFile: "rocky-extras"},
	{Key: "epel", VersionOS: "9", PulpPath: "epel/9/Everything/x86_64", RepoFile: "epel"},
	{Key: "OpenHPC", VersionOS: "9", PulpPath: "OpenHPC/3/EL_9", RepoFile: "OpenHPC"},
	{Key: "OpenHPC-updates", VersionOS: "9", PulpPath: "OpenHPC/3/updates/EL_9", RepoFile: "OpenHPC"},
	{Key: "Ceph", VersionOS: "9", PulpPath: "centos/9-stream/storage/x86_64/ceph-reef", RepoFile: "ceph"},
	{Key: "grafana", VersionOS: "9", PulpPath: "grafana/oss/rpm", RepoFile: "grafana"},
	{Key: "epel-cisco-openh264", VersionOS: "9", PulpPath: "openh264/epel/9/x86_64/os", RepoFile: "epel-cisco-openh264"},
	{Key: "ondemand-web", VersionOS: "9", PulpPath: "ondemand/4.1/web/el9/x86_64", RepoFile: "ondemand-web"},
	{Key: "TurboVNC", VersionOS: "9", PulpPath: "turbovnc/x86_64", RepoFile: "TurboVNC"},
	{Key: "cernvmfs_cfg", VersionOS: "9", PulpPath: "cvmfs-config/EL/9/x86_64", RepoFile: "cvmfs"},
	{Key: "cernvmfs_pkgs", VersionOS: "9", PulpPath: "cvmfs/EL/9/x86_64", RepoFile: "cvmfs"},
	{Key: "cernvmfs_eessi_cfg", VersionOS: "9", PulpPath: "eessi/rhel/8/noarch", RepoFile: "cvmfs-config-eessi"},
	// the source repositories, whose sections the slurm_recompile role's
	// `dnf download --source` enables (extras-source's 9.6 path is the
	// appliance's)
	{Key: "baseos-source", VersionOS: "9.6", PulpPath: "rocky/9.6/BaseOS/source/tree", RepoFile: "rocky", Source: true},
	{Key: "appstream-source", VersionOS: "9.6", PulpPath: "rocky/9.6/AppStream/source/tree", RepoFile: "rocky", Source: true},
	{Key: "crb-source", VersionOS: "9.6", PulpPath: "rocky/9.6/CRB/source/tree", RepoFile: "rocky", Source: true},
	{Key: "extras-source", VersionOS: "9.6", PulpPath: "rocky/9.6/extras/source/os", RepoFile: "rocky-extras", Source: true},
	{Key: "epel-source", VersionOS: "9", PulpPath: "epel/9/Everything/source/tree", RepoFile: "epel", Source: true},
	{Key: "TurboVNC-source", VersionOS: "9", PulpPath: "turbovnc/srpms", RepoFile: "TurboVNC", Source: true},
	// the extra builds' vendor repositories, at their upstream paths
	{Key: "doca", VersionOS: "9", PulpPath: "doca/3.2.3/rhel9/x86_64", RepoFile: "doca", Vendor: true, Public: true},
	{Key: "cuda", VersionOS: "9", PulpPath: "cuda/repos/rhel9/x86_64", RepoFile: "cuda-rhel9", Vendor: true, Public: true},
	// a site's own repository, which a site adds with the appliance's
	// dnf_repos_extra (testworld/appliancesite/overrides)
	{Key: "siteextra", VersionOS: "9", PulpPath: "site/extra/el9/x86_64", RepoFile: "site-extra", Vendor: true},

	// Rocky 8.10's, as the appliance's timestamps file has them (RL8's
	// own repo files; CRB is PowerTools); the same catalog fills them,
	// with its EVRs for el8 (evrFor)
	{Key: "baseos", VersionOS: "8.10", PulpPath: "rocky/8.10/BaseOS/x86_64/os", RepoFile: "Rocky-BaseOS"},
	{Key: "appstream", VersionOS: "8.10", PulpPath: "rocky/8.10/AppStream/x86_64/os", RepoFile: "Rocky-AppStream"},
	{Key: "crb", VersionOS: "8.10", PulpPath: "rocky/8.10/PowerTools/x86_64/os", RepoFile: "Rocky-PowerTools", RepoName: "powertools"},
	{Key: "extras", VersionOS: "8.10", PulpPath: "rocky/8.10/extras/x86_64/os", RepoFile: "Rocky-Extras"},
	{Key: "epel", VersionOS: "8", PulpPath: "epel/8/Everything/x86_64", RepoFile: "epel"},
	{Key: "OpenHPC", VersionOS: "8", PulpPath: "OpenHPC/2/EL_8", RepoFile: "OpenHPC"},
	{Key: "OpenHPC-updates", VersionOS: "8", PulpPath: "OpenHPC/2/updates/EL_8", RepoFile: "OpenHPC"},
	{Key: "grafana", VersionOS: "8", PulpPath: "grafana/oss/rpm", RepoFile: "grafana"},
	{Key: "ondemand-web", VersionOS: "8", PulpPath: "ondemand/4.1/web/el8/x86_64", RepoFile: "ondemand-web"},
	{Key: "TurboVNC", VersionOS: "8", PulpPath: "turbovnc/x86_64", RepoFile: "TurboVNC"},
	// RL8's source repositories, in Rocky 8's one Rocky-Sources.repo
	{Key: "baseos-source", VersionOS: "8.10", PulpPath: "rocky/8.10/BaseOS/source/tree", RepoFile: "Rocky-Sources", Source: true},
	{Key: "appstream-source", VersionOS: "8.10", PulpPath: "rocky/8.10/AppStream/source/tree", RepoFile: "Rocky-Sources", Source: true},
	{Key: "crb-source", VersionOS: "8.10", PulpPath: "rocky/8.10/PowerTools/source/tree", RepoFile: "Rocky-Sources", RepoName: "powertools-source", Source: true},
	{Key: "extras-source", VersionOS: "8.10", PulpPath: "rocky/8.10/extras/source/tree", RepoFile: "Rocky-Sources", Source: true},
	{Key: "epel-source", VersionOS: "8", PulpPath: "epel/8/Everything/source/tree", RepoFile: "epel", Source: true},
	{Key: "TurboVNC-source", VersionOS: "8", PulpPath: "turbovnc/srpms", RepoFile: "TurboVNC", Source: true},
	// the vendors' el8 builds, at their upstream rhel8 paths (NVIDIA's
	// .repo file names its major)
	{Key: "doca", VersionOS: "8", PulpPath: "doca/3.2.3/rhel8/x86_64", RepoFile: "doca", Vendor: true, Public: true},
	{Key: "cuda", VersionOS: "8", PulpPath: "cuda/repos/rhel8/x86_64", RepoFile: "cuda-rhel8", Vendor: true, Public: true},
}

// rockyRelease is /etc/rocky-release of Rocky version ("9.6", "8.10").
func rockyRelease(version string) string {
	return "Rocky Linux release " + version + " (" + RockyCodename(version) + ")\n"
}

// RockyCodename is the release's name: Rocky 8's Green Obsidian, 9's Blue Onyx.
func RockyCodename(version string) string {
	if strings.HasPrefix(version, "8.") {
		return "Green Obsidian"
	}
	return "Blue Onyx"
}

// major is the Rocky major a repository is for.
func (rd repoDef) major() string { m, _, _ := strings.Cut(rd.VersionOS, "."); return m }

// repoName is the .repo section name.
func (rd repoDef) repoName() string {
	if rd.RepoName != "" {
		return rd.RepoName
	}
	return rd.Key
}

// GPGKeyFileNames are the names under /etc/pki/rpm-gpg that the appliance
// writes (Rocky 9 build); the lab key is served under each.
var GPGKeyFileNames = []string{
	"RPM-GPG-KEY-Rocky-9",
	"RPM-GPG-KEY-EPEL-9",
	"RPM-GPG-KEY-Rocky-8",
	"RPM-GPG-KEY-EPEL-8",
	"RPM-GPG-KEY-OpenHPC-3",
	"RPM-GPG-KEY-centos-storage-sig",
	"RPM-GPG-KEY-CernVM",
	"RPM-GPG-KEY-TurboVNC",
	"RPM-GPG-KEY-ondemand",
}

// pkgDef is one stand-in package. EVR is "[epoch:]version-release", as
// on Rocky 9: on Rocky 8 its el9 tags read el8 (evrFor).
type pkgDef struct {
	// Major: only in that Rocky major's repositories ("" both).
	Major    string
	Repo     string
	Name     string
	EVR      string   // in both snapshots
	Update   string   // EVR added to the newer snapshot ("" = not updated)
	Requires []string // "{evr}" is replaced by the package's own EVR
	Provides []string
	Base     bool     // installed in a fresh GenericCloud base image (older EVR)
	Bins     []string // stand-in executables (absolute paths) printing the version
	// Units are systemd unit files shipped in /usr/lib/systemd/system; %preun
	// disables (and stops) them on erase, as %systemd_preun does.
	Units []string
	// EnableOnInstall: %post enables Units on first install, as Rocky's
	// presets do for these services (upgrades keep the admin's choice).
	EnableOnInstall bool
	// Module ("name:stream") makes the package an artifact of that dnf
	// module stream in its repository's modules.yaml: hidden until the
	// stream is enabled, as in Rocky's AppStream.
	Module string
	// Comps is the comps group (by name, e.g. "Xfce") listing the package
	// in its repository's comps.xml, for `dnf install @Xfce`.
	Comps string
	// Recommends are weak dependencies (standins_system.go).
	Recommends []string
	// Files are extra files the package ships, by absolute path
	// (standins_system.go); under a bin directory they are executable.
	Files map[string]string
	// SRPM: built as x86_64 from this source package, whose .src.rpm
	// the repository holds too (srpm.go); the package of that name is
	// the spec's main package.
	SRPM string
	// BuildRequires of the source package (its main package's def): what
	// `dnf builddep` installs before a rebuild.
	BuildRequires []string
	// Links are symlinks the package ships (path -> target). A named
	// interpreter (python3.9, python3.12) links to the VM's own python3,
	// so what a build runs with it really runs.
	Links map[string]string
	// User is the system user (and its group of the same name) the
	// package's scriptlets add when absent, as the real package's do:
	// useradd -r picks the IDs (build.go's scriptlets).
	User *sysUser
}

// sysUser is a package's system user: name, home, shell and comment.
type sysUser struct{ Name, Home, Shell, Comment string }

// catalog is every stand-in package. Names follow Rocky 9 / EPEL 9 /
// OpenHPC 3 / Ceph reef / Grafana OSS. Versions are plausible, not exact.
var catalog = append([]pkgDef{
	// --- BaseOS ---
	{Major: "9", Repo: "baseos", Name: "rocky-release", EVR: "9.6-1.2.el9", Update: "9.6-1.3.el9", Base: true,
		Requires: []string{"rocky-gpg-keys"},
		Provides: []string{"system-release(releasever) = 9", "system-release = {evr}", "redhat-release = {evr}", "base-module(platform:el9)"}},
	{Major: "9", Repo: "baseos", Name: "rocky-gpg-keys", EVR: "9.6-1.2.el9", Base: true},
	{Major: "9", Repo: "baseos", Name: "kernel", EVR: "5.14.0-570.17.1.el9_6", Update: "5.14.0-570.58.1.el9_6", Base: true,
		Requires: []string{"kernel-core = {evr}"}, Provides: []string{"installonlypkg(kernel)"}},
	{Major: "9", Repo: "baseos", Name: "kernel-core", EVR: "5.14.0-570.17.1.el9_6", Update: "5.14.0-570.58.1.el9_6", Base: true,
		Requires: []string{"dracut"}, Provides: []string{"kernel-uname-r = {vr}.x86_64", "installonlypkg(kernel)"}},
	{Repo: "baseos", Name: "dracut", EVR: "057-87.git20250311.el9_6", Base: true, Bins: []string{"/usr/bin/dracut"}},
	// /usr/src/kernels/<version>.x86_64, what kernel module builds compile against
	{Major: "9", Repo: "appstream", Name: "kernel-devel", EVR: "5.14.0-570.17.1.el9_6", Update: "5.14.0-570.58.1.el9_6",
		Provides: []string{"kernel-devel-uname-r = {vr}.x86_64", "installonlypkg(kernel)"}},
	{Repo: "baseos", Name: "glibc", EVR: "2.34-168.el9_6.14", Update: "2.34-168.el9_6.23", Base: true},
	{Repo: "baseos", Name: "openssl-libs", EVR: "1:3.2.2-6.el9_5.1", Update: "1:3.2.2-6.el9_5.2", Base: true},
	{Repo: "baseos", Name: "tzdata", EVR: "2025a-1.el9", Update: "2025b-1.el9", Base: true},
	{Major: "9", Repo: "baseos", Name: "python3", EVR: "3.9.21-2.el9", Update: "3.9.21-2.el9_6.1", Base: true,
		Requires: []string{"python3-libs = {evr}"},
		// RL9's python3 is 3.9: it provides python39 (what the appliance's
		// mysql role installs for RL8) and ships /usr/bin/python3.9
		Provides: []string{"/usr/bin/python3", "python(abi) = 3.9", "python3.9 = {evr}", "python39 = {evr}"},
		Links:    map[string]string{"/usr/bin/python3.9": "python3"}},
	{Major: "9", Repo: "baseos", Name: "python3-libs", EVR: "3.9.21-2.el9", Update: "3.9.21-2.el9_6.1", Base: true},
	// Rocky 8.10: its release, kernel and interpreters. python3 is
	// python36's (3.6, the interpreter that runs it is the VM's own as
	// every stand-in's); python39 ships /usr/bin/python3.9 (non-modular
	// here, from the python39 module stream on Rocky)
	{Major: "8", Repo: "baseos", Name: "rocky-release", EVR: "8.10-1.9.el8", Base: true,
		Requires: []string{"rocky-gpg-keys"},
		Provides: []string{"system-release(releasever) = 8", "system-release = {evr}", "redhat-release = {evr}", "base-module(platform:el8)"}},
	{Major: "8", Repo: "baseos", Name: "rocky-gpg-keys", EVR: "8.10-1.9.el8", Base: true},
	{Major: "8", Repo: "baseos", Name: "kernel", EVR: "4.18.0-553.5.1.el8_10", Update: "4.18.0-553.81.1.el8_10", Base: true,
		Requires: []string{"kernel-core = {evr}"}, Provides: []string{"installonlypkg(kernel)"}},
	{Major: "8", Repo: "baseos", Name: "kernel-core", EVR: "4.18.0-553.5.1.el8_10", Update: "4.18.0-553.81.1.el8_10", Base: true,
		Requires: []string{"dracut"}, Provides: []string{"kernel-uname-r = {vr}.x86_64", "installonlypkg(kernel)"}},
	{Major: "8", Repo: "baseos", Name: "kernel-devel", EVR: "4.18.0-553.5.1.el8_10", Update: "4.18.0-553.81.1.el8_10",
		Provides: []string{"kernel-devel-uname-r = {vr}.x86_64", "installonlypkg(kernel)"}},
	{Major: "8", Repo: "appstream", Name: "python36", EVR: "3.6.8-39.module+el8.10.0+1910+234ad790.rocky", Base: true,
		Provides: []string{"python3 = {evr}", "/usr/bin/python3", "python(abi) = 3.6"},
		Links:    map[string]string{"/usr/bin/python3.6": "python3"}},
	{Major: "8", Repo: "appstream", Name: "python39", EVR: "3.9.20-1.module+el8.10.0+1871+4f5e8bd8", Update: "3.9.20-2.module+el8.10.0+1960+7c8e7f4a",
		Provides: []string{"python3.9 = {evr}", "/usr/bin/python3.9", "python(abi) = 3.9"},
		Links:    map[string]string{"/usr/bin/python3.9": "python3"}},
	{Major: "8", Repo: "extras", Name: "epel-release", EVR: "8-22.el8", Requires: []string{"redhat-release >= 8"}},
	{Repo: "baseos", Name: "cockpit-bridge", EVR: "334.2-1.el9_6", Base: true},
	{Repo: "baseos", Name: "cockpit-system", EVR: "334.2-1.el9_6", Base: true, Requires: []string{"cockpit-bridge"}},
	{Repo: "baseos", Name: "cockpit-ws", EVR: "334.2-1.el9_6", Base: true},
	{Repo: "baseos", Name: "chkconfig", EVR: "1.24-2.el9"},
	// in the GenericCloud image with chronyd enabled; the real daemon
	// (standins_system.go)
	{Repo: "baseos", Name: "chrony", EVR: "4.6.1-1.el9", Base: true, Units: []string{"chronyd.service"}, EnableOnInstall: true,
		Files: chronyFiles, Links: chronyLinks},
	{Repo: "baseos", Name: "tuned", EVR: "2.25.1-1.el9", Requires: []string{"python3"}, Units: []string{"tuned.service"}, EnableOnInstall: true,
		Files: tunedFiles},
	{Repo: "baseos", Name: "nfs-utils", EVR: "1:2.5.4-34.el9", Update: "1:2.5.4-34.el9_6.1"},
	{Repo: "baseos", Name: "sssd-client", EVR: "2.9.6-4.el9_6.2"},
	{Repo: "baseos", Name: "sssd-common", EVR: "2.9.6-4.el9_6.2", Requires: []string{"sssd-client = {evr}"}, Units: []string{"sssd.service"}, EnableOnInstall: true},
	// sssd_install_ldap's package (.stackhpc's builder sets it): the LDAP
	// provider sssd loads, needing its sibling's ldap_child (whose setuid
	// helpers nothing here runs, so it ships no file)
	{Repo: "baseos", Name: "sssd-krb5-common", EVR: "2.9.6-4.el9_6.2", Requires: []string{"sssd-common = {evr}"}},
	{Repo: "baseos", Name: "sssd-ldap", EVR: "2.9.6-4.el9_6.2", Requires: []string{"sssd-common = {evr}", "sssd-krb5-common = {evr}"},
		Files: map[string]string{"/usr/lib64/sssd/libsss_ldap.so": "lab stand-in of sssd's LDAP provider\n"}},
	{Repo: "baseos", Name: "oddjob", EVR: "0.34.7-7.el9"},
	{Repo: "baseos", Name: "oddjob-mkhomedir", EVR: "0.34.7-7.el9", Requires: []string{"oddjob = {evr}"}},
	// the real daemon and library (standins_system.go)
	{Repo: "baseos", Name: "firewalld-filesystem", EVR: "1.3.4-9.el9_5"},
	{Repo: "baseos", Name: "python3-firewall", EVR: "1.3.4-9.el9_5", Requires: []string{"python3"}, Links: pythonFirewallLinks},
	{Repo: "baseos", Name: "firewalld", EVR: "1.3.4-9.el9_5",
		Requires: []string{"firewalld-filesystem = {evr}", "python3-firewall = {evr}"}, Units: []string{"firewalld.service"}, EnableOnInstall: true,
		Files: firewalldFiles, Links: firewalldLinks},
	{Repo: "baseos", Name: "bash-completion", EVR: "1:2.11-5.el9"},
	{Repo: "baseos", Name: "nano", EVR: "5.6.1-7.el9"},
	{Repo: "baseos", Name: "tmux", EVR: "3.2a-5.el9"},
	{Repo: "baseos", Name: "net-tools", EVR: "2.0-0.64.20160912git.el9"},
	{Repo: "baseos", Name: "postfix", EVR: "2:3.5.25-1.el9", Provides: []string{"MTA", "smtpdaemon"}},

	// --- AppStream ---
	{Repo: "appstream", Name: "squid", EVR: "7:5.5-19.el9_6.1", Update: "7:5.5-19.el9_6.2", Units: []string{"squid.service"}},
	{Repo: "appstream", Name: "containers-common", EVR: "2:1-117.el9_6"},
	{Repo: "appstream", Name: "podman", EVR: "5:5.4.0-12.el9_6", Update: "5:5.4.0-13.el9_6",
		Requires: []string{"containers-common"}},
	{Repo: "appstream", Name: "patch", EVR: "2.7.6-16.el9"},
	{Repo: "appstream", Name: "cmake", EVR: "3.26.5-2.el9", Bins: []string{"/usr/bin/cmake"}},
	// what slurm_recompile installs to rebuild Slurm: the VM's own
	// rpmbuild (Debian's rpm, in the lab userland) does the building
	{Repo: "appstream", Name: "rpm-build", EVR: "4.16.1.3-37.el9"},
	{Repo: "appstream", Name: "wget", EVR: "1.21.1-8.el9_4"},
	{Repo: "appstream", Name: "bind-libs", EVR: "32:9.16.23-31.el9_6"},
	{Repo: "appstream", Name: "bind-utils", EVR: "32:9.16.23-31.el9_6", Requires: []string{"bind-libs = {evr}"}},
	{Repo: "appstream", Name: "git-core", EVR: "2.47.3-1.el9_6"},
	{Repo: "appstream", Name: "git", EVR: "2.47.3-1.el9_6", Requires: []string{"git-core = {evr}"}},
	{Repo: "appstream", Name: "python3.12", EVR: "3.12.9-1.el9_6.1",
		Provides: []string{"python312 = {evr}", "/usr/bin/python3.12", "python(abi) = 3.12"},
		Links:    map[string]string{"/usr/bin/python3.12": "python3"}},
	// Rocky's interpreter carries no PEP 668 marker and pip installs into
	// it as root; the VM's Debian one does: the stand-in pip turns the
	// guard off for the system interpreter, as on Rocky, with a .pth line
	// Python runs at start (the provisioner's pip ignores configuration
	// files, PIP_CONFIG_FILE=/dev/null; docs/lab.md)
	{Repo: "appstream", Name: "python3-pip", EVR: "21.3.1-1.el9", Requires: []string{"python3"},
		Files: map[string]string{"/usr/lib/python3/dist-packages/fatlab-rocky-pip.pth": "import os; os.environ.setdefault('PIP_BREAK_SYSTEM_PACKAGES', '1')\n"}},
	{Repo: "appstream", Name: "s-nail", EVR: "14.9.22-6.el9", Provides: []string{"mailx"}},
	{Repo: "appstream", Name: "munge-libs", EVR: "0.5.13-13.el9"},
	{Repo: "appstream", Name: "munge", EVR: "0.5.13-13.el9", Requires: []string{"munge-libs = {evr}"}, Units: []string{"munge.service"}},
	{Repo: "appstream", Name: "mysql-common", EVR: "8.0.42-1.el9_6"},
	{Repo: "appstream", Name: "mysql", EVR: "8.0.42-1.el9_6", Requires: []string{"mysql-common = {evr}"}},
	{Repo: "appstream", Name: "mysql-server", EVR: "8.0.42-1.el9_6", Requires: []string{"mysql = {evr}"}, Units: []string{"mysqld.service"}},
	{Repo: "appstream", Name: "lua-posix", EVR: "35.0-8.el9"},
	{Repo: "appstream", Name: "mod_authnz_pam", EVR: "1.2.3-1.el9"},
	// what osc.ood installs for openondemand_auth oidc or dex (the
	// appliance's .stackhpc builder too)
	{Repo: "appstream", Name: "mod_auth_openidc", EVR: "2.4.10-1.el9"},
	{Repo: "appstream", Name: "nmap-ncat", EVR: "3:7.92-3.el9", Provides: []string{"nc"}},
	{Repo: "appstream", Name: "dbus-x11", EVR: "1:1.12.20-8.el9"},
	{Repo: "appstream", Name: "nodejs", EVR: "1:16.20.2-8.el9_4"},
	{Repo: "appstream", Name: "ruby", EVR: "3.0.7-165.el9_5"},
	{Repo: "appstream", Name: "nodejs", EVR: "1:22.19.0-1.module+el9.6.0+90022+c0ffee22", Module: "nodejs:22"},
	{Repo: "appstream", Name: "ruby", EVR: "3.3.8-3.module+el9.6.0+90033+c0ffee33", Module: "ruby:3.3"},

	// --- CRB ---
	{Repo: "crb", Name: "lua-filesystem", EVR: "1.8.0-5.el9"},
	{Repo: "crb", Name: "munge-devel", EVR: "0.5.13-13.el9", Requires: []string{"munge-libs = {evr}"}},

	// --- extras ---
	{Major: "9", Repo: "extras", Name: "epel-release", EVR: "9-10.el9", Requires: []string{"redhat-release >= 9"}},

	// --- EPEL ---
	{Repo: "epel", Name: "apptainer", EVR: "1.4.1-1.el9", Update: "1.4.2-1.el9", Bins: []string{"/usr/bin/apptainer"}},
	{Repo: "epel", Name: "podman-compose", EVR: "1.4.0-1.el9", Requires: []string{"podman", "python3"},
		Bins: []string{"/usr/bin/podman-compose"}},
	{Repo: "epel", Name: "htop", EVR: "3.3.0-5.el9", Update: "3.3.0-6.el9"},
	// a site's appliances_extra_packages_other (testworld/appliancesite/overrides),
	// from the site's own repository
	{Repo: "siteextra", Name: "fatimage-site-extra", EVR: "1.0-1.el9", Files: map[string]string{"/usr/share/fatimage-site-extra/README": "a site's extra package\n"}},
	{Repo: "epel", Name: "screen", EVR: "4.8.0-6.el9"},
	{Repo: "epel", Name: "xfce4-panel", EVR: "4.18.6-1.el9", Comps: "Xfce"},
	{Repo: "epel", Name: "xfwm4", EVR: "4.18.0-1.el9", Comps: "Xfce"},
	{Repo: "epel", Name: "xfce4-session", EVR: "4.18.4-1.el9", Comps: "Xfce", Requires: []string{"xfwm4", "xfce4-panel"}},
	// in @Xfce, as in EPEL; the desktop group keeps it out
	{Repo: "epel", Name: "xfce4-screensaver", EVR: "4.18.4-1.el9", Comps: "Xfce"},
	{Repo: "epel", Name: "R", EVR: "4.5.1-1.el9", Bins: []string{"/usr/bin/R"}},
	// /etc/fail2ban, where the appliance's fail2ban role writes jail.local
	// (standins_system.go)
	{Repo: "epel", Name: "fail2ban-server", EVR: "1.1.0-6.el9", Requires: []string{"python3"}, Units: []string{"fail2ban.service"},
		Files: fail2banServerFiles},
	{Repo: "epel", Name: "fail2ban-firewalld", EVR: "1.1.0-6.el9",
		Requires: []string{"fail2ban-server = {evr}", "firewalld"}, Files: fail2banFirewalldFiles},
	{Repo: "epel", Name: "python3-certbot", EVR: "4.0.0-3.el9"},
	{Repo: "epel", Name: "certbot", EVR: "4.0.0-3.el9", Requires: []string{"python3-certbot = {evr}"}},
	{Repo: "epel", Name: "python3-certbot-apache", EVR: "4.0.0-3.el9", Requires: []string{"python3-certbot"}},

	// --- OpenHPC 3 base (never changes, as upstream) ---
	{Repo: "OpenHPC", Name: "ohpc-filesystem", EVR: "3.0-300.ohpc.1.1"},
	{Repo: "OpenHPC", Name: "ohpc-release", EVR: "3-1.el9"},
	{Repo: "OpenHPC", Name: "ohpc-base-compute", EVR: "3.0-300.ohpc.3.1", Requires: []string{"ohpc-filesystem"}},
	{Repo: "OpenHPC", SRPM: "slurm-ohpc", Name: "slurm-ohpc", EVR: "22.05.8-300.ohpc.3.1", Requires: []string{"munge"}, Recommends: slurmRecommends,
		BuildRequires: slurmBuildRequires, Bins: []string{"/usr/bin/sinfo", "/usr/bin/scontrol"}},
	{Repo: "OpenHPC", SRPM: "slurm-ohpc", Name: "slurm-slurmctld-ohpc", EVR: "22.05.8-300.ohpc.3.1",
		Requires: []string{"slurm-ohpc = {evr}"}, Bins: []string{"/usr/sbin/slurmctld"}, Units: []string{"slurmctld.service"}},
	{Repo: "OpenHPC", SRPM: "slurm-ohpc", Name: "slurm-slurmd-ohpc", EVR: "22.05.8-300.ohpc.3.1",
		Requires: []string{"slurm-ohpc = {evr}"}, Bins: []string{"/usr/sbin/slurmd"}, Units: []string{"slurmd.service"}},
	{Repo: "OpenHPC", SRPM: "slurm-ohpc", Name: "slurm-slurmdbd-ohpc", EVR: "22.05.8-300.ohpc.3.1",
		Requires: []string{"slurm-ohpc = {evr}"}, Bins: []string{"/usr/sbin/slurmdbd"}, Units: []string{"slurmdbd.service"}},
	{Repo: "OpenHPC", SRPM: "slurm-ohpc", Name: "slurm-example-configs-ohpc", EVR: "22.05.8-300.ohpc.3.1"},
	{Repo: "OpenHPC", SRPM: "slurm-ohpc", Name: "slurm-libpmi-ohpc", EVR: "22.05.8-300.ohpc.3.1", Requires: []string{"slurm-ohpc = {evr}"}},
	{Repo: "OpenHPC", Name: "ohpc-slurm-server", EVR: "3.0-300.ohpc.3.1",
		Requires: []string{"slurm-slurmctld-ohpc", "slurm-ohpc", "munge", "ohpc-filesystem"}},
	{Repo: "OpenHPC", Name: "ohpc-slurm-client", EVR: "3.0-300.ohpc.3.1",
		Requires: []string{"slurm-slurmd-ohpc", "slurm-ohpc", "munge", "ohpc-filesystem"}},
	{Repo: "OpenHPC", Name: "lmod-ohpc", EVR: "8.7.6-300.ohpc.4.1",
		Requires: []string{"lua-posix", "lua-filesystem", "ohpc-filesystem"}},
	{Repo: "OpenHPC", Name: "gnu12-compilers-ohpc", EVR: "12.2.0-300.ohpc.2.3", Requires: []string{"ohpc-filesystem"}},
	{Repo: "OpenHPC", Name: "openblas-gnu12-ohpc", EVR: "0.3.21-300.ohpc.1.4", Requires: []string{"gnu12-compilers-ohpc"}},
	{Repo: "OpenHPC", Name: "ohpc-gnu12-openmpi4-perf-tools", EVR: "3.0-300.ohpc.1.2",
		Requires: []string{"gnu12-compilers-ohpc", "lmod-ohpc"}},
	{Repo: "OpenHPC", Name: "nhc-ohpc", EVR: "1.4.3-300.ohpc.1.4", Requires: []string{"ohpc-filesystem"}},

	// --- OpenHPC 3 updates: newer slurm, bumped again in the newer snapshot ---
	{Repo: "OpenHPC-updates", SRPM: "slurm-ohpc", Name: "slurm-ohpc", EVR: "23.11.10-320.ohpc.3.2", Update: "23.11.10-321.ohpc.3.2",
		BuildRequires: slurmBuildRequires, Requires: []string{"munge"}, Recommends: slurmRecommends, Bins: []string{"/usr/bin/sinfo", "/usr/bin/scontrol"}},
	{Repo: "OpenHPC-updates", SRPM: "slurm-ohpc", Name: "slurm-slurmctld-ohpc", EVR: "23.11.10-320.ohpc.3.2", Update: "23.11.10-321.ohpc.3.2",
		Requires: []string{"slurm-ohpc = {evr}"}, Bins: []string{"/usr/sbin/slurmctld"}, Units: []string{"slurmctld.service"}},
	{Repo: "OpenHPC-updates", SRPM: "slurm-ohpc", Name: "slurm-slurmd-ohpc", EVR: "23.11.10-320.ohpc.3.2", Update: "23.11.10-321.ohpc.3.2",
		Requires: []string{"slurm-ohpc = {evr}"}, Bins: []string{"/usr/sbin/slurmd"}, Units: []string{"slurmd.service"}},
	{Repo: "OpenHPC-updates", SRPM: "slurm-ohpc", Name: "slurm-slurmdbd-ohpc", EVR: "23.11.10-320.ohpc.3.2", Update: "23.11.10-321.ohpc.3.2",
		Requires: []string{"slurm-ohpc = {evr}"}, Bins: []string{"/usr/sbin/slurmdbd"}, Units: []string{"slurmdbd.service"}},
	{Repo: "OpenHPC-updates", SRPM: "slurm-ohpc", Name: "slurm-example-configs-ohpc", EVR: "23.11.10-320.ohpc.3.2", Update: "23.11.10-321.ohpc.3.2"},
	{Repo: "OpenHPC-updates", SRPM: "slurm-ohpc", Name: "slurm-libpmi-ohpc", EVR: "23.11.10-320.ohpc.3.2", Update: "23.11.10-321.ohpc.3.2",
		Requires: []string{"slurm-ohpc = {evr}"}},
	// a site's openhpc_packages_extra (testworld/appliancesite/overrides)
	{Repo: "OpenHPC-updates", SRPM: "slurm-ohpc", Name: "slurm-sview-ohpc", EVR: "23.11.10-320.ohpc.3.2", Update: "23.11.10-321.ohpc.3.2",
		Requires: []string{"slurm-ohpc = {evr}"}},
	{Repo: "OpenHPC-updates", Name: "ohpc-slurm-server", EVR: "3.2-320.ohpc.1.1",
		Requires: []string{"slurm-slurmctld-ohpc", "slurm-ohpc", "munge", "ohpc-filesystem"}},

	// --- Ceph reef (CentOS Storage SIG) ---
	{Repo: "Ceph", Name: "librados2", EVR: "2:18.2.7-1.el9s"},
	{Repo: "Ceph", Name: "libcephfs2", EVR: "2:18.2.7-1.el9s", Requires: []string{"librados2 = {evr}"}},
	{Repo: "Ceph", Name: "ceph-common", EVR: "2:18.2.7-1.el9s", Update: "2:18.2.7-2.el9s",
		Requires: []string{"librados2", "libcephfs2"}},
	{Repo: "Ceph", Name: "ceph-fuse", EVR: "2:18.2.7-1.el9s", Requires: []string{"librados2"}},

	// --- Grafana OSS (the build excludes grafana from updates) ---
	// the provisioning directories the real package ships (each with a
	// sample.yaml): grafana-dashboards writes into dashboards/ and does
	// not create it
	{Repo: "grafana", Name: "grafana", EVR: "10.4.18-1", Update: "10.4.19-1",
		Bins: []string{"/usr/sbin/grafana-server", "/usr/sbin/grafana-cli"}, Units: []string{"grafana-server.service"},
		Files: grafanaProvisioning(), User: &sysUser{"grafana", "/usr/share/grafana", "/sbin/nologin", "grafana user"}},

	// --- smaller third-party repositories ---
	{Repo: "epel-cisco-openh264", Name: "openh264", EVR: "2.4.1-2.el9"},
	{Repo: "ondemand-web", Name: "ondemand", EVR: "4.1.2-1.el9", Update: "4.1.3-1.el9",
		Requires: []string{"nodejs", "ruby", "lua-posix", "mod_authnz_pam"}},
	// the appliance's pin, and a newer one the pin must not take
	{Repo: "ondemand-web", Name: "ondemand", EVR: "4.1.4-1.el9", Update: "4.1.5-1.el9",
		Requires: []string{"nodejs", "ruby", "lua-posix", "mod_authnz_pam"}},
	{Repo: "ondemand-web", Name: "ondemand_exporter", EVR: "0.11.2-1.el9"},
	{Repo: "ondemand-web", Name: "ondemand-dex", EVR: "2.36.0-1.el9", Units: []string{"ondemand-dex.service"}},
	{Repo: "TurboVNC", Name: "turbovnc", EVR: "3.1.4-20250702", Bins: []string{"/opt/TurboVNC/bin/vncserver"},
		Units: []string{"tvncserver.service"}, EnableOnInstall: true},
	// the appliance's pin (older than the repository's newest)
	{Repo: "TurboVNC", Name: "turbovnc", EVR: "3.0.1-20230811", Bins: []string{"/opt/TurboVNC/bin/vncserver"},
		Units: []string{"tvncserver.service"}, EnableOnInstall: true},
	{Repo: "cernvmfs_cfg", Name: "cvmfs-config-default", EVR: "2.2-1", Provides: []string{"cvmfs-config"}},
	{Repo: "cernvmfs_pkgs", Name: "cvmfs-libs", EVR: "2.12.7-1.el9"},
	{Repo: "cernvmfs_pkgs", Name: "cvmfs", EVR: "2.12.7-1.el9", Requires: []string{"cvmfs-libs = {evr}", "cvmfs-config"},
		Files: cvmfsFiles},
	// the weak dependencies' probes (standins_system.go)
	{Repo: "OpenHPC", Name: "lab-recommended-by-slurm", EVR: "1-1"},
	{Repo: "epel", Name: "lab-weakdep-probe", EVR: "1-1", Recommends: probeRecommends},
	{Repo: "epel", Name: "lab-recommended-by-probe", EVR: "1-1"},
	{Repo: "cernvmfs_eessi_cfg", Name: "cvmfs-config-eessi", EVR: "0.2.4-1", Provides: []string{"cvmfs-config"}},

	// --- NVIDIA DOCA 3.2.3 (the doca group): doca-ofed needs the kernel
	// support doca-kernel-support (in doca-extra) builds for the kernel ---
	{Repo: "doca", Name: "doca-extra", EVR: "3.2.3-1.el9", Bins: []string{"/opt/mellanox/doca/tools/doca-kernel-support"}},
	{Repo: "doca", Name: "mlnx-ofa_kernel", EVR: "25.10-OFED.25.10.2.3.1.el9", Requires: []string{"kmod-mlnx-ofa_kernel"}},
	{Repo: "doca", Name: "doca-ofed", EVR: "3.2.3-1.el9", Requires: []string{"doca-kernel-support = 3.2.3", "mlnx-ofa_kernel"}},

	// --- NVIDIA CUDA (the cuda group): the driver only in its module
	// streams, a newer driver and toolkit than the appliance's pins ---
	{Repo: "cuda", Name: "nvidia-persistenced", EVR: "3:610.57.04-1.el9", Update: "3:610.60.02-1.el9", Module: "nvidia-driver:610-open",
		Bins: []string{"/usr/bin/nvidia-persistenced"}, Units: []string{"nvidia-persistenced.service"}},
	{Repo: "cuda", Name: "kmod-nvidia-open-dkms", EVR: "3:610.57.04-1.el9", Update: "3:610.60.02-1.el9", Module: "nvidia-driver:610-open"},
	{Repo: "cuda", Name: "nvidia-driver", EVR: "3:610.57.04-1.el9", Update: "3:610.60.02-1.el9", Module: "nvidia-driver:610-open",
		// NVML's runtime library, without the unversioned link that
		// slurm_recompile adds
		Requires: []string{"nvidia-persistenced = {evr}"}, Files: map[string]string{"/usr/lib64/libnvidia-ml.so.1": "lab stand-in NVML\n"}},
	{Repo: "cuda", Name: "nvidia-open", EVR: "3:610.57.04-1.el9", Update: "3:610.60.02-1.el9", Module: "nvidia-driver:610-open",
		Requires: []string{"nvidia-driver = {evr}", "kmod-nvidia-open-dkms = {evr}"}},
	{Repo: "cuda", Name: "cuda-nvcc-13-3", EVR: "13.3.107-1", Bins: []string{"/usr/local/cuda-13.3/bin/nvcc"}},
	{Repo: "cuda", Name: "cuda-toolkit", EVR: "13.3.1-1", Update: "13.4.0-1", Requires: []string{"cuda-nvcc-13-3"}},
	{Repo: "cuda", Name: "nvidia-gds", EVR: "13.3.1-1", Requires: []string{"nvidia-driver"}},

	// --- what the lustre role installs to build the client RPMs
	// (lustre_build_packages): markers only, the VM's own userland
	// (Debian's gcc, make, rpmbuild, git) does the building ---
	{Repo: "appstream", Name: "gcc", EVR: "11.5.0-5.el9_5"},
	{Repo: "appstream", Name: "libtool", EVR: "2.4.6-46.el9"},
	{Major: "9", Repo: "appstream", Name: "python3-devel", EVR: "3.9.21-2.el9", Requires: []string{"python3"}},
	{Major: "8", Repo: "appstream", Name: "python36-devel", EVR: "3.6.8-39.module+el8.10.0+1910+234ad790.rocky",
		Requires: []string{"python36"}, Provides: []string{"python3-devel = {evr}"}},
	{Repo: "appstream", Name: "openmpi", EVR: "4.1.1-5.el9"},
	{Repo: "appstream", Name: "elfutils-libelf-devel", EVR: "0.192-5.el9"},
	{Repo: "appstream", Name: "libmount-devel", EVR: "2.37.4-21.el9"},
	{Repo: "appstream", Name: "libnl3-devel", EVR: "3.11.0-1.el9"},
	{Repo: "crb", Name: "libyaml-devel", EVR: "0.2.5-7.el9"},
	{Major: "9", Repo: "baseos", Name: "kernel-abi-stablelists", EVR: "5.14.0-570.58.1.el9_6"},
	{Major: "8", Repo: "baseos", Name: "kernel-abi-stablelists", EVR: "4.18.0-553.81.1.el8_10"},
	{Repo: "baseos", Name: "libaio", EVR: "0.3.111-13.el9"},
	{Repo: "appstream", Name: "libaio-devel", EVR: "0.3.111-13.el9", Requires: []string{"libaio = {evr}"}},
}, hostKernelDevel())

// hostKernelDevel is kernel-devel for the kernel the lab's VMs run, their
// host's, which is what `uname -r` and Ansible's ansible_kernel say on
// them: the lustre role installs kernel-devel-{{ ansible_kernel }} and
// builds against /usr/src/kernels/<that release>, as on Rocky, where the
// release names a kernel package. A release with dashes (Debian's,
// 6.12.48+deb13-amd64) is no RPM version: the stand-in is version its
// part before the first dash, release the rest with dashes made
// underscores, and provides the name the role asks for (not
// kernel-devel-uname-r = <release>: no RPM version has two dashes).
func hostKernelDevel() pkgDef {
	release := hostKernelRelease()
	v, r, ok := strings.Cut(release, "-")
	if !ok {
		r = "0"
	}
	return pkgDef{Repo: "appstream", Name: "kernel-devel", EVR: v + "-" + strings.ReplaceAll(r, "-", "_"),
		Provides: []string{"kernel-devel-" + release, "installonlypkg(kernel)"},
		Files:    map[string]string{"/usr/src/kernels/" + release + "/Makefile": "# lab stand-in kernel-devel " + release + "\n"}}
}

// hostKernelRelease is the running kernel's release (uname -r).
func hostKernelRelease() string {
	data, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "0.0.0-unknown"
	}
	return strings.TrimSpace(string(data))
}

// FatPackages are the package names a fat Rocky 9 build installs (spec
// section 4, inventory group fatimage); every one is in the catalog.
// Module streams come from appstream's modules.yaml, @Xfce from epel's comps.
var FatPackages = []string{
	"epel-release",
	"squid", "tuned",
	"fail2ban-server", "fail2ban-firewalld", "firewalld",
	"podman", "python3",
	"nfs-utils",
	"sssd-common", "oddjob-mkhomedir",
	"bash-completion", "htop", "nano", "patch", "screen", "tmux", "wget", "bind-utils", "net-tools",
	"postfix", "git", "python312", "s-nail",
	"ohpc-slurm-server", "slurm-slurmctld-ohpc", "slurm-example-configs-ohpc", "ohpc-base-compute",
	"ohpc-slurm-client", "slurm-ohpc", "munge", "slurm-slurmd-ohpc", "lmod-ohpc", "slurm-slurmdbd-ohpc",
	"slurm-libpmi-ohpc", "ohpc-gnu12-openmpi4-perf-tools", "openblas-gnu12-ohpc", "nhc-ohpc",
	"apptainer", "podman-compose", "mysql",
	"lua-posix", "ondemand", "mod_authnz_pam", "certbot", "python3-certbot-apache", "ondemand_exporter",
	"turbovnc", "nmap-ncat", "dbus-x11", "R",
	"grafana", "chkconfig", "python39", "python3-pip",
}

// RemovedPackages are in the base image and removed by the build.
var RemovedPackages = []string{"cockpit-ws", "cockpit-system", "cockpit-bridge"}

// grafanaProvisioning is /etc/grafana/provisioning as the grafana package
// ships it: a directory per kind of provisioned object, each holding a
// sample.yaml (ours: a comment).
func grafanaProvisioning() map[string]string {
	out := map[string]string{}
	for _, d := range []string{"access-control", "alerting", "dashboards", "datasources", "notifiers", "plugins"} {
		out["/etc/grafana/provisioning/"+d+"/sample.yaml"] = "# lab stand-in of grafana's sample " + d + " provisioning (nothing provisioned)\n"
	}
	return out
}
