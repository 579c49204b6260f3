#!/usr/bin/env bash
# Live test (root, with a real unprivileged user): nothing a client does
# delays an epoch or a stop.  For each attack — a slow client dribbling a
# byte every 0.9 s, 1,000 idle connections, a flood of requests; on the
# metrics port as the user, on the control socket as root — the epoch period
# measured from status.json stays within 10% of --epoch-ms, then a SIGTERM
# stops the agent within a few epochs (a flood that held the stop back would
# hold it for as long as it lasts; an ASan build beside a VM test once took
# 591 ms of a 200 ms epoch) with numa_balancing, the promotion rate limit and
# the pins all back as they were.
set -euo pipefail
. "$(dirname "$0")/lib.bash"
chmod 0755 "$work"
user=cxlt-serve-test
run="$work/run"
epoch_ms=200
nb=/proc/sys/kernel/numa_balancing
rl=/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps
nb0=$(cat $nb)
rl0=$(cat $rl)
py=/usr/bin/python3	# root's PATH may hold a python the user cannot run
attacker=""
cleanup_more() {
	[ -n "$attacker" ] && kill -KILL -- -"$attacker" 2>/dev/null || true
	userdel "$user" 2>/dev/null || true
	echo "$nb0" > $nb
	echo "$rl0" > $rl
}
# The attacker goes first: an agent that waits on its clients (the bug this
# guards against) would otherwise hold up lib.bash's cleanup for ever.
fail() {
	[ -n "$attacker" ] && kill -KILL -- -"$attacker" 2>/dev/null || true
	echo "FAIL: $*" >&2
	sed 's/^/  agent: /' "$work/agent.log" >&2 2>/dev/null || true
	exit 1
}
[ "$nb0" -ne 3 ] || fail "kernel.numa_balancing is 3 before the test: cannot tell our change apart"
useradd -M -s /usr/sbin/nologin "$user"
install -d -o "$user" "$work/att"	# where the user's attacker says it is ready

cat > "$work/attack.py" << 'EOF'
# attack.py MODE TARGET READY (its own process group: killed as one): MODE slow|idle|flood, TARGET tcp:PORT or unix:PATH.
# Writes READY once its connections are open, then keeps at it until killed.
import os, socket, sys, time
mode, target, ready = sys.argv[1:4]

def connect(block=True):
    if target.startswith("tcp:"):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        addr = ("127.0.0.1", int(target[4:]))
    else:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        addr = target[5:]
    s.setblocking(block)
    try:
        s.connect(addr)
    except (BlockingIOError, InterruptedError):
        pass
    except OSError:
        s.close()
        return None
    return s

def say_ready():
    open(ready, "w").write("ready\n")

request = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" if target.startswith("tcp:") else b"status\n"
if mode == "slow":
    # Eight slow clients: a request begun, then a byte every 0.9 s that never
    # ends it; a dropped one comes back.
    prefix = b"GET /metrics HTTP/1.1\r\nX-Slow: " if target.startswith("tcp:") else b"stat"
    conns = []
    while True:
        while len(conns) < 8:
            s = connect()
            if s:
                try:
                    s.send(prefix)
                    conns.append(s)
                except OSError:
                    s.close()
        say_ready()
        time.sleep(0.9)
        for s in list(conns):
            try:
                s.send(b"a")
            except OSError:
                conns.remove(s)
                s.close()
elif mode == "idle":
    conns = [c for c in (connect(False) for _ in range(1000)) if c]
    say_ready()
    while True:
        time.sleep(1)
else:
    # Four processes asking as fast as they can, reading the reply or not.
    for _ in range(3):
        if os.fork() == 0:
            break
    say_ready()
    n = 0
    while True:
        s = connect()
        if not s:
            continue
        try:
            s.sendall(request)
            if n % 2:
                s.recv(65536)
        except OSError:
            pass
        s.close()
        n += 1
EOF

# Epoch period in ms from status.json: from one epoch change to the first one
# 4 s later (a stalled agent shows no change: the deadline turns that into 9999).
cat > "$work/period.py" << 'EOF'
import json, sys, time
path = sys.argv[1]
def epoch():
    try:
        return json.load(open(path))["agent"]["epoch"]
    except (OSError, ValueError, KeyError):
        return None
def next_change(after, deadline):
    while time.monotonic() < deadline:
        e = epoch()
        if e is not None and after is not None and e != after:
            return time.monotonic(), e
        after = e if after is None else after
        time.sleep(0.002)
    return None, None
start = time.monotonic()
t0, e0 = next_change(epoch(), start + 10)
if t0 is None:
    print(9999); sys.exit()
while time.monotonic() < t0 + 4:
    time.sleep(0.05)
t1, e1 = next_change(epoch(), start + 20)
print(9999 if t1 is None else round((t1 - t0) * 1000 / (e1 - e0), 1))
EOF

report=""
attack() { # NAME MODE WHERE(tcp|unix)
	local name=$1 mode=$2 where=$3 port target period t0 t1 stop_ms
	port=$((20000 + RANDOM % 12000))	# below the ephemeral ports: a flood leaves many in use
	sleep 600 & sleeper=$!
	"$BUILD/cxltierd" --pid "$sleeper" --source hint --run-dir "$run" --epoch-ms $epoch_ms \
		--metrics-port "$port" > "$work/agent.log" 2>&1 &
	agent=$!
	for _ in $(seq 200); do [ -e "$run/status.json" ] && [ "$(cat $nb)" = 3 ] && break; sleep 0.05; done
	[ -e "$run/status.json" ] || fail "$name: the agent did not start"
	[ "$(cat $nb)" = 3 ] || fail "$name: the agent did not switch numa_balancing to 3"
	rm -f "$work/att/ready"
	if [ "$where" = tcp ]; then
		target=tcp:$port
		setsid runuser -u "$user" -- bash -c "ulimit -n 4096; exec $py $work/attack.py $mode $target $work/att/ready" &
	else
		target=unix:$run/cxltier.sock
		setsid bash -c "ulimit -n 4096; exec $py $work/attack.py $mode $target $work/att/ready" &
	fi
	attacker=$!
	for _ in $(seq 300); do [ -e "$work/att/ready" ] && break; sleep 0.05; done
	[ -e "$work/att/ready" ] || fail "$name: the attacker did not get going"
	period=$($py "$work/period.py" "$run/status.json")
	report+="$(printf '  %-28s epoch period %7.1f ms (set %d)' "$name" "$period" $epoch_ms)"
	# Within 10% of the setting.
	awk -v p="$period" -v e=$epoch_ms 'BEGIN { exit !(p >= e * 0.9 && p <= e * 1.1) }' ||
		{ echo "$report"; fail "$name: epoch period $period ms, set $epoch_ms ms"; }

	t0=$(date +%s%N)
	kill -TERM "$agent"
	# One epoch plus slack for the BPF teardown; the deadline only bounds a hang.
	for _ in $(seq 400); do kill -0 "$agent" 2>/dev/null || break; sleep 0.005; done
	t1=$(date +%s%N)
	kill -0 "$agent" 2>/dev/null && { echo "$report"; fail "$name: still running 2 s after SIGTERM"; }
	wait "$agent" || fail "$name: cxltierd exited $?"
	agent=""
	stop_ms=$(((t1 - t0) / 1000000))
	report+="$(printf ', stopped %4d ms after SIGTERM\n' "$stop_ms")"$'\n'
	[ "$stop_ms" -le $((epoch_ms * 5 + 1000)) ] || { echo "$report"; fail "$name: stopping took $stop_ms ms"; }
	[ "$(cat $nb)" = "$nb0" ] && [ "$(cat $rl)" = "$rl0" ] ||
		fail "$name: settings not restored: numa_balancing $(cat $nb), rate limit $(cat $rl)"
	[ ! -e /sys/fs/bpf/cxltier ] || fail "$name: pins left: $(ls /sys/fs/bpf/cxltier)"
	[ ! -e "$run/kernel-settings.state" ] || fail "$name: state file left"
	kill -KILL -- -"$attacker" 2>/dev/null || true
	wait "$attacker" 2>/dev/null || true
	attacker=""
	kill "$sleeper"
	wait "$sleeper" 2>/dev/null || true
	sleeper=""
}

attack "metrics port, slow clients" slow tcp
attack "metrics port, 1000 idle" idle tcp
attack "metrics port, flood" flood tcp
attack "control socket, slow clients" slow unix
attack "control socket, 1000 idle" idle unix
attack "control socket, flood" flood unix
printf '%s' "$report"
echo "serve: ok"
