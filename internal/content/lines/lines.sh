# shellcheck shell=sh
# line_edits: one line of an existing file changed in place, as Ansible's
# lineinfile does. The file keeps its inode, owner, mode and SELinux label
# (rewritten with cat, not replaced), and is only written when it changes.

# fatimage_line_edit <what> <path> <present|absent> <regexp> <line>
# <section> <create 0|1>. Values reach awk through the environment:
# `awk -v` would take backslashes in a regexp as string escapes.
fatimage_line_edit() {
	if [ ! -e "$2" ]; then
		if [ "$7" != 1 ]; then
			fatimage_cause "$1: $2 does not exist: nothing to edit (set create = true to create it)"
			return 1
		fi
		install -D -o root -g root -m 0644 /dev/null "$2"
	fi
	if [ ! -f "$2" ]; then
		fatimage_cause "$1: $2 is not a regular file"
		return 1
	fi
	le_tmp=$(mktemp "$FATIMAGE_WORKDIR/line-edit.XXXXXX")
	if ! FE_MODE=$3 FE_RE=$4 FE_LINE=$5 FE_SECTION=$6 awk '
		BEGIN {
			mode = ENVIRON["FE_MODE"]; re = ENVIRON["FE_RE"]
			line = ENVIRON["FE_LINE"]; sec = ENVIRON["FE_SECTION"]
			inside = (sec == ""); seclast = 0; last = 0
		}
		{
			l[NR] = $0; hit[NR] = 0
			if (sec != "" && $0 ~ /^[[:space:]]*\[[^]]*\][[:space:]]*$/) {
				name = $0
				sub(/^[[:space:]]*\[/, "", name); sub(/\][[:space:]]*$/, "", name)
				inside = (name == sec && seclast == 0)
				if (inside) seclast = NR
				next
			}
			if (!inside) next
			if (sec != "" && $0 !~ /^[[:space:]]*$/) seclast = NR
			if ((re != "" && $0 ~ re) || (re == "" && $0 == line)) { hit[NR] = 1; last = NR }
		}
		END {
			for (i = 1; i <= NR; i++) {
				if (mode == "absent" && hit[i]) continue
				if (mode == "present" && i == last && re != "") print line
				else print l[i]
				if (mode == "present" && last == 0 && seclast == i) print line
			}
			if (mode == "present" && last == 0 && seclast == 0) {
				if (sec != "") print "[" sec "]"
				print line
			}
		}' "$2" >"$le_tmp"; then
		rm -f "$le_tmp"
		fatimage_cause "$1: editing $2 failed"
		return 1
	fi
	if cmp -s "$le_tmp" "$2"; then
		echo "unchanged $2"
	else
		cat "$le_tmp" >"$2"
		echo "edited $2"
	fi
	rm -f "$le_tmp"
}
