#!/usr/bin/env bash
# Checks that a GoReleaser dist dir has exactly the asset layout `packer init`
# installs from, so a broken .goreleaser.yml is caught before publishing.
#
# Usage: scripts/release-check.sh [DIST_DIR]      (default: dist)
# Env:   API_VERSION  plugin API version in the names (default x5.0)
#        PACKER       packer binary: install the linux/amd64 archive's plugin
#                     with it and validate example/ and example/extra
#        VERSION      expected version without "v" (default: taken from the
#                     single packer-plugin-fatimage_v*_SHA256SUMS in DIST_DIR)
#        REQUIRE_SIGNATURE=1  the SHA256SUMS must have a detached signature
#                     (<sums>.sig) that gpg verifies with a key of GNUPGHOME
set -euo pipefail

name=packer-plugin-fatimage
dist=${1:-dist}
api=${API_VERSION:-x5.0}

fail() { echo "release-check: FAIL: $*" >&2; exit 1; }

for tool in unzip sha256sum awk; do
  command -v "$tool" >/dev/null || fail "'$tool' is not installed"
done
[[ -d $dist ]] || fail "dist dir '$dist' does not exist"

# The version is only known to GoReleaser (tag or snapshot template), so read
# it back from the checksum file name unless the caller pins it.
if [[ -n ${VERSION:-} ]]; then
  version=${VERSION#v}
else
  shopt -s nullglob
  sums_found=("$dist/${name}_v"*_SHA256SUMS)
  shopt -u nullglob
  ((${#sums_found[@]} == 1)) ||
    fail "expected exactly one ${name}_v*_SHA256SUMS in $dist, found ${#sums_found[@]}"
  version=${sums_found[0]##*/"${name}_v"}
  version=${version%_SHA256SUMS}
fi
sums=${name}_v${version}_SHA256SUMS
[[ -f $dist/$sums ]] || fail "missing $dist/$sums"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

n=0
for os in linux darwin windows; do
  for arch in amd64 arm64; do
    base=${name}_v${version}_${api}_${os}_${arch}
    zip=$base.zip
    bin=$base
    [[ $os == windows ]] && bin+=.exe
    [[ -f $dist/$zip ]] || fail "missing $dist/$zip"
    listing=$(unzip -Z1 "$dist/$zip") || fail "cannot list $dist/$zip"
    [[ $listing == "$bin" ]] ||
      fail "$zip must contain only '$bin', contains: ${listing//$'\n'/ }"
    [[ $(awk -v f="$zip" '$2 == f' "$dist/$sums" | wc -l) == 1 ]] ||
      fail "$zip is not listed exactly once in $sums"
    n=$((n + 1))
  done
done

# Packer reads every entry, so stray ones (stale or extra assets) are errors.
lines=$(wc -l <"$dist/$sums")
((lines == n)) || fail "$sums has $lines entries, expected $n: $(awk '{print $2}' "$dist/$sums" | tr '\n' ' ')"
(cd "$dist" && sha256sum --strict --quiet -c "$sums") >&2 ||
  fail "checksum mismatch in $sums"

# The integrations registry wants the SHA256SUMS signed; packer init itself
# reads only the sums.
signed="unsigned"
if [[ -f $dist/$sums.sig ]]; then
  command -v gpg >/dev/null || fail "'gpg' is not installed"
  gpg --batch --verify "$dist/$sums.sig" "$dist/$sums" 2>"$tmp/gpg.out" ||
    fail "the signature $sums.sig does not verify: $(cat "$tmp/gpg.out")"
  signed="$sums.sig verified"
elif [[ ${REQUIRE_SIGNATURE:-} == 1 ]]; then
  fail "missing $dist/$sums.sig (the signed SHA256SUMS)"
fi

# Only a native binary can be run; cross-built ones are covered by the above.
describe="describe skipped (host is $(uname -s)/$(uname -m), not Linux/x86_64)"
if [[ $(uname -s) == Linux && $(uname -m) == x86_64 ]]; then
  base=${name}_v${version}_${api}_linux_amd64
  unzip -q -d "$tmp" "$dist/$base.zip"
  out=$(timeout 60 "$tmp/$base" describe) || fail "$base describe failed"
  # Compact JSON from the SDK; a leading quote keeps "sdk_version" from matching.
  got_ver=$(grep -o '"version":"[^"]*"' <<<"$out" | head -n1 | cut -d'"' -f4)
  got_api=$(grep -o '"api_version":"[^"]*"' <<<"$out" | head -n1 | cut -d'"' -f4)
  [[ $got_ver == "$version" ]] ||
    fail "describe reports version '$got_ver', expected '$version' (output: $out)"
  [[ $got_api == "$api" ]] ||
    fail "describe reports api_version '$got_api' but assets are named for '$api' (set API_VERSION)"
  describe="describe ok (version=$got_ver api_version=$got_api)"

  # What a user does with the archive: install it with packer and validate
  # the examples (no cloud or Pulp is contacted at validate time).
  if [[ -n ${PACKER:-} ]]; then
    export PACKER_PLUGIN_PATH=$tmp/plugins PACKER_CONFIG_DIR=$tmp/config CHECKPOINT_DISABLE=1
    "$PACKER" plugins install --path "$tmp/$base" github.com/stackhpc/fatimage >/dev/null ||
      fail "packer plugins install --path $base failed"
    root=$(cd "$(dirname "$0")/.." && pwd)
    for dir in example example/extra; do
      env ARK_CONTENT_URL=http://127.0.0.1:9/pulp/content OS_AUTH_URL=http://127.0.0.1:9/identity/v3 \
        OS_USERNAME=u OS_PASSWORD=p OS_PROJECT_NAME=p OS_USER_DOMAIN_NAME=Default OS_PROJECT_DOMAIN_NAME=Default \
        "$PACKER" validate -var-file="$root/example/lab.pkrvars.hcl" "$root/$dir" >"$tmp/validate.out" 2>&1 ||
        fail "packer validate $dir with the installed $base: $(cat "$tmp/validate.out")"
    done
    describe+="; installed with packer plugins install --path, example and example/extra validate"
  fi
fi

echo "release-check: OK: $n zips + $sums verified in $dist, $signed; $describe"
