# shellcheck shell=sh
# GPG keys and the new repositories' metadata.

# install_key SRC DST writes an uploaded key into the image.
install_key() {
  install -D -o root -g root -m 0644 "$1" "$2"
  rm -f "$1"
}

# import_key PATH imports a key for rpm.
import_key() {
  fatimage_run rpm --import "$1"
}

# make_cache REPO... loads the metadata of these repositories only: wrong
# credentials or a missing snapshot fail here, before any package work.
make_cache() {
  n=$#
  set -- "$@" -y makecache '--disablerepo=*'
  while [ "$n" -gt 0 ]; do
    set -- "$@" "--enablerepo=$1"
    shift
    n=$((n - 1))
  done
  fatimage_run dnf "$@"
}
