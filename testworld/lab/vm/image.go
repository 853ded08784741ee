package vm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// BaseImageOptions configure BuildBaseImage.
type BaseImageOptions struct {
	RockyVersion string            // "9.6" or "8.10"
	Codename     string            // "Blue Onyx" (9), "Green Obsidian" (8)
	RPMs         []string          // RPM files installed into the image's rpm db (rpm -i --nodeps, in the chroot)
	GPGKeys      map[string][]byte // files under /etc/pki/rpm-gpg/ (not imported)
	// DHCP: eth0 takes its address from the network's DHCP server at boot
	// (systemd-networkd's client), as a cloud image's network manager
	// does; for machines booted with MachineSpec.DHCP.
	DHCP bool
}

type imageFile struct {
	path string
	mode os.FileMode
	data string
}

// BuildBaseImage creates a new disk holding a Rocky-Linux-like image on the
// VM userland: Rocky identity files, rpm/dnf configuration, Rocky's repo
// files, cloud-init configured as Rocky's (login user rocky, OpenStack and
// ConfigDrive data sources), sshd ordered after cloud-init, the
// ansible-init unit and the RPMs given.
func BuildBaseImage(m *Manager, opts BaseImageOptions) (diskID string, err error) {
	ver := opts.RockyVersion
	if ver == "" {
		ver = "9.6"
	}
	if opts.Codename == "" {
		opts.Codename = "Blue Onyx"
	}
	major, _, _ := strings.Cut(ver, ".")
	disk, err := m.CloneDisk("")
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(disk)
		}
	}()
	upper := filepath.Join(disk, "upper")
	support := map[string]string{"8": "2029-05-31"}[major]
	if support == "" {
		support = "2032-05-31"
	}
	osRelease := fmt.Sprintf(`NAME="Rocky Linux"
VERSION="%[1]s (%[3]s)"
ID="rocky"
ID_LIKE="rhel centos fedora"
VERSION_ID="%[1]s"
PLATFORM_ID="platform:el%[2]s"
PRETTY_NAME="Rocky Linux %[1]s (%[3]s)"
ANSI_COLOR="0;32"
LOGO="fedora-logo-icon"
CPE_NAME="cpe:/o:rocky:rocky:%[2]s::baseos"
HOME_URL="https://rockylinux.org/"
VENDOR_NAME="RESF"
VENDOR_URL="https://resf.org/"
BUG_REPORT_URL="https://bugs.rockylinux.org/"
SUPPORT_END="%[4]s"
ROCKY_SUPPORT_PRODUCT="Rocky-Linux-%[2]s"
ROCKY_SUPPORT_PRODUCT_VERSION="%[1]s"
REDHAT_SUPPORT_PRODUCT="Rocky Linux"
REDHAT_SUPPORT_PRODUCT_VERSION="%[1]s"
`, ver, major, opts.Codename, support)
	release := fmt.Sprintf("Rocky Linux release %s (%s)\n", ver, opts.Codename)
	files := []imageFile{
		{"etc/os-release", 0o644, osRelease},
		{"usr/lib/os-release", 0o644, osRelease},
		{"etc/rocky-release", 0o644, release},
		{"etc/rocky-release-upstream", 0o644, fmt.Sprintf("Derived from Red Hat Enterprise Linux %s\n", ver)},
		{"etc/redhat-release", 0o644, release},
		{"etc/system-release", 0o644, release},
		{"etc/system-release-cpe", 0o644, fmt.Sprintf("cpe:/o:rocky:rocky:%s::baseos\n", major)},
		{"etc/rpm/macros.dbpath", 0o644, "%_dbpath /var/lib/rpm\n"},
		{"etc/dnf/plugins/local.conf", 0o644, "[main]\nenabled = false\n"},
		{"etc/dnf/dnf.conf", 0o644, "[main]\ngpgcheck=1\ninstallonly_limit=3\nclean_requirements_on_remove=True\nbest=True\nskip_if_unavailable=False\n"},
		{"etc/dnf/vars/contentdir", 0o644, "pub/rocky\n"},
		{"etc/dnf/vars/sigcontentdir", 0o644, "pub/sig\n"},
		{"etc/dnf/vars/rltype", 0o644, "\n"},
		{"etc/selinux/config", 0o644, "# This file controls the state of SELinux on the system.\nSELINUX=enforcing\nSELINUXTYPE=targeted\n"},
		{"etc/hostname", 0o644, "localhost\n"},
		{"etc/hosts", 0o644, "127.0.0.1   localhost localhost.localdomain localhost4 localhost4.localdomain4\n::1         localhost localhost.localdomain localhost6 localhost6.localdomain6\n"},
		{"etc/cloud/cloud.cfg.d/90-fatlab.cfg", 0o644, cloudConfig},
		{"etc/dhcp/dhclient.conf", 0o644, dhclientConf},
		{"etc/ssh/sshd_config.d/50-fatlab.conf", 0o644, sshdConfig},
		{"etc/systemd/system/ssh.service.d/50-fatlab.conf", 0o644, sshdDropIn},
		{"usr/lib/systemd/system/ansible-init.service", 0o644, ansibleInitUnit},
		{"usr/bin/ansible-init", 0o755, ansibleInitScript},
		{"usr/bin/update-ca-trust", 0o755, updateCATrustScript},
	}
	files = append(files, rockyRepoFiles(major)...)
	if opts.DHCP {
		files = append(files, imageFile{"etc/systemd/network/20-eth0.network", 0o644, dhcpNetwork})
	}
	for name, data := range opts.GPGKeys {
		if strings.Contains(name, "/") || name == "" || name == "." || name == ".." {
			return "", fmt.Errorf("vm: bad GPG key file name %q", name)
		}
		files = append(files, imageFile{"etc/pki/rpm-gpg/" + name, 0o644, string(data)})
	}
	// a Rocky image's boot loader files and their tools (bootloader.go)
	files = append(files, bootloaderFiles()...)
	// the setup package's files builds edit in place (setup.go)
	files = append(files, setupFiles(m.rootfs)...)
	for _, f := range files {
		if err := writeUpperFile(m.rootfs, upper, f.path, f.mode, []byte(f.data)); err != nil {
			return "", err
		}
	}
	// ansible-init is enabled, as in the appliance's images; journald keeps
	// its journal on the disk, as on Rocky.
	if err := mkdirUpper(m.rootfs, upper, "etc/systemd/system/multi-user.target.wants"); err != nil {
		return "", err
	}
	if err := os.Symlink("/usr/lib/systemd/system/ansible-init.service", filepath.Join(upper, "etc/systemd/system/multi-user.target.wants/ansible-init.service")); err != nil {
		return "", err
	}
	if err := mkdirUpper(m.rootfs, upper, "var/log/journal"); err != nil {
		return "", err
	}
	// kmod's /etc/modprobe.d, where the appliance's mitigations play copies
	// its denylist (its copy does not create the directory)
	if err := mkdirUpper(m.rootfs, upper, "etc/modprobe.d"); err != nil {
		return "", err
	}
	// Rocky's trust store anchors (update-ca-trust reads them)
	if err := mkdirUpper(m.rootfs, upper, "etc/pki/ca-trust/source/anchors"); err != nil {
		return "", err
	}
	// systemd's getty generator adds a getty on /dev/console in a container;
	// the lab's console is a log, not a login terminal (as on a cloud image,
	// whose serial console nobody logs in on).
	if err := os.Symlink("/dev/null", filepath.Join(upper, "etc/systemd/system/console-getty.service")); err != nil {
		return "", err
	}
	// Install the RPMs into the image's own rpm database, inside the chroot.
	stage := filepath.Join(upper, "var/tmp/fatlab-rpms")
	if err := mkdirUpper(m.rootfs, upper, "var/tmp/fatlab-rpms"); err != nil {
		return "", err
	}
	var inChroot []string
	for i, r := range opts.RPMs {
		b, err := os.ReadFile(r)
		if err != nil {
			return "", err
		}
		name := fmt.Sprintf("%02d-%s", i, filepath.Base(r))
		if err := os.WriteFile(filepath.Join(stage, name), b, 0o644); err != nil {
			return "", err
		}
		inChroot = append(inChroot, "/var/tmp/fatlab-rpms/"+name)
	}
	// Units Debian enables that a Rocky GenericCloud image has disabled (or
	// lacks): they only slow every boot.
	cmd := "systemctl disable --quiet podman.socket podman-restart.service podman-auto-update.timer apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer e2scrub_reap.service && rpm --initdb"
	if opts.DHCP {
		cmd += " && systemctl enable --quiet systemd-networkd.service systemd-networkd-wait-online.service"
	}
	if len(inChroot) > 0 {
		cmd += " && rpm -i --nodeps " + strings.Join(inChroot, " ")
	}
	if err := m.runInDisk(disk, "/bin/sh", "-c", cmd); err != nil {
		return "", err
	}
	if err := os.RemoveAll(stage); err != nil {
		return "", err
	}
	return disk, nil
}

// runInDisk mounts the disk in a private mount namespace and runs a command
// chrooted into it (no network, no VM init).
func (m *Manager) runInDisk(disk string, argv ...string) error {
	if err := resetWork(disk); err != nil {
		return err
	}
	args := append([]string{"--mount", "--pid", "--fork", "--kill-child", m.setupSh, m.rootfs, disk}, argv...)
	c := exec.Command("unshare", args...)
	c.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin", "HOME=/root", "LANG=C.UTF-8"}
	out, err := c.CombinedOutput()
	if err != nil {
		return fmt.Errorf("vm: in disk: %s: %v: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// mkdirUpper creates a directory (and parents) in an upper dir, copying mode
// and ownership of the lower layer's directories so the merged view looks alike.
func mkdirUpper(lower, upper, rel string) error {
	parts := strings.Split(rel, "/")
	for i := range parts {
		sub := filepath.Join(parts[:i+1]...)
		p := filepath.Join(upper, sub)
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		mode := os.FileMode(0o755)
		uid, gid := 0, 0
		if fi, err := os.Stat(filepath.Join(lower, sub)); err == nil && fi.IsDir() {
			mode = fi.Mode().Perm() | fi.Mode()&os.ModeSticky
			if st, ok := statOwner(fi); ok {
				uid, gid = st[0], st[1]
			}
		}
		if err := os.Mkdir(p, mode); err != nil {
			return err
		}
		if err := os.Chmod(p, mode); err != nil {
			return err
		}
		if err := os.Lchown(p, uid, gid); err != nil {
			return err
		}
	}
	return nil
}

func writeUpperFile(lower, upper, rel string, mode os.FileMode, data []byte) error {
	if err := mkdirUpper(lower, upper, filepath.Dir(rel)); err != nil {
		return err
	}
	p := filepath.Join(upper, rel)
	_ = os.Remove(p)
	if err := os.WriteFile(p, data, mode); err != nil {
		return err
	}
	return os.Chmod(p, mode)
}

// rockyRepoFiles are the repo files of a Rocky GenericCloud image of
// major: Rocky 9's rocky.repo and rocky-extras.repo, Rocky 8's one file
// per repository (its key RPM-GPG-KEY-rockyofficial) and its sources'
// Rocky-Sources.repo (what slurm_recompile's dnf download --source
// enables when the build's repositories lack them).
func rockyRepoFiles(major string) []imageFile {
	if major != "8" {
		return []imageFile{{"etc/yum.repos.d/rocky.repo", 0o644, rockyRepo}, {"etc/yum.repos.d/rocky-extras.repo", 0o644, rockyExtrasRepo}}
	}
	var out []imageFile
	for _, r := range []struct{ file, section, name, repo, enabled string }{
		{"Rocky-BaseOS", "baseos", "BaseOS", "BaseOS", "1"},
		{"Rocky-AppStream", "appstream", "AppStream", "AppStream", "1"},
		{"Rocky-PowerTools", "powertools", "PowerTools", "PowerTools", "0"},
		{"Rocky-Extras", "extras", "Extras", "extras", "1"},
	} {
		out = append(out, imageFile{"etc/yum.repos.d/" + r.file + ".repo", 0o644, fmt.Sprintf(`# %[1]s.repo
`+mirrorlistNote+`
[%[2]s]
name=Rocky Linux $releasever - %[3]s
mirrorlist=https://mirrors.rockylinux.org/mirrorlist?arch=$basearch&repo=%[4]s-$releasever
#baseurl=http://dl.rockylinux.org/$contentdir/$releasever/%[4]s/$basearch/os/
gpgcheck=1
enabled=%[5]s
countme=1
gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-rockyofficial
`, r.file, r.section, r.name, r.repo, r.enabled)})
	}
	return append(out, imageFile{"etc/yum.repos.d/Rocky-Sources.repo", 0o644, rocky8SourcesRepo()})
}

// rocky8SourcesRepo is Rocky 8's Rocky-Sources.repo.
func rocky8SourcesRepo() string {
	out := "# Rocky-Sources.repo\n"
	for _, r := range []struct{ section, repo string }{{"baseos-source", "BaseOS"}, {"appstream-source", "AppStream"}} {
		out += fmt.Sprintf(`
[%[1]s]
name=Rocky Linux $releasever - %[2]s - Source
mirrorlist=https://mirrors.rockylinux.org/mirrorlist?arch=source&repo=%[2]s-$releasever-source
#baseurl=http://dl.rockylinux.org/$contentdir/$releasever/%[2]s/source/tree/
gpgcheck=1
enabled=0
gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-rockyofficial
`, r.section, r.repo)
	}
	return out
}

// mirrorlistNote is the comment Rocky's repo files open with.
const mirrorlistNote = `#
# The mirrorlist system uses the connecting IP address of the client and the
# update status of each mirror to pick current mirrors that are geographically
# close to the client.  You should use this for Rocky updates unless you are
# manually picking other mirrors.
#
# If the mirrorlist does not work for you, you can try the commented out
# baseurl line instead.
`

const rockyRepo = `# rocky.repo
` + mirrorlistNote + `
[baseos]
name=Rocky Linux $releasever - BaseOS
mirrorlist=https://mirrors.rockylinux.org/mirrorlist?arch=$basearch&repo=BaseOS-$releasever$rltype
#baseurl=http://dl.rockylinux.org/$contentdir/$releasever/BaseOS/$basearch/os/
gpgcheck=1
enabled=1
countme=1
metadata_expire=6h
gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9

[baseos-debuginfo]
name=Rocky Linux $releasever - BaseOS - Debug
mirrorlist=https://mirrors.rockylinux.org/mirrorlist?arch=$basearch&repo=BaseOS-$releasever-debug$rltype
#baseurl=http://dl.rockylinux.org/$contentdir/$releasever/BaseOS/$basearch/debug/tree/
gpgcheck=1
enabled=0
metadata_expire=6h
gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9

[baseos-source]
name=Rocky Linux $releasever - BaseOS - Source
mirrorlist=https://mirrors.rockylinux.org/mirrorlist?arch=source&repo=BaseOS-$releasever-source$rltype
#baseurl=http://dl.rockylinux.org/$contentdir/$releasever/BaseOS/source/tree/
gpgcheck=1
enabled=0
metadata_expire=6h
gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9

[appstream]
name=Rocky Linux $releasever - AppStream
mirrorlist=https://mirrors.rockylinux.org/mirrorlist?arch=$basearch&repo=AppStream-$releasever$rltype
#baseurl=http://dl.rockylinux.org/$contentdir/$releasever/AppStream/$basearch/os/
gpgcheck=1
enabled=1
countme=1
metadata_expire=6h
gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9

[appstream-debuginfo]
name=Rocky Linux $releasever - AppStream - Debug
mirrorlist=https://mirrors.rockylinux.org/mirrorlist?arch=$basearch&repo=AppStream-$releasever-debug$rltype
#baseurl=http://dl.rockylinux.org/$contentdir/$releasever/AppStream/$basearch/debug/tree/
gpgcheck=1
enabled=0
metadata_expire=6h
gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9

[appstream-source]
name=Rocky Linux $releasever - AppStream - Source
mirrorlist=https://mirrors.rockylinux.org/mirrorlist?arch=source&repo=AppStream-$releasever-source$rltype
#baseurl=http://dl.rockylinux.org/$contentdir/$releasever/AppStream/source/tree/
gpgcheck=1
enabled=0
metadata_expire=6h
gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9

[crb]
name=Rocky Linux $releasever - CRB
mirrorlist=https://mirrors.rockylinux.org/mirrorlist?arch=$basearch&repo=CRB-$releasever$rltype
#baseurl=http://dl.rockylinux.org/$contentdir/$releasever/CRB/$basearch/os/
gpgcheck=1
enabled=0
countme=1
metadata_expire=6h
gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9

[crb-debuginfo]
name=Rocky Linux $releasever - CRB - Debug
mirrorlist=https://mirrors.rockylinux.org/mirrorlist?arch=$basearch&repo=CRB-$releasever-debug$rltype
#baseurl=http://dl.rockylinux.org/$contentdir/$releasever/CRB/$basearch/debug/tree/
gpgcheck=1
enabled=0
metadata_expire=6h
gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9

[crb-source]
name=Rocky Linux $releasever - CRB - Source
mirrorlist=https://mirrors.rockylinux.org/mirrorlist?arch=source&repo=CRB-$releasever-source$rltype
#baseurl=http://dl.rockylinux.org/$contentdir/$releasever/CRB/source/tree/
gpgcheck=1
enabled=0
metadata_expire=6h
gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9
`

const rockyExtrasRepo = `# rocky-extras.repo
` + mirrorlistNote + `
[extras]
name=Rocky Linux $releasever - Extras
mirrorlist=https://mirrors.rockylinux.org/mirrorlist?arch=$basearch&repo=extras-$releasever$rltype
#baseurl=http://dl.rockylinux.org/$contentdir/$releasever/extras/$basearch/os/
gpgcheck=1
enabled=1
countme=1
metadata_expire=6h
gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9

[extras-debuginfo]
name=Rocky Linux $releasever - Extras Debug
mirrorlist=https://mirrors.rockylinux.org/mirrorlist?arch=$basearch&repo=extras-$releasever-debug$rltype
#baseurl=http://dl.rockylinux.org/$contentdir/$releasever/extras/$basearch/debug/tree/
gpgcheck=1
enabled=0
metadata_expire=6h
gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9

[extras-source]
name=Rocky Linux $releasever - Extras Source
mirrorlist=https://mirrors.rockylinux.org/mirrorlist?arch=source&repo=extras-$releasever-source$rltype
#baseurl=http://dl.rockylinux.org/$contentdir/$releasever/extras/source/tree/
gpgcheck=1
enabled=0
metadata_expire=6h
gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9

[plus]
name=Rocky Linux $releasever - Plus
mirrorlist=https://mirrors.rockylinux.org/mirrorlist?arch=$basearch&repo=plus-$releasever$rltype
#baseurl=http://dl.rockylinux.org/$contentdir/$releasever/plus/$basearch/os/
gpgcheck=1
enabled=0
countme=1
metadata_expire=6h
gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-9
`
