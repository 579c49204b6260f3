# integrity: tierbench --verify with several threads writing while the agent,
# running the `flip` stress policy with ping-pong damping off, moves the same
# pages back and forth between the nodes for at least 100,000 migrations.
# Zero content mismatches, and the agent's count of migrated pages agrees
# with the kernel's pgmigrate_success.
. /tests/lib.sh

want=100000
mig0=$(vmstat pgmigrate_success)
tierbench --size 32M --hot 0.5 --threads 2 --duration 300 --verify > /tmp/tb.out 2>&1 &
tb=$!
wait_for /tmp/tb.out '^tierbench: pid='

t0=$(now)
cxltierd --pid "$tb" --policy /usr/lib/cxltier/test-policies/flip.so --source fault \
	--pingpong-epochs 0 --rate 100000 --epoch-ms 100 --scan-epochs 1 \
	--low-wmark 0 --high-wmark 0 --duration 200 > /tmp/agent.log 2>&1 &
agent=$!
moved=0
while kill -0 "$agent" 2>/dev/null && [ "$moved" -lt "$want" ]; do
	sleep 1
	moved=$(cxltierctl status --json 2>/dev/null |
		jq '.mover | .promoted + .demoted + .moved_other' 2>/dev/null)
	moved=${moved:-0}	# no status before the first epoch
	echo "t=$(elapsed "$t0")s migrated $moved pages"
done
kill -TERM "$agent"
wait "$agent" || fail "cxltierd exited $? after SIGTERM"
secs=$(elapsed "$t0")
kill -INT "$tb"
wait "$tb"
tbrc=$?
mig=$(( $(vmstat pgmigrate_success) - mig0 ))
agent_moved=$(sed -n 's/.*stopped after .* moved \([0-9]*\) pages.*/\1/p' /tmp/agent.log)
res migrated_by_agent "$agent_moved"
res pgmigrate_success "$mig"
res seconds "$secs"
res pages_per_second $(awk -v m="$agent_moved" -v s="$secs" 'BEGIN { printf "%.0f", m / s }')
res mismatches "$(sed -n 's/.*mismatches=\([0-9]*\).*/\1/p' /tmp/tb.out)"
grep -E 'busy|gone|failed' /tmp/agent.log | tail -3
[ "$tbrc" -eq 0 ] || fail "tierbench exit $tbrc: $(tail -5 /tmp/tb.out)"
grep -q 'verify=ok mismatches=0' /tmp/tb.out || fail "data corrupted: $(tail -3 /tmp/tb.out)"
[ "${agent_moved:-0}" -ge "$want" ] || fail "only ${agent_moved:-0} migrations (< $want)"
[ "$agent_moved" -eq "$mig" ] || fail "agent counted $agent_moved migrated pages, the kernel $mig"
echo "integrity: ok"
