#!/usr/bin/env bash
# Holds a release tag to the tree it tags, before .github/workflows/release.yml
# publishes anything, and prints the release notes: the CHANGELOG's section
# for that version.
#
# Usage: scripts/release-preflight.sh vX.Y.Z [ROOT]   (ROOT: the checkout)
# The tree must have version/version.go's Version = "X.Y.Z" and a dated
# CHANGELOG.md section "## X.Y.Z - YYYY-MM-DD" with at least one entry.
set -euo pipefail

fail() { echo "release-preflight: $*" >&2; exit 1; }

tag=${1:-}
root=${2:-$(cd "$(dirname "$0")/.." && pwd)}
[[ $tag =~ ^v([0-9]+\.[0-9]+\.[0-9]+)$ ]] || fail "tag '$tag' is not of the form vX.Y.Z"
version=${BASH_REMATCH[1]}

have=$(sed -n 's/^\tVersion = "\(.*\)"$/\1/p' "$root/version/version.go")
[[ $have == "$version" ]] ||
  fail "version/version.go has Version = \"$have\"; the tag $tag needs \"$version\""

# Dots are literal in the heading; the section ends at the next "## ".
heading="## ${version//./\\.} - [0-9]{4}-[0-9]{2}-[0-9]{2}\$"
line=$(grep -En "^$heading" "$root/CHANGELOG.md" | head -n1 | cut -d: -f1) || true
[[ -n $line ]] ||
  fail "CHANGELOG.md has no dated section '## $version - YYYY-MM-DD' (rename '## Unreleased')"
notes=$(tail -n +"$((line + 1))" "$root/CHANGELOG.md" | awk '/^## / { exit } { print }')
grep -q '^- ' <<<"$notes" || fail "the CHANGELOG section of $version lists no change"
printf '%s\n' "$notes"
