#!/usr/bin/env bash
# Live test (root): the policy decides in a process of its own, as nobody,
# under seccomp, with no descriptor of the agent's.  A policy that crashes,
# overruns its decision limit or makes a forbidden system call is stopped;
# the agent says why (log, status, metrics), keeps running its epochs,
# takes another policy from cxltierctl, and stops cleanly.
set -euo pipefail
. "$(dirname "$0")/lib.bash"
sleep 120 & sleeper=$!
pols="$BUILD/tests/policies"

# The policy decides only in migrate mode, which needs a slow node: this
# machine has one node, so the topology comes from a two-node fixture (the
# decisions are real; none of these policies plans a move).
start() { # POLICY [FLAGS...]
	local p=$1
	shift
	"$BUILD/cxltierd" --pid "$sleeper" --policy "$p" --policy-dir "$pols" --epoch-ms 100 \
		--sysfs-root tests/fixtures/topology/dram_cxl --source fault \
		--run-dir "$work/run" "$@" > "$work/agent.log" 2>&1 &
	agent=$!
	wait_for 30 "the policy's process" logged "policy $p decides in process"
}
stop() {
	kill -TERM "$agent"
	local rc=0
	wait "$agent" || rc=$?
	agent=""
	[ "$rc" -eq 0 ] || fail "cxltierd exited $rc"
	[ ! -e /sys/fs/bpf/cxltier/cxlt_heat ] || fail "pins left after the stop"
}
# The epochs go on after the failure: ten more than when it was reported.
epochs_go_on() {
	wait_for 30 "a status" status_has "$work/run" '.agent.epoch >= 1'
	local e0
	e0=$(jq .agent.epoch "$work/status.json")
	wait_for 30 "epochs after the failure" status_has "$work/run" ".agent.epoch >= $e0 + 10"
}

start crash
child=$(sed -n 's/.*policy crash decides in process \([0-9]*\) .*/\1/p' "$work/agent.log")
# The child: nobody, seccomp filter, and only its pipe and the standard descriptors.
grep -q "^Uid:.*65534" "/proc/$child/status" || fail "the policy's process is not nobody: $(grep Uid "/proc/$child/status")"
grep -q "^Seccomp:[[:space:]]*2" "/proc/$child/status" || fail "the policy's process has no seccomp filter"
fds=$(ls "/proc/$child/fd" | sort -n | tr '\n' ' ')
[ "$fds" = "0 1 2 3 4 " ] || fail "the policy's process holds descriptors $fds"
# In a sanitizer build the crash handler's own system calls end the child first (SIGSYS).
crashed() { grep -Eq "policy crash failed: (crashed: Segmentation fault|made a system call)" "$work/agent.log"; }
wait_for 30 "the crash reported" crashed
epochs_go_on
jq -e '.policy.failed | test("crashed|system call")' "$work/status.json" > /dev/null ||
	fail "the status does not say the policy failed: $(jq -c .policy "$work/status.json")"
"$BUILD/cxltierctl" --run-dir "$work/run" metrics | grep -q '^cxltier_policy_failed 1$' ||
	fail "the metrics do not say the policy failed"
[ "$(grep -c "policy crash failed" "$work/agent.log")" -eq 1 ] || fail "the failure was logged more than once"
# Another policy from the control socket: it serves, the failure is gone.
"$BUILD/cxltierctl" --run-dir "$work/run" policy "$PWD/$BUILD/policies/hotcold.so" > /dev/null || fail "cxltierctl policy hotcold failed"
wait_for 30 "hotcold in the status" status_has "$work/run" \
	'.policy.name == "hotcold" and .policy.failed == null and .policy.isolated'
stop
echo "crash: stopped, reported, replaced"

# init runs in the policy's process too: a crash there is a refused start, and
# a refused reload that keeps the running policy; the agent never goes down.
if "$BUILD/cxltierd" --pid "$sleeper" --policy crash -o when=init --policy-dir "$pols" \
	--sysfs-root tests/fixtures/topology/dram_cxl --source fault --run-dir "$work/run" \
	--duration 5 > "$work/agent.log" 2>&1; then
	fail "a policy that crashes in init started"
else
	rc=$?
fi
[ "$rc" -eq 1 ] || fail "cxltierd exited $rc (a signal?) when the policy crashed in init"
grep -Eq "policy crash: init: (crashed: Segmentation fault|made a system call)" "$work/agent.log" ||
	fail "the init crash not said"
start rewrite
wait_for 30 "the control socket" socket_up "$work/run"
"$BUILD/cxltierctl" --run-dir "$work/run" policy "$PWD/$pols/crash.so" when=init > "$work/ctl.out" 2>&1 &&
	fail "cxltierctl policy with a crashing init succeeded"
logged "policy crash: init: " || fail "the refused swap's init crash not said"
logged "refused: keeping policy rewrite" || fail "the running policy not kept"
epochs_go_on
jq -e '.policy.name == "rewrite" and .policy.failed == null' "$work/status.json" > /dev/null ||
	fail "the running policy did not stay: $(jq -c .policy "$work/status.json")"
stop
echo "crash in init: start refused, swap refused, agent up"

start hang --decide-limit-ms 200
wait_for 30 "the overrun reported" logged "policy hang failed: decide() took longer than the 200 ms limit"
epochs_go_on
stop
echo "hang: stopped at the limit"

start syscall
wait_for 30 "the forbidden call reported" logged "policy syscall failed: made a system call policies may not make"
epochs_go_on
stop
echo "syscall: stopped by seccomp"

# A policy that writes its view's records writes its own copy: it runs on, not stopped.
start rewrite
epochs_go_on
jq -e '.policy.failed == null' "$work/status.json" > /dev/null || fail "rewrite was stopped: $(jq -c .policy "$work/status.json")"
stop
echo "policy-sandbox: ok"
