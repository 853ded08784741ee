#!/usr/bin/env bash
# Lays rendered docs (packer-sdc renderdocs output) out the way the Packer
# integrations site reads them from .web-docs/: the plugin README plus one
# README.md per component, front matter removed.
#   usage: compile-web-docs.sh <rendered-docs-dir> <web-docs-dir>
set -euo pipefail
src=${1:?rendered docs dir}
dst=${2:?web docs dir}

strip_front_matter() { awk 'NR==1 && /^---$/ {fm=1; next} fm && /^---$/ {fm=0; next} !fm' "$1"; }

rm -rf "$dst/components"
mkdir -p "$dst/components"
cp docs/README.md "$dst/README.md"
for kind in builders:builder provisioners:provisioner datasources:data-source post-processors:post-processor; do
  dir=${kind%%:*} type=${kind#*:}
  [ -d "$src/$dir" ] || continue
  for page in "$src/$dir"/*.mdx; do
    name=$(basename "$page" .mdx)
    mkdir -p "$dst/components/$type/$name"
    strip_front_matter "$page" >"$dst/components/$type/$name/README.md"
  done
done
