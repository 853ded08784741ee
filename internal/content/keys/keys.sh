# shellcheck shell=sh
# The gpg_keys kind: keys written into the image and imported for rpm
# (the built-in keys of the repositories in repos too).

# install_key SRC DST writes an uploaded key into the image.
install_key() {
  install -D -o root -g root -m 0644 "$1" "$2"
  rm -f "$1"
}

# import_key PATH imports a key for rpm.
import_key() {
  fatimage_run rpm --import "$1"
}

# install_builtin_key NAME 8 DST8 SRC8 9 DST9 SRC9 writes the built-in key
# NAME for the image's OS major (DST and SRC of that major; "-" when a
# gpg_keys entry replaces it) and imports it, as the appliance writes its
# repositories' keys for ansible_distribution_major_version; an OS major
# without built-in keys gets a notice naming the option that adds one.
install_builtin_key() {
  name=$1
  shift
  major=$(
    # shellcheck source=/dev/null # the VM's file, not ours
    . /etc/os-release
    echo "${VERSION_ID%%.*}"
  )
  dst='' src='' known=''
  while [ $# -ge 3 ]; do
    if [ "$1" = "$major" ]; then
      known=1 dst=$2 src=$3
    elif [ "$3" != - ]; then
      rm -f "$3"
    fi
    shift 3
  done
  if [ -z "$known" ]; then
    echo "fatimage: no built-in key $name for OS major version '$major'; add it to gpg_keys" >&2
  elif [ "$src" != - ]; then
    install_key "$src" "$dst"
    import_key "$dst"
  fi
}
