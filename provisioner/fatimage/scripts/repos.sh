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

# import_os_key imports the distribution's own key from the file the image
# already has (/etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-<major> on Rocky), as
# the appliance's dnf_repos role does; never shipped by the plugin. An
# image without that file gets a notice: its own packages then need a
# gpg_keys entry.
import_os_key() {
  # shellcheck source=/dev/null # the VM's file, not ours
  . /etc/os-release
  case "$ID" in
    rocky) key=/etc/pki/rpm-gpg/RPM-GPG-KEY-Rocky-${VERSION_ID%%.*} ;;
    *) echo "fatimage: no built-in key file for $ID; add it to gpg_keys" >&2; return 0 ;;
  esac
  if [ -f "$key" ]; then
    import_key "$key"
  else
    echo "fatimage: $key is not in the image; add the distribution's key to gpg_keys" >&2
  fi
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
