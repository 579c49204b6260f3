#!/usr/bin/env bash
# Live test of cgroup targets (root), on whatever cgroup layout this machine
# has (pure v2, or hybrid with v2 at /sys/fs/cgroup/unified):
#  - a process that joins the cgroup after the agent started is sampled by
#    the BPF cgroup filter before the agent has even seen its PID (no epoch
#    runs in this part), and nothing outside the cgroup is;
#  - a process that joins later is adopted as a target;
#  - a cgroup v1 directory is refused with the reason (BPF sees v2 ids only).
set -euo pipefail
. "$(dirname "$0")/lib.bash"
pin=/sys/fs/bpf/cxltier
mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
v1=$(awk '$3 == "cgroup" { print $2; exit }' /proc/mounts)
cg=""
cleanup_more() {
	[ -z "$cg" ] || rmdir "$cg" 2>/dev/null || true
}
start_agent() { # ARGS...: returns once set-up is done (the control socket is up)
	"$BUILD/cxltierd" --cgroup "$cg" --source fault --run-dir "$work/run" "$@" \
		> "$work/agent.log" 2>&1 &
	agent=$!
	for _ in $(seq 300); do
		[ -S "$work/run/cxltier.sock" ] && return 0
		kill -0 "$agent" 2>/dev/null || fail "the agent exited during set-up"
		sleep 0.1
	done
	fail "the agent's control socket did not appear within 30 s"
}
stop_agent() {
	kill -TERM "$agent"
	rc=0
	wait "$agent" || rc=$?
	agent=""
	[ "$rc" -eq 0 ] || fail "cxltierd exited $rc"
}
join_and_run() { # joins the cgroup, then becomes tierbench (its faults count through the cgroup id)
	sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" --size 16M --duration 120' sh "$cg" \
		"$BUILD/tierbench" > "$work/bench.out" &
	child=$!
}
ours() { # pid: heat map entries of pid, and of every other process
	bpftool -j map dump pinned "$pin/cxlt_heat" > "$work/heat.json"
	jq --argjson p "$1" '[([.[] | select(.formatted.key.tgid == $p)] | length),
			      ([.[] | select(.formatted.key.tgid != $p)] | length)] | @tsv' -r "$work/heat.json"
}

if [ -n "$v1" ]; then
	mkdir -p "$v1/cxltier-test-$$"
	out=$("$BUILD/cxltierd" --cgroup "$v1/cxltier-test-$$" --duration 1 --run-dir "$work/run1" 2>&1) &&
		{ rmdir "$v1/cxltier-test-$$"; fail "a cgroup v1 directory was accepted: $out"; }
	rmdir "$v1/cxltier-test-$$"
	grep -q "is in a cgroup v1 hierarchy" <<< "$out" || fail "v1 refusal lacks the reason: $out"
	echo "v1 directory $v1/cxltier-test-$$ refused: $(grep -o 'is in a cgroup v1.*' <<< "$out")"
fi
if [ -z "$mnt" ]; then
	echo "this machine has no cgroup v2 hierarchy: --cgroup is refused, as checked above"
	[ -n "$v1" ] || fail "no cgroup hierarchy of either kind is mounted"
	exit 0
fi
cg="$mnt/cxltier-test-$$"
mkdir "$cg"
echo "cgroup v2 at $mnt (layout: $([ -n "$v1" ] && echo hybrid || echo pure v2))"

# 1. The filter, before any epoch: an epoch would adopt the child and drain the map.
start_agent --epoch-ms 600000
join_and_run
for _ in $(seq 300); do
	read -r entries others <<< "$(ours "$child")"
	[ "$entries" -ge 4000 ] && break
	sleep 0.1
done
echo "heat map before the agent's first epoch: $entries entries of pid $child, $others of others"
[ "$entries" -ge 4000 ] || fail "the cgroup filter let through only $entries entries of pid $child in 30 s"
[ "$others" -eq 0 ] || fail "$others entries of processes outside the cgroup"
! grep -q "target pid $child " "$work/agent.log" || fail "the agent saw pid $child: the check proves nothing"
stop_agent
kill "$child"
wait "$child" 2>/dev/null || true
child=""

# 2. Adoption of a process that joins while the agent runs.
start_agent --epoch-ms 200
join_and_run
for _ in $(seq 300); do
	grep -q "target pid $child .*added: member of cgroup $cg" "$work/agent.log" && break
	sleep 0.1
done
grep -q "target pid $child .*added: member of cgroup $cg" "$work/agent.log" ||
	fail "pid $child was not adopted within 30 s"
stop_agent
echo "cgroup: ok"
