# churn: 200 short-lived target processes start and exit while the agent
# migrates (flip policy) with a heat map far too small (LRU evictions), and
# both nodes nearly full.  The agent keeps running, counts what it lost,
# keeps every process's data intact, and its own memory stays bounded.
. /tests/lib.sh

procs=200
free_mib() { awk '/MemFree/ { print int($4 / 1024) }' "/sys/devices/system/node/node$1/meminfo"; }
mkfifo /tmp/hold
# The agent follows the command name: a link gives tierbench the name "churner".
ln -s "$(command -v tierbench)" /tmp/churner
# Nearly full nodes: fillers (no targets) leave ~48 MiB free on each.
tierbench --size "$(( $(free_mib 0) - 48 ))M" --hot-node 0 --cold-node 0 --duration 0 --wait-start \
	<> /tmp/hold > /tmp/fill0.out 2>&1 &
tierbench --size "$(( $(free_mib 1) - 48 ))M" --hot-node 1 --cold-node 1 --duration 0 --wait-start \
	<> /tmp/hold > /tmp/fill1.out 2>&1 &
wait_for /tmp/fill0.out '^tierbench: placement'
wait_for /tmp/fill1.out '^tierbench: placement'
echo "free: node 0 $(free_mib 0) MiB, node 1 $(free_mib 1) MiB"

cxltierd --comm churner --policy /usr/lib/cxltier/test-policies/flip.so --source fault \
	--pingpong-epochs 0 --epoch-ms 100 --scan-epochs 1 --heat-entries 1024 \
	--low-wmark 1 --high-wmark 2 > /tmp/agent.log 2>&1 &
agent=$!
wait_for /tmp/agent.log 'maps and programs pinned'
t0=$(now)
peak=0
i=0
while [ "$i" -lt "$procs" ]; do
	for k in 1 2 3 4 5 6 7 8; do
		i=$((i + 1))
		/tmp/churner --size 2M --duration 0.4 --verify > "/tmp/c$i.out" 2>&1 &
	done
	sleep 0.3
	rss=$(awk '/VmRSS/ { print $2 }' "/proc/$agent/status")
	[ "$rss" -gt "$peak" ] && peak=$rss
done
all_done() { for j in $(seq 1 $procs); do grep -q 'verify=' "/tmp/c$j.out" || return 1; done; }
wait_until 1200 "every churner's end (verify= line)" all_done
kill -0 "$agent" || fail "the agent died during the churn"
cxltierctl status --json > /tmp/status.json || fail "no status"
hwm=$(awk '/VmHWM/ { print $2 }' "/proc/$agent/status")
kill -TERM "$agent"
wait "$agent" || fail "cxltierd exited $?"
echo > /tmp/hold
bad=0
for j in $(seq 1 $procs); do grep -q 'verify=ok mismatches=0' "/tmp/c$j.out" || bad=$((bad + 1)); done
res processes "$procs"
res seconds "$(elapsed "$t0")"
res adopted "$(grep -c 'added: command name churner' /tmp/agent.log)"
res migrated "$(jq '.mover | .promoted + .demoted' /tmp/status.json)"
res heat_map_evicted "$(jq '.sampler.evicted_estimate' /tmp/status.json)"
for k in gone process_gone busy nomem unreported other_error call_failed; do
	res "mover_$k" "$(jq ".mover.$k" /tmp/status.json)"
done
res agent_peak_rss_kib "$hwm"
res corrupted_processes "$bad"
[ "$bad" -eq 0 ] || fail "$bad processes lost data"
jq -e '.sampler.evicted_estimate > 0' /tmp/status.json > /dev/null || fail "the tiny heat map never evicted: the test did not stress it"
jq -e '.mover.other_error + .mover.call_failed == 0' /tmp/status.json > /dev/null || fail "unexplained errors: $(jq -c .mover /tmp/status.json)"
[ "$hwm" -lt 65536 ] || fail "agent peak RSS $hwm KiB"
echo "churn: ok"
