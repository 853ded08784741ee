# shellcheck shell=sh
# The build's package work in as few dnf processes as dnf allows: module
# streams (dnf module enable: one process, only when streams are asked
# for), then the update, the installs and the removals as ONE transaction
# (one dnf shell process). The first of them loads the repositories'
# metadata: wrong credentials or a missing snapshot fail there, before any
# package changes. Inputs, one a line: DNF_ENABLE (repositories enabled),
# TX_EXCLUDE (excluded from the transaction), TX_UPDATE_EXCLUDE (kept at
# their installed version), TX_INSTALL, TX_INSTALL_NO_WEAK, TX_REMOVE
# (removed, or excluded when not installed), TX_PRESENT (specs of the
# installs that stay at the installed version of the package they
# name); TX_NO_GPGCHECK (repositories
# whose packages are installed without GPG check); TX_UPDATE and
# TX_WEAK_DEPS are true or false.

# enable_modules STREAM...
enable_modules() {
  fatimage_dnf module enable "$@"
}

# is_kept SPEC: SPEC (a name, or a name-version pin such as
# grafana-10.4.18) is a package update_exclude keeps at its installed
# version ($keep): dnf excludes it from the transaction, so asking to
# install it would fail ("All matches were filtered out").
is_kept() {
  for k in $keep; do
    case $1 in "$k" | "$k"-[0-9]*) return 0 ;; esac
  done
  return 1
}

# present_specs prints, one a line, the specs of TX_PRESENT (filled in by
# pkg_spec) that name an installed package (its name, name.arch or
# name-version[-release], as Ansible's dnf module checks `state: present`;
# a provide is not enough there, so it is not here): left out of the
# install, they keep the installed version where `dnf install` would
# upgrade them. One rpm process for all: it names each spec not installed.
present_specs() {
  specs=
  while IFS= read -r p; do
    if [ -z "$p" ]; then continue; fi
    s=$(pkg_spec "$p") || return 1
    if [ -n "$s" ]; then specs="$specs $s"; fi
  done <<FATIMAGE_EOF
${TX_PRESENT:-}
FATIMAGE_EOF
  if [ -z "$specs" ]; then return 0; fi
  set -f
  # shellcheck disable=SC2086 # one spec a word (presentSpec: no spaces, no globs)
  missing=$(rpm -q $specs 2>/dev/null | sed -n 's/^package \(.*\) is not installed$/\1/p') || true
  for s in $specs; do
    if ! printf '%s\n' "$missing" | grep -qxF -e "$s"; then echo "$s"; fi
  done
}

# is_present SPEC: present_specs named SPEC ($present).
is_present() {
  if [ -z "$1" ]; then return 1; fi
  case $present in *" $1 "*) return 0 ;; esac
  return 1
}

# running_kernel prints the running kernel as rpm names it (uname -r,
# e.g. 5.14.0-570.58.1.el9_6.x86_64). A kernel rpm does not know (the
# lab's VMs run their host's) gives way to the newest installed
# kernel-core, said on stderr.
running_kernel() {
  running=$(uname -r)
  if rpm -q "kernel-core-$running" >/dev/null 2>&1; then
    echo "$running"
    return 0
  fi
  newest=$(rpm -q --last kernel-core 2>/dev/null | head -n1 | cut -d' ' -f1)
  if [ -z "$newest" ]; then
    fatimage_cause "no kernel-core package is installed: the running kernel $running has no kernel-devel"
    return 1
  fi
  echo "the running kernel $running is no installed package: using the newest installed, ${newest#kernel-core-}" >&2
  echo "${newest#kernel-core-}"
}

# pkg_spec prints a package spec with its placeholders filled in:
# {running_kernel} (running_kernel) and {os_major} (the 9 of Rocky 9.6),
# so a built-in group can ask for kernel-devel-{running_kernel} and
# nvidia-open-3:610.57.04-1.el{os_major}; a spec "el<N>:<spec>" is
# <spec> on major N and nothing on others (a per-OS pin).
pkg_spec() {
  spec=$1
  # os-release is read only for a spec that needs the major (most do not)
  case $spec in el[0-9]*:* | *'{os_major}'*)
    # shellcheck disable=SC1091 # the VM's own os-release
    major=$(. /etc/os-release && echo "${VERSION_ID%%.*}")
    ;;
  esac
  case $spec in el[0-9]*:*)
    if [ "${spec%%:*}" != "el$major" ]; then return 0; fi
    spec=${spec#*:}
    ;;
  esac
  case $spec in *'{running_kernel}'*)
    k=$(running_kernel) || return 1
    spec=$(printf '%s\n' "$spec" | sed "s/{running_kernel}/$k/g")
    ;;
  esac
  case $spec in *'{os_major}'*)
    spec=$(printf '%s\n' "$spec" | sed "s/{os_major}/$major/g")
    ;;
  esac
  printf '%s\n' "$spec"
}

# run_transaction writes the dnf shell script and runs it. dnf shell logs a
# failed command and goes on (exit status 0), so its output is kept and
# any "Error:" line fails the step; the build is then discarded, so what
# the rest of the script did never reaches an image.
run_transaction() {
  tx=$FATIMAGE_WORKDIR/transaction.dnf
  log=$FATIMAGE_WORKDIR/transaction.log
  rcf=$FATIMAGE_WORKDIR/transaction.rc
  # update_exclude keeps installed packages at their version: dnf
  # excludes them from the whole transaction; one not installed yet is
  # installed as the snapshot has it, one installed is not installed again
  set -- "--setopt=install_weak_deps=$TX_WEAK_DEPS"
  keep=
  while IFS= read -r p; do
    if [ -n "$p" ] && [ "$TX_UPDATE" = true ] && [ -n "$(rpm -qa "$p")" ]; then
      set -- "$@" "--exclude=$p"
      keep="$keep $p "
    fi
  done <<FATIMAGE_EOF
$TX_UPDATE_EXCLUDE
FATIMAGE_EOF
  while IFS= read -r p; do
    if [ -n "$p" ]; then set -- "$@" "--exclude=$p"; fi
  done <<FATIMAGE_EOF
$TX_EXCLUDE
FATIMAGE_EOF
  # the installed packages an install names stay as they are (no update)
  found=$(present_specs) || exit 1
  present=
  for s in $found; do
    present="$present $s "
    echo "$s: installed, kept at its version (present; update is off)"
  done
  install=
  # dnf shell takes local RPM files (rpm_urls) only before any other job
  # ("Cannot add local packages, because transaction job already
  # exists"): they get their own install line, first
  local_rpms=
  while IFS= read -r p; do
    if is_kept "$p"; then continue; fi
    case $p in
    "") ;;
    /*.rpm) local_rpms="$local_rpms $p" ;;
    *)
      spec=$(pkg_spec "$p")
      if is_present "$spec"; then continue; fi
      # dnf shell splits its lines as a shell would (shlex): a group
      # name with a space ("@Development Tools") is quoted to stay one
      # word (specs carry no quotes: validate_packages.go)
      case $spec in *" "*) spec="'$spec'" ;; esac
      if [ -n "$spec" ]; then install="$install $spec"; fi
      ;;
    esac
  done <<FATIMAGE_EOF
$TX_INSTALL
FATIMAGE_EOF
  no_weak=
  while IFS= read -r p; do
    if is_kept "$p" || is_present "$p"; then continue; fi
    if [ -n "$p" ]; then no_weak="$no_weak $p"; fi
  done <<FATIMAGE_EOF
${TX_INSTALL_NO_WEAK:-}
FATIMAGE_EOF
  # a package to remove that is not installed is excluded instead, so
  # that the transaction (a comps group's member, say) cannot bring it
  # in: either way the image ends without it
  rm_list=
  while IFS= read -r p; do
    if [ -z "$p" ]; then continue; fi
    if rpm -q "$p" >/dev/null 2>&1; then
      rm_list="$rm_list $p"
    else
      set -- "$@" "--exclude=$p"
    fi
  done <<FATIMAGE_EOF
$TX_REMOVE
FATIMAGE_EOF
  : > "$tx"
  # unsigned upstream packages the appliance installs without GPG check
  # (cvmfs-config-eessi): that repository's check off for this process
  while IFS= read -r r; do
    if [ -n "$r" ]; then echo "config $r.gpgcheck False" >> "$tx"; fi
  done <<FATIMAGE_EOF
${TX_NO_GPGCHECK:-}
FATIMAGE_EOF
  pre=$(wc -l < "$tx")
  # the appliance installs the Slurm set without weak dependencies and
  # everything else at dnf's default: two transactions of the one dnf
  # shell process, the setting changed between them (`config` is dnf's
  # runtime priority, above the command line's --setopt; each `run`
  # resolves with the setting then in force)
  if [ -n "$no_weak" ]; then
    printf 'config install_weak_deps False\ninstall%s\nrun\nconfig install_weak_deps %s\n' "$no_weak" "$TX_WEAK_DEPS" >> "$tx"
  fi
  if [ -n "$local_rpms" ]; then echo "install$local_rpms" >> "$tx"; fi
  if [ "$TX_UPDATE" = true ]; then echo upgrade >> "$tx"; fi
  if [ -n "$install" ]; then echo "install$install" >> "$tx"; fi
  if [ -n "$rm_list" ]; then echo "remove$rm_list" >> "$tx"; fi
  # a second run only with jobs of its own
  if [ -z "$no_weak" ] || [ "$(wc -l < "$tx")" -gt $((pre + 4)) ]; then echo run >> "$tx"; fi
  echo 'dnf transaction:'
  sed 's/^/  /' "$tx"
  rm -f "$rcf"
  { fatimage_dnf "$@" shell "$tx" || echo "$?" > "$rcf"; } 2>&1 | tee "$log"
  if [ -s "$rcf" ]; then exit "$(cat "$rcf")"; fi
  if grep -q '^Error' "$log"; then
    echo 'dnf shell reported an error: the transaction failed' >&2
    exit 1
  fi
}

# reboot_check prints REBOOT-PENDING: REASON when the transaction changed
# what only a reboot brings into use, without asking dnf (a process more):
# a core package (dnf needs-restarting's list, and the names in its
# configuration directory) installed after the boot, or a newest kernel
# that is not the running one. The boot time is /proc/1's, as
# needs-restarting takes it.
reboot_check() {
  boot=$(stat -c %Y /proc/1)
  set -- kernel kernel-core kernel-rt glibc linux-firmware systemd dbus dbus-broker dbus-daemon
  for f in /etc/dnf/plugins/needs-restarting.d/*.conf; do
    if [ -f "$f" ]; then
      # shellcheck disable=SC2046 # one package name a word
      set -- "$@" $(grep -v '^[[:space:]]*#' "$f")
    fi
  done
  rpm -q --qf '%{NAME} %{INSTALLTIME}\n' "$@" 2>/dev/null | while read -r name t; do
    case $t in
      '' | *[!0-9]*) ;;
      *) if [ "$t" -gt "$boot" ]; then echo "REBOOT-PENDING: $name installed after the boot"; fi ;;
    esac
  done | sort -u
  # the kernel check needs a running kernel rpm knows (not so in a
  # container, or the lab's VMs): else the install times above decide
  running=$(uname -r)
  if rpm -q "kernel-core-$running" >/dev/null 2>&1; then
    newest=$(rpm -q --last kernel-core | head -n1 | cut -d' ' -f1)
    if [ "$newest" != "kernel-core-$running" ]; then
      echo "REBOOT-PENDING: newest kernel ${newest#kernel-core-} is not the running $running"
    fi
  fi
}
