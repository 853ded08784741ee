package vm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// BaseImageOptions configure BuildBaseImage.
type BaseImageOptions struct {
	RockyVersion string            // "9.6"
	RPMs         []string          // RPM files installed into the image's rpm db (rpm -i --nodeps, in the chroot)
	GPGKeys      map[string][]byte // files under /etc/pki/rpm-gpg/ (not imported)
}

type imageFile struct {
	path string
	mode os.FileMode
	data string
}

// BuildBaseImage creates a new disk holding a Rocky-Linux-like image: Rocky
// identity files, rpm/dnf configuration, Rocky's repo files, the VM init,
// cloud-init and ansible-init stand-ins, the shadowed reboot commands and the
// RPMs given.
func BuildBaseImage(m *Manager, opts BaseImageOptions) (diskID string, err error) {
	ver := opts.RockyVersion
	if ver == "" {
		ver = "9.6"
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
	osRelease := fmt.Sprintf(`NAME="Rocky Linux"
VERSION="%[1]s (Blue Onyx)"
ID="rocky"
ID_LIKE="rhel centos fedora"
VERSION_ID="%[1]s"
PLATFORM_ID="platform:el%[2]s"
PRETTY_NAME="Rocky Linux %[1]s (Blue Onyx)"
ANSI_COLOR="0;32"
LOGO="fedora-logo-icon"
CPE_NAME="cpe:/o:rocky:rocky:%[2]s::baseos"
HOME_URL="https://rockylinux.org/"
VENDOR_NAME="RESF"
VENDOR_URL="https://resf.org/"
BUG_REPORT_URL="https://bugs.rockylinux.org/"
SUPPORT_END="2032-05-31"
ROCKY_SUPPORT_PRODUCT="Rocky-Linux-%[2]s"
ROCKY_SUPPORT_PRODUCT_VERSION="%[1]s"
REDHAT_SUPPORT_PRODUCT="Rocky Linux"
REDHAT_SUPPORT_PRODUCT_VERSION="%[1]s"
`, ver, major)
	release := fmt.Sprintf("Rocky Linux release %s (Blue Onyx)\n", ver)
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
		{"etc/yum.repos.d/rocky.repo", 0o644, rockyRepo},
		{"etc/yum.repos.d/rocky-extras.repo", 0o644, rockyExtrasRepo},
		{"etc/selinux/config", 0o644, "# This file controls the state of SELinux on the system.\nSELINUX=enforcing\nSELINUXTYPE=targeted\n"},
		{"etc/ssh/fatlab/sshd_config", 0o644, sshdConfig},
		{"usr/lib/fatlab/init", 0o755, initScript},
		{"usr/lib/fatlab/cloud-init", 0o755, cloudInitScript},
		{"usr/lib/fatlab/power", 0o755, powerScript},
		{"usr/bin/ansible-init", 0o755, ansibleInitScript},
		{"usr/sbin/reboot", 0o755, "#!/bin/sh\nexec /usr/lib/fatlab/power reboot \"$@\"\n"},
		{"usr/sbin/poweroff", 0o755, "#!/bin/sh\nexec /usr/lib/fatlab/power poweroff \"$@\"\n"},
		{"usr/sbin/halt", 0o755, "#!/bin/sh\nexec /usr/lib/fatlab/power halt \"$@\"\n"},
		{"usr/sbin/shutdown", 0o755, "#!/bin/sh\nexec /usr/lib/fatlab/power shutdown \"$@\"\n"},
		{"usr/bin/systemctl", 0o755, systemctlScript},
	}
	for name, data := range opts.GPGKeys {
		if strings.Contains(name, "/") || name == "" || name == "." || name == ".." {
			return "", fmt.Errorf("vm: bad GPG key file name %q", name)
		}
		files = append(files, imageFile{"etc/pki/rpm-gpg/" + name, 0o644, string(data)})
	}
	// The host's (Debian's) units must not show through the overlay: the
	// VM's unit directories are opaque and hold only Rocky's sshd (enabled,
	// and really running) plus what packages install.
	for _, d := range []string{"etc/systemd/system", "usr/lib/systemd/system"} {
		if err := mkdirUpper(upper, d); err != nil {
			return "", err
		}
		if err := syscall.Setxattr(filepath.Join(upper, d), "trusted.overlay.opaque", []byte("y"), 0); err != nil {
			return "", fmt.Errorf("vm: making %s opaque: %w", d, err)
		}
	}
	files = append(files, imageFile{"usr/lib/systemd/system/sshd.service", 0o644, sshdUnit})
	files = append(files, bootloaderFiles()...)
	if err := writeSystemAccounts(upper); err != nil {
		return "", err
	}
	for _, f := range files {
		if err := writeUpperFile(upper, f.path, f.mode, []byte(f.data)); err != nil {
			return "", err
		}
	}
	if err := mkdirUpper(upper, "etc/systemd/system/multi-user.target.wants"); err != nil {
		return "", err
	}
	if err := os.Symlink("/usr/lib/systemd/system/sshd.service", filepath.Join(upper, "etc/systemd/system/multi-user.target.wants/sshd.service")); err != nil {
		return "", err
	}
	// Install the RPMs into the image's own rpm database, inside the chroot.
	stage := filepath.Join(upper, "var/tmp/fatlab-rpms")
	if err := mkdirUpper(upper, "var/tmp/fatlab-rpms"); err != nil {
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
	cmd := "rpm --initdb"
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

// writeSystemAccounts gives the image the host's system accounts only:
// like a fresh GenericCloud image it has no regular users, so the login
// user cloud-init creates gets uid 1000 and fixed ids above it are free.
func writeSystemAccounts(upper string) error {
	dropped := map[string]bool{}
	for _, f := range []struct {
		path  string
		idCol int // -1: no id column; drop the names dropped above
	}{{"etc/passwd", 2}, {"etc/group", 2}, {"etc/shadow", -1}, {"etc/gshadow", -1}} {
		src := filepath.Join("/", f.path)
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		st, err := os.Stat(src)
		if err != nil {
			return err
		}
		var keep []string
		for _, line := range strings.SplitAfter(string(data), "\n") {
			fields := strings.Split(line, ":")
			if f.idCol >= 0 && len(fields) > f.idCol {
				if id, err := strconv.Atoi(fields[f.idCol]); err == nil && id >= 1000 && id < 65534 {
					dropped[f.path[4:]+":"+fields[0]] = true
					continue
				}
			}
			if f.idCol < 0 && (dropped["passwd:"+fields[0]] && f.path == "etc/shadow" || dropped["group:"+fields[0]] && f.path == "etc/gshadow") {
				continue
			}
			keep = append(keep, line)
		}
		if err := writeUpperFile(upper, f.path, st.Mode().Perm(), []byte(strings.Join(keep, ""))); err != nil {
			return err
		}
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			if err := os.Chown(filepath.Join(upper, f.path), int(sys.Uid), int(sys.Gid)); err != nil {
				return err
			}
		}
	}
	return nil
}

// runInDisk mounts the disk in a private mount namespace and runs a command
// chrooted into it (no network, no VM init).
func (m *Manager) runInDisk(disk string, argv ...string) error {
	if err := resetWork(disk); err != nil {
		return err
	}
	args := append([]string{"--mount", "--pid", "--fork", "--kill-child", m.setupSh, disk}, argv...)
	c := exec.Command("unshare", args...)
	c.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin", "HOME=/root", "LANG=C.UTF-8"}
	out, err := c.CombinedOutput()
	if err != nil {
		return fmt.Errorf("vm: in disk: %s: %v: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// mkdirUpper creates a directory (and parents) in an upper dir, copying mode
// and ownership of existing host directories so the merged view looks alike.
func mkdirUpper(upper, rel string) error {
	parts := strings.Split(rel, "/")
	for i := range parts {
		sub := filepath.Join(parts[:i+1]...)
		p := filepath.Join(upper, sub)
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		mode := os.FileMode(0o755)
		uid, gid := 0, 0
		if fi, err := os.Stat("/" + sub); err == nil && fi.IsDir() {
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

func writeUpperFile(upper, rel string, mode os.FileMode, data []byte) error {
	if err := mkdirUpper(upper, filepath.Dir(rel)); err != nil {
		return err
	}
	p := filepath.Join(upper, rel)
	_ = os.Remove(p)
	if err := os.WriteFile(p, data, mode); err != nil {
		return err
	}
	return os.Chmod(p, mode)
}

const sshdUnit = `[Unit]
Description=OpenSSH server daemon
After=network.target sshd-keygen.target

[Service]
Type=notify
ExecStart=/usr/sbin/sshd -D $OPTIONS

[Install]
WantedBy=multi-user.target
`

const rockyRepo = `# rocky.repo
#
# The mirrorlist system uses the connecting IP address of the client and the
# update status of each mirror to pick current mirrors that are geographically
# close to the client.  You should use this for Rocky updates unless you are
# manually picking other mirrors.
#
# If the mirrorlist does not work for you, you can try the commented out
# baseurl line instead.

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
#
# The mirrorlist system uses the connecting IP address of the client and the
# update status of each mirror to pick current mirrors that are geographically
# close to the client.  You should use this for Rocky updates unless you are
# manually picking other mirrors.
#
# If the mirrorlist does not work for you, you can try the commented out
# baseurl line instead.

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
