# shellcheck shell=sh
# Sets SELINUX= in /etc/selinux/config to SELINUX_MODE and prints
# REBOOT-NEEDED when it changed.
f=/etc/selinux/config
want=$SELINUX_MODE
if [ ! -f "$f" ]; then echo "no $f; nothing to do"; exit 0; fi
cur=$(sed -n 's/^SELINUX=//p' "$f" | tail -n1)
if [ "$cur" = "$want" ]; then echo "SELinux already $want"; exit 0; fi
if grep -q '^SELINUX=' "$f"; then
  tmp=$(mktemp)
  sed "s/^SELINUX=.*/SELINUX=$want/" "$f" > "$tmp"
  cat "$tmp" > "$f"
  rm -f "$tmp"
else
  echo "SELINUX=$want" >> "$f"
fi
echo "SELinux $cur -> $want"
echo REBOOT-NEEDED
