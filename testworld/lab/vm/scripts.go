package vm

// bootScript runs on the host inside fresh mount/PID/UTS/IPC namespaces (and
// the VM's network namespace) as PID 1 of the new PID namespace; it assembles
// the VM's root and execs the VM's init in a chroot.
//
//	$1 disk dir, $2 per-boot dir (boot_id, env), $3 hostname
const bootScript = `#!/bin/sh
set -eu
disk=$1 boot=$2 name=$3
m=$disk/merged
mount --make-rprivate /
# Drop this mount namespace's copies of the host's named network namespaces:
# they would keep other (deleted) namespaces alive while this VM runs.
for mp in $(awk '$5 ~ "^(/var)?/run/netns(/|$)" {print $5}' /proc/self/mountinfo | sort -r); do
	umount -l "$mp" 2>/dev/null || true
done
mount -t overlay overlay -o "lowerdir=/,upperdir=$disk/upper,workdir=$disk/work" "$m"
mount -t proc proc "$m/proc"
mount --bind "$boot/boot_id" "$m/proc/sys/kernel/random/boot_id"
mount --rbind /dev "$m/dev"
mount --rbind /sys "$m/sys"
mount -o remount,bind,ro "$m/sys" 2>/dev/null || true
mount -t tmpfs -o mode=0755 tmpfs "$m/run"
mount -t tmpfs -o mode=1777 tmpfs "$m/tmp"
mkdir -p "$m/run/fatlab"
cp "$boot/env" "$m/run/fatlab/env"
hostname "$name"
if [ ! -x "$m/usr/lib/fatlab/init" ]; then
	echo "fatlab-boot: no /usr/lib/fatlab/init on this disk (not built by BuildBaseImage?)" >&2
	exit 1
fi
exec chroot "$m" /usr/lib/fatlab/init
`

// setupScript mounts a disk like bootScript (without the network) and runs a
// command in the chroot: $1 disk dir, $2... command.
const setupScript = `#!/bin/sh
set -eu
disk=$1; shift
m=$disk/merged
mount --make-rprivate /
for mp in $(awk '$5 ~ "^(/var)?/run/netns(/|$)" {print $5}' /proc/self/mountinfo | sort -r); do
	umount -l "$mp" 2>/dev/null || true
done
mount -t overlay overlay -o "lowerdir=/,upperdir=$disk/upper,workdir=$disk/work" "$m"
mount -t proc proc "$m/proc"
mount --rbind /dev "$m/dev"
mount -t tmpfs -o mode=0755 tmpfs "$m/run"
mount -t tmpfs -o mode=1777 tmpfs "$m/tmp"
exec chroot "$m" "$@"
`

// initScript is PID 1 inside the VM.
const initScript = `#!/bin/bash
# fatlab VM init (PID 1). Exit 10 = reboot, 11 = poweroff.
# No command substitutions below: bash may mis-parse a trap that fires while
# it parses one.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin
export LANG=C.UTF-8 HOME=/root
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY no_proxy NO_PROXY
umask 022
action=
trap 'action=reboot' USR1
trap 'action=poweroff' USR2 TERM PWR
FATLAB_SSH_DELAY=0
. /run/fatlab/env
log() {
	local now ms=${EPOCHREALTIME#*.}
	printf -v now '%(%H:%M:%S)T' -1
	echo "[fatlab-init $now.${ms:0:3}] $*"
}
read -r bootid < /proc/sys/kernel/random/boot_id
log "boot $FATLAB_BOOT of $HOSTNAME boot_id $bootid"
printf '127.0.0.1   localhost localhost.localdomain\n::1         localhost localhost.localdomain\n%s %s\n' "$FATLAB_IP" "$HOSTNAME" > /etc/hosts
echo "$HOSTNAME" > /etc/hostname
mkdir -p /run/sshd /var/lib/fatlab /etc/ssh/fatlab
chmod 0755 /run/sshd
for t in ed25519 ecdsa; do
	k=/etc/ssh/fatlab/ssh_host_${t}_key
	[ -s "$k" ] || ssh-keygen -q -t $t -N '' -C "root@$HOSTNAME" -f "$k" </dev/null || log "ssh-keygen $t failed"
done
# step runs a command in the background and waits for it, so that a power
# request (trap) is acted on at once.
step() {
	"$@" &
	local p=$! rc
	wait $p; rc=$?
	while [ -z "$action" ] && kill -0 $p 2>/dev/null; do wait $p; rc=$?; done
	return $rc
}
# Like systemd at boot: every enabled unit becomes active. /run is a fresh
# tmpfs each boot, so units stopped before a reboot come back only if enabled.
mkdir -p /run/fatlab/active
n=0
for u in /etc/systemd/system/multi-user.target.wants/*; do
	[ -f "$u" ] || continue
	: > "/run/fatlab/active/${u##*/}"
	n=$((n+1))
done
log "$n enabled unit(s) active"
[ -z "$action" ] && { step /usr/lib/fatlab/cloud-init || log "cloud-init stand-in failed (rc $?)"; }
[ -z "$action" ] && { step /usr/bin/ansible-init || log "ansible-init failed (rc $?)"; }
if [ "$FATLAB_SSH_DELAY" != 0 ] && [ -z "$action" ]; then
	log "delaying sshd by ${FATLAB_SSH_DELAY}s"
	sleep "$FATLAB_SSH_DELAY" & wait $!
fi
sshd_pid=
start_sshd() {
	/usr/sbin/sshd -D -e -f /etc/ssh/fatlab/sshd_config &
	sshd_pid=$!
	log "sshd started (pid $sshd_pid)"
}
[ -z "$action" ] && start_sshd
while [ -z "$action" ]; do
	wait "$sshd_pid"
	if [ -z "$action" ] && ! kill -0 "$sshd_pid" 2>/dev/null; then
		log "sshd exited; restarting"
		sleep 1 & wait $!
		[ -z "$action" ] && start_sshd
	fi
done
log "$action requested"
sleep 0.2
kill -TERM -1 2>/dev/null
for i in 1 2 3 4 5 6 7 8 9 10; do
	n=0
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		[ "$p" = 1 ] || n=$((n+1))
	done
	[ "$n" -eq 0 ] && break
	sleep 0.05
done
kill -KILL -1 2>/dev/null
sync
log "$action now"
case "$action" in
reboot) exit 10 ;;
*) exit 11 ;;
esac
`

// cloudInitScript stands in for cloud-init: it creates the login user with the
// keys from the metadata service (public_keys and user_data's cloud-config
// ssh_authorized_keys) and passwordless sudo. Idempotent; runs on every boot.
const cloudInitScript = `#!/usr/bin/python3
# fatlab cloud-init stand-in
import json, os, pwd, subprocess, sys, time, urllib.error, urllib.request

USER = "rocky"
BASE = "http://169.254.169.254/openstack/latest/"
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

def fetch(path):
    last = None
    for _ in range(50):
        try:
            with opener.open(BASE + path, timeout=2) as r:
                return r.read()
        except urllib.error.HTTPError as e:
            if e.code == 404:
                return None
            last = e
        except Exception as e:
            last = e
        time.sleep(0.1)
    raise SystemExit("cloud-init: metadata service unreachable: %s" % last)

def parse_keys(ud):
    """The simple YAML forms of cloud-config ssh_authorized_keys."""
    keys = []
    try:
        text = ud.decode("utf-8", "replace")
    except Exception:
        return keys
    if not text.startswith("#cloud-config"):
        return keys
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        s = line.strip()
        if s.startswith("ssh_authorized_keys:") and line[:1] not in (" ", "\t"):
            rest = s[len("ssh_authorized_keys:"):].strip()
            if rest.startswith("["):
                for item in rest.strip("[]").split(","):
                    item = item.strip().strip("'\"")
                    if item:
                        keys.append(item)
            else:
                i += 1
                while i < len(lines):
                    t = lines[i].strip()
                    if t.startswith("- "):
                        keys.append(t[2:].strip().strip("'\""))
                    elif t == "" or t.startswith("#"):
                        pass
                    else:
                        break
                    i += 1
                continue
        i += 1
    return keys

md = json.loads(fetch("meta_data.json") or b"{}")
keys = list((md.get("public_keys") or {}).values())
ud = fetch("user_data")
if ud:
    keys += parse_keys(ud)

try:
    pw = pwd.getpwnam(USER)
except KeyError:
    subprocess.check_call(["useradd", "-m", "-s", "/bin/bash", "-p", "*", "-c", "Rocky Linux Cloud User", USER])
    pw = pwd.getpwnam(USER)
    print("cloud-init: created user", USER, flush=True)
sudoers = "/etc/sudoers.d/90-cloud-init-users"
if not os.path.exists(sudoers):
    with open(sudoers + ".tmp", "w") as f:
        f.write("# Created by cloud-init v. 23.4 (fatlab stand-in)\n\n# User rules for %s\n%s ALL=(ALL) NOPASSWD:ALL\n" % (USER, USER))
    os.chmod(sudoers + ".tmp", 0o440)
    os.rename(sudoers + ".tmp", sudoers)
sshdir = os.path.join(pw.pw_dir, ".ssh")
os.makedirs(sshdir, mode=0o700, exist_ok=True)
ak = os.path.join(sshdir, "authorized_keys")
have = []
if os.path.exists(ak):
    with open(ak) as f:
        have = [l.strip() for l in f if l.strip()]
for k in keys:
    k = k.strip()
    if k and k not in have:
        have.append(k)
with open(ak + ".tmp", "w") as f:
    f.write("".join(l + "\n" for l in have))
os.rename(ak + ".tmp", ak)
for p, mode in ((sshdir, 0o700), (ak, 0o600)):
    os.chown(p, pw.pw_uid, pw.pw_gid)
    os.chmod(p, mode)
print("cloud-init: %d authorized key(s) for %s" % (len(have), USER), flush=True)
`

// ansibleInitScript stands in for stackhpc/ansible-init.
const ansibleInitScript = `#!/usr/bin/python3
# ansible-init stand-in (fatlab): honours meta.ansible_init_disable.
import json, os, sys, time, urllib.request
URL = "http://169.254.169.254/openstack/latest/meta_data.json"
SENTINEL = "/var/lib/ansible-init.done"
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
md, last = None, None
for _ in range(50):
    try:
        with opener.open(URL, timeout=2) as r:
            md = json.load(r)
        break
    except Exception as e:
        last = e
        time.sleep(0.1)
if md is None:
    print("ansible-init: cannot fetch metadata: %s" % last, flush=True)
    sys.exit(1)
meta = md.get("meta") or {}
if str(meta.get("ansible_init_disable", "")).strip().lower() == "true":
    print("ansible-init: disabled by metadata (ansible_init_disable=true); exiting", flush=True)
    sys.exit(0)
if os.path.exists(SENTINEL):
    print("ansible-init: already ran (%s exists)" % SENTINEL, flush=True)
    sys.exit(0)
print("ansible-init: running playbooks (stand-in)", flush=True)
with open(SENTINEL + ".tmp", "w") as f:
    f.write(time.strftime("%Y-%m-%dT%H:%M:%SZ\n", time.gmtime()))
os.rename(SENTINEL + ".tmp", SENTINEL)
print("ansible-init: done; wrote " + SENTINEL, flush=True)
`

// powerScript signals PID 1; the reboot/shutdown/poweroff/halt shadows exec it.
const powerScript = `#!/bin/sh
# fatlab power control: asks PID 1 to reboot or power off.
act=$1; shift
if [ "$(id -u)" != 0 ]; then
	echo "Call with root privileges to $act." >&2
	exit 1
fi
case "$act" in
reboot) sig=USR1 ;;
poweroff|halt) sig=USR2 ;;
shutdown)
	sig=USR2
	for a in "$@"; do
		case "$a" in
		-r|--reboot) sig=USR1 ;;
		-c) echo "Shutdown cancelled."; exit 0 ;;
		esac
	done ;;
*) echo "fatlab power: unknown action $act" >&2; exit 1 ;;
esac
kill -"$sig" 1
`

// systemctlScript stands in for systemctl (no systemd runs in a VM). Unit
// files live in /etc/systemd/system and /usr/lib/systemd/system; "enabled"
// is the symlink in multi-user.target.wants, as systemd makes it; "active"
// is a file in /run/fatlab/active, a tmpfs that each boot starts empty and
// the VM init fills from the enabled units. Nothing is ever executed:
// start/stop only change that state. Power verbs go to PID 1.
const systemctlScript = `#!/bin/bash
# fatlab systemctl stand-in: unit file and active state only, no processes.
etc=/etc/systemd/system lib=/usr/lib/systemd/system
wants=$etc/multi-user.target.wants
active=/run/fatlab/active
verb= now= quiet=
units=()
skip=
for a in "$@"; do
	if [ -n "$skip" ]; then skip=; continue; fi
	case "$a" in
	--now) now=1 ;;
	-q|--quiet) quiet=1 ;;
	-t|--type|--state|-p|--property|-H|--host|-M|--machine|-o|--output|-n|--lines|--root) skip=1 ;;
	-*) ;;
	*) if [ -z "$verb" ]; then verb=$a; else units+=("$a"); fi ;;
	esac
done

# unit NAME: the full unit name (".service" added when there is no suffix).
unit() {
	case "$1" in
	*.service|*.socket|*.timer|*.target|*.path|*.mount|*.slice|*.scope) echo "$1" ;;
	*) echo "$1.service" ;;
	esac
}
# unitfile UNIT: the path of its unit file, or nothing.
unitfile() {
	local d
	for d in "$etc" "$lib"; do
		if [ -f "$d/$1" ]; then echo "$d/$1"; return 0; fi
	done
	return 1
}
say() { [ -n "$quiet" ] || echo "$@"; }
masked() { [ "$(readlink "$etc/$1")" = /dev/null ]; }
need_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "$1: Interactive authentication required." >&2
		exit 1
	fi
}
need_units() {
	if [ ${#units[@]} -eq 0 ]; then
		echo "Too few arguments." >&2
		exit 1
	fi
}
start() { mkdir -p "$active" && : > "$active/$1"; }
stop() { rm -f "$active/$1"; }

case "$verb" in
reboot|kexec|soft-reboot) exec /usr/lib/fatlab/power reboot ;;
poweroff|halt) exec /usr/lib/fatlab/power poweroff ;;
is-system-running) say running; exit 0 ;;
enable|disable)
	need_units
	need_root "Failed to $verb unit"
	# Like systemd, check every unit before changing anything.
	names=()
	for u in "${units[@]}"; do
		u=$(unit "$u")
		if [ "$verb" = enable ] && masked "$u"; then
			echo "Failed to enable unit: Unit file $u is masked." >&2
			exit 1
		fi
		if ! unitfile "$u" >/dev/null; then
			echo "Failed to $verb unit: Unit file $u does not exist." >&2
			exit 1
		fi
		names+=("$u")
	done
	for u in "${names[@]}"; do
		f=$(unitfile "$u")
		if [ "$verb" = enable ]; then
			if [ "$(readlink "$wants/$u")" != "$f" ]; then
				mkdir -p "$wants"
				ln -sfn "$f" "$wants/$u"
				[ -n "$quiet" ] || echo "Created symlink $wants/$u → $f." >&2
			fi
			[ -n "$now" ] && start "$u"
		else
			if [ -L "$wants/$u" ] || [ -e "$wants/$u" ]; then
				rm -f "$wants/$u"
				[ -n "$quiet" ] || echo "Removed \"$wants/$u\"." >&2
			fi
			[ -n "$now" ] && stop "$u"
		fi
	done
	exit 0 ;;
start|stop|restart|try-restart|reload|reload-or-restart|condrestart|force-reload)
	need_units
	for u in "${units[@]}"; do
		u=$(unit "$u")
		need_root "Failed to $verb $u"
		if ! unitfile "$u" >/dev/null; then
			if [ "$verb" = stop ]; then
				echo "Failed to stop $u: Unit $u not loaded." >&2
			else
				echo "Failed to $verb $u: Unit $u not found." >&2
			fi
			exit 5
		fi
		case "$verb" in
		stop) stop "$u" ;;
		try-restart|condrestart) ;;
		reload|force-reload)
			if [ ! -e "$active/$u" ]; then
				echo "$u is not active, cannot reload." >&2
				exit 1
			fi ;;
		*) start "$u" ;;
		esac
	done
	exit 0 ;;
mask|unmask)
	# As systemd: masking links the unit to /dev/null in /etc (refused
	# when a unit file of that name is there) and drops it from the wants.
	need_units
	need_root "Failed to $verb unit"
	for u in "${units[@]}"; do
		u=$(unit "$u")
		if [ "$verb" = mask ]; then
			masked "$u" && continue
			if [ -e "$etc/$u" ] || [ -L "$etc/$u" ]; then
				echo "Failed to mask unit: File $etc/$u already exists." >&2
				exit 1
			fi
			ln -s /dev/null "$etc/$u"
			rm -f "$wants/$u"
			[ -n "$quiet" ] || echo "Created symlink $etc/$u → /dev/null." >&2
		elif masked "$u"; then
			rm -f "$etc/$u"
			[ -n "$quiet" ] || echo "Removed \"$etc/$u\"." >&2
		fi
	done
	exit 0 ;;
is-enabled)
	need_units
	rc=1
	for u in "${units[@]}"; do
		u=$(unit "$u")
		if masked "$u"; then say masked; continue; fi
		if ! unitfile "$u" >/dev/null; then
			echo "Failed to get unit file state for $u: No such file or directory" >&2
			continue
		fi
		if [ -e "$wants/$u" ]; then say enabled; rc=0; else say disabled; fi
	done
	exit $rc ;;
is-active)
	need_units
	rc=3
	for u in "${units[@]}"; do
		u=$(unit "$u")
		if [ -e "$active/$u" ]; then say active; rc=0; else say inactive; fi
	done
	exit $rc ;;
is-failed)
	need_units
	for u in "${units[@]}"; do
		u=$(unit "$u")
		if [ -e "$active/$u" ]; then say active; else say inactive; fi
	done
	exit 1 ;;
status)
	need_units
	rc=0
	for u in "${units[@]}"; do
		u=$(unit "$u")
		if ! f=$(unitfile "$u"); then
			echo "Unit $u could not be found." >&2
			rc=4
			continue
		fi
		state=disabled; [ -e "$wants/$u" ] && state=enabled
		if [ -e "$active/$u" ]; then
			echo "● $u"
			echo "     Loaded: loaded ($f; $state; preset: disabled)"
			echo "     Active: active (running)"
		else
			echo "○ $u"
			echo "     Loaded: loaded ($f; $state; preset: disabled)"
			echo "     Active: inactive (dead)"
			[ $rc = 0 ] && rc=3
		fi
	done
	exit $rc ;;
list-unit-files)
	# Header-less "NAME STATE" lines; a pattern matches with or without
	# ".service".
	out=
	for f in "$etc"/* "$lib"/*; do
		[ -f "$f" ] || continue
		u=${f##*/}
		if [ ${#units[@]} -gt 0 ]; then
			hit=
			for p in "${units[@]}"; do
				case "$u" in $p|$p.service) hit=1 ;; esac
			done
			[ -n "$hit" ] || continue
		fi
		state=disabled; [ -e "$wants/$u" ] && state=enabled
		out+="$u $state"$'\n'
	done
	[ -n "$out" ] || exit 1
	printf '%s' "$out" | sort -u
	exit 0 ;;
*) exit 0 ;; # daemon-reload, reset-failed, preset, show, ...: no-ops
esac
`

const sshdConfig = `# fatlab VM sshd configuration
Port 22
AddressFamily any
HostKey /etc/ssh/fatlab/ssh_host_ed25519_key
HostKey /etc/ssh/fatlab/ssh_host_ecdsa_key
UsePAM no
PubkeyAuthentication yes
AuthorizedKeysFile .ssh/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
PidFile /run/sshd-fatlab.pid
UseDNS no
PrintMotd no
PrintLastLog no
MaxStartups 100:30:200
MaxSessions 50
AcceptEnv LANG LC_*
Subsystem sftp /usr/lib/openssh/sftp-server
`
