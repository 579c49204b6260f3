# redis-preferred: redis-server started under `numactl --preferred=1`, as an
# operator puts a server on CXL.  The kernel's NUMA scanner skips memory under
# a bind/preferred policy, so the hint source cannot see it: the agent must say
# so at once, in its log, naming the source to use instead.  How much of the
# hot set it promotes anyway is reported, not asserted.
. /tests/lib.sh
REDIS_WRAP="numactl --preferred=1"
. /compare/workloads/redis.sh

wl_setup
grep -q prefer /proc/$WL_PID/numa_maps || fail "numa_maps shows no preferred policy"
wl_run
cxltierd --pid "$WL_PID" --duration 40 > /tmp/agent.log 2>&1 &
agent=$!
wait_for /tmp/agent.log "target pid $WL_PID"
wait_for /tmp/agent.log 'epoch 1:' 300
grep 'bind/preferred' /tmp/agent.log
grep -q "target pid $WL_PID (redis-server): [0-9]* of its [0-9]* resident pages are under a bind/preferred memory policy.*use --source damon" \
	/tmp/agent.log || fail "the agent did not say that redis's memory is out of the hint source's sight"
wait_for /tmp/agent.log 'epoch 11:' 600	# ten more epochs to act on what it sees
set -- $(wl_place)
kill -TERM "$agent"
wait "$agent" || fail "cxltierd exited $? after SIGTERM"
wl_finish > /tmp/verified
res hot_pages "$HOT"
res hot_on_node0_after_11_epochs "$1"
res verified "$(cat /tmp/verified)"
[ "$(cat /tmp/verified)" = ok ] || fail "redis data changed: $(cat /tmp/verified)"
echo "redis-preferred: ok"
