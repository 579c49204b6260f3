#!/usr/bin/env bash
# Live test (root): several sources together with weights.  fault:1 and
# fault-perf:3 both see each first touch, so every buffer page of the
# target counts 1 + 3 = 4 per fault; lists that would count one hook twice,
# unknown names and bad weights are refused.
set -euo pipefail
. "$(dirname "$0")/lib.bash"
pin=/sys/fs/bpf/cxltier

mkfifo "$work/go"
sh -c 'read x < "$1"; exec "$2" --size 16M --duration 120' sh "$work/go" "$BUILD/tierbench" > "$work/bench.out" &
bench=$!
# A long first epoch: the heat map is read before the agent drains it.
"$BUILD/cxltierd" --pid "$bench" --source fault:1,fault-perf:3 --epoch-ms 600000 --run-dir "$work/run" \
	> "$work/agent.log" 2>&1 &
agent=$!
wait_for 30 "the agent's set-up (control socket)" socket_up "$work/run"
echo go > "$work/go"
# tierbench prints its info line once it has touched every page of its buffer.
wait_for 30 "tierbench's info line" grep -q 'buf=0x' "$work/bench.out"
bpftool -j map dump pinned "$pin/cxlt_heat" > "$work/heat.json"
buf=$(sed -n 's/.*buf=\(0x[0-9a-f]*\).*/\1/p' "$work/bench.out")
[ -n "$buf" ] || fail "no tierbench info line"
first=$(( buf / 4096 ))
last=$(( first + 4096 ))
read -r pages four other < <(jq -r --argjson p "$bench" --argjson f "$first" --argjson l "$last" '
	[.[] | select(.formatted.key.tgid == $p and .formatted.key.vpage >= $f and .formatted.key.vpage < $l)
	     | .formatted.value.samples] as $s
	| "\($s | length) \([$s[] | select(. == 4)] | length) \([$s[] | select(. % 4 != 0)] | length)"' "$work/heat.json")
echo "buffer pages in the heat map: $pages, with 4 samples: $four, not a multiple of 4: $other"
[ "$pages" -ge 4000 ] || fail "only $pages buffer pages sampled"
[ "$four" -ge $((pages * 9 / 10)) ] || fail "weights not applied: $four of $pages pages count 4"
[ "$other" -eq 0 ] || fail "$other pages counted by one source only"
"$BUILD/cxltierctl" --run-dir "$work/run" status --json | jq -e '.sampler.source == "fault:1,fault-perf:3"' \
	> /dev/null || fail "status does not name both sources"
kill -TERM "$agent"
wait "$agent" || fail "cxltierd exited $?"
agent=""

check_refused() { # LIST WORDS
	local out
	out=$("$BUILD/cxltierd" --pid "$bench" --source "$1" --duration 0.2 --run-dir "$work/run2" 2>&1) &&
		fail "--source $1 accepted"
	grep -q "$2" <<< "$out" || fail "--source $1: $out"
}
check_refused fault,hint "hint shares its hook"
check_refused pmu,fault-perf "fault-perf shares its hook"
check_refused fault:0 "weight '0' of fault is not a number from 1 to 1000"
check_refused bogus:2 "unknown source 'bogus'"
echo "sources: ok"
