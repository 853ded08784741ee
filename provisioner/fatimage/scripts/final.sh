# shellcheck shell=sh
# The run's last script (after the final cleanup steps).

# unlink_old_home removes the link login-home.sh left in /home.
unlink_old_home() {
  h=$(getent passwd "$FATIMAGE_LOGIN_USER" | cut -d: -f6)
  for l in /home/*; do
    if [ -L "$l" ] && [ "$(readlink "$l")" = "$h" ]; then rm -f "$l"; fi
  done
}

# remove_workdir removes the run's private work directory.
remove_workdir() {
  rm -rf "$FATIMAGE_WORKDIR"
}
