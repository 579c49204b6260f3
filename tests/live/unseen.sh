#!/usr/bin/env bash
# Live test (root) of memory a source cannot see (issue 18): tierbench under
# `numactl --preferred=0`, whose pages the kernel's NUMA scanner skips.
# 1. --source hint: the log warns at once, the status counts the pages
#    (unseen_pages, with a reason naming the policy and a suggestion), and so
#    do `cxltierctl status` and the metric cxltier_target_unseen_pages.
# 2. --source auto: where DAMON can be owned or observed (paddr) here, auto
#    takes it, says it did so for that memory, and nothing is unseen; where
#    neither works, it takes hint and warns that the memory stays unseen.
# Observe mode: nothing moves on this one-node machine anyway.
set -euo pipefail
. "$(dirname "$0")/lib.bash"
command -v numactl > /dev/null || { echo "SKIP: numactl is not installed"; exit 77; }
[ -r /proc/sys/kernel/numa_balancing ] || { echo "SKIP: no NUMA balancing in this kernel: no hint source"; exit 77; }
admin=/sys/kernel/mm/damon/admin/kdamonds

numactl --preferred=0 "$BUILD/tierbench" --size 32M --duration 300 > "$work/bench.out" 2>&1 &
bench=$!
wait_for 30 "tierbench's set-up" grep -q 'pid=' "$work/bench.out"
grep -q 'prefer' "/proc/$bench/numa_maps" || fail "numa_maps shows no preferred policy for tierbench"

# --- 1: hint
"$BUILD/cxltierd" --pid "$bench" --source hint --observe --run-dir "$work/run" > "$work/agent.log" 2>&1 &
agent=$!
wait_for 60 "the first epoch in the status" status_has "$work/run" '.agent.epoch >= 1'
logged "target pid $bench (tierbench): [0-9]* of its [0-9]* resident pages are unseen by source hint: under a prefer:0 memory policy" ||
	fail "no warning that hint cannot see tierbench's memory"
jq -e --argjson p "$bench" '.targets[] | select(.pid == $p) |
	.unseen_pages >= 8192 and (.unseen_reason | test("prefer:0")) and (.unseen_suggestion | length > 0)' \
	"$work/status.json" > /dev/null || fail "status: $(jq -c '.targets' "$work/status.json")"
unseen=$(jq --argjson p "$bench" '.targets[] | select(.pid == $p) | .unseen_pages' "$work/status.json")
"$BUILD/cxltierctl" --run-dir "$work/run" status > "$work/status.txt"
grep -q "pid $bench: [0-9]* pages unseen: under a prefer:0" "$work/status.txt" || fail "cxltierctl status: $(cat "$work/status.txt")"
"$BUILD/cxltierctl" --run-dir "$work/run" metrics > "$work/metrics"
grep -q "^cxltier_target_unseen_pages{pid=\"$bench\",comm=\"tierbench\",source=\"hint\"} [1-9]" "$work/metrics" ||
	fail "metric: $(grep unseen "$work/metrics")"
kill -TERM "$agent"
wait "$agent" || fail "cxltierd --source hint exited $?"
agent=""
echo "hint: $unseen pages unseen, said in the log, status, cxltierctl status and metrics"

# --- 2: auto
nr=$(cat $admin/nr_kdamonds 2>/dev/null || echo none)
ops=$(cat $admin/0/contexts/0/operations 2>/dev/null || echo none)
state=$(cat $admin/0/state 2>/dev/null || echo none)
"$BUILD/cxltierd" --pid "$bench" --observe --run-dir "$work/run" > "$work/agent.log" 2>&1 &
agent=$!
wait_for 60 "the first epoch in the status" status_has "$work/run" '.agent.epoch >= 1'
source=$(jq -r .sampler.source "$work/status.json")
if [ "$nr" = 0 ] || { [ "$ops" = paddr ] && [ "$state" = on ]; }; then
	[ "$source" = damon ] || fail "DAMON works here ($nr kdamonds, $ops, $state), yet auto took $source"
	logged "sampler: damon (.*chosen by auto because it sees the [0-9]* pages under prefer:0 that hint cannot" ||
		fail "the sampler line does not say why auto took damon"
	jq -e --argjson p "$bench" '.targets[] | select(.pid == $p) | .unseen_pages == 0' "$work/status.json" > /dev/null ||
		fail "damon sees everything, yet status: $(jq -c '.targets' "$work/status.json")"
else
	[ "$source" = hint ] || fail "no DAMON to use here ($nr kdamonds, $ops, $state), yet auto took $source"
	logged "no source here sees all of pid $bench (tierbench)'s memory: took hint" || fail "no warning"
fi
kill -TERM "$agent"
wait "$agent" || fail "cxltierd exited $?"
agent=""
echo "unseen: ok (auto took $source; DAMON here: $nr kdamonds, operations $ops)"
