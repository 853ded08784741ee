# shellcheck shell=sh
# The end of the build's repository use: no copies, no credentials, no
# enabled section.

# remove_repo_copies removes the .rpmnew/.rpmsave copies of repo files
# package installs may leave.
remove_repo_copies() {
  for f in /etc/yum.repos.d/*.rpmnew /etc/yum.repos.d/*.rpmsave; do
    if [ -e "$f" ]; then
      rm -f "$f"
      echo "removed $f"
    fi
  done
}

# verify_repos_clean PWFILE PATH... fails when any credential the run
# knows (in PWFILE, one form a line, removed here: the repositories',
# the registries', the site proxy's) is in any file under
# /etc/yum.repos.d or the PATHs that exist (where the appliance's proxy
# role writes the proxy: dnf.conf, /etc/environment, systemd's manager
# configuration), when a section is still enabled, or when other files
# than .repo ones are left in /etc/yum.repos.d. REPOS_DIR names that
# directory (tests).
verify_repos_clean() {
  pw=$1
  shift
  repos=${REPOS_DIR:-/etc/yum.repos.d}
  set -- "$repos" "$@"
  for p in "$@"; do
    shift
    if [ -e "$p" ]; then set -- "$@" "$p"; fi
  done
  if [ -s "$pw" ] && [ $# -gt 0 ] && grep -rlF -f "$pw" "$@"; then
    rm -f "$pw"
    fatimage_cause "a credential of the build is still in the files above"
    exit 1
  fi
  rm -f "$pw"
  if grep -rlE '^[[:space:]]*enabled[[:space:]]*=[[:space:]]*1' "$repos"; then
    fatimage_cause "repositories still enabled in the files above"
    exit 1
  fi
  left=$(find "$repos" -mindepth 1 ! -name '*.repo' -print)
  if [ -n "$left" ]; then
    fatimage_cause "unexpected files in $repos: $left"
    exit 1
  fi
  echo "repositories disabled, no credentials left"
}
