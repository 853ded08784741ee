#!/usr/bin/env bash
# The main job on the local lab: start the Pulp double with a few
# repositories and resolve their snapshots through a real `packer build` of
# example/ark with the plugin installed. Everything lives under .lab/ and is
# stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
lab=$root/.lab/demo
tools=$root/.tools/bin

say() { printf '\n==> %s\n' "$*"; }

rm -rf "$lab" && mkdir -p "$lab"
say "Building the plugin and the Pulp double"
go build -o "$lab/packer-plugin-fatimage" .
go build -o "$tools/fakepulp" ./internal/cmd/fakepulp

export PACKER_PLUGIN_PATH=$lab/plugins PACKER_CONFIG_DIR=$lab/config CHECKPOINT_DISABLE=1
"$tools/packer" plugins install --path "$lab/packer-plugin-fatimage" github.com/stackhpc/fatimage >/dev/null

say "Starting the Pulp double (three guarded snapshots per repository)"
"$tools/fakepulp" -demo -env-file "$lab/env" -pid-file "$lab/fakepulp.pid" >"$lab/fakepulp.log" 2>&1 &
pulp=$!
trap 'kill $pulp 2>/dev/null || true; wait $pulp 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$lab/env" ] && break; sleep 0.1; done
[ -s "$lab/env" ] || { cat "$lab/fakepulp.log"; echo "the Pulp double did not start" >&2; exit 1; }
# shellcheck disable=SC1091
. "$lab/env"
echo "content URL: $ARK_CONTENT_URL (user $ARK_USERNAME)"

say "packer build example/ark"
"$tools/packer" build -color=false example/ark

say "Done: resolved pins are in example/ark/dnf_repo_timestamps.resolved.yml"
