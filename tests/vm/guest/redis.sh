# redis: a real program under the agent's defaults.  redis-server holds 140,000
# keys of 1 KiB moved to node 1 (CXL); redis-benchmark reads 2,500 hot keys
# spread over as many pages (tools/vm/compare/workloads/redis.sh, shared with
# `make compare`).  The agent, started on the running server with no options,
# brings >= 90% of the hot pages to node 0 within 60 s, and the data is intact
# (DEBUG DIGEST and DBSIZE before and after).  Half of the hot set is also
# timed.  (On 6.1 the placement query is slow while the agent's scanner runs:
# pageset asks again for pages the scanner has just unmapped.)
. /tests/lib.sh
. /compare/workloads/redis.sh

wl_setup
set -- $(wl_place)
[ "$1" -eq 0 ] || fail "$1 hot pages on node 0 at start"
res hot_pages "$HOT"
res cold_pages "$COLD"
[ "$HOT" -ge 1000 ] || fail "only $HOT hot pages found"
wl_run
t0=$(now)
cxltierd --pid "$WL_PID" --duration 90 > /tmp/agent.log 2>&1 &
agent=$!
wl_until_90pct "$t0" 60 "$agent"
cxltierctl status --json > /tmp/status.json || fail "no status"
kill -TERM "$agent"
wait "$agent" || fail "cxltierd exited $? after SIGTERM"
set -- $(wl_place)
wl_finish > /tmp/verified
res seconds_to_50pct "${half:-never}"
res seconds_to_90pct "${reached:-never}"
res hot_on_node0 "$1"
res cold_on_node0 "$2"
res agent_moved_pages "$(jq '.mover.promoted + .mover.demoted + .mover.moved_other' /tmp/status.json)"
res verified "$(cat /tmp/verified)"
grep -q 'sampler: hint' /tmp/agent.log || fail "the agent did not pick the hint source: $(grep sampler: /tmp/agent.log)"
[ "$(cat /tmp/verified)" = ok ] || fail "redis data changed: $(cat /tmp/verified)"
[ -n "$reached" ] || fail "90% of redis's hot pages never reached node 0 in 60 s"
echo "redis: ok"
