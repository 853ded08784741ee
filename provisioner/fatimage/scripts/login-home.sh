# shellcheck shell=sh
# Moves the login user's home to LOGIN_HOME. usermod refuses while the
# user is logged in (the build is), so the home is copied and the passwd
# field rewritten in place; the old home goes only when it is a plain
# /home/<dir>.
u=$FATIMAGE_LOGIN_USER
new=$LOGIN_HOME
if [ "$u" = root ]; then echo "the login user is root; home kept"; exit 0; fi
old=$(getent passwd "$u" | cut -d: -f6)
if [ "$old" = "$new" ]; then echo "home of $u already $new"; exit 0; fi
mkdir -p "$(dirname "$new")"
if [ -d "$old" ] && [ ! -e "$new" ]; then cp -a "$old" "$new"; fi
[ -d "$new" ] || install -d -o "$u" -g "$(id -gn "$u")" -m 0700 "$new"
awk -F: -v OFS=: -v u="$u" -v h="$new" '$1 == u { $6 = h } { print }' /etc/passwd > "$FATIMAGE_WORKDIR/passwd"
cat "$FATIMAGE_WORKDIR/passwd" > /etc/passwd
rm -f "$FATIMAGE_WORKDIR/passwd"
if command -v restorecon >/dev/null 2>&1; then restorecon -R "$new" || true; fi
# this SSH connection's sshd still starts sessions in the old home: a
# link keeps that working until the end of the run (final.sh removes it)
case "$old" in /home/?*) [ "${old#/home/*/}" = "$old" ] && rm -rf "$old" && ln -s "$new" "$old" ;; esac
echo "home of $u moved from $old to $new"
