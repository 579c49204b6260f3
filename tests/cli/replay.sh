#!/usr/bin/env bash
# cxltier-replay as a researcher uses it: synthetic traces are reproducible
# from their seed, the same inputs give byte-identical output, the numbers
# hold together (oracle >= every policy, hits <= accesses), CSV export,
# plots, and clear refusals of bad input.
set -euo pipefail
BUILD=${BUILD:-build}
R="$BUILD/cxltier-replay"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$R" --synth shift --pages 4096 --samples 60000 --epochs 30 --seed 7 -O "$work/a.trace" 2>/dev/null
"$R" --synth shift --pages 4096 --samples 60000 --epochs 30 --seed 7 -O "$work/b.trace" 2>/dev/null
"$R" --synth shift --pages 4096 --samples 60000 --epochs 30 --seed 8 -O "$work/c.trace" 2>/dev/null
cmp -s "$work/a.trace" "$work/b.trace" || fail "same seed, different traces"
! cmp -s "$work/a.trace" "$work/c.trace" || fail "different seeds, same trace"

policies=(hotcold "$BUILD/tests/policies/flip.so")
"$R" "$work/a.trace" "${policies[@]}" > "$work/out1"
"$R" "$work/a.trace" "${policies[@]}" > "$work/out2"
cmp -s "$work/out1" "$work/out2" || fail "replay output differs between two runs: $(diff "$work/out1" "$work/out2")"
grep -q '^oracle ' "$work/out1" && grep -q '^none ' "$work/out1" && grep -q '^flip ' "$work/out1" ||
	fail "table lacks a row: $(cat "$work/out1")"

"$R" --json "$work/a.trace" "${policies[@]}" > "$work/out.json"
jq -e '.policies | length == 4' "$work/out.json" > /dev/null || fail "JSON has not 4 rows"
jq -e '[.policies[] | .fast_hits <= .accesses] | all' "$work/out.json" > /dev/null || fail "hits > accesses"
jq -e '.policies[0].fast_hit_ratio as $o | [.policies[] | .fast_hit_ratio <= $o + 1e-9] | all' \
	"$work/out.json" > /dev/null || fail "a policy beat the oracle: $(jq -c '[.policies[] | .fast_hit_ratio]' "$work/out.json")"
jq -e '.policies[1] | .promoted == 0 and .demoted == 0' "$work/out.json" > /dev/null || fail "'none' moved pages"
# --json-out: the JSON --json gives, and the table on standard output, from one replay.
"$R" --json-out "$work/both.json" "$work/a.trace" "${policies[@]}" > "$work/both.out"
cmp -s "$work/both.out" "$work/out1" || fail "--json-out changed the table: $(diff "$work/both.out" "$work/out1")"
cmp -s "$work/both.json" "$work/out.json" || fail "--json-out wrote other JSON than --json"
! "$R" --json-out "$work/no/such/dir.json" "$work/a.trace" hotcold > /dev/null 2> "$work/err" ||
	fail "an unwritable --json-out gave exit 0"
grep -q "cannot write $work/no/such/dir.json" "$work/err" || fail "unwritable --json-out: $(cat "$work/err")"
# hotset's headroom is kept free: at the end of a zipf run at 1:4 (1,024
# fast pages, the high watermark 5%), headroom=0.2 leaves at most
# 1024 * 0.75 in use, no headroom nearly all of it.
"$R" --synth zipf --pages 4096 --samples 200000 --epochs 30 --seed 7 -O "$work/z.trace" 2> /dev/null
"$R" --fast-ratio 1:4 --epochs-csv "$work/hr.csv" -o hotset:headroom=0,0.2 "$work/z.trace" hotset > /dev/null
used0=$(awk -F, '$1 == "hotset(headroom=0)" { v = $6 } END { print v + 0 }' "$work/hr.csv")
used2=$(awk -F, '$1 == "hotset(headroom=0.2)" { v = $6 } END { print v + 0 }' "$work/hr.csv")
[ "$used2" -le 770 ] && [ "$used0" -ge 900 ] ||
	fail "fast pages in use at the end: $used0 with no headroom, $used2 with headroom=0.2 (want >= 900, <= 770)"
# Ping-pong is the mover's own test: with the mover's window (10, as the
# shipped policies' settle_epochs) a move back the mover allows is never
# counted; one epoch short of it, flip's every move back is.
jq -e '.policies[3] | .promoted > 0 and .demoted > 0 and .pingpong == 0' "$work/out.json" > /dev/null ||
	fail "flip moved nothing, or a move the mover allows counted as ping-pong: $(jq -c '.policies[3]' "$work/out.json")"
"$R" --json --pingpong-epochs 9 "$work/a.trace" "$BUILD/tests/policies/flip.so" > "$work/pp.json"
jq -e '.policies[2].pingpong > 0' "$work/pp.json" > /dev/null || fail "--pingpong-epochs 9: no ping-pong counted: $(jq -c '.policies[2]' "$work/pp.json")"
"$R" --json --pingpong-epochs 9 --pingpong-window 9 "$work/a.trace" "$BUILD/tests/policies/flip.so" |
	jq -e '.policies[2].pingpong == 0' > /dev/null || fail "a window equal to the mover's counted a ping-pong"
# The replay's mover defaults are the agent's (mover.c): the help of both says so.
for opt in low-wmark high-wmark pingpong-epochs; do
	agent=$("$BUILD/cxltierd" --help | tr '\n' ' ' | grep -o -- "--$opt [^(]*(default [0-9.]*" | grep -o '[0-9.]*$')
	replay=$("$R" --help | tr '\n' ' ' | grep -o -- "--$opt [^(]*(default [0-9.]*" | grep -o '[0-9.]*$')
	[ -n "$agent" ] && [ "$agent" = "$replay" ] || fail "--$opt: cxltierd's default '$agent', the replay's '$replay'"
done
"$R" --json "$work/a.trace" hotcold > "$work/d.json"
"$R" --json --low-wmark 2 --high-wmark 5 "$work/a.trace" hotcold | cmp -s - "$work/d.json" ||
	fail "the replay's default watermarks are not 2/5%"
jq -e '.fast_pages == 1024' "$work/out.json" > /dev/null || fail "default fast ratio is not 1:4"
"$R" --json --fast-ratio 1:8 "$work/a.trace" hotcold | jq -e '.fast_pages == 512' > /dev/null ||
	fail "--fast-ratio 1:8 not applied"

# Rows are labelled by file and parameters; a list of values is a sweep,
# each row the same as the run of that value alone.
"$R" --json -o hotset:settle_epochs=10,30 -o hotset:min_gain=1,4 -o flip:nosuch=1 "$work/a.trace" hotset \
	"$BUILD/tests/policies/flip.so" > "$work/sweep.json" 2> /dev/null && fail "a refused row gave exit 0"
[ "$(jq -c '[.policies[].policy]' "$work/sweep.json")" = \
  '["oracle","none","hotset(settle_epochs=10,min_gain=1)","hotset(settle_epochs=10,min_gain=4)","hotset(settle_epochs=30,min_gain=1)","hotset(settle_epochs=30,min_gain=4)","flip(nosuch=1)"]' ] ||
	fail "sweep rows: $(jq -c '[.policies[].policy]' "$work/sweep.json")"
jq -e '.policies[5] | .file == "hotset" and .params == {"settle_epochs": "30", "min_gain": "4"}' "$work/sweep.json" > /dev/null ||
	fail "a row's file and params: $(jq -c '.policies[5]' "$work/sweep.json")"
"$R" --json -o hotset:settle_epochs=30 -o hotset:min_gain=4 "$work/a.trace" hotset |
	jq -c '.policies[2] | del(.policy, .params)' > "$work/one.json"
jq -c '.policies[5] | del(.policy, .params)' "$work/sweep.json" | cmp -s - "$work/one.json" ||
	fail "a swept row differs from its run alone: $(cat "$work/one.json")"
! cmp -s <(jq -c '.policies[2] | del(.policy, .params)' "$work/sweep.json") "$work/one.json" ||
	fail "settle_epochs=10 and 30 gave the same row: the sweep's values were not passed"
# Two files of one base name are told apart by their paths.
mkdir "$work/other" && cp "$BUILD/tests/policies/flip.so" "$work/other/"
"$R" --json "$work/a.trace" "$BUILD/tests/policies/flip.so" "$work/other/flip.so" |
	jq -e --arg a "$BUILD/tests/policies/flip.so" --arg b "$work/other/flip.so" \
	'[.policies[2:][].policy] == [$a, $b]' > /dev/null || fail "two flip.so rows share a label"

# --policy-help is the agent's own.
diff <("$R" --policy-help hotset) <("$BUILD/cxltierd" --policy hotset --policy-help) ||
	fail "--policy-help differs from cxltierd's"

# Every shipped policy does its job with its defaults: each beats "none" on
# every kind of synthetic trace (hotcold and age used to equal it: after
# first touch free DRAM sits between the watermarks).  On scan the default
# keeps its hot set through the scans, and beats the others (it used to
# swap the hot set out for the scanned pages: 0.45 of the oracle at 1:4,
# under hotcold and age).
for kind in zipf hotset shift scan; do
	"$R" --synth "$kind" --pages 4096 --samples 60000 --epochs 30 --seed 2 -O "$work/$kind.trace" 2> /dev/null
	for ratio in 1:4 1:8; do
		"$R" --json --fast-ratio "$ratio" "$work/$kind.trace" hotset hotcold age tpp > "$work/k.json"
		jq -e '.policies[1].fast_hits as $none | [.policies[2:][] | .fast_hits > $none] | all' "$work/k.json" > /dev/null ||
			fail "$kind $ratio: a shipped policy does not beat none: $(jq -c '[.policies[1:][] | {policy, vs_oracle}]' "$work/k.json")"
		[ "$kind" != scan ] ||
			jq -e '.policies[2].fast_hits as $default | [.policies[3:][] | .fast_hits < $default] | all' "$work/k.json" > /dev/null ||
			fail "scan $ratio: hotset does not beat the other policies: $(jq -c '[.policies[1:][] | {policy, vs_oracle}]' "$work/k.json")"
	done
done

samples=$(jq .samples "$work/out.json")
"$R" --to-csv "$work/a.trace" -O "$work/a.csv"
[ "$(head -1 "$work/a.csv")" = "time_ns,tgid,vaddr,source,weight" ] || fail "CSV header"
[ "$(($(wc -l < "$work/a.csv") - 1))" -eq "$samples" ] || fail "CSV rows != samples"

"$R" --plot "$work/plots" "$work/a.trace" hotcold > /dev/null 2>&1 || fail "plotting failed"
for p in hit-ratio heatmap; do
	[ "$(head -c 4 "$work/plots/$p.png" | od -An -c | tr -d ' ')" = '211PNG' ] || fail "$p.png is not a PNG"
done

# Bad input: clear messages, non-zero exits.
printf 'garbage' > "$work/bad.trace"
out=$("$R" "$work/bad.trace" hotcold 2>&1) && fail "garbage accepted"
grep -q "not a cxltier trace" <<< "$out" || fail "garbage: $out"
head -c 100 "$work/a.trace" > "$work/short.trace"
out=$("$R" "$work/short.trace" hotcold 2>&1) && fail "truncated trace accepted"
grep -q "truncated" <<< "$out" || fail "truncated: $out"
out=$("$R" -o hotcold:nosuch=1 "$work/a.trace" hotcold 2>&1) && fail "unknown parameter accepted"
grep -q "unknown parameter 'nosuch' (accepted: promote_heat, demote_idle)" <<< "$out" || fail "param: $out"
out=$("$R" "$work/a.trace" nosuchpolicy 2>&1) && fail "missing policy accepted"
grep -q "nosuchpolicy.so: No such file" <<< "$out" || fail "missing policy: $out"
out=$("$R" --fast-ratio 4:1 "$work/a.trace" hotcold 2>&1) && fail "bad ratio accepted"
grep -q "expected A:B" <<< "$out" || fail "ratio: $out"
echo "replay: ok"
