# shellcheck shell=sh
# Kernel command-line arguments on EL9 (BLS): every boot entry through
# grubby, GRUB_CMDLINE_LINUX in /etc/default/grub for kernels installed
# later, then grub.cfg regenerated. Sourced after system.sh (umask 022).

# fatimage_has_word <word> <list>: word (or name=… for name=value) is in list.
fatimage_has_word() {
	case " $2 " in *" $1 "*) return 0 ;; esac
	return 1
}

# fatimage_kernel_args <arg>...
fatimage_kernel_args() {
	command -v grubby >/dev/null 2>&1 || { fatimage_cause "kernel_args: grubby is not installed on the VM (package grubby)"; return 1; }
	kchanged=0
	for a in "$@"; do
		missing=$(grubby --info=ALL | sed -n 's/^args="\(.*\)"$/\1/p' | while IFS= read -r args; do
			fatimage_has_word "$a" "$args" || echo missing
		done)
		if [ -n "$missing" ]; then
			fatimage_run grubby --update-kernel=ALL --args="$a"
			kchanged=1
		fi
		line=$(sed -n 's/^GRUB_CMDLINE_LINUX="\(.*\)"$/\1/p' /etc/default/grub 2>/dev/null)
		if [ -f /etc/default/grub ] && ! fatimage_has_word "$a" "$line"; then
			# drop another value of the same name first
			name=${a%%=*}
			line=$(printf ' %s ' "$line" | sed "s/ $name\(=[^ ]*\)\{0,1\} / /g; s/^ *//; s/ *$//")
			line=${line:+$line }$a
			sed -i "s|^GRUB_CMDLINE_LINUX=.*|GRUB_CMDLINE_LINUX=\"$line\"|" /etc/default/grub
			kchanged=1
		fi
	done
	if [ "$kchanged" = 0 ]; then
		echo "unchanged kernel arguments ($*)"
		return 0
	fi
	fatimage_run grub2-mkconfig -o /boot/grub2/grub.cfg
	echo "kernel arguments set: $*"
}
