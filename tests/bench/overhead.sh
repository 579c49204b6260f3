#!/usr/bin/env bash
# make bench, sampling overhead (root): tierbench's operations per second with
# the agent attached divided by without, in one run, alternating so both see
# the same noise, for each source available here; samples per second
# delivered; the BPF programs' mean run time (kernel.bpf_stats_enabled on
# while measuring, restored after).  Goal (issue 5): ratio >= 0.98.  Runs
# last 10 s: the hint source pays for whole scanner passes (its budget is an
# average), and a first pass always runs in the first seconds.
set -euo pipefail
BUILD=${BUILD:-build}
SECS=${SECS:-10}
ROUNDS=${ROUNDS:-5}
work=$(mktemp -d)
stats0=$(cat /proc/sys/kernel/bpf_stats_enabled)
nb0=$(cat /proc/sys/kernel/numa_balancing 2>/dev/null || echo)
rl0=$(cat /proc/sys/kernel/numa_balancing_promote_rate_limit_MBps 2>/dev/null || echo)
numa_back() {
	[ -z "$nb0" ] || echo "$nb0" > /proc/sys/kernel/numa_balancing
	[ -z "$rl0" ] || echo "$rl0" > /proc/sys/kernel/numa_balancing_promote_rate_limit_MBps
}
restore() {
	echo "$stats0" > /proc/sys/kernel/bpf_stats_enabled
	numa_back
	rm -rf "$work"
}
trap restore EXIT
echo 1 > /proc/sys/kernel/bpf_stats_enabled

ops() { sed -n 's/.*ops_per_sec=\([0-9]*\).*/\1/p' "$1"; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

alone() {
	"$BUILD/tierbench" --size 256M --hot 0.25 --duration "$SECS" > "$work/alone.out"
	ops "$work/alone.out"
}
# The kernel's share of the hint source: its scanner in the mode the agent sets, no agent.
scanner() {
	echo 0 > /proc/sys/kernel/numa_balancing_promote_rate_limit_MBps
	echo 3 > /proc/sys/kernel/numa_balancing
	"$BUILD/tierbench" --size 256M --hot 0.25 --duration "$SECS" > "$work/scan.out"
	numa_back
	ops "$work/scan.out"
}
attached() { # SOURCE
	mkfifo "$work/go"
	sh -c 'read x < "$1"; exec "$2" --size 256M --hot 0.25 --duration "$3"' sh "$work/go" \
		"$BUILD/tierbench" "$SECS" > "$work/with.out" &
	local bench=$!
	"$BUILD/cxltierd" --pid "$bench" --source "$1" --run-dir "$work/run" > "$work/agent.log" 2>&1 &
	local agent=$!
	for _ in $(seq 100); do grep -q 'target pid' "$work/agent.log" && break; sleep 0.05; done
	echo go > "$work/go"
	sleep $((SECS - 1))
	"$BUILD/cxltierctl" --run-dir "$work/run" status --json > "$work/status.json" 2>/dev/null || true
	for p in $(bpftool prog show -j | jq -r '.[] | select(.name | startswith("cxlt_")) | "\(.name)=\(.run_time_ns // 0)/\(.run_cnt // 0)"'); do
		echo "$p" >> "$work/runtime.$1"
	done
	wait "$bench"
	rm -f "$work/go"
	wait "$agent" || true
	ops "$work/with.out"
	jq -r '(.sampler.samples_kept // 0) + (.sampler.damon.pages_sampled // 0)' "$work/status.json" >> "$work/kept.$1"
}

printf '%-11s %12s %12s %7s %12s %s\n' source "alone ops/s" "with ops/s" ratio "samples/s" "BPF ns/run"
# damon where a kdamond runs here (observed) or DAMON is free (the agent's own).
damon=""
kd=/sys/kernel/mm/damon/admin/kdamonds
if [ -f $kd/nr_kdamonds ] && { [ "$(cat $kd/nr_kdamonds)" = 0 ] ||
	{ [ "$(cat $kd/0/state)" = on ] && [ "$(cat $kd/0/contexts/0/operations)" = paddr ]; }; }; then
	damon=damon
fi
for src in ${SOURCES:-none fault hint scanner fault-perf $damon}; do
	[ "$src" != scanner ] || [ -n "$nb0" ] || continue
	: > "$work/a" ; : > "$work/w"
	for _ in $(seq "$ROUNDS"); do
		alone >> "$work/a"
		if [ "$src" = none ]; then
			alone >> "$work/w"
			echo 0 >> "$work/kept.$src"
		elif [ "$src" = scanner ]; then
			scanner >> "$work/w"
			echo 0 >> "$work/kept.$src"
		else
			attached "$src" >> "$work/w" || { echo "$src: failed"; continue 2; }
		fi
	done
	a=$(median < "$work/a")
	w=$(median < "$work/w")
	kept=$(median < "$work/kept.$src")
	rt=""
	[ ! -f "$work/runtime.$src" ] ||
		rt=$(tail -3 "$work/runtime.$src" | awk -F'[=/]' '$3 > 0 { printf "%s %.0f ", $1, $2 / $3 }')
	printf '%-11s %12s %12s %7.3f %12.0f %s\n' "$src" "$a" "$w" "$(echo "$w / $a" | bc -l)" \
		"$(echo "$kept / ($SECS - 1)" | bc -l)" "${rt:-n/a}"
done
echo "(median of $ROUNDS runs of ${SECS}s each, 1 tierbench thread, 256 MiB; the agent in observe mode here;"
echo " none: alone against alone, the noise floor; scanner: the kernel's NUMA scanner in the hint"
echo " source's mode, no agent: what hint would cost without its budget)"
