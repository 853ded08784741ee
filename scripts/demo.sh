#!/usr/bin/env bash
# The main job, on the local lab: start the lab (an OpenStack double with
# Rocky-like VMs, a Pulp double with real signed repositories, a release
# server), then run real `packer build`s of example/ with the plugin
# installed and the lab's variables (example/lab.pkrvars.hcl: no site
# appliance, so the built-in groups; a site's build reads its activated
# environment instead): the fatimage-ark data source resolves the pinned snapshots,
# the fatimage-openstack builder boots a build VM, the fatimage provisioner
# makes it a fat image, the manifest post-processor records it; then
# example/extra adds one group on top of it. Prints what was built, checks
# nothing was left behind, and stops the lab.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
tools=${TOOLS:-$root/.tools/bin}
work=$root/.lab/demo

say() { printf '\n==> %s\n' "$*"; }

[ "$(id -u)" = 0 ] || { echo "demo: the lab needs root (network namespaces, overlay mounts)" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work"
t0=$(date +%s)
# mark NAME: seconds since the demo started, kept under NAME for the summary
mark() { echo $(($(date +%s) - t0)) > "$work/at-$1"; }

# On a fresh machine Packer is built from source (tools/go.mod) and its
# compile is most of the demo's time: it runs in the background, from
# the start, while the lab binary and the plugin are built and the lab
# starts (mostly downloads and waits), and is awaited only before the
# first packer command. make builds it only when its pins changed.
say "Building Packer (pinned in tools/go.mod) in the background, the lab and the plugin"
{ "${MAKE:-make}" --no-print-directory -s TOOLS="$tools" "$tools/packer" && mark packer; } > "$work/packer-build.log" 2>&1 &
packer_pid=$!
go build -o "$tools/lab" ./testworld/cmd/lab

say "Starting the lab (OpenStack, Pulp and release server doubles; VMs with sshd and dnf)"
started=
if ! "$tools/lab" status | grep -q '"running": true'; then started=1; fi
{ "$tools/lab" up && mark lab; } > "$work/lab-up.log" 2>&1 &
lab_pid=$!
[ -n "$started" ] && trap '"$tools/lab" down >/dev/null' EXIT
go build -o "$work/packer-plugin-fatimage" .
mark plugin
wait "$lab_pid" || { cat "$work/lab-up.log" >&2; exit 1; }
cat "$work/lab-up.log"
# shellcheck disable=SC1091
. .lab/env
wait "$packer_pid" || { echo "demo: building Packer failed:" >&2; cat "$work/packer-build.log" >&2; exit 1; }

say "Installing the plugin with packer plugins install"
export PACKER_PLUGIN_PATH=$work/plugins PACKER_CONFIG_DIR=$work/config CHECKPOINT_DISABLE=1
"$tools/packer" plugins install --path "$work/packer-plugin-fatimage" github.com/stackhpc/fatimage >/dev/null

vars=(-var-file=example/lab.pkrvars.hcl -var "release_base_url=$LAB_RELEASES_URL" -var "git_base_url=$LAB_GIT_URL" -var "python_index_url=$LAB_PYPI_URL" -var "github_releases_url=${LAB_RELEASES_URL%/prometheus}"
  -var "container_registry=$LAB_REGISTRY" -var "rstudio_download_url=${LAB_RELEASES_URL%/prometheus}"
  -var "grafana_dashboards_url=$LAB_GRAFANA_URL" -var "netlib_url=$LAB_NETLIB_URL"
  -var "git_commit=$(git rev-parse HEAD 2>/dev/null || echo nogit)")

say "packer build example (data source -> builder -> fatimage provisioner -> manifest)"
start=$(date +%s)
"$tools/packer" build -color=false "${vars[@]}" \
  -var "manifest_output_path=$work/manifest.json" -var "image_manifest_path=$work/image-manifest.json" example
fat_secs=$(($(date +%s) - start))

say "packer build example/extra (the nfs group on top of the newest fat image)"
start=$(date +%s)
"$tools/packer" build -color=false "${vars[@]}" -var extra_groups=nfs \
  -var "manifest_output_path=$work/extra-manifest.json" example/extra
extra_secs=$(($(date +%s) - start))

say "What was built"
python3 - "$work/manifest.json" "$work/image-manifest.json" "$work/extra-manifest.json" "$fat_secs" "$extra_secs" <<'PY'
import json, sys
fat = json.load(open(sys.argv[1]))["builds"][-1]
img = json.load(open(sys.argv[2]))
extra = json.load(open(sys.argv[3]))["builds"][-1]
i = img["image"]
print(f"  fat image:     {fat['custom_data']['image_name']}  ({fat['artifact_id']}, built in {sys.argv[4]} s)")
print(f"  extra image:   {extra['custom_data']['image_name']}  ({extra['artifact_id']}, built in {sys.argv[5]} s)")
print(f"  snapshot id:   {fat['custom_data']['snapshot_id']}")
for repo, ts in sorted(json.loads(fat["custom_data"]["timestamps"]).items()):
    print(f"    {repo:20} {ts}")
print(f"  image.json:    {i['os']}, {i['package_count']} packages ({i['package_digest'][:19]}...)")
print(f"  groups:        {', '.join(i.get('groups') or [])}")
for name, b in sorted((i.get("binaries") or {}).items()):
    print(f"    {name:20} {b['version']:8} sha256 {b['sha256'][:16]}...  {', '.join(b['files'])}")
print(f"  dnf commands:  {img['dnf_runs']}, reboots: {img['reboots']}")
PY
"$tools/lab" status | python3 -c 'import json,sys; s=json.load(sys.stdin); c=s["counts"]; print("  left on the cloud:", c); sys.exit(1 if sum(c.values()) else 0)'
echo "  time:          $(($(date +%s) - t0)) s in all: plugin built after $(cat "$work/at-plugin") s, lab ready after $(cat "$work/at-lab") s, Packer after $(cat "$work/at-packer") s (built in the background: $work/packer-build.log); builds $fat_secs s and $extra_secs s"
say "Done; stopping the lab"
