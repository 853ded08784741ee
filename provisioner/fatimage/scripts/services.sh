# shellcheck shell=sh
# disable_services UNIT...: stops and disables the installed units among
# them and reports only what it changed.
disable_services() {
  for u in "$@"; do
    case "$u" in *.*) ;; *) u=$u.service ;; esac
    if [ ! -e "/etc/systemd/system/$u" ] && [ ! -e "/usr/lib/systemd/system/$u" ]; then continue; fi
    if systemctl -q is-enabled "$u" 2>/dev/null; then systemctl -q disable "$u" && echo "disabled $u"; fi
    if systemctl -q is-active "$u" 2>/dev/null; then systemctl stop "$u" && echo "stopped $u"; fi
  done
}
