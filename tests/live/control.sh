#!/usr/bin/env bash
# Live test of the control surface (root): cxltierctl status/targets/pause/
# resume/rate/policy/metrics over the socket, Prometheus text on the metrics
# port, and a non-root user refused (the socket's mode, then the peer check).
set -euo pipefail
. "$(dirname "$0")/lib.bash"
chmod 0755 "$work"
run="$work/run"
port=$((20000 + RANDOM % 20000))
user=cxlt-ctl-test
cleanup_more() {
	userdel "$user" 2>/dev/null || true
}
ctl() { "$BUILD/cxltierctl" --run-dir "$run" "$@"; }

sleep 60 & sleeper=$!
"$BUILD/cxltierd" --pid "$sleeper" --run-dir "$run" --epoch-ms 200 --metrics-port "$port" \
	> "$work/agent.log" 2>&1 &
agent=$!
for _ in $(seq 100); do [ -S "$run/cxltier.sock" ] && break; sleep 0.05; done
[ -S "$run/cxltier.sock" ] || fail "no control socket"
[ "$(stat -c %a "$run/cxltier.sock")" = 600 ] || fail "socket mode $(stat -c %a "$run/cxltier.sock")"
[ "$(stat -c %a "$run")" = 700 ] || fail "run dir mode $(stat -c %a "$run")"

ctl status | grep -q "sleep" || fail "status lacks the target"
ctl status --json | jq -e --argjson p "$sleeper" '.targets[0].pid == $p' > /dev/null || fail "status --json"
ctl targets | jq -e 'length == 1' > /dev/null || fail "targets"
[ "$(ctl pause)" = paused ] || fail "pause"
ctl status --json | jq -e '.agent.paused == true' > /dev/null || fail "not paused"
[ "$(ctl resume)" = resumed ] || fail "resume"
ctl status --json | jq -e '.agent.paused == false' > /dev/null || fail "not resumed"
ctl rate 64 > /dev/null || fail "rate"
ctl status --json | jq -e '.agent.rate_mbps == 64' > /dev/null || fail "rate not applied"
out=$(ctl rate fast 2>&1) && fail "rate 'fast' accepted"
grep -q "rate 'fast': expected MiB/s" <<< "$out" || fail "bad rate message: $out"
ctl policy hotcold promote_heat=2 > /dev/null || fail "policy switch"
ctl status --json | jq -e '.policy.name == "hotcold" and .policy.params.promote_heat == "2"' > /dev/null ||
	fail "policy not switched"
out=$(ctl policy hotcold nosuch=1 2>&1) && fail "unknown parameter accepted"
grep -q "refused" <<< "$out" || fail "bad policy message: $out"
grep -q "unknown parameter 'nosuch'" "$work/agent.log" || fail "the log does not say why"
ctl status --json | jq -e '.policy.name == "hotcold"' > /dev/null || fail "the old policy did not stay"

# Prometheus text, over the socket and over HTTP: well-formed lines only.
ctl metrics > "$work/m1"
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3
cat <&3 > "$work/http"
exec 3<&-
head -1 "$work/http" | grep -q "200 OK" || fail "HTTP: $(head -1 "$work/http")"
sed '1,/^\r$/d' "$work/http" > "$work/m2"
for m in "$work/m1" "$work/m2"; do
	bad=$(grep -v '^#' "$m" | grep -Ev '^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? -?[0-9.eE+-]+$' || true)
	[ -z "$bad" ] || fail "malformed metric lines: $bad"
	grep -q '^# TYPE cxltier_mover_pages_total counter' "$m" || fail "no TYPE line"
	grep -q "cxltier_target_pages{pid=\"$sleeper\",comm=\"sleep\",tier=\"fast\"}" "$m" || fail "no target metric"
done

# A non-root user: the socket's mode keeps it out; with the mode opened up,
# the peer-credential check still refuses.
useradd -M -s /usr/sbin/nologin "$user"
out=$(runuser -u "$user" -- "$BUILD/cxltierctl" --run-dir "$run" status 2>&1) && fail "non-root got in"
grep -q "Permission denied" <<< "$out" || fail "non-root: $out"
chmod 0711 "$run"
chmod 0666 "$run/cxltier.sock"
out=$(runuser -u "$user" -- "$BUILD/cxltierctl" --run-dir "$run" status 2>&1) && fail "peer check let non-root in"
grep -q "the control socket is for root only" <<< "$out" || fail "peer check: $out"
grep -q "refused a request from uid" "$work/agent.log" || fail "refusal not logged"

kill -TERM "$agent"
wait "$agent" || fail "cxltierd exited $?"
agent=""
[ ! -e "$run/cxltier.sock" ] || fail "socket left behind"
echo "control: ok"
