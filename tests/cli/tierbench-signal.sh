#!/usr/bin/env bash
# tierbench keeps its report schedule when a placement report takes longer than
# the interval (move_pages over a big buffer, slow under emulation), and a
# SIGINT that lands during a report ends it at once, with its final verify.
# (A report that overran once used to sleep for 71 minutes: the share test's
# capped tierbench never exited.)
set -euo pipefail
BUILD=${BUILD:-build}
work=$(mktemp -d)
bench=""
trap '[ -n "$bench" ] && kill "$bench" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
reports() { grep -c '^tierbench: placement' "$work/tb.out" || true; }
until_or_fail() { # WHAT COMMAND...: poll for up to 60 s
	local what=$1 deadline=$(($(date +%s) + 60))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$deadline" ] ||
			fail "$what; $(reports) placement reports, the last line: $(tail -1 "$work/tb.out")"
		sleep 0.05
	done
}
at_least_reports() { [ "$(reports)" -ge "$1" ]; }
gone() { ! kill -0 "$bench" 2>/dev/null; }

# 10 us between reports: every placement report (16,384 pages) overruns it.
"$BUILD/tierbench" --size 64M --duration 120 --report-interval 0.00001 --placement --verify \
	> "$work/tb.out" 2>&1 &
bench=$!
until_or_fail "tierbench stopped reporting (its reports overran their interval)" \
	at_least_reports 20
kill -INT "$bench"
until_or_fail "tierbench did not exit within 60 s of SIGINT" gone
status=0
wait "$bench" || status=$?
bench=""
[ "$status" -eq 0 ] || fail "tierbench exited $status after SIGINT: $(tail -2 "$work/tb.out")"
grep -q '^tierbench: ops=.* verify=ok mismatches=0' "$work/tb.out" ||
	fail "no final verify=ok line: $(tail -2 "$work/tb.out")"
echo "tierbench-signal: ok"
