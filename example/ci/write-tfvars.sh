#!/bin/sh
# Record the image a `packer build` just made in the appliance's
# cluster_image.auto.tfvars.json, under one OS key, keeping every other key.
#
#   write-tfvars.sh MANIFEST OS_KEY TFVARS
#
#   MANIFEST  the file the `manifest` post-processor wrote (packer-manifest.json)
#   OS_KEY    the key under "cluster_image" to set, e.g. RL8 or RL9
#   TFVARS    the tfvars file to update; created if it does not exist
#
# The image is the last build in the manifest (.builds[-1]). Its name is
# taken from custom_data.image_name when the template records it there
# (example/openstack.pkr.hcl and example/extra do); otherwise it is looked
# up from artifact_id (the image id) with the `openstack` CLI. Needs jq.
# POSIX sh.
set -eu

usage() {
	echo "usage: $0 MANIFEST OS_KEY TFVARS" >&2
	exit 2
}

[ "$#" -eq 3 ] || usage
manifest=$1
os_key=$2
tfvars=$3

command -v jq >/dev/null 2>&1 || {
	echo "$0: jq is required" >&2
	exit 1
}

case $os_key in
'' | *[!A-Za-z0-9_-]*)
	echo "$0: OS key '$os_key' must be letters, digits, '_' or '-' (e.g. RL9)" >&2
	exit 2
	;;
esac

[ -r "$manifest" ] || {
	echo "$0: cannot read manifest $manifest" >&2
	exit 1
}

image_id=$(jq -er '.builds[-1].artifact_id // empty' "$manifest") || {
	echo "$0: $manifest has no build with an artifact_id" >&2
	exit 1
}
# The official builder and this plugin both use the bare image id; strip a
# "region:" prefix in case some other builder wrote one.
image_id=${image_id##*:}

image_name=$(jq -r '.builds[-1].custom_data.image_name // empty' "$manifest")
if [ -z "$image_name" ]; then
	command -v openstack >/dev/null 2>&1 || {
		echo "$0: no custom_data.image_name in $manifest and no openstack CLI to look up image $image_id" >&2
		exit 1
	}
	image_name=$(openstack image show -f value -c name "$image_id")
fi
[ -n "$image_name" ] || {
	echo "$0: image $image_id has no name" >&2
	exit 1
}

# Start from the existing file (or an empty object) and set one key; the
# keys under cluster_image are kept sorted so diffs stay small.
if [ -s "$tfvars" ]; then
	current=$tfvars
else
	current=/dev/null
fi

dir=$(dirname "$tfvars")
mkdir -p "$dir"
tmp=$(mktemp "$dir/.cluster_image.XXXXXX")
trap 'rm -f "$tmp"' EXIT HUP INT TERM

if [ "$current" = /dev/null ]; then
	echo '{}'
else
	cat "$current"
fi | jq --arg os "$os_key" --arg name "$image_name" '
	if type != "object" then error("tfvars file is not a JSON object") else . end
	| .cluster_image = ((.cluster_image // {}) + {($os): $name})
	| .cluster_image |= (to_entries | sort_by(.key) | from_entries)
' >"$tmp"

chmod 0644 "$tmp"
mv "$tmp" "$tfvars"
trap - EXIT HUP INT TERM
echo "cluster_image.$os_key = $image_name (image $image_id) -> $tfvars"
