#!/usr/bin/env bash
# The main job, on the local lab: start the lab (an OpenStack double with
# Rocky-like VMs, a Pulp double with real signed repositories), then run a
# real `packer build` of example/lab with the plugin installed: the
# fatimage-ark data source resolves the newest snapshots, the
# fatimage-openstack builder boots a VM, installs packages from them and
# saves the image. Prints what was built, then stops the lab.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
tools=$root/.tools/bin
work=$root/.lab/demo

say() { printf '\n==> %s\n' "$*"; }

[ "$(id -u)" = 0 ] || { echo "demo: the lab needs root (network namespaces, overlay mounts)" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work"

say "Building the plugin and the lab"
go build -o "$work/packer-plugin-fatimage" .
go build -o "$tools/lab" ./internal/cmd/lab
export PACKER_PLUGIN_PATH=$work/plugins PACKER_CONFIG_DIR=$work/config CHECKPOINT_DISABLE=1
"$tools/packer" plugins install --path "$work/packer-plugin-fatimage" github.com/stackhpc/fatimage >/dev/null

say "Starting the lab"
started=
if ! "$tools/lab" status | grep -q '"running": true'; then started=1; fi
"$tools/lab" up
[ -n "$started" ] && trap '"$tools/lab" down >/dev/null' EXIT
# shellcheck disable=SC1091
. .lab/env

say "packer build example/lab"
rm -f example/lab/manifest.json
"$tools/packer" build -color=false example/lab

say "What was built"
python3 - example/lab/manifest.json <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))["builds"][-1]
print(f"  image id:     {b['artifact_id']}")
print(f"  snapshot id:  {b['custom_data']['snapshot_id']}")
for repo, ts in sorted(json.loads(b["custom_data"]["timestamps"]).items()):
    print(f"  {repo:16} {ts}")
PY
. .lab/env
openstack image list -f value -c Name -c Status | grep demo-fat | tail -1 | sed 's/^/  image:        /'
"$tools/lab" status | python3 -c 'import json,sys; s=json.load(sys.stdin); print("  leftovers:   ", s["counts"])'
