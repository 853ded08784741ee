#!/bin/bash
# fatlab grubby stand-in: BLS entries in /boot/loader/entries only.
entries=/boot/loader/entries
info='' update='' add='' remove='' default=''
for a in "$@"; do
	case "$a" in
	--info=*) info=${a#--info=} ;;
	--update-kernel=*) update=${a#--update-kernel=} ;;
	--args=*) add=${a#--args=} ;;
	--remove-args=*) remove=${a#--remove-args=} ;;
	--default-kernel) default=1 ;;
	*) echo "grubby (fatlab stand-in): unsupported argument $a" >&2; exit 1 ;;
	esac
done
shopt -s nullglob
files=("$entries"/*.conf)
[ ${#files[@]} -gt 0 ] || { echo "grubby: no boot loader entries in $entries" >&2; exit 1; }
if [ -n "$default" ]; then
	sed -n 's/^linux /\/boot/p' "${files[0]}"
	exit 0
fi
if [ -n "$info" ]; then
	i=0
	for f in "${files[@]}"; do
		echo "index=$i"
		echo "kernel=\"$(sed -n 's/^linux /\/boot/p' "$f")\""
		echo "args=\"$(sed -n 's/^options //p' "$f")\""
		echo "root=\"$(sed -n 's/^options .*root=\([^ ]*\).*/\1/p' "$f")\""
		echo "initrd=\"/boot$(sed -n 's/^initrd \([^ ]*\).*/\1/p' "$f")\""
		echo "title=\"$(sed -n 's/^title //p' "$f")\""
		i=$((i+1))
	done
	exit 0
fi
[ -n "$update" ] || { echo "grubby (fatlab stand-in): nothing to do" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "grubby: permission denied" >&2; exit 1; }
for f in "${files[@]}"; do
	opts=" $(sed -n 's/^options //p' "$f") "
	for r in $remove; do
		opts=$(printf '%s' "$opts" | sed "s/ ${r%%=*}\(=[^ ]*\)\? / /g")
	done
	for x in $add; do
		opts=$(printf '%s' "$opts" | sed "s/ ${x%%=*}\(=[^ ]*\)\? / /g")
		opts="$opts$x "
	done
	opts=$(printf '%s' "$opts" | tr -s ' ' | sed 's/^ //; s/ $//')
	sed -i "s|^options .*|options $opts|" "$f"
done
