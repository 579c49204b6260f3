#!/usr/bin/env bash
# Live test: SIGHUP reloads the policy file; a broken new file (wrong ABI) is
# refused with a message naming the file and both ABI versions, and the
# agent keeps the last good policy and keeps running; a rebuilt good file is
# really loaded (not the old object dlopen still holds).
set -euo pipefail
. "$(dirname "$0")/lib.bash"
wait_log() { wait_for 30 "the log line '$1'" logged "$1"; }

mkdir "$work/policies"
install -m 0644 "$BUILD/policies/hotcold.so" "$work/policies/p.so"
cc -shared -fPIC -Iinclude -o "$work/bad.so" tests/fixtures/policies/bad_abi.c
sleep 60 & sleeper=$!
"$BUILD/cxltierd" --pid "$sleeper" --policy p --policy-dir "$work/policies" --epoch-ms 100 \
	--run-dir "$work/run" > "$work/agent.log" 2>&1 &
agent=$!
wait_log 'target pid'

install -m 0644 "$work/bad.so" "$work/policies/p.so"
kill -HUP "$agent"
wait_log 'reload refused: keeping policy hotcold'
abi=$(sed -n "s/^#define CXLT_POLICY_ABI //p" include/cxltier/policy.h)
grep -q "p.so: built for policy ABI 99, but this cxltierd speaks ABI $abi" "$work/agent.log" ||
	fail "the refusal does not name the file and both ABI versions"
# The agent goes on: epochs after the refusal, under the last good policy.
wait_for 30 "the agent's status" status_has "$work/run" '.agent.epoch >= 0'
e0=$(jq .agent.epoch "$work/status.json")
wait_for 30 "epochs after the refused reload" status_has "$work/run" ".agent.epoch > $e0 + 2"
jq -e '.policy.name == "hotcold"' "$work/status.json" > /dev/null || fail "status no longer shows the last good policy"

install -m 0644 "$BUILD/tests/policies/flip.so" "$work/policies/p.so"
kill -HUP "$agent"
wait_log 'reloaded: policy flip'
wait_for 30 "the reloaded policy in the status" status_has "$work/run" '.policy.name == "flip"'

kill -TERM "$agent"
rc=0
wait "$agent" || rc=$?
agent=""
[ "$rc" -eq 0 ] || fail "cxltierd exited $rc"
echo "reload: ok"
