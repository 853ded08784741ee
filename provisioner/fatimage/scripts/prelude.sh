# shellcheck shell=sh
# The start of every script the provisioner runs on the VM, after the
# lines setting FATIMAGE_WORKDIR, FATIMAGE_LOGIN_USER, FATIMAGE_SECRETDIR and the step's
# inputs. execute_command runs the whole with `sh -eu`.
export LC_ALL=C FATIMAGE_WORKDIR FATIMAGE_LOGIN_USER FATIMAGE_SECRETDIR

# fatimage_run prints a trace line naming the command, then runs it: a
# failure's error names the command that failed. The provisioner hides
# these lines from the build output.
fatimage_run() {
  printf '+fatimage: %s\n' "$*" >&2
  "$@"
}

# fatimage_cause prints a line the provisioner puts first in the error
# when the script fails: the cause, in words.
fatimage_cause() {
  printf '!fatimage: %s\n' "$*" >&2
}

# fatimage_dnf runs dnf -y with ten parallel downloads (also from one
# repository: dnf counts a baseurl as one mirror and allows a mirror three
# at once by default, too few over a long round trip) and the repositories
# in DNF_ENABLE (one a line) enabled, followed by the arguments. The
# build's repository definitions, which carry the credentials, are read
# from the secret dir's repos/ (first: their sections win), never from
# the disk.
fatimage_dnf() {
  _n=$#
  set -- "$@" -y --setopt=max_parallel_downloads=10 --setopt=max_downloads_per_mirror=10
  while IFS= read -r _r; do
    if [ -n "$_r" ]; then set -- "$@" "--enablerepo=$_r"; fi
  done <<FATIMAGE_EOF
${DNF_ENABLE:-}
FATIMAGE_EOF
  # move the caller's arguments behind the options
  while [ "$_n" -gt 0 ]; do
    set -- "$@" "$1"
    shift
    _n=$((_n - 1))
  done
  # traced (and so named in errors) without the options below: the same
  # every time, they would only lengthen the error's headline
  printf '+fatimage: dnf %s\n' "$*" >&2
  if [ -d "$FATIMAGE_SECRETDIR/repos" ]; then
    set -- "--setopt=reposdir=$FATIMAGE_SECRETDIR/repos,/etc/yum.repos.d,/etc/yum/repos.d,/etc/distro.repos.d" "$@"
  fi
  if [ "${FATIMAGE_PROXY_DNF:-1}" = 0 ]; then
    # the site's proxy_dnf is false: dnf goes direct, the rest through it
    env -u http_proxy -u https_proxy -u HTTP_PROXY -u HTTPS_PROXY dnf "$@"
  else
    dnf "$@"
  fi
}

# unpack_bundle unpacks a staged tar archive into the work dir.
unpack_bundle() {
  tar -xf "$1" -C "$FATIMAGE_WORKDIR" --no-same-owner
  rm -f "$1"
}

# fatimage_secrets_in makes FATIMAGE_SECRETDIR, a private directory on
# /run, and unpacks into it the credential files the provisioner sends on
# stdin (a tar archive); it is removed when the script ends, failed or
# not, with the copies handed to other users ($FATIMAGE_SECRETDIR-*). /run must be a tmpfs: a file written to the disk leaves its blocks
# there after it is rewritten or removed, and a snapshot copies them.
fatimage_secrets_in() {
  _fs=$(findmnt -n -o FSTYPE --mountpoint /run 2>/dev/null || true)
  if [ "$_fs" != tmpfs ]; then
    fatimage_cause "/run is not a tmpfs on this VM (${_fs:-not a mount point}): the provisioner keeps repository and registry credentials on a tmpfs only, never on the disk the image is made from"
    exit 1
  fi
  trap 'rm -rf "$FATIMAGE_SECRETDIR" "$FATIMAGE_SECRETDIR"-*' EXIT
  trap 'exit 129' HUP
  trap 'exit 130' INT
  trap 'exit 143' TERM
  rm -rf "$FATIMAGE_SECRETDIR"
  (umask 077 && mkdir "$FATIMAGE_SECRETDIR")
  chmod 0700 "$FATIMAGE_SECRETDIR"
  tar -xf - -C "$FATIMAGE_SECRETDIR" --no-same-owner
  # the site's proxy (its variables, quoted by the provisioner): exported,
  # so every command of the script (dnf, curl, pip, git, podman) uses it
  if [ -f "$FATIMAGE_SECRETDIR/proxy.env" ]; then
    set -a
    # shellcheck source=/dev/null
    . "$FATIMAGE_SECRETDIR/proxy.env"
    set +a
  fi
}
