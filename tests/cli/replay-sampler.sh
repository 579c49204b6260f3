#!/usr/bin/env bash
# cxltier-replay's score is the full stream's: every access of every
# weight, whatever the policy was shown.
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
echo "replay-sampler: ok"
