#!/usr/bin/env bash
# Live test (root) with a real unprivileged user: --comm adopts any user's
# process by default and says so; with --target-user it adopts only the
# listed users' processes and logs each one it leaves alone once, so a user
# cannot make root's agent manage memory by naming a process after a target.
set -euo pipefail
. "$(dirname "$0")/lib.bash"
chmod 0755 "$work"
user=cxlt-tu-test
cleanup_more() { userdel "$user" 2>/dev/null || true; }
useradd -M -s /usr/sbin/nologin "$user"
uid=$(id -u "$user")
# One program name, two owners.
cp "$(command -v sleep)" "$work/cxltu"
setpriv --reuid "$uid" --regid "$(id -g "$user")" --clear-groups "$work/cxltu" 120 & theirs=$!
child=$theirs
"$work/cxltu" 120 & sleeper=$!

"$BUILD/cxltierd" --comm cxltu --target-user root --source fault --epoch-ms 100 --run-dir "$work/run" \
	> "$work/agent.log" 2>&1 &
agent=$!
wait_for 30 "root's process adopted" logged "target pid $sleeper (cxltu) added"
wait_for 30 "the user's process refused" logged "pid $theirs (cxltu) matches but belongs to uid $uid"
wait_for 30 "a first status" status_has "$work/run" ".agent.epoch >= 1"
e0=$(jq .agent.epoch "$work/status.json")
wait_for 30 "ten more epochs" status_has "$work/run" ".agent.epoch >= $e0 + 10"
jq -e --argjson p "$sleeper" '[.targets[].pid] == [$p]' "$work/status.json" > /dev/null ||
	fail "targets are not root's process alone: $(jq -c '[.targets[].pid]' "$work/status.json")"
[ "$(grep -c "pid $theirs (cxltu) matches" "$work/agent.log")" -eq 1 ] ||
	fail "the refusal was logged more than once"
! logged "target pid $theirs " || fail "the user's process was adopted"
kill -TERM "$agent"
wait "$agent" || fail "cxltierd exited $?"
agent=""

# Without --target-user: any user's, and the log says so.
"$BUILD/cxltierd" --comm cxltu --source fault --epoch-ms 100 --run-dir "$work/run" \
	> "$work/agent.log" 2>&1 &
agent=$!
wait_for 30 "the note on any user" logged "adopt matching processes of any user"
wait_for 30 "the user's process adopted" logged "target pid $theirs (cxltu) added"
kill -TERM "$agent"
wait "$agent" || fail "cxltierd exited $?"
agent=""
echo "target-user: ok"
