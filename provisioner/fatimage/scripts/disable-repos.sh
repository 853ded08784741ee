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

# verify_repos_clean PWFILE fails when any credential the run knows (in
# PWFILE, one form a line, removed here) is in any file under
# /etc/yum.repos.d, when a section is still enabled, or when other files
# than .repo ones are left there.
verify_repos_clean() {
  pw=$1
  if [ -s "$pw" ] && grep -rlF -f "$pw" /etc/yum.repos.d; then
    rm -f "$pw"
    fatimage_cause "a credential of the build is still in the files above"
    exit 1
  fi
  rm -f "$pw"
  if grep -rlE '^[[:space:]]*enabled[[:space:]]*=[[:space:]]*1' /etc/yum.repos.d; then
    fatimage_cause "repositories still enabled in the files above"
    exit 1
  fi
  left=$(find /etc/yum.repos.d -mindepth 1 ! -name '*.repo' -print)
  if [ -n "$left" ]; then
    fatimage_cause "unexpected files in /etc/yum.repos.d: $left"
    exit 1
  fi
  echo "repositories disabled, no credentials left"
}
