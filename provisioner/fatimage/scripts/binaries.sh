# shellcheck shell=sh
# Release tarballs: fetched and all checked before any is installed.
binaries_bad=0

# fetch_binary URL DST downloads a tarball on the VM.
fetch_binary() {
  echo "downloading $1"
  fatimage_run curl -fsSL --retry 3 --retry-connrefused --connect-timeout 20 -o "$2" "$1"
}

# verify_binary NAME VERSION SHA256 TARBALL URL checks a staged tarball.
verify_binary() {
  name=$1 version=$2 want=$3 tarball=$4 url=$5
  if [ ! -f "$tarball" ]; then
    fatimage_cause "binaries: $name $version: $tarball is missing ($url)"
    binaries_bad=1
    return 0
  fi
  got=$(sha256sum < "$tarball" | cut -d' ' -f1)
  if [ "$got" != "$want" ]; then
    fatimage_cause "binaries: $name $version: sha256 mismatch: want $want, got $got ($url)"
    binaries_bad=1
  fi
}

# verify_binaries_done fails when any check failed.
verify_binaries_done() {
  if [ "$binaries_bad" != 0 ]; then
    echo 'binaries: checksum mismatch; nothing installed' >&2
    exit 1
  fi
  echo 'binaries: all checksums match'
}

# install_binary NAME VERSION TARBALL DEST MODE FILE... unpacks the
# tarball and installs its FILEs (found one directory down) into DEST,
# leaving identical files alone.
install_binary() {
  name=$1 version=$2 tarball=$3 dest=$4 mode=$5
  shift 5
  x=$FATIMAGE_WORKDIR/x-$name
  rm -rf "$x"
  mkdir -p "$x"
  tar -xzf "$tarball" -C "$x" --no-same-owner
  for f in "$@"; do
    dst=${dest%/}/$f
    label="$dst ($name $version)"
    src=$(find "$x" -mindepth 2 -maxdepth 2 -type f -name "$f" | head -n1)
    if [ -z "$src" ]; then
      fatimage_cause "binaries: $f not found in the $name tarball"
      exit 1
    fi
    if cmp -s "$src" "$dst" && [ "$(stat -c %a "$dst")" = "${mode#0}" ]; then
      echo "unchanged $label"
    else
      install -D -o root -g root -m "$mode" "$src" "$dst"
      echo "installed $label"
    fi
  done
  rm -rf "$x" "$tarball"
}
