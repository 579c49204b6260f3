#!/usr/bin/env bash
# cxltier-replay keeps every row a policy cannot spoil (issue 17): each
# policy runs in its own process on a copy of its view.  A policy that
# crashes, writes past the plan or the page records, hangs, or is refused
# at load gets that as its row's result, by name; every other row is the
# same as when it runs alone; the exit status is 1.  A policy that rewrites
# its view's node, samples and heat (it scored 1.127 x the oracle before)
# scores exactly like "none", which never moves a page.
set -euo pipefail
BUILD=${BUILD:-build}
R="$BUILD/cxltier-replay"
P="$BUILD/tests/policies"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$R" --synth zipf --pages 4096 --samples 60000 --epochs 20 --seed 3 -O "$work/z.trace" 2> /dev/null

"$R" --json "$work/z.trace" hotset > "$work/alone.json" || fail "hotset alone: exit $?"
rc=0
# timeout only bounds a replay whose time limit failed; nothing waits for it.
timeout 120 "$R" --json --decide-limit-ms 300 "$work/z.trace" hotset "$P/crash.so" "$P/hang.so" \
	"$P/overrun.so" "$P/rewrite.so" -o age:nosuch=1 age > "$work/all.json" 2> "$work/err" || rc=$?
[ "$rc" -eq 1 ] || fail "exit $rc, expected 1: $(cat "$work/err")"
row() { jq -c --arg p "$1" '.policies[] | select(.policy == $p)' "$work/all.json"; }
[ "$(jq '.policies | length' "$work/all.json")" -eq 8 ] || fail "rows: $(jq -c '[.policies[].policy]' "$work/all.json")"
[ "$(row hotset)" = "$(jq -c '.policies[] | select(.policy == "hotset")' "$work/alone.json")" ] ||
	fail "hotset beside bad policies: $(row hotset), alone: $(jq -c '.policies[2]' "$work/alone.json")"
for expect in 'crash:crashed (SIGSEGV)' 'hang:timed out: a decision took over 300 ms' \
	'overrun:crashed (SIGSEGV)' 'age(nosuch=1):refused at load'; do
	name=${expect%%:*} want=${expect#*:}
	[ "$(row "$name" | jq -r .error)" = "$want" ] || fail "$name: $(row "$name"), expected '$want'"
	grep -qF "policy $name: $want; the other rows go on" "$work/err" || fail "$name not named on stderr: $(cat "$work/err")"
done
grep -q "unknown parameter 'nosuch'" "$work/err" || fail "the refusal's reason is not shown: $(cat "$work/err")"

# A heap the policy corrupted itself: the C library aborts, the row says so.
rc=0
timeout 120 "$R" --json -o crash:how=abort "$work/z.trace" "$P/crash.so" hotset > "$work/abort.json" 2> /dev/null || rc=$?
[ "$rc" -eq 1 ] && jq -e '.policies[2].error == "aborted (SIGABRT)" and (.policies[3].error | not)' "$work/abort.json" > /dev/null ||
	fail "a double free: exit $rc, $(jq -c '.policies[2:]' "$work/abort.json")"

# Past the page records, too: a guard page, not a corrupted heap.
rc=0
timeout 120 "$R" --json -o overrun:what=pages "$work/z.trace" "$P/overrun.so" > "$work/pages.json" 2> /dev/null || rc=$?
[ "$rc" -eq 1 ] && jq -e '.policies[2].error == "crashed (SIGSEGV)"' "$work/pages.json" > /dev/null ||
	fail "writing past the page records: exit $rc, $(jq -c '.policies[2]' "$work/pages.json")"

# The view rewriter scores from the model's truth: exactly "none", <= the oracle.
jq -e '(.policies[] | select(.policy == "rewrite")) as $w | .policies[1] as $none | .policies[0] as $o |
	$w.fast_hits == $none.fast_hits and $w.promoted == 0 and $w.fast_hit_ratio <= $o.fast_hit_ratio' \
	"$work/all.json" > /dev/null || fail "rewrite: $(row rewrite), none: $(jq -c '.policies[1]' "$work/all.json")"

# A decision within the limit is not cut: the same hotset row with a generous limit and with none.
"$R" --json --decide-limit-ms 0 "$work/z.trace" hotset | cmp -s - "$work/alone.json" ||
	fail "--decide-limit-ms 0 changed hotset's row"
echo "replay-isolation: ok"
