# hotplug: node 1's memory goes offline and comes back, three times, while the agent runs
# (memory hotplug; CXL dynamic capacity takes the same path).  The agent sees
# each change, stops migrating to a node without memory, carries on, and
# migrates again when the memory is back; the workload's data stays intact.
. /tests/lib.sh

blocks() { for b in /sys/devices/system/node/node1/memory*; do echo "${b##*/}"; done; }
set_blocks() { for b in $(blocks); do echo "$1" > "/sys/devices/system/memory/$b/state" || return 1; done; }
node1_mib() { awk '/MemTotal/ { print int($4 / 1024) }' /sys/devices/system/node/node1/meminfo; }

# Offlining that hangs is a deadlock with whoever reads the memory tiers:
# say where the agent waits instead of only timing out.
watchdog() {
	sleep 60
	echo "FAIL: offlining node 1 hung for 60 s; cxltierd waits in $(cat /proc/$agent/wchan):"
	cat "/proc/$agent/stack"
}

tierbench --size 32M --hot 0.25 --skew 1 --hot-node 1 --cold-node 1 --duration 120 --verify \
	> /tmp/tb.out 2>&1 &
tb=$!
wait_for /tmp/tb.out '^tierbench: placement'
# A short epoch re-reads the topology often: three cycles give a read that
# lands in the kernel's tier removal many chances (it deadlocked 6.1 and 6.12).
cxltierd --pid "$tb" --epoch-ms 100 > /tmp/agent.log 2>&1 &
agent=$!
wait_for /tmp/agent.log 'epoch 1:'
wait_epochs 10
for cycle in 1 2 3; do
	echo "cycle $cycle: node 1 has $(node1_mib) MiB in $(blocks | wc -l) blocks; offlining them"
	watchdog & dog=$!
	set_blocks offline || fail "could not offline node 1's memory"
	kill "$dog"
	echo "node 1 now $(node1_mib) MiB"
	wait_for /tmp/agent.log 'now observing' 100 "$cycle"
	kill -0 "$agent" || fail "the agent died when node 1 went offline"
	cxltierctl status --json > /tmp/off.json || fail "no status while node 1 is offline"
	jq -e '.agent.mode == "observe"' /tmp/off.json > /dev/null || fail "still migrating with node 1 offline"
	set_blocks online_movable || set_blocks online || fail "could not online node 1's memory again"
	echo "node 1 back: $(node1_mib) MiB"
	wait_for /tmp/agent.log 'now migrating again' 100 "$cycle"
	wait_epochs 5
done
cxltierctl status --json > /tmp/on.json || fail "no status after node 1 came back"
kill -TERM "$agent"
wait "$agent" || fail "cxltierd exited $?"
kill -INT "$tb"
wait "$tb" || fail "tierbench: $(tail -3 /tmp/tb.out)"
grep -q 'verify=ok mismatches=0' /tmp/tb.out || fail "data: $(tail -2 /tmp/tb.out)"
res topology_changes "$(grep -c 'topology changed' /tmp/agent.log)"
res node1_mode_offline "$(jq -r '.agent.mode' /tmp/off.json)"
res node1_mode_online "$(jq -r '.agent.mode' /tmp/on.json)"
res kernel_hotplug_migrations "$(jq '.kernel_migrations.memory_hotplug.pages // 0' /tmp/on.json)"
jq -e '.agent.mode == "migrate" and ([.nodes[] | select(.id == 1 and .role == "slow")] | length == 1)' \
	/tmp/on.json > /dev/null || fail "node 1 not back as a slow node: $(jq -c .nodes /tmp/on.json)"
grep -E '^(warning|error):' /tmp/agent.log | grep -v 'cannot re-read the topology' && fail "the agent reported errors"
echo "hotplug: ok"
