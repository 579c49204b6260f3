#!/usr/bin/env bash
# The agent under valgrind for a few epochs in observe mode (root): no
# invalid access, no use of uninitialised memory, no leak.  The only
# suppressions (tests/valgrind.supp) are for libbpf's own bpf() calls.
set -euo pipefail
BUILD=${BUILD:-build}
work=$(mktemp -d)
sleeper=""
cleanup() {
	[ -n "$sleeper" ] && kill "$sleeper" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
sleep 60 & sleeper=$!
rc=0
valgrind --suppressions=tests/valgrind.supp --leak-check=full --show-leak-kinds=definite,indirect \
	--errors-for-leak-kinds=definite,indirect --error-exitcode=9 --log-file="$work/vg.log" \
	"$BUILD/cxltierd" --pid "$sleeper" --duration 4 --epoch-ms 500 --run-dir "$work/run" \
	> "$work/agent.log" 2>&1 || rc=$?
grep -E "ERROR SUMMARY|definitely lost|indirectly lost" "$work/vg.log" | sed 's/^==[0-9]*== //'
if [ "$rc" -ne 0 ]; then
	echo "FAIL: valgrind found errors or the agent failed (exit $rc):"
	cat "$work/vg.log"
	sed 's/^/  agent: /' "$work/agent.log"
	exit 1
fi
grep -q "stopped after [0-9]* epochs" "$work/agent.log" || { echo "FAIL: the agent did not run"; cat "$work/agent.log"; exit 1; }
grep -q "ERROR SUMMARY: 0 errors" "$work/vg.log" || { echo "FAIL: errors reported"; exit 1; }
echo "valgrind: ok ($(grep -o 'stopped after [0-9]* epochs' "$work/agent.log"))"
