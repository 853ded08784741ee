#!/usr/bin/env bash
# realcloud-diagnose: what a failed tier run needs read first, short enough
# for CI's tail: which daemons stopped, the last errors of each service's
# log, the guests' ports and bridges, and the disk. .ci/run prints it when
# the tier fails; make realcloud-diagnose prints it any time.

# shellcheck source=testworld/realcloud/lib.sh
. "$(dirname "$0")/lib.sh"

echo "== daemons not running"
for d in "${DAEMONS[@]}"; do
	pid_alive "$d" || echo "$d"
done
# An oslo.log record's first line has its context in brackets after the
# logger's name; its traceback's lines do not.
echo "== last errors per log (newest last; each record's first line, cut at 300 characters)"
for f in "$LOG"/*.log; do
	[[ -s $f ]] || continue
	lines=$(grep -aE ' (ERROR|CRITICAL) [^ ]+ \[|guests: .*(error|fail)' "$f" |
		grep -avE '\] ( |Traceback|.\[00m$)' | sed -E 's/\[(None )?req-[^]]*\] //' |
		tail -n 3 | cut -c1-300) || true
	[[ -n $lines ]] && printf -- '-- %s\n%s\n' "$(basename "$f")" "$lines"
done
echo "== Neutron's agents and the guests' network's ports, as the admin sees them"
if [[ -s $STATE/clouds.yaml ]]; then
	export OS_CLIENT_CONFIG_FILE=$STATE/clouds.yaml
	timeout 60 openstack --os-cloud realcloud-admin network agent list -f value -c "Agent Type" -c Alive -c State 2>&1 | head -n 8 || true
	timeout 60 openstack --os-cloud realcloud-admin port list --network realcloud-net --long -f value -c ID -c Status -c "Device Owner" 2>&1 | head -n 12 || true
fi
# An agent alive by its heartbeat can still be deaf: its queue fills and
# its log stops moving.
echo "== RabbitMQ queues with messages waiting (name, messages, consumers)"
timeout 30 rabbitmqctl -q list_queues name messages consumers 2>&1 | awk 'NF == 3 && $2 > 0' | head -n 12 || true
echo "== the Neutron agents' last log lines (any level, cut at 200 characters)"
for a in neutron-linuxbridge-agent neutron-dhcp-agent; do
	[[ -s $LOG/$a.log ]] && printf -- '-- %s\n%s\n' "$a" "$(tail -n 4 "$LOG/$a.log" | sed -E 's/\[(None )?req-[^]]*\] //' | cut -c1-200)"
done
echo "== the guests' bridges and taps"
ip -br link show type bridge 2>/dev/null | awk '$1 ~ /^(brq|rcguest|rcext)/' || true
ip -br link 2>/dev/null | awk '$1 ~ /^tap/' | head -n 10 || true
echo "== disk"
df -h "$STATE" | tail -n 1
