#!/bin/sh
# Mounts a disk like boot.sh (without the network) and runs a command
# chrooted into it: $1 VM userland (lower layer), $2 disk dir, $3... command.
set -eu
lower=$1 disk=$2
shift 2
m=$disk/merged
mount --make-rprivate /
awk '$5 ~ "^(/var)?/run/netns(/|$)" {print $5}' /proc/self/mountinfo | sort -r | while read -r mp; do
	umount -l "$mp" 2>/dev/null || true
done
mount -t overlay overlay -o "lowerdir=$lower,upperdir=$disk/upper,workdir=$disk/work" "$m"
mount -t proc proc "$m/proc"
mount --rbind /dev "$m/dev"
mount -t tmpfs -o mode=0755 tmpfs "$m/run"
mount -t tmpfs -o mode=1777 tmpfs "$m/tmp"
exec chroot "$m" "$@"
