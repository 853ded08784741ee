#!/usr/bin/env bash
# Installs the Debian packages the project's tests and demo need, when they
# are missing. Safe to run repeatedly; does nothing when all are present.
set -euo pipefail
need=()
for pair in git:git make:make unzip:unzip zip:zip curl:curl sha256sum:coreutils; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair#*:}")
done
command -v go >/dev/null 2>&1 || { echo "deps: Go is required (expected at /usr/local/go/bin)" >&2; exit 1; }
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "deps: missing ${need[*]}; install them with apt-get as root" >&2
  exit 1
fi
echo "deps: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}"
