# shellcheck shell=sh
# The distribution's own key (import_key is the gpg_keys kind's,
# internal/content/keys/keys.sh).

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
