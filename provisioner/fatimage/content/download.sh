# shellcheck shell=sh
# Downloads: a verified file put in place, or an archive unpacked into a
# directory. An unchanged destination is left alone.

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

# fatimage_download_extract <what> <staged> <destination> <strip> <owner> <group>
# unpacks into a scratch directory first, so a broken archive leaves the
# destination as it was; files already there and not in the archive stay.
fatimage_download_extract() {
	x="$2.x"
	rm -rf "$x"
	mkdir -p "$x"
	fatimage_run tar -xf "$2" -C "$x" --no-same-owner --strip-components="$4" || {
		fatimage_cause "$1: unpacking failed"
		return 1
	}
	chown -R "$5:$6" "$x"
	if [ -d "$3" ] && diff -rq "$x" "$3" >/dev/null 2>&1 && [ "$(stat -c %U:%G "$3")" = "$5:$6" ]; then
		echo "unchanged $3"
	else
		mkdir -p "$3"
		chown "$5:$6" "$3"
		cp -a "$x/." "$3/"
		echo "installed $3"
	fi
	rm -rf "$x" "$2"
}

# fatimage_download_files <what> <staged> <directory> <mode> <file>...
# installs only the named files of a tar archive, each found one
# directory down (a release tarball's top directory), root-owned with
# mode, into directory; identical files are left alone. The monitoring
# binaries are such downloads.
fatimage_download_files() {
	what=$1 staged=$2 dir=$3 mode=$4
	shift 4
	x="$staged.x"
	rm -rf "$x"
	mkdir -p "$x"
	fatimage_run tar -xf "$staged" -C "$x" --no-same-owner || {
		fatimage_cause "$what: unpacking failed"
		return 1
	}
	for f in "$@"; do
		dst=${dir%/}/$f
		src=$(find "$x" -mindepth 2 -maxdepth 2 -type f -name "$f" | head -n1)
		if [ -z "$src" ]; then
			fatimage_cause "$what: $f not found in the archive"
			return 1
		fi
		if cmp -s "$src" "$dst" && [ "$(stat -c %U:%G:%a "$dst")" = "root:root:${mode#0}" ]; then
			echo "unchanged $dst ($what)"
		else
			install -D -o root -g root -m "$mode" "$src" "$dst"
			echo "installed $dst ($what)"
		fi
	done
	rm -rf "$x" "$staged"
}
