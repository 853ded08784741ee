# shellcheck shell=sh
# The package transaction: module streams, one dnf install, and a dnf
# remove of the installed ones among those to remove. DNF_ENABLE names
# the repositories enabled for it.

# enable_modules STREAM...
enable_modules() {
  fatimage_dnf module enable "$@"
}

# install_packages WEAK_DEPS N_EXCLUDE EXCLUDE... PACKAGE...: the first
# N_EXCLUDE names after WEAK_DEPS (true or false) are excluded.
install_packages() {
  weak=$1 nexclude=$2
  shift 2
  n=$#
  i=0
  set -- "$@" "--setopt=install_weak_deps=$weak" install
  while [ "$i" -lt "$n" ]; do
    if [ "$i" -lt "$nexclude" ]; then set -- "$@" "--exclude=$1"; else set -- "$@" "$1"; fi
    shift
    i=$((i + 1))
  done
  fatimage_dnf "$@"
}

# remove_packages PACKAGE...: removes those installed.
remove_packages() {
  n=$#
  while [ "$n" -gt 0 ]; do
    if rpm -q "$1" >/dev/null 2>&1; then set -- "$@" "$1"; fi
    shift
    n=$((n - 1))
  done
  if [ $# -gt 0 ]; then
    fatimage_run dnf -y remove "$@"
  else
    echo 'nothing to remove'
  fi
}
