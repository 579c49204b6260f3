#!/usr/bin/env bash
# tests/fuzz/run.sh [SECONDS] [TARGET...]: runs each libFuzzer target (all
# five by default: config trace control policy_params replay) for SECONDS (default
# 10) on its checked-in seed corpus tests/fuzz/corpus/TARGET/.  New corpus
# entries go to $BUILD/fuzz/corpus/TARGET/ (kept between runs, never into the
# checkout); a crash is kept in $BUILD/fuzz/crashes/TARGET/.  Prints one line
# per target with its executions; exits 1 if any target crashed or failed.
# tests/fuzz/TARGET.dict, if there, is passed as -dict.  Build first with
# tests/fuzz/build.sh.  Extra libFuzzer flags: FUZZ_FLAGS.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
SECONDS_EACH=${1:-10}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(config trace control policy_params replay)

case $SECONDS_EACH in
''|*[!0-9]*) echo "usage: tests/fuzz/run.sh [SECONDS] [TARGET...]" >&2; exit 2 ;;
esac

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=0
for t in "${TARGETS[@]}"; do
	bin=$BUILD/fuzz/fuzz_$t
	seeds=tests/fuzz/corpus/$t
	scratch=$BUILD/fuzz/corpus/$t
	crashes=$BUILD/fuzz/crashes/$t
	log=$BUILD/fuzz/$t.log
	if [ ! -x "$bin" ] || [ ! -d "$seeds" ]; then
		echo "FAIL  fuzz_$t: no $bin or $seeds (run tests/fuzz/build.sh)"
		failed=1
		continue
	fi
	mkdir -p "$scratch" "$crashes"
	stamp=$BUILD/fuzz/.$t.started	# the crashes newer than this are this run's
	touch "$stamp"
	dict=()
	[ ! -e "tests/fuzz/$t.dict" ] || dict=(-dict="tests/fuzz/$t.dict")
	# The first corpus dir receives new inputs; the seeds are only read.
	# shellcheck disable=SC2086
	"$bin" -max_total_time="$SECONDS_EACH" -print_final_stats=1 -timeout=10 \
		-rss_limit_mb=2048 -artifact_prefix="$crashes/" "${dict[@]}" ${FUZZ_FLAGS:-} \
		"$scratch" "$seeds" > "$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	if [ $rc -ne 0 ]; then
		failed=1
		echo "FAIL  fuzz_$t: exit $rc after ${execs:-?} executions; log $log"
		find "$crashes" -type f -newer "$stamp" | sed 's/^/      kept /'
		grep -m1 -E 'ERROR: |runtime error|SUMMARY|round trip' "$log" | sed 's/^/      /'
	else
		printf 'ok    fuzz_%-14s %10s executions in %ss (%s/s), corpus %s\n' "$t" \
			"${execs:-?}" "$SECONDS_EACH" "${rate:-?}" "$(ls "$scratch" | wc -l)"
	fi
done
exit $failed
