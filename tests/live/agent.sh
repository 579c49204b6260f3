#!/usr/bin/env bash
# Live test of the whole agent on this kernel (root): cxltierd against a
# tierbench child shows that target's pages in `cxltierctl status --json` and
# in `bpftool map dump pinned`, and after SIGTERM exits 0 and leaves nothing
# under its pin directory.
set -euo pipefail
. "$(dirname "$0")/lib.bash"
pin=/sys/fs/bpf/cxltier
run="$work/run"

if [ -e "$pin" ]; then
	fail "$pin exists: another cxltierd is running here; stop it first"
fi

nb0=$(cat /proc/sys/kernel/numa_balancing)
rl0=$(cat /proc/sys/kernel/numa_balancing_promote_rate_limit_MBps)

# The child waits on a fifo, then execs tierbench under the same pid, so the
# agent is attached before tierbench first touches its buffer.
mkfifo "$work/go"
sh -c 'read x < "$1"; exec "$2" --size 16M --hot 0.25 --duration 6 --verify' sh \
	"$work/go" "$BUILD/tierbench" > "$work/bench.out" &
bench=$!

"$BUILD/cxltierd" --pid "$bench" --epoch-ms 2000 --run-dir "$run" -v > "$work/agent.log" 2>&1 &
agent=$!
for _ in $(seq 50); do [ -e "$pin/cxlt_heat" ] && break; sleep 0.1; done
[ -e "$pin/cxlt_heat" ] || fail "the agent did not pin its heat map"
sleep 0.3
echo go > "$work/go"
sleep 0.7

# Before the first drain, the heat map holds the target's pages, typed by BTF.
bpftool -j map dump pinned "$pin/cxlt_heat" > "$work/heat.json"
entries=$(jq --argjson p "$bench" '[.[] | select(.formatted.key.tgid == $p)] | length' "$work/heat.json")
others=$(jq --argjson p "$bench" '[.[] | select(.formatted.key.tgid != $p)] | length' "$work/heat.json")
echo "heat map: $entries entries of pid $bench, $others of other processes"
[ "$entries" -ge 4000 ] || fail "expected >= 4000 heat map entries of pid $bench, got $entries"
[ "$others" -eq 0 ] || fail "heat map holds $others entries of other processes"
dump=$(bpftool map dump pinned "$pin/cxlt_heat")
grep -q '"vpage"' <<< "$dump" || fail "map dump shows no typed keys"
prog=$(bpftool prog show pinned "$pin/cxlt_fault_btf")
grep -q 'name cxlt_fault_btf' <<< "$prog" || fail "no pinned cxlt_fault_btf program: $prog"

# After an epoch, the status names the target and its pages.
for _ in $(seq 60); do
	if "$BUILD/cxltierctl" --run-dir "$run" status --json > "$work/status.json" 2>/dev/null &&
	   [ "$(jq '.agent.epoch' "$work/status.json")" -ge 1 ]; then break; fi
	sleep 0.1
done
jq -e --argjson p "$bench" '.targets[] | select(.pid == $p and .pages_tracked >= 4096 and .pages_sampled >= 4000 and .samples >= 4000)' \
	"$work/status.json" > /dev/null || fail "status does not show pid $bench with its pages: $(jq -c .targets "$work/status.json")"
jq -e '.agent.mode == "observe" and .sampler.source == "hint" and .policy.name == "hotset"' \
	"$work/status.json" > /dev/null || fail "unexpected mode/source/policy: $(jq -c '[.agent.mode,.sampler.source,.policy.name]' "$work/status.json")"
jq -e '.sampler_pinned.samples_kept >= 4000' "$work/status.json" > /dev/null || fail "pinned stats not read"
text=$("$BUILD/cxltierctl" --run-dir "$run" status)
grep -q "tierbench" <<< "$text" || fail "text status lacks the target: $text"

kill -TERM "$agent"
rc=0
wait "$agent" || rc=$?
agent=""
[ "$rc" -eq 0 ] || fail "cxltierd exited $rc after SIGTERM"
[ ! -e "$pin" ] || fail "pins left after SIGTERM: $(ls "$pin")"
[ ! -e "$run/status.json" ] || fail "status.json left after exit"
grep -q "observe mode" "$work/agent.log" || fail "the log does not say it runs in observe mode"
[ "$(cat /proc/sys/kernel/numa_balancing)" = "$nb0" ] || fail "kernel.numa_balancing not restored"
[ "$(cat /proc/sys/kernel/numa_balancing_promote_rate_limit_MBps)" = "$rl0" ] || fail "promotion rate limit not restored"
wait "$bench" || fail "tierbench failed: $(cat "$work/bench.out")"
bench=""
grep -q "verify=ok" "$work/bench.out" || fail "tierbench did not verify: $(cat "$work/bench.out")"
echo "agent: ok"
