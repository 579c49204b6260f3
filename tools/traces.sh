#!/usr/bin/env bash
# make traces: real programs from Debian, captured whole (every load and
# store, cxltier-capture with cxltier's valgrind tool) into build/traces/, then each
# replayed with every shipped policy against the oracle at 1:4, a row per
# policy and sampler: the policies see the trace as recorded (none: every
# access) and as each live source would have sampled it, at the agent's
# defaults (pmu: its CPU budget; hint: a scanner pass a second).  The clock
# is stretched 1000 times (--time-scale): a capture window of a million
# instructions is one second, one epoch, so a program of a few hundred
# million instructions runs for minutes, as tiering sees programs.
# Adding a program is one line in the list below: NAME  COMMAND...
set -euo pipefail
BUILD=${BUILD:-build}
out="$BUILD/traces"
mkdir -p "$out"
input="$out/input.bin"
head -c 200000 /usr/bin/bash > "$input"   # the same bytes on every machine of a release

corpus=(
	"python-dict  /usr/bin/python3 -c 'd = {i: str(i) for i in range(40000)}; s = sum(len(d[i]) for i in range(0, 40000, 7))'"
	"xz           xz -3 -c $input"
	"gzip         gzip -6 -c $input"
	"sqlite       sqlite3 :memory: 'create table t(k integer primary key, v text); with recursive n(i) as (select 1 union all select i + 1 from n where i < 5000) insert into t select i, hex(randomblob(40)) from n; select count(*), sum(length(v)) from t where k % 13 = 0;'"
)
policies=$(ls "$BUILD"/policies/*.so | xargs -n1 basename | sed 's/\.so$//' | tr '\n' ' ')
for entry in "${corpus[@]}"; do
	name=${entry%% *}
	cmd=${entry#* }
	cmd=${cmd#"${cmd%%[! ]*}"}
	echo "== $name: $cmd"
	start=$(date +%s)
	eval "\"$BUILD/cxltier-capture\" -q -o \"$out/$name.trace\" -- $cmd" > /dev/null
	echo "captured in $(( $(date +%s) - start )) s: $out/$name.trace"
	# shellcheck disable=SC2086
	"$BUILD/cxltier-replay" --time-scale 1000 --fast-ratio 1:4 --policy-dir "$BUILD/policies" \
		--sampler none,pmu,hint,fault,damon "$out/$name.trace" $policies
done
