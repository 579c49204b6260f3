#!/usr/bin/env bash
# Live test of recording (root): cxltierd --record writes the target's raw
# samples from the BPF ring buffer to a trace that cxltier-replay reads, with
# the drop count reported at exit, and the target's resident memory, where
# the replay starts.
set -euo pipefail
. "$(dirname "$0")/lib.bash"

mkfifo "$work/go"
sh -c 'read x < "$1"; exec "$2" --size 16M --duration 120' sh "$work/go" "${TIERBENCH:-$BUILD/tierbench}" > /dev/null &
bench=$!
"$BUILD/cxltierd" --pid "$bench" --record "$work/rec.trace" --epoch-ms 500 --run-dir "$work/run" \
	> "$work/agent.log" 2>&1 &
agent=$!
for _ in $(seq 50); do grep -q 'target pid' "$work/agent.log" && break; sleep 0.1; done
echo go > "$work/go"
# Its resident memory in the trace once a sweep has found the buffer (the
# first may have found the shell before its exec: then it is recorded again).
recorded_buffer() {
	sed -n "s/.*recorded the resident memory of pid $bench: \([0-9]*\) pages.*/\1/p" "$work/agent.log" |
		awk '$1 >= 4096 { ok = 1 } END { exit !ok }'
}
wait_for 120 "the resident memory of the 16 MiB buffer recorded" recorded_buffer
kill -INT "$bench"
wait "$bench" || fail "tierbench exited $?"
bench=""
# With its only target gone, the agent stops by itself and closes the trace.
wait "$agent" || fail "cxltierd exited $?"
agent=""
grep -q 'every target exited: stopping' "$work/agent.log" || fail "the agent did not stop when its target exited"
grep -Eq "recorded [0-9]+ samples to $work/rec.trace; [0-9]+ dropped" "$work/agent.log" ||
	fail "no recording summary in the log"
"$BUILD/cxltier-replay" --to-csv "$work/rec.trace" -O "$work/rec.csv" || fail "the trace does not read back"
mine=$(($(wc -l < "$work/rec.csv") - 1))
[ "$mine" -ge 4096 ] || fail "only $mine samples recorded (the 16 MiB buffer alone has 4096 pages)"
tgids=$(awk -F, 'NR > 1 { print $2 }' "$work/rec.csv" | sort -u | wc -l)
[ "$tgids" -eq 1 ] || fail "samples of $tgids processes recorded, expected only the target's"
"$BUILD/cxltier-replay" "$work/rec.trace" hotcold > "$work/replay.out" || fail "replay of the recording failed"
grep -q '^hotcold ' "$work/replay.out" || fail "replay printed no result"
# The target's resident memory is in the trace (version 2's runs), and the replay starts there.
grep -Eq "the resident memory of 1 targets in [1-9][0-9]* runs" "$work/agent.log" ||
	fail "no resident memory recorded: $(grep recorded "$work/agent.log")"
resident=$(sed -n 's/^start: as recorded, \([0-9]*\) resident pages.*/\1/p' "$work/replay.out")
[ "${resident:-0}" -ge 4096 ] || fail "the replay starts with ${resident:-no} resident pages, the buffer alone has 4096"
# A ring buffer far too small for a burst of faults: drops happen, are
# counted and reported, and what was written plus what was dropped is what
# the samplers kept.  The agent is stopped (SIGSTOP) while tierbench touches
# its 256 MiB, so that nothing drains the ring during the burst: a running
# agent on a free core can keep up with it.
mkfifo "$work/go2"
sh -c 'read x < "$1"; exec "$2" --size 256M --duration 0' sh "$work/go2" "$BUILD/tierbench" > /dev/null &
bench=$!
"$BUILD/cxltierd" --pid "$bench" --record "$work/small.trace" --ring-kb 16 --epoch-ms 500 \
	--run-dir "$work/run" > "$work/agent.log" 2>&1 &
agent=$!
for _ in $(seq 50); do grep -q 'target pid' "$work/agent.log" && break; sleep 0.1; done
kill -STOP "$agent"
echo go > "$work/go2"
wait "$bench"
bench=""
kill -CONT "$agent"
wait "$agent" || fail "cxltierd exited $?"
agent=""
line=$(grep -E "recorded [0-9]+ samples" "$work/agent.log") || fail "no recording summary"
written=$(sed -n 's/.*recorded \([0-9]*\) samples.*/\1/p' <<< "$line")
dropped=$(sed -n 's/.*; \([0-9]*\) dropped.*/\1/p' <<< "$line")
echo "small ring: $written written, $dropped dropped"
[ "$dropped" -gt 0 ] || fail "a 16 KiB ring dropped nothing: $line"
[ "$((written + dropped))" -ge 65536 ] || fail "written + dropped = $((written + dropped)) < the 65536 pages touched"
echo "record: ok ($mine samples; small ring: $written written, $dropped dropped and counted)"
