// Package safepath is where the provisioner may write in the image: the
// one check every option taking a path in the image uses, the system
// directories no option may replace, take over or remove, and the modes
// it may give.
package safepath

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

// System are the base system's directories. A destination that is one
// of them would be replaced (a git checkout or venv is removed and made
// again), taken over (a directory source is chowned recursively) or
// become a user's home: `rm -rf /etc`, `chown -R nobody /`.
var System = []string{
	"/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64", "/media", "/mnt", "/opt",
	"/proc", "/root", "/run", "/sbin", "/srv", "/sys", "/tmp", "/usr", "/var",
	"/etc/cron.d", "/etc/pam.d", "/etc/pki", "/etc/pki/rpm-gpg", "/etc/profile.d", "/etc/security",
	"/etc/ssh", "/etc/sudoers.d", "/etc/sysconfig", "/etc/systemd", "/etc/systemd/system", "/etc/yum.repos.d",
	"/usr/bin", "/usr/include", "/usr/lib", "/usr/lib/systemd", "/usr/lib/systemd/system", "/usr/lib64",
	"/usr/libexec", "/usr/local", "/usr/local/bin", "/usr/local/lib", "/usr/local/sbin", "/usr/local/share",
	"/usr/sbin", "/usr/share", "/var/cache", "/var/lib", "/var/log", "/var/spool", "/var/tmp", "/var/www",
}

// runtime are the filesystems whose content never reaches the image:
// kernel views and tmpfs mounts.
var runtime = []string{"/dev", "/proc", "/run", "/sys"}

// IsSystem reports whether p (clean) is one of System.
func IsSystem(p string) bool { return slices.Contains(System, p) }

// Dest is the problem with p as the destination of what an option puts
// in the image, "" when none. p must be absolute and clean as written
// (no "//", "." or ".." segment, no trailing "/"), not /, and not on a
// runtime filesystem. It must not be a system directory either, unless
// into: the option only adds named entries to the directory, or sets
// its owner and mode, as root.
func Dest(p string, into bool) string {
	switch {
	case p == "":
		return "is required"
	case !path.IsAbs(p):
		return "must be absolute"
	case path.Clean(p) != p:
		return fmt.Sprintf("must be a clean path (%s: no //, . or .. segment, no trailing /)", path.Clean(p))
	case p == "/":
		return "is the root directory: everything in the image would be replaced or taken over"
	}
	for _, r := range runtime {
		if p == r || strings.HasPrefix(p, r+"/") {
			return fmt.Sprintf("is under %s, a runtime filesystem whose content never reaches the image", r)
		}
	}
	if !into && IsSystem(p) {
		return "is a system directory: it would be replaced, removed or taken over as a whole; use a directory of its own below it"
	}
	return ""
}

// Mode is the problem with an octal mode string, "" when none: "" (the
// default) or 3 or 4 octal digits with at most the permission bits
// (0777). setuid, setgid and sticky bits are refused: a file the
// template places setuid root is a root shell for whoever can run it.
func Mode(m string) string {
	if m == "" {
		return ""
	}
	t := strings.TrimPrefix(m, "0")
	if len(t) < 3 || len(t) > 4 {
		return fmt.Sprintf("%q must be octal like 0644", m)
	}
	v, err := strconv.ParseUint(t, 8, 32)
	if err != nil {
		return fmt.Sprintf("%q must be octal like 0644", m)
	}
	if v > 0o777 {
		return fmt.Sprintf("%q sets setuid, setgid or sticky bits (above 0777), which the provisioner does not give", m)
	}
	return ""
}
