#!/usr/bin/env bash
# Live test of the damon source (root).  Where a kdamond runs a paddr
# context (as on this project's machines), the agent observes its regions,
# maps them to the target's pages through page frames, and counts samples
# that no page fault gave (the target touched its memory before the agent
# started) — and leaves the kdamond exactly as it found it.  Where no one
# has set DAMON up, the agent runs its own kdamond (vaddr over the target
# where the kernel has it, else paddr) and removes it when it
# stops (tests/vm/guest/damon.sh covers that path on the emulated machine whatever
# this host has); otherwise it refuses the source with the reason.
set -euo pipefail
. "$(dirname "$0")/lib.bash"
admin=/sys/kernel/mm/damon/admin/kdamonds

"$BUILD/tierbench" --size 64M --hot 0.5 --duration 300 > "$work/bench.out" &
bench=$!
wait_for 30 "tierbench's set-up" grep -q 'pid=' "$work/bench.out"

nr=$(cat $admin/nr_kdamonds 2>/dev/null || echo none)
if [ "$nr" = 0 ]; then
	"$BUILD/cxltierd" --pid "$bench" --source damon --run-dir "$work/run" > "$work/agent.log" 2>&1 &
	agent=$!
	wait_for 60 "our own kdamond monitoring the target in the status" status_has "$work/run" \
		'.sampler.damon.owner == "agent" and
		 (if .sampler.damon.operations == "vaddr" then .sampler.damon.targets == 1
		  else .sampler.damon.pages_sampled > 0 end)'
	kill -TERM "$agent"
	wait "$agent" || fail "cxltierd exited $?"
	agent=""
	[ "$(cat $admin/nr_kdamonds)" = 0 ] || fail "our kdamond was left set up"
	echo "damon: ok (no one had set DAMON up: the agent ran its own $(jq -r .sampler.damon.operations "$work/status.json") kdamond and removed it)"
	exit 0
fi
if [ "$(cat $admin/0/state 2>/dev/null)" != on ] || [ "$(cat $admin/0/contexts/0/operations 2>/dev/null)" != paddr ]; then
	out=$("$BUILD/cxltierd" --pid "$bench" --source damon --duration 1 --run-dir "$work/run" 2>&1) &&
		fail "source damon accepted with DAMON stopped or not paddr ($nr kdamonds)"
	grep -Eq "no DAMON sysfs|someone else's|only a paddr context" <<< "$out" || fail "unclear refusal: $out"
	echo "damon: ok (DAMON here cannot be observed or owned: refused with the reason)"
	exit 0
fi
before=$(cat $admin/0/state $admin/0/contexts/0/operations $admin/0/contexts/0/monitoring_attrs/intervals/{sample_us,aggr_us,update_us})
aggr_us=$(cat $admin/0/contexts/0/monitoring_attrs/intervals/aggr_us)
secs=$(( aggr_us / 1000000 * 4 + 30 ))
"$BUILD/cxltierd" --pid "$bench" --source damon --epoch-ms 1000 --run-dir "$work/run" \
	> "$work/agent.log" 2>&1 &
agent=$!
# The kdamond reports once per aggregation interval: wait for the target's pages in its regions.
wait_for "$secs" "pages of the target in DAMON's regions" status_has "$work/run" '.targets[0].pages_sampled > 0'
cp "$work/status.json" "$work/st.json"
kill -TERM "$agent"
wait "$agent" || fail "cxltierd exited $?"
agent=""
jq -e '.sampler.source == "damon"' "$work/st.json" > /dev/null || fail "source: $(jq -c .sampler "$work/st.json")"
jq -e --argjson pid "$(cat $admin/0/pid)" '.sampler.damon.owner != "agent" and .sampler.damon.kdamond_pid == $pid' \
	"$work/st.json" > /dev/null || fail "status of the observed kdamond: $(jq -c .sampler.damon "$work/st.json")"
samples=$(jq '.targets[0].samples' "$work/st.json")
sampled=$(jq '.targets[0].pages_sampled' "$work/st.json")
echo "kdamond aggregation every $((aggr_us / 1000)) ms: $sampled pages sampled, $samples samples"
after=$(cat $admin/0/state $admin/0/contexts/0/operations $admin/0/contexts/0/monitoring_attrs/intervals/{sample_us,aggr_us,update_us})
[ "$before" = "$after" ] || fail "the kdamond's settings changed"
echo "damon: ok"
