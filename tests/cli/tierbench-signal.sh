#!/usr/bin/env bash
# tierbench keeps its report schedule when a placement report takes longer than
# the interval (move_pages over a big buffer, slow under emulation), and a
# SIGINT that lands during a report ends it at once, with its final verify.
# (A report that overran once used to sleep for 71 minutes: the share test's
# capped tierbench never exited.)
set -euo pipefail
. "$(dirname "$0")/../live/lib.bash"
reports() { grep -c '^tierbench: placement' "$work/tb.out" || true; }
at_least_reports() { [ "$(reports)" -ge "$1" ]; }
gone() { ! kill -0 "$bench" 2>/dev/null; }

# 10 us between reports: every placement report (16,384 pages) overruns it.
"$BUILD/tierbench" --size 64M --duration 120 --report-interval 0.00001 --placement --verify \
	> "$work/tb.out" 2>&1 &
bench=$!
wait_for 60 "20 placement reports, each over its interval" \
	at_least_reports 20
kill -INT "$bench"
wait_for 60 "tierbench to exit after SIGINT" gone
status=0
wait "$bench" || status=$?
bench=""
[ "$status" -eq 0 ] || fail "tierbench exited $status after SIGINT: $(tail -2 "$work/tb.out")"
grep -q '^tierbench: ops=.* verify=ok mismatches=0' "$work/tb.out" ||
	fail "no final verify=ok line: $(tail -2 "$work/tb.out")"
echo "tierbench-signal: ok"
