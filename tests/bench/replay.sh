#!/usr/bin/env bash
# make bench, replay part: every shipped policy on the four synthetic traces
# at fast:total = 1:4 and 1:8, its fast-tier hit ratio as a fraction of the
# oracle's, and replay speed.  Goals (issues 4 and 17): hotset >= 0.96 of
# the oracle on zipf and hotset, >= 0.88 on shift (the lagged oracle, which
# knows the last epoch perfectly and moves for free, gets 0.90 there: each
# move's own epoch is lost, and the oracle knows it), beats tpp on shift, and beats
# every other shipped policy on scan (the scans' own epochs cap everyone
# near 0.65 at 1:4 and 0.8 at 1:8); the replay with the default policy
# >= 20 M weighted samples/s (issue 17: a record of weight w is w samples;
# the records' own rate comes first; every shipped policy at once is
# slower: their decisions count).
set -euo pipefail
BUILD=${BUILD:-build}
R="$BUILD/cxltier-replay"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Every shipped policy, as the Makefile finds them; the default first.
policies=(hotset)
for src in tiering-policies/*.c; do
	p=$(basename "$src" .c)
	[ "$p" = hotset ] || policies+=("$p")
done
for kind in zipf hotset shift scan; do
	"$R" --synth "$kind" --seed 1 -O "$work/$kind.trace" 2> /dev/null
done
printf '%-8s %-5s' trace fast
for p in none "${policies[@]}"; do printf ' %9s' "$p"; done
printf ' %9s %9s\n' "lagged" "oracle"
for kind in zipf hotset shift scan; do
	for ratio in 1:4 1:8; do
		"$R" --json --fast-ratio "$ratio" "$work/$kind.trace" "${policies[@]}" > "$work/r.json"
		printf '%-8s %-5s' "$kind" "$ratio"
		jq -r '.policies[1:][] | .vs_oracle' "$work/r.json" | while read -r v; do printf ' %9.3f' "$v"; done
		printf ' %9.3f' "$(jq '.lagged_oracle_vs_oracle' "$work/r.json")"
		printf ' %8.1f%%\n' "$(jq '.policies[0].fast_hit_ratio * 100' "$work/r.json")"
	done
done
echo "(each policy's fast-tier hit ratio as a fraction of the oracle's; lagged: the last epoch's"
echo " hottest pages each epoch, moved for free, the same fraction; the oracle's own ratio last)"
"$R" --timing --fast-ratio 1:4 "$work/zipf.trace" "${policies[@]}" 2>&1 >/dev/null | grep -E '^(replayed|isolation)'
echo "the default policy alone (goal >= 20 M weighted samples/s, one core):"
"$R" --timing --fast-ratio 1:4 "$work/zipf.trace" hotset 2>&1 >/dev/null | grep -E '^replayed'
