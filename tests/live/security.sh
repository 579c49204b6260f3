#!/usr/bin/env bash
# Security (root): what the agent leaves on the machine is root's alone — a
# real unprivileged user can neither list the pins nor read the run
# directory (socket, status, kernel-settings state); targets that are kernel
# threads are refused; a trace from anyone is parsed without trust.
set -euo pipefail
. "$(dirname "$0")/lib.bash"
chmod 0755 "$work"
user=cxlt-sec-test
cleanup_more() {
	userdel "$user" 2>/dev/null || true
}
as_user() { runuser -u "$user" -- "$@"; }

useradd -M -s /usr/sbin/nologin "$user"
sleep 60 & sleeper=$!
"$BUILD/cxltierd" --pid "$sleeper" --source hint --run-dir "$work/run" --epoch-ms 200 > "$work/agent.log" 2>&1 &
agent=$!
for _ in $(seq 100); do [ -S "$work/run/cxltier.sock" ] && [ -e "$work/run/status.json" ] && break; sleep 0.05; done
[ -e "$work/run/kernel-settings.state" ] || fail "expected a kernel-settings state file while the agent runs"

as_user ls /sys/fs/bpf/cxltier > /dev/null 2>&1 && fail "a user can list the pins"
as_user bpftool map dump pinned /sys/fs/bpf/cxltier/cxlt_heat > /dev/null 2>&1 && fail "a user can dump the heat map"
for f in status.json kernel-settings.state; do
	as_user cat "$work/run/$f" > /dev/null 2>&1 && fail "a user can read $f"
done
[ "$(stat -c '%U %a' /run/cxltierd.lock)" = "root 600" ] ||
	fail "machine lock: $(stat -c '%U %a' /run/cxltierd.lock)"
as_user "$BUILD/cxltierctl" --run-dir "$work/run" status > /dev/null 2>&1 && fail "a user reached the agent"
for f in status.json kernel-settings.state; do
	[ "$(stat -c %a "$work/run/$f")" = 600 ] || fail "$f mode $(stat -c %a "$work/run/$f")"
done
[ "$(stat -c %a /sys/fs/bpf/cxltier)" = 700 ] || fail "pin dir mode $(stat -c %a /sys/fs/bpf/cxltier)"
kill -TERM "$agent"
wait "$agent" || fail "cxltierd exited $?"
agent=""

out=$("$BUILD/cxltierd" --pid 2 --duration 1 --run-dir "$work/run2" 2>&1) && fail "a kernel thread was accepted as a target"
grep -q "a kernel thread has no user memory to tier" <<< "$out" || fail "kthread: $out"

# The agent never adopts itself, even when its own name matches.
"$BUILD/cxltierd" --comm cxltierd --duration 0.6 --epoch-ms 100 --run-dir "$work/run3" > "$work/self.log" 2>&1 ||
	fail "cxltierd --comm cxltierd failed: $(cat "$work/self.log")"
grep -q "added: command name cxltierd" "$work/self.log" && fail "the agent adopted itself as a target"

# A hostile trace: a header claiming more nodes than the file holds.
"$BUILD/cxltier-replay" --synth hotset --pages 64 --samples 100 --epochs 1 -O "$work/t.trace" 2>/dev/null
printf '\xff\xff\xff\x7f' | dd of="$work/t.trace" bs=1 seek=20 conv=notrunc 2>/dev/null
out=$("$BUILD/cxltier-replay" "$work/t.trace" hotcold 2>&1) && fail "a corrupt trace was accepted"
grep -q "corrupt header" <<< "$out" || fail "corrupt trace: $out"
echo "security: ok"
