# shellcheck shell=sh
# Reboots the VM; the SSH session ends with it.
echo rebooting
systemctl reboot || reboot
