# shellcheck shell=sh
# The binaries' release tarballs: named files of an archive installed.
# (The downloads kind's own functions are in
# internal/content/downloads/downloads.sh.)

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
