#!/usr/bin/env bash
# make realcloud-down: stop every daemon up.sh started (by the pid files in
# the state dir, in reverse start order), keeping packages, databases and
# images, so the next realcloud-up is fast. REALCLOUD_PURGE=1 also removes
# the state dir.

# shellcheck source=testworld/realcloud/lib.sh
. "$(dirname "$0")/lib.sh"

# stop NAME: TERM the daemon's session (uwsgi's and Python's workers are in
# it), then KILL what is left after 30 seconds.
stop() {
	local name=$1 pid i
	pid_alive "$name" || { rm -f "$RUN/$name.pid"; return 0; }
	pid=$(cat "$RUN/$name.pid")
	kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"
	for ((i = 0; i < 30; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 1
	done
	if kill -0 "$pid" 2>/dev/null; then
		log "$name did not stop on TERM: killing it"
		kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid"
	fi
	rm -f "$RUN/$name.pid"
	log "stopped $name"
}

# neutron_leftovers: what Neutron's agents leave on the host when they stop
# before the guests' ports are gone: the DHCP and L3 agents' namespaces
# and what runs in them (dnsmasq leaves the agent's session), the
# networks' bridges the agent made, the provider networks up.sh made, the
# Linux bridge agent's iptables chains and ipsets and its ebtables ARP
# chains. Every name is Neutron's own (qdhcp-, qrouter-, brq, neutron-,
# NIP, neutronARP-/neutronMAC-) or the tier's (lib.sh's EXT_BRIDGE,
# GUEST_BRIDGE, GUEST_NIC): nothing else on the host has them.
neutron_leftovers() {
	local ns ipt t rule chain set
	for ns in $(ip netns list | awk '$1 ~ /^q(dhcp|router)-/ {print $1}'); do
		for pid in $(ip netns pids "$ns"); do kill -KILL "$pid" 2>/dev/null || true; done
		ip netns delete "$ns"
	done
	# the router's and DHCP ports' taps went with their namespaces' ends
	local dev
	for dev in $(ip -o link show type bridge | awk -F': ' '$2 ~ /^brq/ {print $2}') "$EXT_BRIDGE" "$GUEST_BRIDGE" "$GUEST_NIC"; do
		if ip link show "$dev" >/dev/null 2>&1; then ip link delete "$dev"; fi
	done
	for ipt in iptables ip6tables; do
		for t in raw mangle nat filter; do
			"$ipt-save" -t "$t" 2>/dev/null | awk '/^-A [A-Z]+ .*-j neutron-/ {sub(/^-A/, "-D"); print}' |
				while read -r rule; do eval "$ipt -w -t $t $rule"; done
			for chain in $("$ipt-save" -t "$t" 2>/dev/null | awk -F'[: ]' '/^:neutron-/ {print $2}'); do
				"$ipt" -w -t "$t" -F "$chain"
			done
			for chain in $("$ipt-save" -t "$t" 2>/dev/null | awk -F'[: ]' '/^:neutron-/ {print $2}'); do
				"$ipt" -w -t "$t" -X "$chain"
			done
		done
	done
	# a set the kernel still holds right after its last rule went is left
	for set in $(ipset list -n 2>/dev/null | grep '^NIP' || true); do
		ipset destroy "$set" || log "ipset $set left: it is still in use"
	done
	# word splitting intended: ebtables lists a rule as its arguments
	# shellcheck disable=SC2086
	ebtables -t nat -L PREROUTING | { grep -- '-j neutron' || true; } | while read -r rule; do
		ebtables -t nat -D PREROUTING $rule
	done
	# flushed first: one chain jumps to another
	local ebchains
	ebchains=$(ebtables -t nat -L | sed -n 's/^Bridge chain: \(neutron\(ARP\|MAC\)-[^,]*\),.*/\1/p')
	for chain in $ebchains; do ebtables -t nat -F "$chain"; done
	for chain in $ebchains; do ebtables -t nat -X "$chain"; done
}

[[ -d $STATE ]] || exit 0
for ((i = ${#DAEMONS[@]} - 1; i >= 0; i--)); do
	stop "${DAEMONS[i]}"
done
neutron_leftovers
if port_open "$PORT_EPMD"; then
	# RabbitMQ's epmd daemonises out of the broker's session; the port
	# (ERL_EPMD_PORT, lib.sh) is the tier's own.
	epmd -kill >/dev/null 2>&1 || log "epmd on $PORT_EPMD did not stop"
fi
rm -f "$STATE/env"
if [[ ${REALCLOUD_PURGE:-} == 1 ]]; then
	rm -rf "$STATE"
	log "removed $STATE"
fi
