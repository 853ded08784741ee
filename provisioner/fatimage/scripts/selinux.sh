# shellcheck shell=sh
# selinux_set DIR STATE POLICY sets SELINUX= (and, given a POLICY,
# SELINUXTYPE=) in DIR/config, as the appliance's bootstrap.yml play does
# with ansible.posix.selinux, and prints REBOOT-NEEDED when either
# changed: the next boot takes them. A policy is only switched to when
# it is installed (DIR/POLICY/policy), as the module refuses otherwise.
selinux_config_value() {
  sed -n "s/^$2=//p" "$1" | tail -n1
}

selinux_config_set() {
  if grep -q "^$2=" "$1"; then
    tmp=$(mktemp)
    sed "s/^$2=.*/$2=$3/" "$1" > "$tmp"
    cat "$tmp" > "$1"
    rm -f "$tmp"
  else
    echo "$2=$3" >> "$1"
  fi
}

selinux_set() {
  f=$1/config
  if [ ! -f "$f" ]; then echo "no $f; nothing to do"; return 0; fi
  changed=
  if [ -n "$3" ]; then
    cur=$(selinux_config_value "$f" SELINUXTYPE)
    if [ "$cur" != "$3" ]; then
      if [ ! -e "$1/$3/policy" ]; then
        fatimage_cause "selinux: policy $3 is not installed ($1/$3/policy missing; its package, e.g. selinux-policy-$3, must be in the image first)"
        return 1
      fi
      selinux_config_set "$f" SELINUXTYPE "$3"
      echo "SELinux policy ${cur:-(none)} -> $3"
      changed=1
    fi
  fi
  cur=$(selinux_config_value "$f" SELINUX)
  if [ "$cur" = "$2" ]; then
    echo "SELinux already $2"
  else
    selinux_config_set "$f" SELINUX "$2"
    echo "SELinux $cur -> $2"
    changed=1
  fi
  if [ -n "$changed" ]; then echo REBOOT-NEEDED; fi
}
