# shellcheck shell=sh
# Grafana plugins, each unless that version is already there: a pinned
# plugin's checked zip unpacked where grafana-cli puts plugins, the others
# installed with grafana-cli. GRAFANA_REPO, when set, is grafana-cli's
# --repo.
grafana_plugins_dir=${FATIMAGE_SYSROOT:-}/var/lib/grafana/plugins

# grafana_plugin_has DIR VERSION: DIR/plugin.json is that version's.
grafana_plugin_has() {
  # the version as an ERE: its dots and pluses are literal
  version_re=$(printf '%s' "$2" | sed 's/[.+]/\\&/g')
  grep -Eqs "\"version\"[[:space:]]*:[[:space:]]*\"$version_re\"" "$1/plugin.json"
}

# grafana_plugin ID VERSION
grafana_plugin() {
  id=$1 version=$2
  if ! command -v grafana-cli >/dev/null 2>&1; then
    fatimage_cause 'grafana plugins need grafana-cli: install the grafana package (group grafana)'
    exit 1
  fi
  if grafana_plugin_has "$grafana_plugins_dir/$id" "$version"; then
    echo "unchanged grafana plugin $id $version"
    return 0
  fi
  if [ -n "${GRAFANA_REPO:-}" ]; then
    fatimage_run grafana-cli "--repo=$GRAFANA_REPO" plugins install "$id" "$version"
  else
    fatimage_run grafana-cli plugins install "$id" "$version"
  fi
}

# grafana_plugin_zip ID VERSION ZIP unpacks a checked plugin zip into the
# plugin's directory as grafana-cli does: the zip's top directory dropped,
# the plugin's directory replaced as a whole. An identical tree is left
# alone.
grafana_plugin_zip() {
  id=$1 version=$2 zip=$3
  dst=$grafana_plugins_dir/$id
  x=$FATIMAGE_WORKDIR/grafana-plugin-$id.x
  rm -rf "$x"
  py=python3
  if ! command -v python3 >/dev/null 2>&1; then py=/usr/libexec/platform-python; fi
  # zipfile: no unzip on a GenericCloud image; entries escaping the
  # directory are refused, as grafana-cli refuses them
  fatimage_run "$py" - "$zip" "$x" <<'FATIMAGE_PY' || { fatimage_cause "grafana_plugins: $id $version: unpacking the zip failed"; exit 1; }
import os, sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
os.makedirs(dst)
with zipfile.ZipFile(src) as z:
    for info in z.infolist():
        parts = info.filename.split("/")[1:]
        if not parts or parts == [""]:
            continue
        if info.filename.startswith("/") or ".." in parts:
            sys.exit("entry %r escapes the plugin directory" % info.filename)
        out = os.path.join(dst, *parts)
        if info.is_dir():
            os.makedirs(out, exist_ok=True)
            continue
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with z.open(info) as f, open(out, "wb") as o:
            o.write(f.read())
        os.chmod(out, 0o755 if (info.external_attr >> 16) & 0o111 else 0o644)
FATIMAGE_PY
  if ! grafana_plugin_has "$x" "$version"; then
    fatimage_cause "grafana_plugins: $id $version: the zip's plugin.json is not version $version"
    exit 1
  fi
  if [ -d "$dst" ] && diff -r "$x" "$dst" >/dev/null 2>&1; then
    echo "unchanged grafana plugin $id $version"
  else
    rm -rf "$dst"
    mkdir -p "$grafana_plugins_dir"
    chmod -R u=rwX,go=rX "$x"
    mv "$x" "$dst"
    echo "installed grafana plugin $id $version into $dst"
  fi
  rm -rf "$x" "$zip"
}
