# shellcheck shell=sh
# Container images: the digest of each image is resolved from the
# registry and checked against its pin before any package work
# (fatimage_oci_resolve, with curl: podman may not be installed yet);
# after the packages, the image is pulled by that digest (or loaded from
# the archive the plugin fetched) into its user's podman storage and
# tagged (fatimage_podman_image).

FATIMAGE_OCI_ACCEPT='application/vnd.oci.image.manifest.v1+json, application/vnd.oci.image.index.v1+json, application/vnd.docker.distribution.manifest.v2+json, application/vnd.docker.distribution.manifest.list.v2+json'

# fatimage_oci_get <out> <url> <insecure 0|1> <curl config or ""> [curl args...]
# fetches a manifest into out (headers into out.headers); prints the
# HTTP status.
fatimage_oci_get() {
	_out=$1 _url=$2 _k=$3 _cfg=$4
	shift 4
	[ "$_k" = 0 ] || set -- "$@" -k
	[ -z "$_cfg" ] || set -- "$@" -K "$_cfg"
	curl -sS --retry 3 --retry-connrefused --connect-timeout 20 -o "$_out" -D "$_out.headers" -w '%{http_code}' \
		-H "Accept: $FATIMAGE_OCI_ACCEPT" "$@" "$_url"
}

# fatimage_oci_token <realm> <service> <repo> <insecure 0|1> <curl config or "">
# prints a pull token from a Bearer challenge's realm.
fatimage_oci_token() {
	_realm=$1 _service=$2 _repo=$3 _k=$4 _cfg=$5
	set -- -G --data-urlencode "scope=repository:$_repo:pull"
	[ -z "$_service" ] || set -- "$@" --data-urlencode "service=$_service"
	[ "$_k" = 0 ] || set -- "$@" -k
	[ -z "$_cfg" ] || set -- "$@" -K "$_cfg"
	curl -sS -f --connect-timeout 20 "$@" "$_realm" |
		sed -n 's/.*"\(access_\)\{0,1\}token" *: *"\([^"]*\)".*/\2/p' | head -n 1
}

# fatimage_oci_resolve <what> <registry> <repo> <tag or digest> <want digest or ""> <insecure 0|1> <curl config or "">
# prints "fatimage-container-digest <what> <digest>": the sha256 of the
# manifest the registry serves for the reference. A Bearer challenge
# (Docker Hub, most public registries) is answered with a pull token.
fatimage_oci_resolve() {
	what=$1 host=$2 repo=$3 ref=$4 want=$5 insecure=$6 cfg=$7
	[ "$host" != docker.io ] || host=registry-1.docker.io
	body="$FATIMAGE_WORKDIR/manifest"
	url="https://$host/v2/$repo/manifests/$ref"
	if ! code=$(fatimage_oci_get "$body" "$url" "$insecure" "$cfg" 2>"$body.err"); then
		code=000
		if [ "$insecure" = 1 ]; then
			# an insecure registry may speak plain HTTP; podman then tries it too
			url="http://$host/v2/$repo/manifests/$ref"
			code=$(fatimage_oci_get "$body" "$url" "$insecure" "$cfg" 2>"$body.err") || code=000
		fi
	fi
	if [ "$code" = 401 ]; then
		challenge=$(sed -n 's/^[Ww][Ww][Ww]-[Aa]uthenticate: *[Bb]earer *//p' "$body.headers" | tr -d '\r')
		if [ -n "$challenge" ]; then
			realm=$(printf '%s\n' "$challenge" | sed -n 's/.*realm="\([^"]*\)".*/\1/p')
			service=$(printf '%s\n' "$challenge" | sed -n 's/.*service="\([^"]*\)".*/\1/p')
			token=$(fatimage_oci_token "$realm" "$service" "$repo" "$insecure" "$cfg") || token=
			# the header goes on curl's stdin (printf is a builtin): a
			# token in curl's arguments is in ps for every user to read
			code=$(printf 'Authorization: Bearer %s\n' "$token" |
				fatimage_oci_get "$body" "$url" "$insecure" "" -H @- 2>"$body.err") || code=000
		fi
	fi
	case $code in
	200) ;;
	000)
		fatimage_cause "$what: cannot reach $2 ($(head -c 300 "$body.err"))"
		rm -f "$body" "$body.headers" "$body.err"
		return 1
		;;
	401 | 403)
		fatimage_cause "$what: $2 refused access to $repo (HTTP $code): check container_registries' username and password"
		rm -f "$body" "$body.headers" "$body.err"
		return 1
		;;
	*)
		fatimage_cause "$what: $2 has no manifest $repo:$ref (HTTP $code)"
		rm -f "$body" "$body.headers" "$body.err"
		return 1
		;;
	esac
	got="sha256:$(sha256sum "$body" | cut -d' ' -f1)"
	rm -f "$body" "$body.headers" "$body.err"
	if [ -n "$want" ] && [ "$got" != "$want" ]; then
		fatimage_cause "$what: $2/$repo:$ref has digest $got, want $want; nothing installed"
		return 1
	fi
	echo "fatimage-container-digest $what $got"
}

# fatimage_podman <user> <home> podman-args...: runs podman as the user,
# rootless (storage under the home) for any user but root, in a clean
# environment as a login would have it, with the site's proxy (read from
# a copy only the user reads, on the tmpfs: never in an argument).
fatimage_podman() {
	_u=$1 _h=$2
	shift 2
	if [ "$_u" = root ]; then
		fatimage_run podman "$@"
		return
	fi
	_pf=/dev/null
	if [ -f "$FATIMAGE_SECRETDIR/proxy.env" ]; then
		_pf=$(mktemp "$FATIMAGE_SECRETDIR-proxy.XXXXXX")
		cat "$FATIMAGE_SECRETDIR/proxy.env" >"$_pf"
		chown "$_u" "$_pf"
	fi
	_rc=0
	# shellcheck disable=SC2016 # the inner shell expands them
	(cd "$_h" && fatimage_run runuser -u "$_u" -- env -i HOME="$_h" USER="$_u" LOGNAME="$_u" \
		PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin \
		sh -c 'set -a && . "$1" && set +a && shift && exec "$@"' fatimage-proxy "$_pf" \
		podman --cgroup-manager=cgroupfs "$@") || _rc=$?
	[ "$_pf" = /dev/null ] || rm -f "$_pf"
	return "$_rc"
}

# fatimage_has_digest <user> <home> <image> <digest>: the image is in the
# user's storage with that digest (its own, or the list's it came from).
fatimage_has_digest() {
	_have=$(fatimage_podman "$1" "$2" image inspect --format '{{.Digest}} {{range .RepoDigests}}{{.}} {{end}}' "$3" 2>/dev/null) || return 1
	case " $_have " in
	*" $4 "* | *"@$4 "*) return 0 ;;
	esac
	return 1
}

# fatimage_podman_image <what> <user> <name> <digest> <tag or ""> <insecure 0|1> <auth file or ""> <archive or "">
# leaves name@digest (tagged name:tag) in the user's storage: already
# there, pulled from the registry, or loaded from the uploaded archive;
# then checks the digest podman reports.
fatimage_podman_image() {
	what=$1 user=$2 name=$3 digest=$4 tag=$5 insecure=$6 auth=$7 archive=$8
	command -v podman >/dev/null 2>&1 || {
		fatimage_cause "$what: podman is not installed on the VM; add it to packages (or a group that has it)"
		return 1
	}
	home=$(getent passwd "$user" | cut -d: -f6) || { fatimage_cause "$what: user $user does not exist on the VM"; return 1; }
	[ -d "$home" ] || { fatimage_cause "$what: the home $home of $user does not exist (rootless storage lives there)"; return 1; }
	want=$name
	[ -z "$tag" ] || want="$name:$tag"
	if fatimage_has_digest "$user" "$home" "$want" "$digest"; then
		echo "unchanged $want ($digest) for $user"
		[ -z "$archive" ] || rm -f "$archive"
		return 0
	fi
	if [ -n "$archive" ]; then
		# root opens the private archive; podman reads it on stdin
		fatimage_podman "$user" "$home" load -q <"$archive" >/dev/null || {
			rm -f "$archive"
			fatimage_cause "$what: podman load of the uploaded archive failed"
			return 1
		}
		rm -f "$archive"
	else
		set -- pull -q --tls-verify="$([ "$insecure" = 1 ] && echo false || echo true)"
		af=
		if [ -n "$auth" ]; then
			# a copy only the user reads, on the tmpfs /run (next to the
			# secret dir, removed with it when the script ends), removed
			# whatever the pull does
			af=$(mktemp "$FATIMAGE_SECRETDIR-auth.XXXXXX")
			cat "$auth" >"$af"
			chown "$user" "$af"
			set -- "$@" --authfile "$af"
		fi
		if ! fatimage_podman "$user" "$home" "$@" "$name@$digest" >/dev/null; then
			[ -z "$af" ] || rm -f "$af"
			fatimage_cause "$what: podman pull $name@$digest as $user failed"
			return 1
		fi
		[ -z "$af" ] || rm -f "$af"
	fi
	[ -z "$tag" ] || fatimage_podman "$user" "$home" tag "$name@$digest" "$want"
	if ! fatimage_has_digest "$user" "$home" "$want" "$digest"; then
		fatimage_cause "$what: $want in $user's storage does not have digest $digest"
		return 1
	fi
	echo "installed $want ($digest) for $user"
}
