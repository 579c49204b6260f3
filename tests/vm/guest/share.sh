# share: two workloads with hot sets on node 1 (CXL), one of them capped with
# --fast-share at 1% of node 0 (about 1,180 of its 4,096 hot pages): the agent
# brings >= 90% of the uncapped one's hot set to node 0, the capped one never
# holds more than its cap there, the status shows the cap and the refusals, and
# every byte of both checks out.
. /tests/lib.sh

cp "$(command -v tierbench)" /tmp/capped
run_bench() { # NAME OUT
	"$1" --size 64M --hot 0.25 --skew 1 --hot-node 1 --cold-node 1 --duration 120 \
		--report-interval 1 --placement --verify > "$2" 2>&1 &
}
run_bench tierbench /tmp/free.out
run_bench /tmp/capped /tmp/capped.out
wait_for /tmp/free.out '^tierbench: placement'
wait_for /tmp/capped.out '^tierbench: placement'
free_pid=$(tb_pid /tmp/free.out)
capped_pid=$(tb_pid /tmp/capped.out)
hot=$(sed -n 's/.*hot_pages=\([0-9]*\).*/\1/p' /tmp/free.out)

t0=$(now)
cxltierd --comm tierbench --comm capped --fast-share capped:1% --duration 62 > /tmp/agent.log 2>&1 &
agent=$!
reached=$(time_to_90pct /tmp/free.out "$hot" "$t0" "$agent")
cxltierctl status --json > /tmp/status.json || fail "no status"
cap=$(jq --argjson p "$capped_pid" '.targets[] | select(.pid == $p) | .fast_cap_pages' /tmp/status.json)
capped0=$(placement_of /tmp/capped.out hot 0)
kill -TERM "$agent"
wait "$agent" || fail "cxltierd exited $? after SIGTERM"
for p in "$free_pid" "$capped_pid"; do kill -INT "$p"; done
wait "$free_pid" || fail "tierbench failed: $(tail -3 /tmp/free.out)"
wait "$capped_pid" || fail "the capped tierbench failed: $(tail -3 /tmp/capped.out)"
grep -q 'verify=ok' /tmp/free.out || fail "tierbench: $(tail -2 /tmp/free.out)"
grep -q 'verify=ok' /tmp/capped.out || fail "capped tierbench: $(tail -2 /tmp/capped.out)"
res hot_pages "$hot"
res uncapped_seconds_to_90pct "${reached:-never}"
res capped_cap_pages "${cap:-none}"
res capped_hot_on_node0 "$capped0"
res rejected_share "$(jq '.mover.rejected_share' /tmp/status.json)"
grep -q "fast-tier share: processes named capped hold at most 1%" /tmp/agent.log || fail "no log of the share"
[ -n "$reached" ] || fail "90% of the uncapped hot set never reached node 0"
[ -n "$cap" ] && [ "$cap" != null ] || fail "the status shows no cap for the capped target: $(jq -c .targets /tmp/status.json)"
[ "$capped0" -le "$cap" ] || fail "the capped target holds $capped0 hot pages on node 0, over its cap of $cap"
[ "$capped0" -ge $((cap / 2)) ] || fail "the capped target got only $capped0 of its $cap pages of share"
jq -e '.mover.rejected_share > 0' /tmp/status.json > /dev/null || fail "no promotion was refused for the share"
echo "share: ok"
