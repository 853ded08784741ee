#!/usr/bin/env bash
# Installs the independent CycloneDX validator the SBOM tests run
# (internal/sbom TestSchema*): ajv-cli with ajv-formats, and the
# CycloneDX JSON schemas as @cyclonedx/cyclonedx-library ships them, from
# the npm registry at pinned versions, into $FATIMAGE_NPM_DIR
# (default ~/.cache/fatimage-npm). Safe to run repeatedly; quick when done.
set -euo pipefail
dir=${FATIMAGE_NPM_DIR:-$HOME/.cache/fatimage-npm}
pins=(ajv-cli@5.0.0 ajv-formats@3.0.1 @cyclonedx/cyclonedx-library@10.3.0)
stamp="$dir/.pins"
if [ -x "$dir/node_modules/.bin/ajv" ] && [ "$(cat "$stamp" 2>/dev/null)" = "${pins[*]}" ]; then
  exit 0
fi
command -v npm >/dev/null 2>&1 || { echo "sbom-validator: npm is required (Debian package npm, or NodeSource's nodejs)" >&2; exit 1; }
mkdir -p "$dir"
echo "sbom-validator: installing ${pins[*]} into $dir"
npm install --prefix "$dir" --no-audit --no-fund --silent --omit=optional "${pins[@]}"
echo "${pins[*]}" > "$stamp"
