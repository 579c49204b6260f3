#!/usr/bin/env bash
# make bench, the tracker at scale, live (root; issue 14): the agent against a
# SIZE tierbench on this machine, with 4 KiB pages and with THP, and against a
# 64 MiB one as the baseline of the same run.  Reports, from the agent's own
# status: the longest epoch (a sweep of every resident page included) and the
# tracker's memory per resident page; from /proc: the agent's RSS growth per
# resident page over the baseline's.  Goals: longest epoch <= 50 ms, RSS
# growth <= 1 byte a page.  A last run records (--record): a recording
# agent sweeps a new target whole in one epoch, by design, and its longest
# epoch says what that costs (not held to the goal).
#
# The agent observes (--observe) through the fault source with the two-node
# topology fixture: this machine has one node, and the tracker's work (the
# sweeps, the regions, the epoch) is the same whether or not pages move.
set -euo pipefail
BUILD=${BUILD:-build}
SIZE=${SIZE:-16G}
EPOCHS=${EPOCHS:-40}
. tests/live/lib.bash

need_kb=$(($(numfmt --from=iec "$SIZE") / 1024 + (1 << 20)))
avail_kb=$(awk '/^MemAvailable/ { print $2 }' /proc/meminfo)
if [ "$avail_kb" -lt "$need_kb" ]; then
	echo "scale: SKIP: $SIZE needs ${need_kb} kB available, this machine has ${avail_kb} kB (SIZE=... to change)"
	exit 0
fi

rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
# run SIZE TIERBENCH_FLAGS...: sets row to "pages max_epoch_ms tracker_bytes rss_kb epochs"
run() {
	local size=$1 pages
	shift
	"$BUILD/tierbench" --size "$size" --hot 0.1 --skew 0.9 --duration 100000 --quiet --wait-start "$@" \
		< <(while [ ! -e "$work/go" ]; do sleep 0.1; done; echo) > "$work/tb.out" 2>&1 &
	bench=$!
	wait_for 600 "tierbench set up" grep -q '^tierbench: pid=' "$work/tb.out"
	pages=$(sed -n 's/.* pages=\([0-9]*\) .*/\1/p' "$work/tb.out")
	touch "$work/go"
	"$BUILD/cxltierd" --pid "$bench" --observe --source fault --epoch-ms 100 \
		--sysfs-root tests/fixtures/topology/dram_cxl --run-dir "$work/run" "${agent_flags[@]}" \
		> "$work/agent.log" 2>&1 &
	agent=$!
	wait_for 600 "$EPOCHS epochs" status_has "$work/run" ".agent.epoch >= $EPOCHS"
	row="$pages $(jq -r '[.agent.max_epoch_ms, .agent.tracker_bytes] | @tsv' "$work/status.json") $(rss_kb "$agent") $(jq .agent.epoch "$work/status.json")"
	kill -TERM "$agent"; wait "$agent" || fail "cxltierd exited $?"; agent=""
	kill -INT "$bench"; wait "$bench" || true; bench=""
	rm -f "$work/go"
}

agent_flags=()
run 64M
read -r bp bmax bbytes brss _ <<< "$row"
printf '%-28s %12s %14s %16s %18s\n' target pages longest_epoch tracker_B/page rss_growth_B/page
printf '%-28s %12d %11.1f ms %16.3f %18s\n' "64 MiB (baseline)" "$bp" "$bmax" "$(echo "$bbytes / $bp" | bc -l)" "-"
for mode in "4 KiB pages" "THP"; do
	flags=()
	[ "$mode" = THP ] && flags=(--thp)
	run "$SIZE" "${flags[@]}"
	read -r p max bytes rss _ <<< "$row"
	growth=$(echo "($rss - $brss) * 1024 / ($p - $bp)" | bc -l)
	printf '%-28s %12d %11.1f ms %16.3f %18.3f\n' "$SIZE, $mode" "$p" "$max" "$(echo "$bytes / $p" | bc -l)" "$growth"
done
agent_flags=(--record "$work/rec.trace")
run "$SIZE"
read -r p max bytes rss _ <<< "$row"
printf '%-28s %12d %11.1f ms %16.3f %18s\n' "$SIZE, 4 KiB, recording" "$p" "$max" "$(echo "$bytes / $p" | bc -l)" "-"
echo "goals: longest epoch <= 50 ms; RSS growth <= 1 B a page (over $EPOCHS epochs of 100 ms, sweeps included)"
