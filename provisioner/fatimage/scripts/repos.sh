# shellcheck shell=sh
# GPG keys.

# install_key SRC DST writes an uploaded key into the image.
install_key() {
  install -D -o root -g root -m 0644 "$1" "$2"
  rm -f "$1"
}

# import_key PATH imports a key for rpm.
import_key() {
  fatimage_run rpm --import "$1"
}
