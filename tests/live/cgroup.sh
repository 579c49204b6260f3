#!/usr/bin/env bash
# Live test of cgroup targets (root): with --cgroup, a process that joins the
# cgroup after the agent started is sampled at once by the BPF cgroup filter
# (before the agent has even seen its PID), then adopted as a target.
set -euo pipefail
. "$(dirname "$0")/lib.bash"
pin=/sys/fs/bpf/cxltier
mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
cg="$mnt/cxltier-test-$$"
cleanup_more() {
	rmdir "$cg" 2>/dev/null || true
}

[ -n "$mnt" ] || fail "no cgroup v2 hierarchy mounted"
mkdir "$cg"
"$BUILD/cxltierd" --cgroup "$cg" --epoch-ms 3000 --run-dir "$work/run" > "$work/agent.log" 2>&1 &
agent=$!
for _ in $(seq 50); do [ -e "$pin/cxlt_heat" ] && break; sleep 0.1; done
[ -e "$pin/cxlt_heat" ] || fail "the agent did not start"

# Joins the cgroup, then becomes tierbench: its faults count through the cgroup id.
sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" --size 16M --duration 5' sh "$cg" "$BUILD/tierbench" \
	> "$work/bench.out" &
child=$!
sleep 1
bpftool -j map dump pinned "$pin/cxlt_heat" > "$work/heat.json"
entries=$(jq --argjson p "$child" '[.[] | select(.formatted.key.tgid == $p)] | length' "$work/heat.json")
others=$(jq --argjson p "$child" '[.[] | select(.formatted.key.tgid != $p)] | length' "$work/heat.json")
echo "heat map before the agent's first epoch: $entries entries of pid $child, $others of others"
[ "$entries" -ge 4000 ] || fail "the cgroup filter let through only $entries entries of pid $child"
[ "$others" -eq 0 ] || fail "$others entries of processes outside the cgroup"

for _ in $(seq 80); do
	grep -q "target pid $child .*added: member of cgroup" "$work/agent.log" && break
	sleep 0.1
done
grep -q "target pid $child .*added: member of cgroup $cg" "$work/agent.log" || fail "pid $child was not adopted"
kill -TERM "$agent"
rc=0
wait "$agent" || rc=$?
agent=""
[ "$rc" -eq 0 ] || fail "cxltierd exited $rc"
wait "$child"
child=""
echo "cgroup: ok"
