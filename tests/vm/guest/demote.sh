# demote: a second process fills DRAM past the agent's low watermark; the
# agent demotes the coldest pages of its target to node 1 until free DRAM is
# back over the high watermark, and the target's hot set stays on node 0.
# The agent's watermarks lie on top of the kernel's reserve on node 0 (its
# zones' high watermarks in /proc/zoneinfo).
. /tests/lib.sh

free0() { awk '/MemFree/ { print int($4 / 1024) }' /sys/devices/system/node/node0/meminfo; }
total0=$(awk '/MemTotal/ { print int($4 / 1024) }' /sys/devices/system/node/node0/meminfo)
reserve=$(awk '/^Node/ { n = $2 == "0," } n && $1 == "high" { s += $2 } END { print int(s * 4 / 1024) }' /proc/zoneinfo)
low=$((reserve + total0 * 2 / 100))
high=$((reserve + total0 * 5 / 100))

tierbench --size 96M --hot 0.25 --skew 1 --hot-node 0 --cold-node 0 --duration 120 \
	--report-interval 1 --placement --verify > /tmp/tb.out 2>&1 &
tb=$!
wait_for /tmp/tb.out '^tierbench: placement'
hot=$(sed -n 's/.*hot_pages=\([0-9]*\).*/\1/p' /tmp/tb.out)

cxltierd --pid "$tb" --duration 60 > /tmp/agent.log 2>&1 &
agent=$!
wait_for /tmp/agent.log 'maps and programs pinned'
# The filler is no target: it takes DRAM until about 25 MiB are left free.
# The agent runs first, as a service would.
mkfifo /tmp/hold
fill=$(( $(free0) - 25 ))
[ "$fill" -gt 0 ] || fail "node 0 has only $(free0) MiB free before filling"
tierbench --size "${fill}M" --hot-node 0 --cold-node 0 --duration 0 --wait-start \
	<> /tmp/hold > /tmp/filler.out 2>&1 &
filler=$!
wait_for /tmp/filler.out '^tierbench: placement'
start_free=$(free0)
echo "node 0: $total0 MiB, $start_free MiB free after filling; kernel reserve $reserve MiB; agent watermarks low $low MiB, high $high MiB"
t0=$(now)

back=""
settled=0
while kill -0 "$agent" 2>/dev/null && [ "$settled" -lt 3 ]; do
	sleep 1
	f=$(free0)
	echo "t=$(elapsed "$t0")s node 0 free $f MiB; hot on node 0: $(placement_of /tmp/tb.out hot 0) of $hot, cold on node 1: $(placement_of /tmp/tb.out cold 1)"
	if [ -z "$back" ] && [ "$f" -ge "$high" ]; then back=$(elapsed "$t0"); fi
	[ -n "$back" ] && settled=$((settled + 1))
done
kill -TERM "$agent"
wait "$agent" || fail "cxltierd exited $? after SIGTERM"
kill -INT "$tb"
wait "$tb" || fail "tierbench failed: $(tail -3 /tmp/tb.out)"
echo > /tmp/hold
demoted=$(sed -n 's/.*stopped after .* demoted \([0-9]*\),.*/\1/p' /tmp/agent.log)
res node0_mib "$total0"
res free_mib_after_fill "$start_free"
res kernel_reserve_mib "$reserve"
res low_wmark_mib "$low"
res high_wmark_mib "$high"
res seconds_to_high_wmark "${back:-never}"
res demoted_pages "$demoted"
res hot_on_node0_at_end "$(placement_of /tmp/tb.out hot 0)"
res cold_on_node1_at_end "$(placement_of /tmp/tb.out cold 1)"
grep -q 'demoting first' /tmp/agent.log || fail "the agent never said DRAM was short"
[ -n "$back" ] || fail "free DRAM never got back over the high watermark ($high MiB)"
[ "$(placement_of /tmp/tb.out hot 0)" -eq "$hot" ] || fail "hot pages left node 0"
[ "${demoted:-0}" -gt 0 ] || fail "nothing demoted"
grep -q 'verify=ok mismatches=0' /tmp/tb.out || fail "data: $(tail -2 /tmp/tb.out)"
echo "demote: ok"
