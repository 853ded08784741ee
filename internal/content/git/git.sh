# shellcheck shell=sh
# The git_checkouts kind: fetched and verified before any package work
# (fatimage_git_fetch), put in place after it (fatimage_git_install).
# safe.directory: root works on checkouts owned by other users.

fatimage_git() { git -c safe.directory='*' -c advice.detachedHead=false "$@"; }

# fatimage_git_fetch <what> <source: URL or bundle> <rev> <want commit or ""> <staging>
# fetches every branch and tag into a fresh repository at staging,
# resolves rev to a commit and checks it against the pin.
fatimage_git_fetch() {
	command -v git >/dev/null 2>&1 || {
		fatimage_cause "$1: git is not installed on the VM; install it in the base image or use content_source = \"host\""
		return 1
	}
	rm -rf "$5"
	fatimage_git init -q "$5"
	fatimage_run fatimage_git -C "$5" fetch -q "$2" '+refs/heads/*:refs/remotes/origin/*' '+refs/tags/*:refs/tags/*' || {
		fatimage_cause "$1: fetching failed"
		return 1
	}
	got=$(fatimage_git -C "$5" rev-parse -q --verify "$3^{commit}") || {
		fatimage_cause "$1: $3 is not in the repository"
		return 1
	}
	if [ -n "$4" ] && [ "$got" != "$4" ]; then
		fatimage_cause "$1: $3 is at commit $got, want $4; nothing installed"
		return 1
	fi
	echo "fatimage-git-commit $1 $got"
}

# fatimage_git_install <what> <staging> <commit> <destination> <origin URL> <owner> <group>
# leaves a clean checkout already at the commit alone; otherwise replaces
# the destination with the staged repository checked out at the commit.
fatimage_git_install() {
	if [ -d "$4/.git" ] && [ "$(fatimage_git -C "$4" rev-parse HEAD 2>/dev/null)" = "$3" ] &&
		[ -z "$(fatimage_git -C "$4" status --porcelain 2>/dev/null)" ] &&
		[ "$(stat -c %U:%G "$4")" = "$6:$7" ]; then
		rm -rf "$2"
		echo "unchanged $4 ($3)"
		return 0
	fi
	fatimage_git -C "$2" checkout -q --detach "$3"
	fatimage_git -C "$2" remote add origin "$5"
	rm -rf "$4"
	mkdir -p "$(dirname "$4")"
	mv "$2" "$4"
	chown -R "$6:$7" "$4"
	echo "installed $4 at $3"
}
