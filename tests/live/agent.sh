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
sh -c 'read x < "$1"; exec "$2" --size 16M --hot 0.25 --duration 120 --verify' sh \
	"$work/go" "$BUILD/tierbench" > "$work/bench.out" &
bench=$!

# A long first epoch: the heat map is checked before the agent drains it.
"$BUILD/cxltierd" --pid "$bench" --epoch-ms 5000 --run-dir "$run" -v > "$work/agent.log" 2>&1 &
agent=$!
wait_for 30 "the agent's set-up (control socket)" socket_up "$run"
[ -e "$pin/cxlt_heat" ] || fail "the agent did not pin its heat map"
echo go > "$work/go"

# Before the first drain, the heat map holds the target's pages, typed by BTF.
buffer_sampled() {
	! logged 'epoch 1:' || fail "the first epoch (5 s after set-up) came before tierbench touched its buffer"
	read -r entries others <<< "$(heat_entries "$bench")"
	[ "$entries" -ge 4000 ]
}
wait_for 30 ">= 4000 heat map entries of pid $bench" buffer_sampled
echo "heat map: $entries entries of pid $bench, $others of other processes"
[ "$others" -eq 0 ] || fail "heat map holds $others entries of other processes"
dump=$(bpftool map dump pinned "$pin/cxlt_heat")
grep -q '"vpage"' <<< "$dump" || fail "map dump shows no typed keys"
prog=$(bpftool prog show pinned "$pin/cxlt_fault")
grep -q 'name cxlt_fault' <<< "$prog" || fail "no pinned cxlt_fault program: $prog"

# After an epoch, the status names the target and its pages.
wait_for 30 "the first epoch in the status" status_has "$run" '.agent.epoch >= 1'
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
kill -INT "$bench"	# it checks its data and exits
wait "$bench" || fail "tierbench failed: $(cat "$work/bench.out")"
bench=""
grep -q "verify=ok" "$work/bench.out" || fail "tierbench did not verify: $(cat "$work/bench.out")"
echo "agent: ok"
