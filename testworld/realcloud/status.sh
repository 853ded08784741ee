#!/usr/bin/env bash
# make realcloud-status: which daemons run, which ports answer, and the
# cloud's resources counted by the real services (JSON).

# shellcheck source=testworld/realcloud/lib.sh
. "$(dirname "$0")/lib.sh"

declare -A PORT_OF=([keystone]=$PORT_KEYSTONE [glance]=$PORT_GLANCE [nova-api]=$PORT_NOVA
	[placement]=$PORT_PLACEMENT [neutron-server]=$PORT_NEUTRON [cinder-api]=$PORT_CINDER
	[mariadb]=$PORT_MYSQL [rabbitmq]=$PORT_AMQP [memcached]=$PORT_MEMCACHED)
down=0
for d in "${DAEMONS[@]}"; do
	desc=stopped
	if pid_alive "$d"; then
		desc="running (pid $(cat "$RUN/$d.pid"))"
	else
		down=1
	fi
	port=${PORT_OF[$d]:-}
	if [[ -n $port ]]; then
		if port_open "$port"; then desc+=", $HOST:$port answers"; else desc+=", $HOST:$port closed"; fi
	fi
	printf '%-17s %s\n' "$d" "$desc"
done
if ((down)); then
	echo "realcloud: not everything runs (make realcloud-up; logs in $LOG)"
	exit 1
fi
"$STATE/bin/realcloud" status
