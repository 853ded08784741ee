#!/bin/sh
# fatlab VM boot: runs on the host.
#
#   boot.sh outer NETNS CGROUP LOWER DISK BOOTDIR CONSOLE_TTY
#
# "outer" moves itself into the VM's cgroup (a fresh cgroup2 directory the
# supervisor made) and re-executes itself as "inner" under unshare, in the
# VM's network namespace and new
# mount, PID, UTS, IPC and cgroup namespaces: the cgroup namespace is rooted
# at the VM's cgroup, so the VM's systemd sees a cgroup2 hierarchy of its own.
# "inner" is PID 1 of the new PID namespace until it execs systemd: it builds
# the VM's root the way container runtimes do (overlay of the VM userland
# and the disk, fresh /proc with /proc/sys read-only except net, read-only
# sysfs, cgroup2, a minimal /dev, tmpfs /run and /tmp), pivots into it and
# execs systemd with container=fatlab. Power-off and reboot end PID 1 (the
# kernel kills a PID namespace's init with SIGINT resp. SIGHUP when it
# calls reboot(2)); the supervisor acts on that.
set -eu
phase=$1
shift
case "$phase" in
outer)
	netns=$1
	shift
	echo $$ > "$1/cgroup.procs"
	exec ip netns exec "$netns" unshare --mount --pid --fork --uts --ipc --cgroup --kill-child "$0" inner "$@"
	;;
inner) ;;
*)
	echo "fatlab-boot: unknown phase $phase" >&2
	exit 2
	;;
esac
lower=$2 disk=$3 boot=$4 console=$5
m=$disk/merged
mount --make-rprivate /
# Drop this mount namespace's copies of the host's named network namespaces:
# they would keep other (deleted) namespaces alive while this VM runs.
awk '$5 ~ "^(/var)?/run/netns(/|$)" {print $5}' /proc/self/mountinfo | sort -r | while read -r mp; do
	umount -l "$mp" 2>/dev/null || true
done
mount -t overlay overlay -o "lowerdir=$lower,upperdir=$disk/upper,workdir=$disk/work" "$m"

mount -t proc -o nosuid,nodev,noexec proc "$m/proc"
# The kernel's global knobs stay the host's: /proc/sys is read-only but for
# net/, which belongs to the VM's network namespace.
mount --bind "$m/proc/sys" "$m/proc/sys"
mount -o remount,bind,ro "$m/proc/sys"
mount --bind "$m/proc/sys/net" "$m/proc/sys/net"
mount -o remount,bind,rw "$m/proc/sys/net"
if [ -e "$m/proc/sysrq-trigger" ]; then
	mount --bind "$m/proc/sysrq-trigger" "$m/proc/sysrq-trigger"
	mount -o remount,bind,ro "$m/proc/sysrq-trigger"
fi
mount --bind "$boot/boot_id" "$m/proc/sys/kernel/random/boot_id"
# Global knobs the appliance's roles set at build with an immediate
# reload (podman's kernel keys, opensearch's map count), which a real VM
# accepts: each is a file of the VM's own (kept with the VM, the host's
# value at its first boot) bound over the key, so writes stay in the VM.
for k in kernel/keys/maxkeys kernel/keys/maxbytes vm/max_map_count; do
	[ -e "$m/proc/sys/$k" ] || continue
	f=$boot/sysctl-$(echo "$k" | tr / .)
	[ -f "$f" ] || cat "/proc/sys/$k" >"$f"
	mount --bind "$f" "$m/proc/sys/$k"
done

mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$m/sys"
mount -t cgroup2 -o rw,nosuid,nodev,noexec cgroup2 "$m/sys/fs/cgroup"

d=$m/dev
mount -t tmpfs -o mode=0755,nosuid,size=4m tmpfs "$d"
mknod -m 0666 "$d/null" c 1 3
mknod -m 0666 "$d/zero" c 1 5
mknod -m 0666 "$d/full" c 1 7
mknod -m 0666 "$d/random" c 1 8
mknod -m 0666 "$d/urandom" c 1 9
mknod -m 0666 "$d/tty" c 5 0
mknod -m 0666 "$d/fuse" c 10 229
mkdir -m 0755 "$d/net" "$d/pts"
mknod -m 0666 "$d/net/tun" c 10 200
mkdir -m 1777 "$d/shm" "$d/mqueue"
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620,gid=5,nosuid,noexec devpts "$d/pts"
ln -s pts/ptmx "$d/ptmx"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$d/shm"
mount -t mqueue -o nosuid,nodev,noexec mqueue "$d/mqueue"
ln -s /proc/self/fd "$d/fd"
ln -s /proc/self/fd/0 "$d/stdin"
ln -s /proc/self/fd/1 "$d/stdout"
ln -s /proc/self/fd/2 "$d/stderr"
ln -s /proc/kcore "$d/core"
# The console is a terminal whose other end the supervisor copies into the
# console log.
: > "$d/console"
mount --bind "$console" "$d/console"

mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs "$m/run"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$m/tmp"
# Per-boot runtime configuration from the supervisor (e.g. unit drop-ins).
if [ -d "$boot/run" ]; then
	cp -a "$boot/run/." "$m/run/"
fi
hostname localhost
# A config drive: without block devices, its files go where cloud-init's
# ConfigDrive data source looks first, its seed directory. Like a real
# drive's, they are this boot's; a seed an image kept from its build (no
# "cloud-init clean --seed") stays and misleads the next instance, as it
# would on a cloud.
if [ -d "$boot/config-drive" ]; then
	seed=$m/var/lib/cloud/seed/config_drive
	rm -rf "$seed"
	mkdir -p "$seed"
	cp -a "$boot/config-drive/." "$seed/"
fi

if [ ! -x "$m/usr/lib/systemd/systemd" ]; then
	echo "fatlab-boot: no systemd on this disk" >&2
	exit 1
fi
# FATLAB_UUID and FATLAB_BOOT, written by the supervisor for this boot.
# shellcheck source=/dev/null
. "$boot/env"
cd "$m"
pivot_root . .
umount -l .
# What a container runtime drops: the VM may not load modules, set the
# clock or read raw I/O ports of the host it shares a kernel with.
exec env -i container=fatlab container_uuid="$FATLAB_UUID" product_name="OpenStack Nova" \
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin LANG=C.UTF-8 TERM=dumb \
	setpriv --bounding-set=-sys_module,-sys_time,-sys_rawio,-syslog,-wake_alarm \
	/usr/lib/systemd/systemd --show-status=yes
