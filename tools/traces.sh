#!/usr/bin/env bash
# make traces: real programs from Debian, captured whole (every load and
# store, cxltier-capture with cxltier's valgrind tool) into build/traces/,
# then each replayed with every shipped policy against the oracle at 1:4, a
# row per policy and sampler: the policies see the trace as recorded (none:
# every access) and as each live source would have sampled it, at the
# agent's defaults (pmu: its CPU budget; hint: a scanner pass a second).
# The clock is stretched 1000 times (--time-scale): a capture window of a
# million instructions is one second, one epoch, so a program of a few
# billion instructions runs for half an hour or more, as tiering sees
# programs.  Last, a summary: the default policy (hotset) against the
# oracle on each program, under each live sampler (--summary: only that,
# as make bench prints it).  Each program's rows stay in JSON beside its
# trace (build/traces/NAME.json).
#
# Adding a program is one line in the corpus below: NAME  COMMAND...  A
# server needs a client too: driver[NAME] is a shell snippet run beside
# the capture (with $out/NAME.sock free for a socket) that drives the
# program and then makes it exit.
set -euo pipefail
BUILD=${BUILD:-build}
summary_only=false
[ "${1:-}" != --summary ] || summary_only=true
out="$BUILD/traces"
mkdir -p "$out"
# The compressors' input: 4 MiB of CSV, the same bytes on every machine.
input="$out/input.csv"
python3 - "$input" <<'PY'
import random, sys
random.seed(1)
words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "lambda", "theta", "zeta"]
with open(sys.argv[1], "w") as f:
    i = 0
    while f.tell() < 4 << 20:
        f.write("%d,%s-%s,%d,%.3f\n" % (i, random.choice(words), random.choice(words),
                                         random.randrange(1000000), random.random() * 1000))
        i += 1
PY

corpus=(
	"python-dict  /usr/bin/python3 -c 'import random; random.seed(1); d = {i: str(i) for i in range(400000)}; s = sum(len(d[random.randrange(400000)]) for _ in range(400000))'"
	"sqlite       sqlite3 :memory: 'create table t(k integer primary key, v text); with recursive n(i) as (select 1 union all select i + 1 from n where i < 100000) insert into t select i, printf(\"%040d%040d\", i * 7919 % 100003, i) from n; create index tv on t(v); select count(*), sum(length(v)) from t where k % 13 = 0; with recursive r(j) as (select 1 union all select j + 1 from r where j < 200000) select sum(length(v)) from r join t on t.k = (r.j * 7919) % 100000 + 1; select count(*) from t where v between \"0000000000000000000000000000000000005\" and \"0000000000000000000000000000000000006\";'"
	"redis        redis-server --port 0 --unixsocket $out/redis.sock --save '' --appendonly no"
	"xz           xz -3 -c $input"
	"gzip         gzip -6 -c $input"
)
declare -A driver
driver[redis]="redis-benchmark -s $out/redis.sock -n 200000 -r 200000 -d 100 -t set,get -P 16 -q > /dev/null &&
	redis-cli -s $out/redis.sock shutdown nosave > /dev/null || true"

# A driver's program is ready when its socket answers; a minute at most.
wait_socket() {
	for _ in $(seq 600); do
		[ -S "$1" ] && redis-cli -s "$1" ping > /dev/null 2>&1 && return 0
		kill -0 "$2" 2> /dev/null || return 1
		sleep 0.1
	done
	return 1
}

policies=$(shopt -s nullglob; for so in "$BUILD"/policies/*.so; do basename "$so" .so; done | tr '\n' ' ')
[ -n "$policies" ] || { echo "make traces: no policies in $BUILD/policies (make first)" >&2; exit 1; }

# One program: captured, then replayed once for its table and its summary
# line (the JSON stays beside the trace).  Its output goes to NAME.out.
one() {
	local name=$1 cmd=$2 start pid
	local replay=("$BUILD/cxltier-replay" --time-scale 1000 --fast-ratio 1:4 --policy-dir "$BUILD/policies")

	echo "== $name: $cmd"
	start=$(date +%s)
	if [ -n "${driver[$name]:-}" ]; then
		rm -f "$out/$name.sock"
		eval "\"$BUILD/cxltier-capture\" -q -o \"$out/$name.trace\" -- $cmd" > "$out/$name.log" 2>&1 &
		pid=$!
		wait_socket "$out/$name.sock" "$pid" || { kill "$pid" 2> /dev/null; echo "$name did not start: $(tail -3 "$out/$name.log")"; return 1; }
		eval "${driver[$name]}"
		wait "$pid" || { echo "capture of $name failed: $(tail -3 "$out/$name.log")"; return 1; }
	else
		eval "\"$BUILD/cxltier-capture\" -q -o \"$out/$name.trace\" -- $cmd" > /dev/null
	fi
	echo "captured in $(( $(date +%s) - start )) s: $out/$name.trace"
	if $summary_only; then
		"${replay[@]}" --json --sampler none,pmu,hint "$out/$name.trace" hotset > "$out/$name.json"
	else
		# shellcheck disable=SC2086
		"${replay[@]}" --json-out "$out/$name.json" --sampler none,pmu,hint,fault,damon \
			"$out/$name.trace" $policies
	fi
	jq -r --arg n "$name" '[.policies[] | select(.policy == "hotset")] as $h |
		def row(s): ($h[] | select(.sampler | startswith(s)) | .vs_oracle);
		[$n, .pages, .policies[1].vs_oracle, row("none"), row("pmu"), row("hint"),
		 .lagged_oracle_vs_oracle] | @tsv' "$out/$name.json" > "$out/$name.tsv"
}

# As many programs at once as there are CPUs (a capture or a replay keeps
# one busy; redis's benchmark client takes a little of another); their
# outputs in corpus order, each as soon as it and those before it are
# done.  A failed one stops the others.
t0=$(date +%s)
names=() pids=()
for entry in "${corpus[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do
		wait -n || true
	done
	name=${entry%% *}
	cmd=${entry#* }
	cmd=${cmd#"${cmd%%[! ]*}"}
	one "$name" "$cmd" > "$out/$name.out" 2>&1 &
	names+=("$name") pids+=($!)
done
summary=()
for i in "${!names[@]}"; do
	ok=true
	wait "${pids[$i]}" || ok=false
	cat "$out/${names[$i]}.out"
	if ! $ok; then
		for p in "${pids[@]}"; do
			pkill -P "$p" 2> /dev/null || true
			kill "$p" 2> /dev/null || true
		done
		wait || true
		echo "make traces: ${names[$i]} failed (above)" >&2
		exit 1
	fi
	summary+=("$(cat "$out/${names[$i]}.tsv")")
done
echo
echo "== the default policy (hotset) / the oracle, fast:total 1:4 ($(( $(date +%s) - t0 )) s in all)"
printf '%-12s %7s %9s %9s %9s %9s %9s\n' program pages none-pol full pmu hint lagged
while IFS=$'\t' read -r n pages none full pmu hint lagged; do
	printf '%-12s %7s %9.3f %9.3f %9.3f %9.3f %9.3f\n' "$n" "$pages" "$none" "$full" "$pmu" "$hint" "$lagged"
done < <(printf '%s\n' "${summary[@]}")
echo "(none-pol: no migration, first touch; full: hotset shown every access; pmu, hint: as the"
echo " live sources would have sampled it; lagged: the last epoch's hottest pages, moved for free)"
