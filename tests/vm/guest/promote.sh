# promote: tierbench's hot set starts on node 1 (CXL); the agent with its
# default policy and source (hint here) brings >= 90% of it to node 0 within
# 30 s, the cold pages stay on node 1, the kernel itself promotes nothing, and
# the kernel settings the agent changed are back when it stops.  Then the
# yardstick: the fault source, attached before the workload starts so that it
# sees every first touch, does the same; hint must do as well (within 30 s and
# no more than 3 s slower).
. /tests/lib.sh

nb0=$(cat /proc/sys/kernel/numa_balancing)
rl0=$(cat /proc/sys/kernel/numa_balancing_promote_rate_limit_MBps)
promote0=$(vmstat pgpromote_success)

start_hot_on_cxl /tmp/tb.out

t0=$(now)
cxltierd --pid "$tb" --duration 32 > /tmp/agent.log 2>&1 &
agent=$!
reached=""
settled=0
# Watch until 90% is reached, then 5 s more: the cold pages must stay put.
while kill -0 "$agent" 2>/dev/null && [ "$settled" -lt 5 ]; do
	sleep 1
	on0=$(placement_of /tmp/tb.out hot 0)
	echo "t=$(elapsed "$t0")s hot on node 0: $on0 of $hot"
	if [ -z "$reached" ] && [ "$on0" -ge $((hot * 9 / 10)) ]; then
		reached=$(elapsed "$t0")
	fi
	[ -n "$reached" ] && settled=$((settled + 1))
done
cxltierctl status --json > /tmp/status.json || fail "no status"
cxltierctl status | sed -n '/kernel migrations/,/^$/p'
kill -TERM "$agent" 2>/dev/null
wait "$agent" || fail "cxltierd exited $? after SIGTERM"
kill -INT "$tb"
wait "$tb" || fail "tierbench failed: $(tail -3 /tmp/tb.out)"
grep -q 'sampler: hint' /tmp/agent.log || fail "the agent did not pick the hint source"
# A feature this kernel merely lacks (6.1: no sched_skip_vma_numa) is one info line, not
# libbpf's load errors.
! grep -q '^libbpf:' /tmp/agent.log || fail "libbpf errors in the agent's log: $(grep -c '^libbpf:' /tmp/agent.log) lines"
grep -q 'verify=ok' /tmp/tb.out || fail "tierbench: $(tail -2 /tmp/tb.out)"
cold=$(sed -n 's/.*pages=\([0-9]*\) hot_start.*/\1/p' /tmp/tb.out)
cold=$((cold - hot))
cold1=$(placement_of /tmp/tb.out cold 1)
hot0=$(placement_of /tmp/tb.out hot 0)
res hot_pages "$hot"
res hot_on_node0_at_end "$hot0"
res seconds_to_90pct "${reached:-never}"
res cold_on_node1_at_end "$cold1"
res kernel_promotions $(( $(vmstat pgpromote_success) - promote0 ))
res kernel_numa_misplaced_pages "$(jq '.kernel_migrations.numa_misplaced.pages // 0' /tmp/status.json)"
res move_pages_pages "$(jq '.kernel_migrations.syscall.pages // 0' /tmp/status.json)"
res agent_moved_pages "$(jq '.mover.promoted + .mover.demoted + .mover.moved_other' /tmp/status.json)"
[ -n "$reached" ] || fail "90% of the hot set never reached node 0"
awk -v r="$reached" 'BEGIN { exit !(r <= 30) }' || fail "90% of the hot set took ${reached}s (> 30 s)"
[ "$cold1" -eq "$cold" ] || fail "cold pages left node 1: $cold1 of $cold still there"
[ "$(vmstat pgpromote_success)" -eq "$promote0" ] || fail "the kernel promoted pages itself"
jq -e '(.kernel_migrations.numa_misplaced.pages // 0) == 0' /tmp/status.json > /dev/null ||
	fail "the agent's accounting saw the kernel migrate pages itself"
jq -e '.kernel_migrations.syscall.pages == .mover.promoted + .mover.demoted + .mover.moved_other' \
	/tmp/status.json > /dev/null || fail "move_pages migrations seen by the kernel != the agent's count: $(jq -c '[.kernel_migrations, .mover]' /tmp/status.json)"
[ "$(cat /proc/sys/kernel/numa_balancing)" = "$nb0" ] || fail "numa_balancing not restored"
[ "$(cat /proc/sys/kernel/numa_balancing_promote_rate_limit_MBps)" = "$rl0" ] || fail "promotion rate limit not restored"

# The yardstick: the fault source sees the first touches (the agent targets the
# process before it execs tierbench).
rm -f /tmp/go /tmp/tb2.out
mkfifo /tmp/go
sh -c 'read x < /tmp/go; exec tierbench --size 64M --hot 0.25 --skew 1 --hot-node 1 --cold-node 1 \
	--duration 60 --report-interval 1 --placement --verify' > /tmp/tb2.out 2>&1 &
tb=$!
cxltierd --pid "$tb" --source fault --duration 32 > /tmp/agent.log 2>&1 &
agent=$!
wait_for /tmp/agent.log "target pid $tb"
echo go > /tmp/go
wait_for /tmp/tb2.out '^tierbench: placement'
t0=$(now)	# as for hint: from the moment the workload has set up
fault_reached=$(time_to_90pct /tmp/tb2.out "$hot" "$t0" "$agent" "fault: ")
kill -TERM "$agent"
wait "$agent" || fail "cxltierd (fault) exited $? after SIGTERM"
kill -INT "$tb"
wait "$tb" || fail "tierbench (fault run) failed: $(tail -3 /tmp/tb2.out)"
res fault_first_touch_seconds_to_90pct "${fault_reached:-never}"
res fault_first_touch_cold_on_node1_at_end "$(placement_of /tmp/tb2.out cold 1)"
[ -n "$fault_reached" ] || fail "with the fault source, 90% of the hot set never reached node 0"
awk -v h="$reached" -v f="$fault_reached" 'BEGIN { exit !(h <= f + 3) }' ||
	fail "hint took ${reached}s to bring 90% of the hot set, fault on first touch ${fault_reached}s"
echo "promote: ok"
