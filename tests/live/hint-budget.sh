#!/usr/bin/env bash
# Live test (root): the hint source's CPU budget on the real kernel.  At 0.1%
# of a core (500 faults/s) the agent holds the kernel at mode 2 once a scan
# pass has spent the budget, so the hint faults of a whole run stay within
# the budget plus two passes over the pages in use (the gate stays open for a
# whole pass, and the one under way when the agent starts does not count;
# the kernel alone makes about 80,000 here); the passes still mark the cold pages,
# so they are not flagged unseen (CXLT_PAGE_UNSEEN) while the hot set, used
# all the time, is; and every setting comes back.
set -euo pipefail
. "$(dirname "$0")/lib.bash"
nb=/proc/sys/kernel/numa_balancing
rl=/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps
nb0=$(cat $nb)
rl0=$(cat $rl)
cleanup_more() { echo "$nb0" > $nb; echo "$rl0" > $rl; }
faults() { awk '/^numa_hint_faults /{ print $2 }' /proc/vmstat; }

[ "$nb0" -ne 3 ] && [ "$nb0" -ne 2 ] || fail "kernel.numa_balancing is $nb0 before the test: the kernel's tiering is in use"
secs=20
# 64 MiB hot (16384 pages), 192 MiB never touched after set-up.
# An ASan-built tierbench would not do: the NUMA scanner spends its passes on the
# shadow memory's terabytes of address space and never reaches the buffer.
"${TIERBENCH:-$BUILD/tierbench}" --size 256M --hot 0.25 --skew 1 --duration 600 -q > "$work/bench.log" &
bench=$!
f0=$(faults)
t0=$(date +%s.%N)
"$BUILD/cxltierd" --pid "$bench" --source hint --hint-cpu 0.1 --run-dir "$work/run" \
	> "$work/agent.log" 2>&1 &
agent=$!
# A run of $secs epochs of one second, however long a busy machine makes them take, and
# until the gate has closed once: it stays open for the scanner's first whole pass, which
# takes longer on a busy machine.
wait_for $((secs * 10)) "epoch $secs and the gate closed once, in the status" status_has "$work/run" \
	".agent.epoch >= $secs and .sampler.hint.switches >= 1"
cp "$work/status.json" "$work/final.json"
kill -TERM "$agent"
wait "$agent" || fail "the agent failed"
agent=""
f1=$(faults)
run=$(echo "$(date +%s.%N) - $t0" | bc)

used=$((f1 - f0))
limit=$(echo "500 * $run + 2 * 16384" | bc | cut -d. -f1)
echo "hint faults in ${run}s: $used (budget plus two passes over the hot set: $limit)"
[ "$used" -le "$limit" ] || fail "$used hint faults in ${run}s, over the budget plus two passes ($limit)"
jq -e '.sampler.hint.budget_faults_per_sec == 500 and .sampler.hint.switches >= 1' \
	"$work/final.json" > /dev/null || fail "the gate never closed: $(jq -c .sampler.hint "$work/final.json")"
read -r fast unseen < <(jq -r '.targets[0] | "\(.pages_fast) \(.pages_fast_unseen)"' "$work/final.json")
echo "fast pages $fast, unseen since their last sample $unseen (hot set 16384)"
# Not every hot page: where the scanner's pass stands when the status is read decides
# how many hot pages were marked again after their last drained fault (15,888 of
# 16,384 in one CI run on a busy machine).  Three quarters still tells "the hot set is
# flagged" from "nothing is" and from "the cold pages are too".
[ "$unseen" -ge $((16384 * 3 / 4)) ] || fail "only $unseen pages unseen: the hot set is in use all the time"
[ "$unseen" -le $((16384 + 2048)) ] || fail "$unseen of $fast pages unseen: the scanner's passes over the cold pages did not count"
[ "$(cat $nb)" = "$nb0" ] && [ "$(cat $rl)" = "$rl0" ] || fail "settings not back: $(cat $nb) $(cat $rl)"
echo "hint-budget: ok"
