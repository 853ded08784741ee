# shellcheck shell=bash
# shellcheck disable=SC2034 # the variables are for the scripts that source this
# Shared by up.sh, down.sh and status.sh: where the tier lives and its
# fixed loopback ports, below the kernel's ephemeral range (32768 and up)
# where the lab's ports and every outgoing connection take theirs: a
# client's source port there once made MariaDB's bind fail (see docs/lab.md).

set -euo pipefail

# Debian's python3 (the services' modules are there), not a pyenv shim.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:/usr/local/go/bin:$PATH

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
STATE=${REALCLOUD_DIR:-$ROOT/.realcloud}
export REALCLOUD_DIR=$STATE
RUN=$STATE/run
LOG=$STATE/log
ETC=$STATE/etc

HOST=127.0.0.1
PORT_KEYSTONE=29500
PORT_GLANCE=29501
PORT_NOVA=29502
PORT_PLACEMENT=29503
PORT_NEUTRON=29504
PORT_CINDER=29505
PORT_MYSQL=29506
PORT_AMQP=29507
PORT_EPMD=29508
PORT_RABBIT_DIST=29509
PORT_MEMCACHED=29510
PORT_METADATA=29511

# The floating IPs' bridge and the host's address on it, the external
# subnet's gateway (testworld/realcloud/guests.go: ExternalBridge,
# ExternalCIDR).
EXT_BRIDGE=rcext0
EXT_ADDRESS=198.51.100.1/24
# The guests' provider network: its switch and the host's address on it,
# and the compute host's interface into it, a veth whose peer is a port of
# the switch (guests.go: GuestNetwork, GuestInterface, GuestSwitchPort).
GUEST_BRIDGE=rcguest0
GUEST_ADDRESS=10.42.0.254/24
GUEST_NIC=rcguest0nic
GUEST_NIC_PEER=rcguest0sw

# Every daemon the tier runs, in start order.
DAEMONS=(mariadb rabbitmq memcached keystone placement glance neutron-server guests
	neutron-linuxbridge-agent neutron-dhcp-agent neutron-l3-agent
	neutron-metadata-agent nova-api nova-conductor nova-scheduler nova-compute cinder-api cinder-scheduler cinder-volume)

export ERL_EPMD_PORT=$PORT_EPMD ERL_EPMD_ADDRESS=$HOST
export RABBITMQ_NODENAME=realcloud@localhost RABBITMQ_NODE_IP_ADDRESS=$HOST RABBITMQ_NODE_PORT=$PORT_AMQP
export RABBITMQ_DIST_PORT=$PORT_RABBIT_DIST RABBITMQ_MNESIA_BASE=$STATE/rabbitmq/mnesia
export RABBITMQ_LOG_BASE=$LOG RABBITMQ_PID_FILE=$RUN/rabbitmq.pid RABBITMQ_ENABLED_PLUGINS_FILE=$STATE/rabbitmq/enabled_plugins
export RABBITMQ_CONFIG_FILE=$STATE/rabbitmq/rabbitmq RABBITMQ_ADVANCED_CONFIG_FILE=$STATE/rabbitmq/advanced.config
export RABBITMQ_CONF_ENV_FILE=$STATE/rabbitmq/rabbitmq-env.conf

log() { printf 'realcloud: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# pid_alive NAME: the daemon started under NAME still runs.
pid_alive() {
	local f=$RUN/$1.pid
	[[ -s $f ]] && kill -0 "$(cat "$f")" 2>/dev/null
}

# port_open PORT: something accepts connections on the loopback port.
port_open() {
	(exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null
}

# wait_for WHAT SECONDS CMD...: run CMD once a second until it succeeds.
wait_for() {
	local what=$1 secs=$2
	shift 2
	local i
	for ((i = 0; i < secs; i++)); do
		if "$@"; then
			return 0
		fi
		sleep 1
	done
	die "$what not ready after ${secs}s (logs in $LOG)"
}
