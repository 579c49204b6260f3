#!/usr/bin/env bash
# cxltier-replay on hostile input (issue 15, finding 10): crafted traces and
# options must end in a result or in a message that names the file and the
# reason, with a non-zero exit: never a signal, a hang, a silent exit 1 or
# exit 0 after an output was lost.  `timeout` only bounds a run that would
# otherwise hang; no check waits for a fixed time.
set -euo pipefail
BUILD=${BUILD:-build}
R="$BUILD/cxltier-replay"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# mktrace FILE [TIME TGID VPAGE]...: a version 1 trace without nodes, one
# PMU sample of weight 1 per triple.
mktrace() {
	perl -e 'my $f = shift; open(my $o, ">", $f) or die "$f: $!"; binmode $o;
		print $o pack("a8 V6 Q< Q< Q<", "CXLTTRC", 1, 56, 4096, 0, 24, 0, 0, 0, 0);
		while (@ARGV) { my ($t, $g, $p) = splice(@ARGV, 0, 3);
			print $o pack("Q< V v v Q<", $t, $g, 3, 1, $p); }' "$@"
}

# expect_error WHAT STATUS PATTERN CMD...: CMD exits with STATUS (not by a
# signal) and says PATTERN on stderr.
expect_error() {
	local what=$1 status=$2 pattern=$3 rc=0
	shift 3
	timeout 60 "$@" > "$work/out" 2> "$work/err" || rc=$?
	[ "$rc" -eq "$status" ] || fail "$what: exit $rc, expected $status: $(head -c 500 "$work/err")"
	grep -q -e "$pattern" "$work/err" || fail "$what: no '$pattern' in: $(head -c 500 "$work/err")"
}

# A trace spanning the whole address space: the heat map's row scale.
mktrace "$work/span.trace" 0 1000 0 1 1000 18446744073709551615
rc=0
timeout 60 "$R" --plot "$work/plots" "$work/span.trace" hotcold > /dev/null 2> "$work/err" || rc=$?
[ "$rc" -eq 0 ] || fail "--plot on a trace spanning the address space: exit $rc: $(cat "$work/err")"
[ "$(wc -l < "$work/plots/heatmap.dat")" -eq 128 ] || fail "heatmap.dat has not 128 rows"

# Synthetic parameters that leave no cold page (hot_pages == pages).
for kind in hotset shift; do
	expect_error "--synth $kind, all pages hot" 2 "no cold page" \
		"$R" --synth "$kind" --pages 16 --hot 0.99 -O "$work/s.trace"
done

# Time spans: the number of epochs is bounded, and the refusal says so.
mktrace "$work/huge.trace" 0 1000 1 4611686018427387904 1000 2
expect_error "a span of 2^62 ns" 1 "huge.trace: .*epochs" "$R" "$work/huge.trace" hotcold
mktrace "$work/long.trace" 0 1000 1 2000000000000000 1000 2
expect_error "a span of 2e6 epochs" 1 "long.trace: .*epochs" "$R" "$work/long.trace" hotcold
# ... but a larger epoch fits it, and a gap leaves the epochs between empty.
out=$(timeout 60 "$R" --json -e 3600000 "$work/long.trace" hotcold) || fail "-e 3600000 refused"
jq -e '.epochs == 556' <<< "$out" > /dev/null || fail "epochs: $(jq .epochs <<< "$out")"

# Every write is checked.
"$R" --synth zipf --pages 256 --samples 2000 --epochs 3 -O "$work/z.trace" 2> /dev/null
expect_error "table to /dev/full" 1 "cannot write standard output" sh -c '"$0" "$1" hotcold > /dev/full' "$R" "$work/z.trace"
expect_error "JSON to /dev/full" 1 "cannot write standard output" sh -c '"$0" --json "$1" hotcold > /dev/full' "$R" "$work/z.trace"
expect_error "CSV to /dev/full" 1 "cannot write standard output" sh -c '"$0" --to-csv "$1" > /dev/full' "$R" "$work/z.trace"
expect_error "CSV -O /dev/full" 1 "cannot write /dev/full" "$R" --to-csv "$work/z.trace" -O /dev/full
# A trace is written only to a regular file (the agent's rule for --record);
# a full disk under one is tests/live/paths.sh's.
expect_error "--synth -O /dev/full" 1 "is a device, not a regular file" \
	"$R" --synth zipf --pages 256 --samples 2000 --epochs 3 -O /dev/full

# Ratios are numbers in range, nothing else.
for r in nan:4 1:nan inf:inf 1:inf 0:4 -1:4 1:0 4:1 1:4x; do
	expect_error "--fast-ratio $r" 2 "expected A:B" "$R" --fast-ratio "$r" "$work/z.trace" hotcold
done
"$R" --fast-ratio 1.5:6 --json "$work/z.trace" hotcold | jq -e '.fast_pages == 64' > /dev/null ||
	fail "--fast-ratio 1.5:6 not taken as 1:4"

# 200k processes, one sample each: the target lookup must not be linear.
perl -e 'open(my $o, ">", shift) or die; binmode $o;
	print $o pack("a8 V6 Q< Q< Q<", "CXLTTRC", 1, 56, 4096, 0, 24, 0, 0, 0, 0);
	print $o pack("Q< V v v Q<", $_, 100000 + $_, 3, 1, 0x7f0000) for 0 .. 199999' "$work/procs.trace"
out=$(timeout 60 "$R" --json "$work/procs.trace" hotcold) || fail "200k processes: not done in 60 s"
jq -e '.policies[1].accesses == 200000' <<< "$out" > /dev/null || fail "200k processes: $(jq -c .policies[1] <<< "$out")"

# The trace truncated while the replay reads it: an error, not SIGBUS.
"$R" --synth zipf --pages 4096 --samples 20000 --epochs 4 -O "$work/t.trace" 2> /dev/null
expect_error "trace truncated under the replay" 1 "t.trace: .*truncated" \
	env CXLT_TEST_TRUNCATE="$work/t.trace" "$R" "$work/t.trace" "$BUILD/tests/policies/truncate.so"
echo "replay-hostile: ok"
