#!/bin/sh
# update-ca-trust stand-in (fatlab): Rocky's trust store tool (from its
# ca-certificates package), over the lab userland's Debian one. `extract`
# (the default) makes the anchors in /etc/pki/ca-trust/source/anchors the
# system's trusted CAs, as on Rocky.
set -eu
case "${1:-extract}" in
extract) ;;
*)
	echo "update-ca-trust: unknown command: $1" >&2
	exit 2
	;;
esac
dir=/usr/local/share/ca-certificates/ca-trust-anchors
rm -rf "$dir"
mkdir -p "$dir"
for f in /etc/pki/ca-trust/source/anchors/*; do
	[ -f "$f" ] || continue
	cp "$f" "$dir/$(basename "$f").crt"
done
exec update-ca-certificates --fresh >/dev/null
