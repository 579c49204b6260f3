# redis-preferred: redis-server started under `numactl --preferred=1`, as an
# operator puts a server on CXL (issue 18).  The kernel's NUMA scanner skips
# memory under a bind/preferred policy, so the hint source cannot see it.
# 1. --source hint (observing): the agent says so at once in its log, and its
#    status and metrics count the target's unseen pages, naming the source to
#    use instead (damon where the kernel has DAMON).
# 2. The agent's defaults (source auto): on a kernel with DAMON (6.12) auto
#    takes DAMON and says it sees the memory hint cannot; nothing is
#    unseen, >= 50% of the hot set reaches node 0 within LIMIT s (the time to 90%
#    is reported, not asserted: see below), and the data is intact (DEBUG DIGEST
#    and DBSIZE).  Without DAMON (6.1) nothing here sees
#    the memory: auto takes hint and warns; placement is reported, not asserted.
. /tests/lib.sh
REDIS_WRAP="numactl --preferred=1"
. /compare/workloads/redis.sh

# DAMON gives a whole region one access count and redis's hot keys sit one page in
# about 18, so DAMON promotes nearly all the data while DRAM has room: 90% of the
# hot set took 76 s in a quiet run (50% 41 s; hint does it in < 60 s without a policy)
# and about 50 s in another, but on a loaded machine 89.5% at 150 s and 78% at 240 s:
# the agent promotes in bursts tens of epochs apart, with plans empty in between
# although DAMON's samples keep coming: a probe found no sample on the slow part in
# most epochs (each hot key is read about 10 times a second here, so a 5 ms check
# of a region where one page in 18 is hot finds an access about once in 600).  50%
# came within 41-149 s in six runs.
LIMIT=240
damon=0
[ -f /sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds ] && damon=1
[ "$damon" = 1 ] || LIMIT=30	# nothing asserted without DAMON: a look at placement
res kernel "$(uname -r)"
wl_setup
grep -q prefer /proc/$WL_PID/numa_maps || fail "numa_maps shows no preferred policy"
set -- $(wl_place)
[ "$1" -eq 0 ] || fail "$1 hot pages on node 0 at start"
res hot_pages "$HOT"
res cold_pages "$COLD"
[ "$HOT" -ge 1000 ] || fail "only $HOT hot pages found"
wl_run

# --- 1: hint cannot see it, and says so: log, status, metrics.
cxltierd --pid "$WL_PID" --source hint --observe --duration 120 > /tmp/agent.log 2>&1 &
agent=$!
wait_for /tmp/agent.log "target pid $WL_PID" 600
wait_for /tmp/agent.log 'epoch 1:' 600
grep 'unseen by source' /tmp/agent.log
grep -q "target pid $WL_PID (redis-server): [0-9]* of its [0-9]* resident pages are unseen by source hint: under a prefer:1 memory policy" \
	/tmp/agent.log || fail "the agent did not say that redis's memory is out of the hint source's sight"
cxltierctl status --json > /tmp/hint.json || fail "no status"
cxltierctl status > /tmp/hint.txt || fail "no status text"
cxltierctl metrics > /tmp/hint.prom || fail "no metrics"
kill -TERM "$agent"
wait "$agent" || fail "cxltierd --source hint exited $? after SIGTERM"
mv /tmp/agent.log /tmp/hint-agent.log	# phase 2 waits for lines of its own log only
unseen=$(jq ".targets[] | select(.pid == $WL_PID) | .unseen_pages" /tmp/hint.json)
res hint_unseen_pages "$unseen"
res hint_unseen_suggestion "$(jq -r ".targets[] | select(.pid == $WL_PID) | .unseen_suggestion" /tmp/hint.json)"
[ "${unseen:-0}" -ge $((HOT + COLD)) ] || fail "status counts ${unseen:-no} unseen pages, fewer than redis's $((HOT + COLD)) data pages"
jq -e ".targets[] | select(.pid == $WL_PID) | .unseen_reason | test(\"prefer:1\")" /tmp/hint.json > /dev/null ||
	fail "status gives no reason: $(jq -c '.targets' /tmp/hint.json)"
instead=$(jq -r ".targets[] | select(.pid == $WL_PID) | .unseen_source_instead" /tmp/hint.json)
if [ "$damon" = 1 ]; then
	[ "$instead" = damon ] || fail "status suggests '$instead', not damon, on a kernel with DAMON"
else
	[ "$instead" = null ] || fail "status suggests '$instead' on a kernel without DAMON or a PMU"
fi
grep -q "pid $WL_PID: $unseen pages unseen: under a prefer:1" /tmp/hint.txt || fail "cxltierctl status does not show them: $(cat /tmp/hint.txt)"
grep -q "^cxltier_target_unseen_pages{pid=\"$WL_PID\",comm=\"redis-server\",source=\"hint\"} $unseen\$" /tmp/hint.prom ||
	fail "no unseen metric: $(grep unseen /tmp/hint.prom)"

# --- 2: the agent's defaults.
t0=$(now)
cxltierd --pid "$WL_PID" --duration $((LIMIT + 60)) > /tmp/agent.log 2>&1 &
agent=$!
wait_for /tmp/agent.log 'sampler: ' 600
grep 'source auto\|sampler:' /tmp/agent.log
if [ "$damon" = 1 ]; then
	grep -q 'sampler: damon (.*chosen by auto because it sees the [0-9]* pages under prefer:1 that hint cannot' /tmp/agent.log ||
		fail "auto did not take DAMON for memory hint cannot see: $(grep 'sampler:' /tmp/agent.log)"
else
	grep -q 'sampler: hint' /tmp/agent.log || fail "auto did not fall back to hint: $(grep 'sampler:' /tmp/agent.log)"
	grep -q "no source here sees all of pid $WL_PID (redis-server)'s memory: took hint" /tmp/agent.log ||
		fail "auto did not warn that nothing here sees redis's memory"
fi
wl_until_90pct "$t0" "$LIMIT" "$agent"
cxltierctl status --json > /tmp/status.json || fail "no status"
kill -TERM "$agent"
wait "$agent" || fail "cxltierd exited $? after SIGTERM"
set -- $(wl_place)
wl_finish > /tmp/verified
res source "$(jq -r '.sampler.source' /tmp/status.json)"
res unseen_pages "$(jq ".targets[] | select(.pid == $WL_PID) | .unseen_pages" /tmp/status.json)"
res seconds_to_50pct "${half:-never}"
res seconds_to_90pct "${reached:-never}"
res hot_on_node0 "$1"
res cold_on_node0 "$2"
res agent_moved_pages "$(jq '.mover.promoted + .mover.demoted + .mover.moved_other' /tmp/status.json)"
res verified "$(cat /tmp/verified)"
[ "$(cat /tmp/verified)" = ok ] || fail "redis data changed: $(cat /tmp/verified)"
if [ "$damon" = 1 ]; then
	jq -e ".targets[] | select(.pid == $WL_PID) | .unseen_pages == 0" /tmp/status.json > /dev/null ||
		fail "with DAMON, status still counts unseen pages: $(jq -c '.targets' /tmp/status.json)"
	[ -n "$half" ] || fail "50% of redis's hot pages never reached node 0 in $LIMIT s with auto"
fi
echo "redis-preferred: ok"
