# shellcheck shell=sh
# dnf_update EXCLUDE... runs dnf update without the excluded packages,
# then asks dnf needs-restarting and prints REBOOT-NEEDED when it says so.
dnf_update() {
  n=$#
  set -- "$@" update
  while [ "$n" -gt 0 ]; do
    set -- "$@" "--exclude=$1"
    shift
    n=$((n - 1))
  done
  fatimage_dnf "$@"
  rc=0
  printf '+fatimage: %s\n' 'dnf needs-restarting -r' >&2
  dnf needs-restarting -r >/dev/null 2>&1 || rc=$?
  if [ "$rc" = 1 ]; then
    echo REBOOT-NEEDED
  elif [ "$rc" != 0 ]; then
    echo "dnf needs-restarting -r failed ($rc)" >&2
    exit "$rc"
  fi
}
