# shellcheck shell=sh
# The downloads kind: a verified file put in place, or an archive
# unpacked into a directory. An unchanged destination is left alone.

# fatimage_download_file <what> <staged> <destination> <owner> <group> <mode>
fatimage_download_file() {
	if cmp -s "$2" "$3" && [ "$(stat -c %U:%G:%a "$3")" = "$4:$5:${6#0}" ]; then
		rm -f "$2"
		echo "unchanged $3"
		return 0
	fi
	install -D -o "$4" -g "$5" -m "$6" "$2" "$3"
	rm -f "$2"
	echo "installed $3"
}

# fatimage_download_extract <what> <staged> <destination> <strip> <owner> <group> [<member>...]
# unpacks (only the members, when named) into a scratch directory first,
# so a broken archive leaves the destination as it was; files already
# there and not in the archive stay.
fatimage_download_extract() {
	what=$1 staged=$2 dest=$3 strip=$4 owner=$5 group=$6
	shift 6
	x="$staged.x"
	rm -rf "$x"
	mkdir -p "$x"
	fatimage_run tar -xf "$staged" -C "$x" --no-same-owner --strip-components="$strip" "$@" || {
		fatimage_cause "$what: unpacking failed${1:+ (members: $*)}"
		return 1
	}
	chown -R "$owner:$group" "$x"
	if [ -d "$dest" ] && diff -rq "$x" "$dest" >/dev/null 2>&1 && [ "$(stat -c %U:%G "$dest")" = "$owner:$group" ]; then
		echo "unchanged $dest"
	elif [ "$#" -gt 0 ] && [ -d "$dest" ] && (cd "$x" && find . ! -type d) | while IFS= read -r f; do cmp -s "$x/$f" "$dest/$f" || exit 1; done; then
		echo "unchanged $dest (members)"
	else
		mkdir -p "$dest"
		chown "$owner:$group" "$dest"
		cp -a "$x/." "$dest/"
		echo "installed $dest"
	fi
	rm -rf "$x" "$staged"
}

# fatimage_download_sum <i> <staged>: reports the sha256 an unchecked
# download turned out to have, for image.json.
fatimage_download_sum() {
	echo "DOWNLOAD-SHA256 $1 $(sha256sum "$2" | cut -d' ' -f1)"
}
