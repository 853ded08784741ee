# shellcheck shell=sh
# Helpers shared by the content kinds' scripts; sourced (as text) into a
# step's script after the prelude that defines fatimage_run.

# Steps run under the work dir's umask 077; what lands in the image
# (directories made on the way included) must be readable as usual.
umask 022

# fatimage_verify <what> <sha256> <file> <url>: fails naming what when
# the file is missing or its sha256 differs (said as the host-side fetch
# says it).
fatimage_verify() {
	if [ ! -f "$3" ]; then
		fatimage_cause "$1: $3 is missing ($4); nothing installed"
		return 1
	fi
	if printf '%s  %s\n' "$2" "$3" | sha256sum -c --quiet - >/dev/null 2>&1; then
		return 0
	fi
	fatimage_cause "$1: sha256 mismatch: want $2, got $(sha256sum "$3" | cut -d' ' -f1) ($4); nothing installed"
	return 1
}

# fatimage_fetch <what> <url> <file>: the VM downloads url to file.
fatimage_fetch() {
	echo "downloading $2"
	fatimage_run curl -fsSL --retry 3 --retry-connrefused --connect-timeout 20 -o "$3" "$2" || {
		fatimage_cause "$1: downloading $2 failed"
		return 1
	}
}

# fatimage_check_owner <what> <user> <group>: the owner must exist.
fatimage_check_owner() {
	id -u "$2" >/dev/null 2>&1 || { fatimage_cause "$1: owner $2 is not a user on the VM"; return 1; }
	getent group "$3" >/dev/null 2>&1 || { fatimage_cause "$1: group $3 is not a group on the VM"; return 1; }
}
