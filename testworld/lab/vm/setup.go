package vm

import (
	"os"
	"path/filepath"
)

// setupFiles are the lines of Rocky's `setup` package that builds edit in
// place (line_edits): the hostnamectl line of /etc/profile, which the
// appliance removes, and /etc/profile.d/sh.local, where its cuda role
// adds a PATH line. The lab userland is Debian's, so its /etc/profile
// gets Rocky's HOSTNAME block appended (the shell code itself is Rocky's
// and runs there too) and sh.local is added as Rocky ships it.
func setupFiles(rootfs string) []imageFile {
	profile, _ := os.ReadFile(filepath.Join(rootfs, "etc", "profile"))
	profile = append(profile, []byte(rockyProfileHostname)...)
	return []imageFile{
		{"etc/profile", 0o644, string(profile)},
		{"etc/profile.d/sh.local", 0o644, "#Add any required envvar overrides to this file, it is sourced from /etc/profile\n"},
	}
}

// rockyProfileHostname is how Rocky 9's /etc/profile sets HOSTNAME.
const rockyProfileHostname = `
HOSTNAME=$(/usr/bin/hostnamectl --transient 2>/dev/null) || \
HOSTNAME=$(/usr/bin/hostname 2>/dev/null) || \
HOSTNAME=$(/usr/bin/uname -n)
export HOSTNAME
`
