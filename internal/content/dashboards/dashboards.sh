# shellcheck shell=sh
# The grafana_dashboards kind: a staged (and, when pinned, verified) dashboard
# JSON gets its datasource placeholders replaced and is put in place for
# Grafana's file provider, grafana:grafana 0640 in a 0755 directory.

# fatimage_grafana_dashboard <what> <staged> <destination> [<placeholder> <name>]...
# reports "DASHBOARD <what> <sha256 as fetched>". A placeholder matches as
# a whole JSON string, bare or as ${...}, like the appliance's rule.
fatimage_grafana_dashboard() {
	what=$1 staged=$2 dst=$3
	shift 3
	[ -f "$staged" ] || { fatimage_cause "$what: $staged is missing; nothing installed"; return 1; }
	sum=$(sha256sum "$staged" | cut -d' ' -f1)
	fatimage_dashboard_replace "$staged" "$@" || { fatimage_cause "$what: replacing the placeholders failed"; return 1; }
	dir=${dst%/*}
	install -d -o grafana -g grafana -m 0755 "$dir"
	if cmp -s "$staged" "$dst" && [ "$(stat -c %U:%G:%a "$dst")" = "grafana:grafana:640" ]; then
		echo "unchanged $dst"
	else
		install -o grafana -g grafana -m 0640 "$staged" "$dst"
		echo "installed $dst"
	fi
	rm -f "$staged"
	echo "DASHBOARD $what $sum"
}

# fatimage_dashboard_replace <file> [<placeholder> <name>]...: every JSON
# string "<placeholder>" or "${<placeholder>}" in file becomes "<name>"
# (placeholders and names are checked by the plugin: no sed metacharacters).
fatimage_dashboard_replace() {
	f=$1
	shift
	while [ $# -ge 2 ]; do
		sed -i -E "s/\"(\\\$\\{)?$1\\}?\"/\"$2\"/g" "$f" || return 1
		shift 2
	done
}
