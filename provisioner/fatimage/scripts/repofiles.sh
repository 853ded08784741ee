# shellcheck shell=sh
# Installing the provisioner's .repo files and disabling every other
# repository.
umask 077

# other_sections_awk prints the sections of a .repo file not named in
# keep (space-separated), without blank lines so that merging twice gives
# the same file; with off=1 each is forced to enabled=0.
# shellcheck disable=SC2016 # awk programs: $0 is awk's, not the shell's
other_sections_awk='BEGIN { n = split(keep, a, " "); for (i = 1; i <= n; i++) k[a[i]] = 1; in_s = 0 }
/^[[:space:]]*\[/ { s = $0; gsub(/^[[:space:]]*\[|\][[:space:]]*$/, "", s); in_s = !(s in k); if (in_s) { print ""; print; if (off) print "enabled=0" }; next }
!in_s || /^[[:space:]]*$/ { next }
off && /^[[:space:]]*enabled[[:space:]]*=/ { next }
{ print }'

# disable_all_awk rewrites a .repo file so every section has enabled=0
# (dnf treats a missing enabled as 1).
disable_all_awk='/^[[:space:]]*\[/ { print; print "enabled=0"; next } /^[[:space:]]*enabled[[:space:]]*=/ { next } { print }'

# install_repo_file SRC DST SECTIONS OFF installs the uploaded SRC as DST
# (0600 root:root) only when it changed. Sections of an existing DST that
# are not ours (SECTIONS, space-separated; e.g. baseos-source) are kept
# after ours, disabled when OFF is 1.
install_repo_file() {
  src=$1 dst=$2 sections=$3 off=$4
  if [ -f "$dst" ]; then awk -v keep="$sections" -v off="$off" "$other_sections_awk" "$dst" >> "$src"; fi
  if cmp -s "$src" "$dst"; then
    echo "unchanged $dst"
  else
    install -o root -g root -m 0600 "$src" "$dst"
    echo "wrote $dst"
  fi
  chmod 0600 "$dst"
  rm -f "$src"
}

# strip_repo_file DST SECTIONS OFF removes our SECTIONS (space-separated)
# from an existing DST before the build: they are read from the tmpfs
# secret dir during the build (they carry credentials) and written back
# without credentials at its end. The others are kept, disabled when OFF
# is 1; a file left without sections is removed.
strip_repo_file() {
  dst=$1 sections=$2 off=$3
  [ -f "$dst" ] || return 0
  tmpf=$FATIMAGE_WORKDIR/repo.tmp
  awk -v keep="$sections" -v off="$off" "$other_sections_awk" "$dst" > "$tmpf"
  if grep -q '^[[:space:]]*\[' "$tmpf"; then
    cat "$tmpf" > "$dst"
    echo "moved our sections out of $dst"
  else
    rm -f "$dst"
    echo "removed $dst (the build reads it from memory)"
  fi
  rm -f "$tmpf"
}

# disable_other_repos KEEP... disables every section of every .repo file
# in /etc/yum.repos.d but the files named KEEP. The file is rewritten
# through a temporary file in the work dir and `cat >`, so no backup or
# temporary file is left in /etc/yum.repos.d and the file keeps its mode.
disable_other_repos() {
  tmpf=$FATIMAGE_WORKDIR/repo.tmp
  for f in /etc/yum.repos.d/*.repo; do
    [ -e "$f" ] || continue
    keep=0
    for k in "$@"; do
      if [ "${f##*/}" = "$k" ]; then keep=1; fi
    done
    if [ "$keep" = 1 ]; then continue; fi
    awk "$disable_all_awk" "$f" > "$tmpf"
    if ! cmp -s "$tmpf" "$f"; then
      cat "$tmpf" > "$f"
      echo "disabled repositories in $f"
    fi
  done
  rm -f "$tmpf"
}

# ansible_repos_on makes the build's repositories (on the tmpfs, with
# their credentials) the ones the site's Ansible sees: its dnf reads only
# dnf.conf, so [main] gains, under a marker line, the reposdir the
# plugin's own dnf is given, and a reposdir the file had is kept as a
# marked comment, until ansible_repos_off takes out just those: what the
# site's roles write there meanwhile (the proxy role's proxy=) stays. No
# credential reaches the disk: dnf.conf names the directory only.
# DNF_CONF names the file (tests; /etc/dnf/dnf.conf on the VM).
# shellcheck disable=SC2016 # awk programs: $0 is awk's, not the shell's
ansible_repos_on() {
  [ -d "$FATIMAGE_SECRETDIR/repos" ] || return 0
  conf=${DNF_CONF:-/etc/dnf/dnf.conf}
  ansible_repos_off
  # The script's secret dir goes with the script: the phase's ansible-playbook
  # runs reach the repositories (credentials and all) through a copy on the
  # /run tmpfs, readable by root only, until ansible_repos_off.
  dir=${FATIMAGE_ANSIBLE_REPOS:-/run/fatimage-ansible-repos}
  (umask 077 && mkdir -p "$dir")
  cp "$FATIMAGE_SECRETDIR"/repos/*.repo "$dir"/
  awk -v dirs="$dir,/etc/yum.repos.d,/etc/yum/repos.d,/etc/distro.repos.d" '
    /^[[:space:]]*reposdir[[:space:]]*=/ { print "#fatimage-kept# " $0; next }
    { print }
    /^[[:space:]]*\[main\][[:space:]]*$/ { print "#fatimage-reposdir# the build repositories, for this phase only"; print "reposdir=" dirs }' "$conf" > "$FATIMAGE_WORKDIR/dnf.conf.new"
  cat "$FATIMAGE_WORKDIR/dnf.conf.new" > "$conf"
  rm -f "$FATIMAGE_WORKDIR/dnf.conf.new"
}

# ansible_repos_off takes out of dnf.conf what ansible_repos_on added and
# puts back the reposdir it kept; a file without them is left as it is.
ansible_repos_off() {
  conf=${DNF_CONF:-/etc/dnf/dnf.conf}
  rm -rf "${FATIMAGE_ANSIBLE_REPOS:-/run/fatimage-ansible-repos}"
  grep -q '^#fatimage-' "$conf" 2>/dev/null || return 0
  awk '
    skip && /^reposdir=/ { skip = 0; next }
    { skip = 0 }
    /^#fatimage-reposdir# / { skip = 1; next }
    /^#fatimage-kept# / { sub(/^#fatimage-kept# /, ""); print; next }
    { print }' "$conf" > "$FATIMAGE_WORKDIR/dnf.conf.new"
  cat "$FATIMAGE_WORKDIR/dnf.conf.new" > "$conf"
  rm -f "$FATIMAGE_WORKDIR/dnf.conf.new"
}

# foreign_source_sections ID... prints "FILE [SECTION]" for each section of
# /etc/yum.repos.d that `dnf download --source` enables for the enabled
# repositories ID (dnf's enable_source_repos: ID-source, NAME-source-rpms
# for NAME-rpms) and that would stop it when unreachable (no
# skip_if_unavailable). The build's own sections are on the tmpfs, not
# here: these are the base image's, at its mirrors. REPOS_D names the
# directory (tests; /etc/yum.repos.d on the VM).
# shellcheck disable=SC2016 # awk programs: $0 is awk's, not the shell's
foreign_source_sections() {
  for f in "${REPOS_D:-/etc/yum.repos.d}"/*.repo; do
    [ -e "$f" ] || continue
    awk -v ids="$*" -v file="${f##*/}" '
      BEGIN { n = split(ids, a, " "); for (i = 1; i <= n; i++) { id = a[i]; if (sub(/-rpms$/, "", id)) w[id "-source-rpms"] = 1; else w[id "-source"] = 1 } }
      function flush() { if (s in w && !skip) print file " [" s "]" }
      /^[[:space:]]*\[/ { flush(); s = $0; gsub(/^[[:space:]]*\[|\][[:space:]]*$/, "", s); skip = 0; next }
      tolower($0) ~ /^[[:space:]]*skip_if_unavailable[[:space:]]*=[[:space:]]*(1|true|yes|on)[[:space:]]*$/ { skip = 1 }
      END { flush() }' "$f"
  done
}
