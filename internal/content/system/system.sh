# shellcheck shell=sh
# System settings: files written (root 0644) only when they differ, units
# left enabled, disabled or masked, never started.

# Steps run under the work dir's umask 077; what lands in the image
# (directories made on the way included) must be readable as usual.
umask 022

# fatimage_put <staged> <path>: returns 1 when the file changed.
fatimage_put() {
	if cmp -s "$1" "$2" && [ "$(stat -c %U:%G:%a "$2")" = root:root:644 ]; then
		rm -f "$1"
		echo "unchanged $2"
		return 0
	fi
	# Callers test the return value, which turns errexit off in here: a
	# write that fails must end the script itself.
	if ! install -D -o root -g root -m 0644 "$1" "$2"; then
		fatimage_cause "system: cannot write $2"
		exit 1
	fi
	rm -f "$1"
	echo "wrote $2"
	return 1
}

# fatimage_put_files <reload> [<staged> <path>]...: puts each file; with
# reload 1, systemd reloads its units when one changed.
fatimage_put_files() {
	_reload=$1
	shift
	_changed=0
	while [ $# -ge 2 ]; do
		fatimage_put "$1" "$2" || _changed=1
		shift 2
	done
	if [ "$_reload" = 1 ] && [ "$_changed" = 1 ]; then fatimage_run systemctl daemon-reload; fi
}

# fatimage_unit_state <unit> <enabled|disabled|masked>
fatimage_unit_state() {
	now=$(systemctl is-enabled "$1" 2>/dev/null) || true
	if [ -z "$now" ] && [ "$2" = disabled ]; then
		echo "unchanged $1 (no unit file, so not enabled)"
		return 0
	fi
	if [ "$now" = "$2" ]; then
		echo "unchanged $1 ($2)"
		return 0
	fi
	case "$2" in
	enabled)
		[ "$now" != masked ] || fatimage_run systemctl unmask "$1"
		fatimage_run systemctl enable "$1"
		;;
	disabled)
		[ "$now" != masked ] || fatimage_run systemctl unmask "$1"
		fatimage_run systemctl disable "$1"
		;;
	masked) fatimage_run systemctl mask "$1" ;;
	esac
	echo "$1 $2"
}
