#!/usr/bin/env bash
# Live test (root): --check-config runs the very checks a start runs, so
# "valid" means the agent will start.  Each bad setting below is refused by
# --check-config and by a start, with the same reason, before the agent
# changes anything; a good configuration passes both.
set -euo pipefail
. "$(dirname "$0")/lib.bash"
sleep 60 & sleeper=$!

# A zombie: the child exits, and its parent never reaps it (a shell may: one
# run in many, the child of `sh -c 'sleep 0 & ...; exec sleep 60'` was gone).
python3 -c 'import os, sys, time
pid = os.fork()
if pid == 0:
    os._exit(0)
with open(sys.argv[1], "w") as f:
    f.write(str(pid))
time.sleep(60)' "$work/zpid" & child=$!
wait_for 10 "the zombie's pid" test -s "$work/zpid"
zombie=$(cat "$work/zpid")
is_zombie() { [ "$(awk '{ print $3 }' "/proc/$zombie/stat" 2>/dev/null)" = Z ]; }
wait_for 10 "pid $zombie to become a zombie" is_zombie

refused() { # REASON ARGS...: --check-config and a start both refuse ARGS, saying REASON
	local why=$1 out rc
	shift
	rc=0
	out=$("$BUILD/cxltierd" --check-config "$@" 2>&1) || rc=$?
	[ "$rc" -ne 0 ] || fail "--check-config called '$*' valid: $out"
	grep -q -- "$why" <<< "$out" || fail "--check-config '$*' does not say '$why': $out"
	rc=0
	out=$("$BUILD/cxltierd" --duration 0.5 --run-dir "$work/run" "$@" 2>&1) || rc=$?
	[ "$rc" -ne 0 ] || fail "a start with '$*' ran: $out"
	grep -q -- "$why" <<< "$out" || fail "the start with '$*' does not say '$why': $out"
	echo "refused by both: $* ($why)"
}
refused "unknown source 'bogus' (auto, pmu" --pid "$sleeper" --source bogus
refused "fault shares its hook" --pid "$sleeper" --source fault,fault
refused "weight '99999999999' of fault" --pid "$sleeper" --source fault:99999999999
refused "overlap" --pid "$sleeper" --fast-nodes 0 --slow-nodes 0
refused "1 to 15 characters" --comm abcdefghijklmnop
refused "expected an IPv4 address" --pid "$sleeper" --metrics-port 9 --metrics-addr 1.2.3
refused "a zombie" --pid "$zombie"
refused "more than a quarter of this machine" --pid "$sleeper" --heat-entries 268435456
refused "no user named" --comm sleep --target-user no-such-user-cxlt

# From a file too, as the unit's reload check runs it.
printf '[targets]\npid = %s\n[sampler]\nsource = bogus\n' "$sleeper" > "$work/bad.conf"
chmod 0644 "$work/bad.conf"
refused "source = bogus: unknown source 'bogus'" --config "$work/bad.conf"

out=$("$BUILD/cxltierd" --check-config --pid "$sleeper" --source fault --target-user root 2>&1) ||
	fail "a good configuration was refused: $out"
grep -q '; .*: valid' <<< "$out" || fail "no 'valid' line: $out"
grep -q '^target_user = root' <<< "$out" || fail "--check-config does not print target_user: $out"
echo "check-config: ok"
