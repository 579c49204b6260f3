#!/usr/bin/env bash
# cxltier-replay --sampler: each emulated source reports exactly what it
# should of small hand-made streams (seen through --to-csv --sampler), and
# the score is the full stream's, every access of every weight, whatever
# the policy was shown.
set -euo pipefail
BUILD=${BUILD:-build}
R="$BUILD/cxltier-replay"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# mktrace FILE [TIME TGID VPAGE SOURCE WEIGHT]...: a version 1 trace without
# nodes, one sample per group of five (SOURCE: 1 fault, 2 hint, 3 pmu).
mktrace() {
	perl -e 'my $f = shift; open(my $o, ">", $f) or die "$f: $!"; binmode $o;
		print $o pack("a8 V6 Q< Q< Q<", "CXLTTRC", 1, 56, 4096, 0, 24, 0, 0, 0, 0);
		while (@ARGV) { my ($t, $g, $p, $s, $w) = splice(@ARGV, 0, 5);
			print $o pack("Q< V v v Q<", $t, $g, $s, $w, $p); }' "$@"
}

# A page's accesses in an epoch past 65,535 count in full (the policy's
# `samples` saturate; the score does not).
mktrace "$work/heavy.trace" 0 1 100 3 65535  1 1 100 3 65535  2 1 200 3 1
"$R" --json --fast-pages 1 "$work/heavy.trace" hotset > "$work/heavy.json"
jq -e '[.policies[0,1] | .accesses == 131071] | all' "$work/heavy.json" > /dev/null ||
	fail "accesses past 65,535 a page and epoch were not all counted: $(jq -c '[.policies[] | {policy, accesses, fast_hits}]' "$work/heavy.json")"
jq -e '.policies[0].fast_hits == 131070 and .policies[1].fast_hits == 131070' "$work/heavy.json" > /dev/null ||
	fail "fast hits of the heavy page: $(jq -c '[.policies[] | {policy, accesses, fast_hits}]' "$work/heavy.json")"

# The lagged oracle puts the last epoch's hottest pages in the fast tier:
# page 1 is hottest in epoch 0, page 2 in epochs 1 and 2, so of the
# oracle's 30 hits it gets epoch 1's 1 and epoch 2's 10.
mktrace "$work/lag.trace" 0 1 1 3 10  0 1 2 3 1  1000000000 1 1 3 1  1000000000 1 2 3 10 \
	2000000000 1 1 3 1  2000000000 1 2 3 10
"$R" --json --fast-pages 1 "$work/lag.trace" hotset > "$work/lag.json"
jq -e '.policies[0].fast_hits == 30 and .lagged_oracle_fast_hits == 11' "$work/lag.json" > /dev/null ||
	fail "lagged oracle: $(jq -c '{lagged_oracle_fast_hits, oracle: .policies[0].fast_hits}' "$work/lag.json")"
"$R" --fast-pages 1 "$work/lag.trace" hotset | grep -q '^lagged oracle .*: 0.367 of the oracle' ||
	fail "lagged oracle in the table: $("$R" --fast-pages 1 "$work/lag.trace" hotset)"

# samples FILE: the CSV's rows without the header.
samples() { tail -n +2 "$1"; }
ms=1000000

# fault: first touches only, weight 1, at the time of the first access.
mktrace "$work/f.trace" 0 1 10 3 5  $((1 * ms)) 1 11 3 7  $((2 * ms)) 1 10 3 9  $((3 * ms)) 2 10 3 1 \
	$((4 * ms)) 1 11 3 2
"$R" --sampler fault --to-csv "$work/f.trace" -O "$work/f.csv"
[ "$(samples "$work/f.csv")" = "0,1,0xa000,fault,1
1000000,1,0xb000,fault,1
3000000,2,0xa000,fault,1" ] || fail "fault sampler: $(cat "$work/f.csv")"

# hint: a first touch faults; after each scanner pass (every 10 ms from the
# first sample) a page's first use faults once, whatever its weight.
mktrace "$work/h.trace" 0 1 10 3 4  $((1 * ms)) 1 10 3 4  $((2 * ms)) 1 11 3 1 \
	$((11 * ms)) 1 10 3 9  $((12 * ms)) 1 10 3 9  $((15 * ms)) 1 12 3 1 \
	$((25 * ms)) 1 10 3 1  $((25 * ms)) 1 11 3 1  $((26 * ms)) 1 11 3 1
"$R" --sampler hint --hint-period-ms 10 --epoch-ms 10 --to-csv "$work/h.trace" -O "$work/h.csv"
[ "$(samples "$work/h.csv")" = "0,1,0xa000,fault,1
2000000,1,0xb000,fault,1
11000000,1,0xa000,hint,1
15000000,1,0xc000,fault,1
25000000,1,0xa000,hint,1
25000000,1,0xb000,hint,1" ] || fail "hint sampler: $(cat "$work/h.csv")"
# --time-scale K stretches the clock: the samples come at K times the time
# from the first, so a scanner K times slower sees the same faults.
"$R" --sampler hint --time-scale 10 --hint-period-ms 100 --epoch-ms 100 --to-csv "$work/h.trace" -O "$work/h10.csv"
[ "$(samples "$work/h10.csv")" = "$(samples "$work/h.csv" | awk -F, -v OFS=, '{ $1 *= 10; print }')" ] ||
	fail "hint sampler with --time-scale 10: $(cat "$work/h10.csv")"
# The period is the agent's by default: cxltierd --help says which.
agent=$("$BUILD/cxltierd" --help | tr '\n' ' ' | grep -o -- "--hint-period-ms [^(]*(default [0-9]*" | grep -o '[0-9]*$')
replay=$("$R" --help | tr '\n' ' ' | grep -o -- "--hint-period-ms [^(]*(default [0-9]*" | grep -o '[0-9]*$')
[ -n "$agent" ] && [ "$agent" = "$replay" ] || fail "--hint-period-ms: cxltierd's default '$agent', the replay's '$replay'"

# damon: pages 0 and 4 make two ranges of one page each (cut at the gap
# between them), too small to split, so the page checked is known; checks
# every 5 ms count an access since the last check (page 0: at 0, 6 and 11
# ms, three; page 4: at 0, one), handed to every page of the region at the
# 100 ms aggregation.
mktrace "$work/d.trace" 0 1 0 3 1  0 1 4 3 1  $((6 * ms)) 1 0 3 1  $((11 * ms)) 1 0 3 1 \
	$((150 * ms)) 1 8 3 1
"$R" --sampler damon --to-csv "$work/d.trace" -O "$work/d.csv"
[ "$(samples "$work/d.csv")" = "100000000,1,0x0,damon,3
100000000,1,0x4000,damon,1" ] || fail "damon sampler: $(cat "$work/d.csv")"
# A trace as coarse as a capture (samples 1 s apart, each window's accesses
# at its end): the accesses count as spread over the second after, so
# page 0, touched 2,000 times, is found in nearly every check of it (about
# 20 an aggregation, each 100 ms) and page 4, touched once, in about one.
mktrace "$work/dc.trace" 0 1 0 3 2000  0 1 4 3 1  $((1000 * ms)) 1 0 3 2000  $((1000 * ms)) 1 4 3 1 \
	$((2000 * ms)) 1 8 3 1
"$R" --sampler damon --to-csv "$work/dc.trace" -O "$work/dc.csv"
hot=$(samples "$work/dc.csv" | awk -F, -v e=$((1000 * ms)) '$1 < e && $3 == "0x0" && $5 >= 18 { n++ } END { print n + 0 }')
once=$(samples "$work/dc.csv" | awk -F, -v e=$((1000 * ms)) '$1 < e && $3 == "0x4000" { n += $5 } END { print n + 0 }')
[ "$hot" -ge 9 ] && [ "$once" -le 5 ] ||
	fail "damon on a coarse trace: page 0 in $hot aggregations of 10 at 18 or more, page 4 counted $once: $(cat "$work/dc.csv")"

# pmu:1 reports every access; pmu:N one in N, the same draws for the same
# seed and others for another; pmu alone is the agent's CPU budget, 3,333
# samples a second: 2 x 65,535 accesses in 1 s is one in 39.
mktrace "$work/p.trace" 0 1 10 3 65535  $((1000 * ms)) 1 11 3 65535
"$R" --sampler pmu:1 --to-csv "$work/p.trace" -O "$work/p1.csv"
[ "$(samples "$work/p1.csv")" = "0,1,0xa000,pmu,65535
1000000000,1,0xb000,pmu,65535" ] || fail "pmu:1: $(cat "$work/p1.csv")"
"$R" --sampler pmu:100 --to-csv "$work/p.trace" -O "$work/p100.csv"
"$R" --sampler pmu:100 --to-csv "$work/p.trace" -O "$work/p100b.csv"
"$R" --sampler pmu:100 --seed 2 --to-csv "$work/p.trace" -O "$work/p100s.csv"
cmp -s "$work/p100.csv" "$work/p100b.csv" || fail "pmu:100 differs between two runs"
! cmp -s "$work/p100.csv" "$work/p100s.csv" || fail "pmu:100 with --seed 2 drew the same samples"
n=$(samples "$work/p100.csv" | awk -F, '{ n += $5 } END { print n }')
[ "$n" -ge 1150 ] && [ "$n" -le 1470 ] || fail "pmu:100 of 131,070 accesses gave $n samples (1,311 expected)"
"$R" --json --sampler pmu "$work/p.trace" hotset | jq -e '.policies[2].sampler == "pmu:39"' > /dev/null ||
	fail "pmu's default N: $("$R" --json --sampler pmu "$work/p.trace" hotset | jq -c '[.policies[].sampler]')"

# Stretched 10 times, the same accesses span 10 s: ten times the budget, one in 4.
"$R" --json --sampler pmu --time-scale 10 "$work/p.trace" hotset | jq -e '.policies[2].sampler == "pmu:4"' > /dev/null ||
	fail "pmu's default N at --time-scale 10: $("$R" --json --sampler pmu --time-scale 10 "$work/p.trace" hotset | jq -c '[.policies[].sampler]')"

# The score is the truth's: under fault the policy sees one sample a page,
# but every row counts all 20 x 1,000 + 20 accesses, and the hot page,
# first touched into the one fast page, scores all of its own (probe moves
# nothing).
args=()
for e in $(seq 0 19); do
	args+=($((e * 1000 * ms)) 1 100 3 1000  $((e * 1000 * ms + 1)) 1 $((200 + e)) 3 1)
done
mktrace "$work/s.trace" "${args[@]}"
probe=$BUILD/tests/policies/probe.so
"$R" --json --fast-pages 1 --sampler fault,none -o "probe:out=$work/probe.txt" "$work/s.trace" hotset "$probe" \
	> "$work/s.json"
jq -e '[.policies[] | .accesses == 20020] | all' "$work/s.json" > /dev/null ||
	fail "not every access scored: $(jq -c '[.policies[] | {policy, sampler, accesses}]' "$work/s.json")"
jq -e '.policies[4] | .sampler == "fault" and .fast_hits == 20000' "$work/s.json" > /dev/null ||
	fail "fault row's hits: $(jq -c '.policies[4]' "$work/s.json")"
# Each sampler's view holds together (heat the decayed sum of samples, idle
# time reset by a sample, nodes valid).
for s in none pmu:3 hint fault damon:10; do
	rm -f "$work/probe.txt"
	"$R" --sampler "$s" --hint-period-ms 500 -o "probe:out=$work/probe.txt" "$work/s.trace" "$probe" > /dev/null
	[ -s "$work/probe.txt" ] || fail "$s: probe saw no epoch with samples"
	! grep -E 'INCONSISTENT|INVALID|MISALIGNED|=none' "$work/probe.txt" || fail "$s: the view probe saw: $(cat "$work/probe.txt")"
done

# Rows are policies x samplers, next to the oracle and none; with no
# --sampler the output is what it always was, and none is that same run.
"$R" --json "$work/s.trace" hotset tpp > "$work/plain.json"
"$R" --json --sampler none,fault -s hint "$work/s.trace" hotset tpp > "$work/rows.json"
[ "$(jq -c '[.policies[] | [.policy, .sampler]]' "$work/rows.json")" = \
  '[["oracle",null],["none",null],["hotset","none"],["hotset","fault"],["hotset","hint"],["tpp","none"],["tpp","fault"],["tpp","hint"]]' ] ||
	fail "rows: $(jq -c '[.policies[] | [.policy, .sampler]]' "$work/rows.json")"
jq -e '[.policies[] | has("sampler")] | any | not' "$work/plain.json" > /dev/null || fail "a sampler without --sampler"
[ "$(jq -c '[.policies[0,1,2,3]]' "$work/plain.json")" = "$(jq -c '[.policies[0,1,2,5] | del(.sampler)]' "$work/rows.json")" ] ||
	fail "--sampler none differs from the trace as recorded"
"$R" --sampler none,fault "$work/s.trace" hotset > "$work/rows.txt"
grep -Eq '^hotset +fault +[0-9.]+%' "$work/rows.txt" || fail "table: $(cat "$work/rows.txt")"

# Hostile spans: a million epochs of an hour, pages at both ends of the
# address space; the samplers' clocks skip what holds no access (`timeout`
# only bounds a hang).
mktrace "$work/far.trace" 0 1 0 3 1  1 1 18446744073709551615 3 1  3599999999999000000 7 5 3 1
for s in hint damon:10 pmu:4294967296 pmu fault; do
	timeout 120 "$R" --epoch-ms 3600000 --sampler "$s" "$work/far.trace" hotset > /dev/null 2> "$work/err" ||
		fail "--sampler $s on a trace of a million hours: $(cat "$work/err")"
done

# Bad values are refused by name.
rc=0
"$R" --time-scale 0 "$work/s.trace" hotset > /dev/null 2> "$work/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--time-scale" "$work/err" || fail "--time-scale 0: exit $rc: $(cat "$work/err")"
for bad in nosuch hint:3 pmu:0 pmu:x damon:9 ,; do
	rc=0
	"$R" --sampler "$bad" "$work/s.trace" hotset > /dev/null 2> "$work/err" || rc=$?
	[ "$rc" -eq 2 ] && grep -q -- "--sampler '$bad'" "$work/err" || fail "--sampler $bad: exit $rc: $(cat "$work/err")"
done
rc=0
"$R" --sampler pmu,hint --to-csv "$work/s.trace" > /dev/null 2> "$work/err" || rc=$?
[ "$rc" -eq 2 ] || fail "--to-csv with two samplers: exit $rc"
echo "replay-sampler: ok"
