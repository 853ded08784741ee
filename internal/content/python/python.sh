# shellcheck shell=sh
# Python environments: a venv created with the given interpreter (or the
# interpreter itself with system = true), requirements installed with pip
# from the index (vm) or only from wheels the plugin uploaded (host).
# pip checks --hash pins itself (--require-hashes when the file has any)
# and keeps no cache in the image.

# fatimage_pip <what> <interpreter> <venv or ""> <requirements> <index> <extra index> <wheel dir or ""> <owner> <group>
fatimage_pip() {
	umask 022
	if [ -n "$3" ]; then
		command -v "$2" >/dev/null 2>&1 || { fatimage_cause "$1: interpreter $2 is not installed on the VM"; return 1; }
		if [ ! -x "$3/bin/python" ]; then
			fatimage_run "$2" -m venv "$3" || { fatimage_cause "$1: creating the venv failed"; return 1; }
		fi
		py="$3/bin/python"
	else
		py=$2
	fi
	"$py" -m pip --version >/dev/null 2>&1 || { fatimage_cause "$1: pip is not available for $py (package python3-pip)"; return 1; }
	before=$("$py" -m pip freeze --all 2>/dev/null | sort)
	set -- "$@" --no-input --disable-pip-version-check --no-cache-dir
	if [ -n "$7" ]; then
		set -- "$@" --no-index --find-links "$7"
	else
		set -- "$@" --index-url "$5"
		[ -z "$6" ] || set -- "$@" --extra-index-url "$6"
		# pip ignores a plain-http index unless its host is trusted; the
		# template accepted it (python_index_insecure; hash pins still protect
		# the content)
		for u in "$5" "$6"; do
			case "$u" in
			http://*) h=${u#http://}; set -- "$@" --trusted-host "${h%%/*}" ;;
			esac
		done
	fi
	what=$1 venv=$3 req=$4 owner=$8 group=$9
	shift 9
	fatimage_run env PIP_CONFIG_FILE=/dev/null "$py" -m pip install "$@" -r "$req" || { fatimage_cause "$what: pip install failed"; return 1; }
	[ -z "$venv" ] || chown -R "$owner:$group" "$venv"
	after=$("$py" -m pip freeze --all 2>/dev/null | sort)
	if [ "$before" = "$after" ]; then
		echo "unchanged ${venv:-$py} (python packages)"
	else
		echo "installed python packages into ${venv:-$py}"
	fi
}

# fatimage_pip_git_commit <what> <python> <name>: prints
# "python-git-commit <what> <name> <commit>", the commit pip recorded
# (direct_url.json) for a distribution installed from git.
fatimage_pip_git_commit() {
	c=$("$2" -c 'import importlib.metadata as m, json, sys
d = json.loads(m.distribution(sys.argv[1]).read_text("direct_url.json") or "{}")
print(d.get("vcs_info", {}).get("commit_id", ""))' "$3") || { fatimage_cause "$1: $3 is not installed in $2's environment"; return 1; }
	echo "python-git-commit $1 $3 $c"
}
