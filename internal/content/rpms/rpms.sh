# shellcheck shell=sh
# The rpm_urls kind: each staged file is checked (sha256, then signature)
# before any package work; the transaction installs them with the
# repositories' packages.

# fatimage_rpm_check <what> <index> <file> <gpgcheck 0|1> (after the
# sha256 check of fatimage_verify) fails naming what when the file is not
# an RPM or (gpgcheck 1) not signed by an imported key; then prints
# "RPM-URL <index> <sha256> <name> <name-version-release>".
fatimage_rpm_check() {
	if [ ! -f "$3" ]; then
		fatimage_cause "$1: $3 is missing; nothing installed"
		return 1
	fi
	nvr=$(rpm -qp --nosignature --nodigest --qf '%{NAME} %{NAME}-%{VERSION}-%{RELEASE}' "$3" 2>/dev/null) || {
		fatimage_cause "$1: the file is not an RPM package; nothing installed"
		return 1
	}
	if [ "$4" = 1 ]; then
		# rpm -K says "digests signatures OK" only for a package signed by
		# a key in the rpm database; "digests OK" for an unsigned one
		sig=$(rpm -K "$3" 2>&1) || true
		case $sig in
			*"digests signatures OK"*) ;;
			*": digests OK"*)
				fatimage_cause "$1: the package is not signed: set disable_gpg_check = true to install it unchecked; nothing installed"
				return 1
				;;
			*)
				fatimage_cause "$1: signature check failed (${sig#"$3": }): import the signing key with gpg_keys; nothing installed"
				return 1
				;;
		esac
	elif ! rpm -K --nosignature "$3" >/dev/null 2>&1; then
		fatimage_cause "$1: the package's digests do not match (a damaged file); nothing installed"
		return 1
	fi
	echo "RPM-URL $2 $(sha256sum "$3" | cut -d' ' -f1) $nvr"
}
