# shellcheck shell=sh
# Grafana plugins installed with grafana-cli unless that version is
# already there.
if ! command -v grafana-cli >/dev/null 2>&1; then
  fatimage_cause 'grafana plugins need grafana-cli: install the grafana package (group grafana)'
  exit 1
fi

# grafana_plugin ID VERSION
grafana_plugin() {
  id=$1 version=$2
  # the version as an ERE: its dots and pluses are literal
  version_re=$(printf '%s' "$version" | sed 's/[.+]/\\&/g')
  if grep -Eqs "\"version\"[[:space:]]*:[[:space:]]*\"$version_re\"" "/var/lib/grafana/plugins/$id/plugin.json"; then
    echo "unchanged grafana plugin $id $version"
  else
    fatimage_run grafana-cli plugins install "$id" "$version"
  fi
}
