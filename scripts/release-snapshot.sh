#!/usr/bin/env bash
# make release-snapshot: what .github/workflows/release.yml publishes, built
# locally as a snapshot of version/version.go's version ("X.Y.Z-dev") and
# checked by scripts/release-check.sh: the zips packer init installs, the
# SHA256SUMS, and its detached signature.
#
# The plugin API version in the names comes from the plugin's own
# `describe`, as in the release workflow. Without GPG_FINGERPRINT the
# SHA256SUMS is signed by a throwaway key made in a temporary GNUPGHOME, so
# the signing configuration of .goreleaser.yml runs here as in a release.
#
# Env: GORELEASER (default .tools/bin/goreleaser), PACKER (passed to
#      release-check.sh), GPG_FINGERPRINT (sign with this key instead).
set -euo pipefail
cd "$(dirname "$0")/.."
goreleaser=${GORELEASER:-$PWD/.tools/bin/goreleaser}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

version=$(sed -n 's/^\tVersion = "\(.*\)"$/\1/p' version/version.go)
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "release-snapshot: no X.Y.Z Version in version/version.go" >&2; exit 1; }

go build -o "$tmp/plugin" .
api=$("$tmp/plugin" describe | grep -o '"api_version":"[^"]*"' | cut -d'"' -f4)
[[ -n $api ]] || { echo "release-snapshot: describe reports no api_version" >&2; exit 1; }

if [[ -z ${GPG_FINGERPRINT:-} ]]; then
  export GNUPGHOME=$tmp/gnupg
  mkdir -m 700 "$GNUPGHOME"
  # the agent gpg starts for this home goes with it
  trap 'gpgconf --kill gpg-agent >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
  gpg --batch --quiet --passphrase '' --quick-gen-key 'fatimage release snapshot <snapshot@invalid>' ed25519 sign 1d
  GPG_FINGERPRINT=$(gpg --batch --with-colons --list-secret-keys | awk -F: '$1 == "fpr" {print $10; exit}')
fi
export GPG_FINGERPRINT API_VERSION=$api SNAPSHOT_VERSION=$version

# six cross builds on a loaded 2-core machine took an hour; the default
# timeout cut signing short
"$goreleaser" release --snapshot --clean --timeout 90m
REQUIRE_SIGNATURE=1 ./scripts/release-check.sh dist
