# Sourced by the live tests: BUILD, a work directory, and on exit the processes the test
# left in $agent, $bench, $sleeper or $child ended, cleanup_more run if the test defines
# it, and the work directory removed. fail prints the agent's log ($work/agent.log).
BUILD=${BUILD:-build}
work=$(mktemp -d)
agent="" bench="" sleeper="" child=""
cleanup() {
	local p
	for p in "$agent" "$bench" "$sleeper" "$child"; do
		[ -n "$p" ] && kill "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	if declare -F cleanup_more > /dev/null; then cleanup_more; fi
	rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; sed 's/^/  agent: /' "$work/agent.log" >&2 2>/dev/null || true; exit 1; }
