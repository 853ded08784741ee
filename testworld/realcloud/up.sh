#!/usr/bin/env bash
# make realcloud-up: Debian's real OpenStack (Keystone, Glance, Placement,
# Nova, Neutron, Cinder) on loopback, with MariaDB and RabbitMQ, all state
# in $REALCLOUD_DIR (default .realcloud/). Idempotent: packages are
# installed and databases synced once; a second run starts only what is
# not running.

# shellcheck source=testworld/realcloud/lib.sh
. "$(dirname "$0")/lib.sh"

T0=$(date +%s)
timing() { log "$1 after $(($(date +%s) - T0))s"; }

# missing_packages prints the tier's packages that are not installed.
missing_packages() {
	local p
	while read -r p; do
		[[ -z $p || $p == \#* ]] && continue
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"
	done <"$HERE/packages.txt"
}

# download_packages (up.sh --download-only) fetches the missing packages
# into apt's cache without installing any: CI runs it beside the lab's tests
# (the network, not the CPU), so the tier's install later only unpacks.
download_packages() {
	local missing
	mapfile -t missing < <(missing_packages)
	((${#missing[@]} == 0)) && return 0
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --download-only --no-install-recommends "${missing[@]}" >/dev/null
	timing "packages downloaded"
}

install_packages() {
	local missing
	mapfile -t missing < <(missing_packages)
	((${#missing[@]} == 0)) && return 0
	log "installing ${missing[*]}"
	# Debian's maintainer scripts would start every service (on the
	# default ports, as the distribution's users): forbid it for this run.
	local policy=/usr/sbin/policy-rc.d own_policy=
	if [[ ! -e $policy ]]; then
		printf '#!/bin/sh\nexit 101\n' >"$policy"
		chmod +x "$policy"
		own_policy=$policy
		# removed however this run ends
		trap 'rm -f "$own_policy"' EXIT
	fi
	# A fresh machine (CI) may have stale or no package lists; answers
	# to debconf questions are the defaults, and a conffile a package
	# ships is never asked about.
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-confdef \
		-o Dpkg::Options::=--force-confold "${missing[@]}" >"$LOG/apt.log" 2>&1 ||
		die "apt-get install failed: $(tail -5 "$LOG/apt.log")"
	if [[ -n $own_policy ]]; then
		rm -f "$own_policy"
		trap - EXIT
	fi
	timing "packages installed"
}

secret() {
	local f=$STATE/secrets/$1
	if [[ ! -s $f ]]; then
		head -c 18 /dev/urandom | base64 | tr -d '/+=' >"$f"
	fi
	cat "$f"
}

# start NAME CMD...: run CMD in its own session in the background, log and
# pid in the state dir, unless NAME already runs.
start() {
	local name=$1
	shift
	pid_alive "$name" && return 0
	setsid "$@" >>"$LOG/$name.log" 2>&1 </dev/null &
	echo $! >"$RUN/$name.pid"
}

mysql_root() { mariadb --no-defaults --socket="$RUN/mysql.sock" -uroot "$@"; }
mysql_quiet() { mysql_root -e 'select 1' >/dev/null 2>&1; }

start_mariadb() {
	if [[ ! -d $STATE/mysql/mysql ]]; then
		mariadb-install-db --no-defaults --datadir="$STATE/mysql" --user=root \
			--auth-root-authentication-method=socket >"$LOG/mariadb-install.log" 2>&1
	fi
	start mariadb mariadbd --no-defaults --datadir="$STATE/mysql" --user=root \
		--socket="$RUN/mysql.sock" --port="$PORT_MYSQL" --bind-address="$HOST" \
		--pid-file="$RUN/mariadbd.pid" --character-set-server=utf8mb4 \
		--collation-server=utf8mb4_general_ci --max-connections=1000 \
		--innodb-buffer-pool-size=128M --innodb-flush-log-at-trx-commit=2 \
		--skip-log-bin
	wait_for mariadb 60 mysql_quiet
	local db pw
	pw=$(secret db)
	for db in keystone glance placement nova_api nova nova_cell0 neutron cinder; do
		mysql_root -e "CREATE DATABASE IF NOT EXISTS $db"
	done
	mysql_root -e "CREATE USER IF NOT EXISTS 'realcloud'@'127.0.0.1' IDENTIFIED BY '$pw';
		GRANT ALL PRIVILEGES ON *.* TO 'realcloud'@'127.0.0.1'; FLUSH PRIVILEGES"
}

start_rabbitmq() {
	mkdir -p "$STATE/rabbitmq/mnesia"
	: >"$STATE/rabbitmq/enabled_plugins"
	# Erlang's distribution port too listens on loopback only.
	echo '[{kernel, [{inet_dist_use_interface, {127,0,0,1}}]}].' >"$STATE/rabbitmq/advanced.config"
	: >"$STATE/rabbitmq/rabbitmq-env.conf"
	printf 'loopback_users.guest = true\nlisteners.tcp.default = %s:%s\n' "$HOST" "$PORT_AMQP" >"$STATE/rabbitmq/rabbitmq.conf"
	# The Erlang cookie lives in HOME: the state dir's, not root's.
	HOME=$STATE/rabbitmq start rabbitmq /usr/lib/rabbitmq/bin/rabbitmq-server
	# The AMQP listener opens once the broker has booted.
	wait_for rabbitmq 90 port_open "$PORT_AMQP"
}

# Keystone's own cache and the services' token checks, shared by every
# process: without a cache Keystone made about 500 queries to validate one
# token (2 to 4 s each), and a per-process cache would keep a revoked
# token valid in the other processes (Keystone stores its invalidations
# in the cache backend).
start_memcached() {
	start memcached memcached -u root -l "$HOST" -p "$PORT_MEMCACHED" -U 0 -m 64
	wait_for memcached 30 port_open "$PORT_MEMCACHED"
}

write_configs() {
	local dbpw db rpc
	dbpw=$(secret db)
	db="mysql+pymysql://realcloud:$dbpw@$HOST:$PORT_MYSQL"
	rpc="rabbit://guest:guest@$HOST:$PORT_AMQP/"
	mkdir -p "$ETC"
	FATCLOUD_DB=$db FATCLOUD_RPC=$rpc "$STATE/bin/realcloud" configs
}

db_sync() {
	local done=$STATE/synced
	mkdir -p "$done"
	if [[ ! -e $done/keystone ]]; then
		keystone-manage --config-file "$ETC/keystone.conf" db_sync
		keystone-manage --config-file "$ETC/keystone.conf" fernet_setup --keystone-user root --keystone-group root
		keystone-manage --config-file "$ETC/keystone.conf" credential_setup --keystone-user root --keystone-group root
		keystone-manage --config-file "$ETC/keystone.conf" bootstrap --bootstrap-password "$(secret admin)" \
			--bootstrap-admin-url "http://$HOST:$PORT_KEYSTONE/v3/" \
			--bootstrap-internal-url "http://$HOST:$PORT_KEYSTONE/v3/" \
			--bootstrap-public-url "http://$HOST:$PORT_KEYSTONE/v3/" \
			--bootstrap-region-id RegionOne
		touch "$done/keystone"
	fi
	if [[ ! -e $done/glance ]]; then
		glance-manage --config-file "$ETC/glance-api.conf" db_sync
		touch "$done/glance"
	fi
	if [[ ! -e $done/placement ]]; then
		placement-manage --config-file "$ETC/placement/placement.conf" db sync
		touch "$done/placement"
	fi
	if [[ ! -e $done/neutron ]]; then
		neutron-db-manage --config-file "$ETC/neutron.conf" --config-file "$ETC/ml2_conf.ini" upgrade heads
		touch "$done/neutron"
	fi
	if [[ ! -e $done/nova ]]; then
		local n=(nova-manage --config-file "$ETC/nova.conf")
		"${n[@]}" api_db sync
		"${n[@]}" cell_v2 map_cell0 --database_connection "mysql+pymysql://realcloud:$(secret db)@$HOST:$PORT_MYSQL/nova_cell0"
		"${n[@]}" cell_v2 list_cells | grep -q ' cell1 ' || "${n[@]}" cell_v2 create_cell --name cell1
		"${n[@]}" db sync
		touch "$done/nova"
	fi
	if [[ ! -e $done/cinder ]]; then
		cinder-manage --config-file "$ETC/cinder.conf" db sync
		touch "$done/cinder"
	fi
	timing "databases synced"
}

# uwsgi_app NAME PORT WSGI-FILE ENV...: a WSGI API under uwsgi's HTTP
# socket. uwsgi's plain HTTP socket does not keep connections alive, and
# without "Connection: close" clients reuse a connection it has dropped.
uwsgi_app() {
	local name=$1 port=$2 file=$3
	shift 3
	start "$name" env "$@" uwsgi --plugin python3 --http-socket "$HOST:$port" \
		--wsgi-file "$file" --master --processes 2 --threads 1 --die-on-term \
		--add-header 'Connection: close' --buffer-size 65535 --lazy-apps \
		--pidfile "$RUN/$name.uwsgi.pid"
}

# py SERVICE ARGS...: a service through python/launch.py, with the fatcloud
# drivers on its path.
py() {
	start "$1" env PYTHONPATH="$HERE/python" FATCLOUD_DISK_DIR="$STATE/disks" FATCLOUD_GUEST_SOCKET="$RUN/guests.sock" \
		/usr/bin/python3 "$HERE/python/launch.py" "$@"
}

# The guest host: the lab's VMs Nova's driver boots. Its first start
# builds the VM userland (cached with the lab's) and the guest base image.
start_guests() {
	start guests "$STATE/bin/realcloud" guests
	wait_for "the guest host" 900 test -S "$RUN/guests.sock"
	timing "guest host up"
}

# The provider networks, as a site's hosts reach them: each a bridge (its
# switch) where the host holds an address, the external subnet's gateway
# on the floating IPs' and one outside the allocation pool on the guests'
# (guests.go: GuestNetwork). The Linux bridge agent maps physical network
# ext to the external bridge itself, and guests to an interface, a veth
# into the guests' switch: it makes the network's bridge, brq<network id>,
# with that interface as its uplink, as on a compute host with a NIC per
# provider network, so its firewall's conntrack zones (by that bridge's
# name) hold the router's and the guests' traffic alike.
provider_networks() {
	local br addr
	external_range_free
	for br in "$EXT_BRIDGE:$EXT_ADDRESS" "$GUEST_BRIDGE:$GUEST_ADDRESS"; do
		addr=${br#*:} br=${br%%:*}
		ip link show "$br" >/dev/null 2>&1 || ip link add "$br" type bridge
		ip addr replace "$addr" dev "$br"
		ip link set "$br" up
	done
	ip link show "$GUEST_NIC" >/dev/null 2>&1 || ip link add "$GUEST_NIC" type veth peer name "$GUEST_NIC_PEER"
	ip link set "$GUEST_NIC_PEER" master "$GUEST_BRIDGE" up
	ip link set "$GUEST_NIC" up
}

# external_range_free refuses an external subnet the host already reaches
# another way: a route to it on the bridge would cut the host off from
# that network (a machine whose package proxy is in 203.0.113.0/24 lost
# Debian and the Go proxy while the tier was up).
external_range_free() {
	local net=${EXT_ADDRESS%.*/*} host addr
	if ip -4 route show | grep -v " dev $EXT_BRIDGE " | grep -q "^$net\."; then
		die "the external subnet $net.0/24 (lib.sh EXT_ADDRESS) overlaps a route of this host: $(ip -4 route show | grep "^$net\.")"
	fi
	for host in deb.debian.org proxy.golang.org $(ip -4 route show default | awk '{print $3}'); do
		for addr in $(getent ahostsv4 "$host" | awk '{print $1}' | sort -u); do
			[[ $addr != "$net".* ]] || die "the external subnet $net.0/24 (lib.sh EXT_ADDRESS) holds $host's address $addr: the tier would cut the host off from it"
		done
	done
}

# Neutron's agents on the compute host: the Linux bridge agent makes the
# networks' bridges, plugs the router's and DHCP ports into them (the
# guest host plugs the guests' taps, as libvirt does), and applies the
# guests' security groups; the DHCP agent's dnsmasq gives the guests their
# addresses; the L3 agent's router (a qrouter- namespace) routes between
# the networks, NATs the floating IPs and proxies 169.254.169.254 to the
# metadata agent, which signs the guests' requests for Nova's metadata
# API. seed resources waits until all four report.
start_agents() {
	start neutron-linuxbridge-agent neutron-linuxbridge-agent --config-file "$ETC/neutron.conf" \
		--config-file "$ETC/linuxbridge_agent.ini"
	start neutron-dhcp-agent neutron-dhcp-agent --config-file "$ETC/neutron.conf" --config-file "$ETC/dhcp_agent.ini"
	start neutron-l3-agent neutron-l3-agent --config-file "$ETC/neutron.conf" --config-file "$ETC/l3_agent.ini"
	start neutron-metadata-agent neutron-metadata-agent --config-file "$ETC/neutron.conf" --config-file "$ETC/metadata_agent.ini"
}

start_apis() {
	uwsgi_app keystone "$PORT_KEYSTONE" /usr/bin/keystone-wsgi-public OS_KEYSTONE_CONFIG_FILES="$ETC/keystone.conf"
	wait_for keystone 90 port_open "$PORT_KEYSTONE"
	timing "keystone up"
	seed identity
	uwsgi_app placement "$PORT_PLACEMENT" /usr/bin/placement-api OS_PLACEMENT_CONFIG_DIR="$ETC/placement"
	start glance glance-api --config-file "$ETC/glance-api.conf"
	start neutron-server neutron-server --config-file "$ETC/neutron.conf" --config-file "$ETC/ml2_conf.ini"
	provider_networks
	start_guests
	start_agents
	start nova-api nova-api --config-file "$ETC/nova.conf"
	start nova-conductor nova-conductor --config-file "$ETC/nova.conf"
	start nova-scheduler nova-scheduler --config-file "$ETC/nova.conf"
	py nova-compute --config-file "$ETC/nova.conf"
	start cinder-api cinder-api --config-file "$ETC/cinder.conf"
	start cinder-scheduler cinder-scheduler --config-file "$ETC/cinder.conf"
	py cinder-volume --config-file "$ETC/cinder.conf"
	local p
	for p in "$PORT_PLACEMENT" "$PORT_GLANCE" "$PORT_NEUTRON" "$PORT_NOVA" "$PORT_METADATA" "$PORT_CINDER"; do
		wait_for "the API on port $p" 180 port_open "$p"
	done
	timing "APIs listening"
}

compute_registered() {
	nova-manage --config-file "$ETC/nova.conf" cell_v2 discover_hosts --strict >/dev/null 2>&1 ||
		nova-manage --config-file "$ETC/nova.conf" cell_v2 list_hosts 2>/dev/null | grep -q realcloud
}

seed() {
	"$STATE/bin/realcloud" seed "$1"
}

main() {
	[[ $(id -u) == 0 ]] || die "needs root (packages, daemons as root)"
	if [[ ${1:-} == --download-only ]]; then
		download_packages
		return
	fi
	mkdir -p "$STATE/secrets" "$RUN" "$LOG" "$STATE/disks" "$STATE/volumes" "$STATE/images" "$STATE/lock"
	install_packages
	# Others may pass through the state dir, not list it: Neutron's dnsmasq,
	# nobody after its start, re-reads the DHCP agent's host files below it
	# on every SIGHUP (a port added after it started). What is secret is
	# closed on its own (secrets/, mysql/, the configs, clouds.yaml, env).
	chmod 711 "$STATE"
	chmod 700 "$STATE/secrets"
	secret admin >/dev/null
	(cd "$ROOT" && go build -o "$STATE/bin/realcloud" ./testworld/cmd/realcloud)
	secret member >/dev/null
	write_configs
	start_mariadb
	timing "mariadb up"
	start_rabbitmq
	timing "rabbitmq up"
	start_memcached
	db_sync
	start_apis
	wait_for "nova-compute's host in cell1" 120 compute_registered
	seed resources
	timing "ready; env in $STATE/env"
}

main "$@"
