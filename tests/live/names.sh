#!/usr/bin/env bash
# Live test (root, with a real unprivileged user): a process that names
# itself with escape sequences and a newline reaches no terminal, metrics
# label or log line raw — cxltierctl status and top, /metrics over HTTP, the
# node_exporter textfile and the agent's log all show it escaped (\x1b...).
# The textfile is also checked for its mode and for vanishing at exit.
set -euo pipefail
. "$(dirname "$0")/lib.bash"
chmod 0755 "$work"
user=cxlt-names-test
run="$work/run"
port=$((20000 + RANDOM % 12000))	# below the ephemeral ports: a flood leaves many in use
cleanup_more() {
	userdel "$user" 2>/dev/null || true
}
ctl() { "$BUILD/cxltierctl" --run-dir "$run" "$@"; }
raw() { grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$1"; }	# any control byte but tab and newline

useradd -M -s /usr/sbin/nologin "$user"
install -d -o "$user" "$work/u"
# ESC ] 0 ; title BEL, a newline, ESC [ 2 J: 15 bytes, what comm holds.
runuser -u "$user" -- /usr/bin/python3 -c '
import os, sys, time
open("/proc/self/comm", "w").write("\x1b]0;t\x07\n\x1b[2Jx")
open(sys.argv[1], "w").write("%d\n" % os.getpid())
time.sleep(120)' "$work/u/ready" &
child=$!	# runuser; the named process is its child, which writes its pid
for _ in $(seq 100); do [ -s "$work/u/ready" ] && break; sleep 0.05; done
[ -s "$work/u/ready" ] || fail "the named process did not start"
sleeper=$(cat "$work/u/ready")
mkdir "$work/textfile"
"$BUILD/cxltierd" --pid "$sleeper" --run-dir "$run" --epoch-ms 200 --metrics-port "$port" \
	--metrics-textfile "$work/textfile" > "$work/agent.log" 2>&1 &
agent=$!
for _ in $(seq 200); do [ -e "$work/textfile/cxltier.prom" ] && grep -q 'comm=' "$work/textfile/cxltier.prom" && break; sleep 0.05; done
[ -e "$work/textfile/cxltier.prom" ] || fail "no textfile"
[ "$(stat -c %a "$work/textfile/cxltier.prom")" = 644 ] || fail "textfile mode $(stat -c %a "$work/textfile/cxltier.prom")"
esc='\\x1b]0;t\\x07\\x0a\\x1b[2Jx'	# the comm as it must appear, escaped

ctl status > "$work/status.out"
raw "$work/status.out" && fail "raw control bytes in cxltierctl status: $(od -c "$work/status.out" | grep -m3 033)"
grep -qF '\x1b]0;t\x07\x0a\x1b[2Jx' "$work/status.out" || fail "status does not show the escaped name"
ctl top < /dev/null > "$work/top.out"
sed 's/\x1b\[H\x1b\[2J//' "$work/top.out" > "$work/top.stripped"
raw "$work/top.stripped" && fail "raw control bytes in cxltierctl top"
grep -qF '\x1b]0;t' "$work/top.stripped" || fail "top does not show the escaped name"

curl -sf "http://127.0.0.1:$port/metrics" > "$work/http.out" || fail "no metrics over HTTP"
cp "$work/textfile/cxltier.prom" "$work/textfile.out"
ctl metrics > "$work/socket.out"
for m in "$work/http.out" "$work/textfile.out" "$work/socket.out"; do
	raw "$m" && fail "raw control bytes in $(basename "$m")"
	grep -qF "comm=\"$esc\"" "$m" || fail "$(basename "$m"): no escaped comm label: $(grep comm= "$m" | head -1)"
	bad=$(grep -v '^#' "$m" | grep -Ev '^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? -?[0-9.eE+-]+$' || true)
	[ -z "$bad" ] || fail "$(basename "$m"): malformed lines: $bad"
done

kill -TERM "$agent"
wait "$agent" || fail "cxltierd exited $?"
agent=""
raw "$work/agent.log" && fail "raw control bytes in the agent's log: $(grep -a -m2 'added' "$work/agent.log" | od -c | head)"
grep -qF 'target pid '"$sleeper"' (\x1b]0;t\x07\x0a\x1b[2Jx) added' "$work/agent.log" || fail "the log does not name the target escaped"
[ ! -e "$work/textfile/cxltier.prom" ] || fail "textfile left after exit"
[ -z "$(ls -A "$work/textfile")" ] || fail "files left in the textfile dir: $(ls -A "$work/textfile")"
echo "names: ok"
