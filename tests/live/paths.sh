#!/usr/bin/env bash
# Paths a hostile local user can reach (root; issue 15): a real unprivileged
# user plants links, FIFOs and files where the agent reads or writes, and
# the agent refuses each at once, touching nothing:
#   #2 the pin dir: only the agent's own pin names are removed, and a pin
#      dir outside bpffs is refused (by --check-config too);
#   #3 a run dir the user owns: its kernel-settings.state is not applied and
#      a .status.json.tmp link is not written through;
#   #4 --record onto a FIFO (no hang) or onto the user's 0666 file;
#   #5 a second agent with another run dir does not start (machine lock);
#   #9 a policy in a directory the user owns, even as a link to root's .so;
#   #11 a full disk while recording: exit 1, and the trace still replays.
set -euo pipefail
. "$(dirname "$0")/lib.bash"
chmod 0755 "$work"
user=cxlt-path-test
rate=/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps
rate_was=$(cat "$rate")
foreign=/sys/fs/bpf/cxlt-foreign-$$
cleanup_more() {
	echo "$rate_was" > "$rate" 2>/dev/null || true
	mountpoint -q "$work/full" 2>/dev/null && umount "$work/full"
	rm -rf "$foreign"
	userdel "$user" 2>/dev/null || true
}
as_user() { runuser -u "$user" -- "$@"; }
# Runs the agent with a deadline (a hang is a failure), its output in agent.log.
agent_run() {
	local rc=0
	timeout -k 5 30 "$BUILD/cxltierd" "$@" > "$work/agent.log" 2>&1 || rc=$?
	[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || fail "cxltierd $* hung (killed by timeout)"
	return "$rc"
}
expect_log() { grep -q -- "$1" "$work/agent.log" || fail "$2: the agent did not say '$1'"; }

useradd -M -s /usr/sbin/nologin "$user"
sleep 120 & sleeper=$!

# #3: a run dir the user owns.
mkdir -m 0700 "$work/userrun"
chown "$user" "$work/userrun"
planted=$((rate_was == 4242 ? 4243 : 4242))
as_user sh -c 'printf "%s\t%s\n" "$1" "$2" > "$3/kernel-settings.state"' sh "$rate" "$planted" "$work/userrun"
echo precious > "$work/victim"
as_user ln -s "$work/victim" "$work/userrun/.status.json.tmp"
agent_run --pid "$sleeper" --duration 1 --epoch-ms 100 --run-dir "$work/userrun" &&
	fail "the agent started in a run dir another user owns"
expect_log "run directory: refusing $work/userrun: directory $work/userrun belongs to uid" "user's run dir"
[ "$(cat "$rate")" = "$rate_was" ] || fail "a planted kernel-settings.state was applied ($rate = $(cat "$rate"))"
[ "$(cat "$work/victim")" = precious ] || fail "the status was written through a planted link"
# Root's, but writable by others: the same.
mkdir -m 0777 "$work/openrun"
chmod 0777 "$work/openrun"
agent_run --pid "$sleeper" --duration 1 --run-dir "$work/openrun" && fail "the agent started in a 0777 run dir"
expect_log "is writable by others (mode 0777)" "0777 run dir"
# In the agent's own run dir, a status tmp left there (even as a link) is replaced, never followed.
mkdir -m 0700 "$work/run"
ln -s "$work/victim" "$work/run/.status.json.tmp"
agent_run --pid "$sleeper" --duration 1 --epoch-ms 100 --run-dir "$work/run" || fail "cxltierd exited $?"
[ "$(cat "$work/victim")" = precious ] || fail "the status was written through a stale link"

# #4: --record into a directory anyone may write (as /tmp).
mkdir -m 1777 "$work/pub"
chmod 1777 "$work/pub"
as_user mkfifo "$work/pub/fifo.trace"
agent_run --pid "$sleeper" --duration 1 --record "$work/pub/fifo.trace" --run-dir "$work/run" &&
	fail "the agent recorded into a FIFO"
expect_log "refusing $work/pub/fifo.trace: it exists and is a FIFO" "FIFO"
as_user sh -c 'umask 0; : > "$1"; chmod 0666 "$1"' sh "$work/pub/open.trace"
agent_run --pid "$sleeper" --duration 1 --record "$work/pub/open.trace" --run-dir "$work/run" &&
	fail "the agent recorded into another user's 0666 file"
expect_log "refusing $work/pub/open.trace: it exists and belongs to uid" "user's file"
[ ! -s "$work/pub/open.trace" ] || fail "samples went into another user's file"
as_user ln -s "$work/victim" "$work/pub/link.trace"
agent_run --pid "$sleeper" --duration 1 --record "$work/pub/link.trace" --run-dir "$work/run" &&
	fail "the agent recorded through a link"
[ "$(cat "$work/victim")" = precious ] || fail "the trace was written through a link"
# A new file there is the agent's alone.
agent_run --pid "$sleeper" --duration 1 --record "$work/pub/new.trace" --run-dir "$work/run" || fail "cxltierd exited $?"
[ "$(stat -c '%U %a' "$work/pub/new.trace")" = "root 600" ] || fail "new trace: $(stat -c '%U %a' "$work/pub/new.trace")"

# #2: another tool's pin in the pin dir stays; a pin dir outside bpffs is refused.
mkdir "$foreign"
bpftool map create "$foreign/other_tool" type array key 4 value 4 entries 1 name other_tool
agent_run --pid "$sleeper" --duration 1 --pin-dir "$foreign" --run-dir "$work/run" || fail "cxltierd exited $?"
[ -e "$foreign/other_tool" ] || fail "the agent removed another tool's pin from its pin dir"
mkdir "$work/notbpf"
echo keep > "$work/notbpf/keep"
agent_run --pid "$sleeper" --duration 1 --pin-dir "$work/notbpf" --run-dir "$work/run" &&
	fail "the agent started with a pin dir outside bpffs"
expect_log "is not on a bpf file system" "pin dir outside bpffs"
[ -e "$work/notbpf/keep" ] || fail "the agent deleted a file in a pin dir outside bpffs"
"$BUILD/cxltierd" --check-config --pin-dir "$work/notbpf" > "$work/agent.log" 2>&1 &&
	fail "--check-config accepted a pin dir outside bpffs"
expect_log "is not on a bpf file system" "--check-config"

# #5: one agent per machine, whatever the run dir.
"$BUILD/cxltierd" --pid "$sleeper" --epoch-ms 100 --run-dir "$work/runA" > "$work/agentA.log" 2>&1 &
agent=$!
for _ in $(seq 200); do [ -e "$work/runA/status.json" ] && break; sleep 0.05; done
[ -e "$work/runA/status.json" ] || fail "the first agent did not start: $(cat "$work/agentA.log")"
agent_run --pid "$sleeper" --duration 1 --run-dir "$work/runB" && fail "a second agent ran beside the first"
expect_log "another cxltierd (pid $agent, run dir $work/runA) is running" "second agent"
[ -e /sys/fs/bpf/cxltier/cxlt_heat ] || fail "the second agent removed the first one's pins"
kill -TERM "$agent"
wait "$agent" || fail "the first agent exited $?: $(cat "$work/agentA.log")"
agent=""

# #9: a policy in a directory the user owns: refused, as a file and as a link to root's .so.
mkdir -m 0755 "$work/userpol"
install -m 0644 "$BUILD/policies/hotcold.so" "$work/userpol/p.so"
chown "$user" "$work/userpol"
"$BUILD/cxltierd" --check-config --policy p --policy-dir "$work/userpol" > "$work/agent.log" 2>&1 &&
	fail "a root .so in a user's directory was loaded"
expect_log "directory $work/userpol belongs to uid" "user's policy dir"
as_user sh -c 'rm -f "$1/p.so" && ln -s "$2" "$1/p.so"' sh "$work/userpol" "$(realpath "$BUILD/policies/hotcold.so")"
"$BUILD/cxltierd" --check-config --policy p --policy-dir "$work/userpol" > "$work/agent.log" 2>&1 &&
	fail "a user's link to a root .so was loaded"
# #11: a world-writable policy is refused for that, not for its owner.
install -m 0666 "$BUILD/policies/hotcold.so" "$work/ww.so"
chmod 0666 "$work/ww.so"
"$BUILD/cxltierd" --check-config --policy "$work/ww.so" > "$work/agent.log" 2>&1 &&
	fail "a world-writable policy was loaded"
expect_log "refusing $work/ww.so: writable by others (mode 0666)" "world-writable policy"
grep -q "owned by uid" "$work/agent.log" && fail "the world-writable refusal speaks of the owner"

# #11: a full disk while recording: the agent says so, exits 1, the trace replays.
mkdir "$work/full"
mount -t tmpfs -o size=128k tmpfs "$work/full"
mkfifo "$work/go"
sh -c 'read x < "$1"; exec "$2" --size 64M --duration 0' sh "$work/go" "$BUILD/tierbench" > /dev/null &
bench=$!
"$BUILD/cxltierd" --pid "$bench" --record "$work/full/t.trace" --epoch-ms 200 --run-dir "$work/run" \
	> "$work/agent.log" 2>&1 &
agent=$!
for _ in $(seq 200); do grep -q 'target pid' "$work/agent.log" && break; sleep 0.05; done
echo go > "$work/go"
wait "$bench"
bench=""
rc=0
wait "$agent" || rc=$?
agent=""
[ "$rc" -ne 0 ] || fail "the agent exited 0 with its trace cut short by a full disk"
expect_log "No space left on device" "full disk"
"$BUILD/cxltier-replay" --to-csv "$work/full/t.trace" -O "$work/full.csv" ||
	fail "the trace cut short by a full disk does not read back"
kept=$(($(wc -l < "$work/full.csv") - 1))
[ "$kept" -gt 1000 ] || fail "only $kept samples kept before the disk filled"
echo "paths: ok (full disk: $kept samples kept)"
