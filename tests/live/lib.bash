# Sourced by the live tests, and by the cli tests that run a tierbench: BUILD, a
# work directory, and on exit the processes the test left in $agent, $bench,
# $sleeper or $child ended, cleanup_more run if the test defines it, and the work
# directory removed. fail prints the agent's log ($work/agent.log) if there is one.
BUILD=${BUILD:-build}
work=$(mktemp -d)
agent="" bench="" sleeper="" child=""
cleanup() {
	local p
	for p in "$agent" "$bench" "$sleeper" "$child"; do
		[ -n "$p" ] && kill "$p" 2>/dev/null || true
		[ -n "$p" ] && kill -CONT "$p" 2>/dev/null || true	# a test may have stopped it
	done
	wait 2>/dev/null || true
	if declare -F cleanup_more > /dev/null; then cleanup_more; fi
	rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; sed 's/^/  agent: /' "$work/agent.log" >&2 2>/dev/null || true; exit 1; }

# Tests wait for conditions, never for a time: the machine may be busy with
# another build.  wait_for SECONDS WHAT CMD...: runs CMD every 0.1 s until it
# succeeds; after SECONDS (generous: a deadline, not a pace) fails naming WHAT.
wait_for() {
	local deadline=$(($(date +%s) + $1)) what=$2
	shift 2
	until "$@"; do
		[ "$(date +%s)" -lt "$deadline" ] || fail "waited in vain for $what"
		sleep 0.1
	done
}
logged() { grep -q -- "$1" "$work/agent.log"; }
socket_up() { [ -S "$1/cxltier.sock" ]; }
# status_has RUN_DIR JQ_FILTER: the running agent's status satisfies the filter.
status_has() {
	"$BUILD/cxltierctl" --run-dir "$1" status --json > "$work/status.json" 2>/dev/null &&
		jq -e "$2" "$work/status.json" > /dev/null
}
# heat_entries PID: heat map entries of PID (N) and of every other process (M), as "N M".
heat_entries() {
	bpftool -j map dump pinned /sys/fs/bpf/cxltier/cxlt_heat > "$work/heat.json"
	jq -r --argjson p "$1" '[([.[] | select(.formatted.key.tgid == $p)] | length),
				 ([.[] | select(.formatted.key.tgid != $p)] | length)] | @tsv' "$work/heat.json"
}
