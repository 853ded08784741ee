# shellcheck shell=sh
# The start of every script the provisioner runs on the VM, after the
# lines setting FATIMAGE_WORKDIR, FATIMAGE_LOGIN_USER and the step's
# inputs. execute_command runs the whole with `sh -eu`.
export LC_ALL=C FATIMAGE_WORKDIR FATIMAGE_LOGIN_USER

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

# fatimage_dnf runs dnf -y with parallel downloads and the repositories
# in DNF_ENABLE (one a line) enabled, followed by the arguments.
fatimage_dnf() {
  _n=$#
  set -- "$@" -y --setopt=max_parallel_downloads=10
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
  fatimage_run dnf "$@"
}

# unpack_bundle unpacks a staged tar archive into the work dir.
unpack_bundle() {
  tar -xf "$1" -C "$FATIMAGE_WORKDIR" --no-same-owner
  rm -f "$1"
}
