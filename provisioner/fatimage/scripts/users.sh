# shellcheck shell=sh
# Groups and users with fixed ids; an existing one's id is checked, and
# an existing user's primary group, home and shell are changed as
# Ansible's user module changes them.

# ensure_group NAME GID SYSTEM: GID 0 lets groupadd choose; SYSTEM 1
# makes a system group.
ensure_group() {
  name=$1 gid=$2 system=$3
  set --
  if [ "$system" = 1 ]; then set -- -r; fi
  if [ "$gid" != 0 ]; then
    if getent group "$name" >/dev/null; then
      if [ "$(getent group "$name" | cut -d: -f3)" != "$gid" ]; then
        fatimage_cause "group $name exists with gid $(getent group "$name" | cut -d: -f3), want $gid"
        exit 1
      fi
    else
      fatimage_run groupadd "$@" -g "$gid" "$name"
      echo "created group $name"
    fi
  elif ! getent group "$name" >/dev/null; then
    fatimage_run groupadd "$@" "$name"
    echo "created group $name"
  fi
}

# ensure_user NAME UID GROUP HOME SHELL SYSTEM CREATE_HOME: empty GROUP,
# HOME and SHELL take useradd's defaults. Without GROUP the primary group
# is decided as Ansible's user module does: a new group of the user's
# name, or, when a group of that name exists, useradd -N's default group
# (/etc/default/useradd's GROUP).
ensure_user() {
  name=$1 uid=$2 group=$3 home=$4 shell=$5 system=$6 create_home=$7
  if getent passwd "$name" >/dev/null; then
    if [ "$(id -u "$name")" != "$uid" ]; then
      fatimage_cause "user $name exists with uid $(id -u "$name"), want $uid"
      exit 1
    fi
    modify_user "$name" "$group" "$home" "$shell"
    return 0
  fi
  set -- -u "$uid"
  if [ -n "$group" ]; then set -- "$@" -g "$group"; fi
  if [ -n "$home" ]; then set -- "$@" -d "$home"; fi
  if [ -n "$shell" ]; then set -- "$@" -s "$shell"; fi
  if [ "$system" = 1 ]; then set -- "$@" -r; fi
  if [ "$create_home" = 1 ]; then set -- "$@" -m; else set -- "$@" -M; fi
  if [ -z "$group" ]; then
    if getent group "$name" >/dev/null; then set -- "$@" -N; else set -- "$@" -U; fi
  fi
  fatimage_run useradd "$@" "$name"
  echo "created user $name"
}

# modify_user NAME GROUP HOME SHELL: an existing user gets the primary
# group, home (not moved: the module's move_home defaults to no) and
# shell it is given, where they differ, as Ansible's user module does;
# empty ones are left as they are.
modify_user() {
  name=$1 group=$2 home=$3 shell=$4
  entry=$(getent passwd "$name")
  set --
  if [ -n "$group" ] && [ "$(id -gn "$name")" != "$group" ]; then set -- "$@" -g "$group"; fi
  if [ -n "$home" ] && [ "$(echo "$entry" | cut -d: -f6)" != "$home" ]; then set -- "$@" -d "$home"; fi
  if [ -n "$shell" ] && [ "$(echo "$entry" | cut -d: -f7)" != "$shell" ]; then set -- "$@" -s "$shell"; fi
  if [ $# = 0 ]; then
    echo "user $name exists"
    return 0
  fi
  fatimage_run usermod "$@" "$name"
  echo "modified user $name"
}
