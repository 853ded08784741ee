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

[[ -d $STATE ]] || exit 0
for ((i = ${#DAEMONS[@]} - 1; i >= 0; i--)); do
	stop "${DAEMONS[i]}"
done
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
