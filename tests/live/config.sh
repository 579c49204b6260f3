#!/usr/bin/env bash
# Live test (root): cxltierd --config FILE runs with the file's settings
# (flags override them), --check-config validates without running, and bad
# or unsafe files are refused with the file, line and reason.
set -euo pipefail
. "$(dirname "$0")/lib.bash"
chmod 0755 "$work"

out=$("$BUILD/cxltierd" --config packaging/cxltier.conf --check-config) || fail "the sample config does not check"
grep -q "packaging/cxltier.conf: valid; policy hotset loads" <<< "$out" || fail "check-config: $out"
# Flags are part of the effective configuration it prints, as valid INI that loads again.
"$BUILD/cxltierd" --config packaging/cxltier.conf --check-config --rate 77 --comm redis \
	-o headroom=0.1 > "$work/eff.conf" || fail "check-config with flags"
grep -q "^rate_mbps = 77" "$work/eff.conf" && grep -q "^comm = redis" "$work/eff.conf" &&
	grep -q "^headroom = 0.1" "$work/eff.conf" || fail "flags missing from the effective config: $(cat "$work/eff.conf")"
chmod 0644 "$work/eff.conf"
"$BUILD/cxltierd" --config "$work/eff.conf" --check-config > /dev/null || fail "the printed configuration does not load again"

sleep 60 & sleeper=$!
cat > "$work/good.conf" <<CONF
[targets]
pid = $sleeper
[mover]
rate_mbps = 64
[policy]
name = hotcold
promote_heat = 3
[output]
run_dir = $work/run
CONF
chmod 0644 "$work/good.conf"
"$BUILD/cxltierd" --config "$work/good.conf" --epoch-ms 200 > "$work/agent.log" 2>&1 &
agent=$!
wait_for 30 "the agent's set-up (control socket)" socket_up "$work/run"
"$BUILD/cxltierctl" --run-dir "$work/run" status --json > "$work/st.json" || fail "no status"
jq -e --argjson p "$sleeper" '.targets[0].pid == $p and .agent.rate_mbps == 64 and .agent.epoch_ms == 200
	and .policy.name == "hotcold" and .policy.params.promote_heat == "3"' "$work/st.json" > /dev/null ||
	fail "settings not applied: $(jq -c '[.agent.rate_mbps, .agent.epoch_ms, .policy]' "$work/st.json")"
# SIGHUP re-reads the file: a good change applies (heat history kept), a bad one is refused.
pages=$(jq '.agent.tracked_pages' "$work/st.json")
sed -i 's/rate_mbps = 64/rate_mbps = 32/; s/promote_heat = 3/promote_heat = 5/' "$work/good.conf"
kill -HUP "$agent"
wait_for 30 "the reload in the log" logged 'reloaded: policy hotcold, 32 MiB/s'
"$BUILD/cxltierctl" --run-dir "$work/run" status --json > "$work/st.json"
jq -e '.agent.rate_mbps == 32 and .policy.params.promote_heat == "5"' "$work/st.json" > /dev/null ||
	fail "reload did not apply: $(jq -c '[.agent.rate_mbps, .policy.params]' "$work/st.json")"
[ "$(jq '.agent.tracked_pages' "$work/st.json")" -ge "$pages" ] || fail "reload lost the tracked pages"
sed -i 's/rate_mbps = 32/rate_mbps = fast/' "$work/good.conf"
kill -HUP "$agent"
wait_for 30 "the refused reload in the log" logged 'reload refused'
grep -q "reload refused: .*good.conf:.*rate_mbps = fast.*; the running configuration stays" "$work/agent.log" ||
	fail "bad reload not refused clearly"
"$BUILD/cxltierctl" --run-dir "$work/run" status --json | jq -e '.agent.rate_mbps == 32' > /dev/null ||
	fail "a refused reload changed the running settings"
# cxltierctl reload does the same and answers whether it worked.
out=$("$BUILD/cxltierctl" --run-dir "$work/run" reload 2>&1) && fail "cxltierctl reload of a bad file succeeded: $out"
grep -q "reload refused" <<< "$out" || fail "cxltierctl reload does not say it was refused: $out"
sed -i 's/rate_mbps = fast/rate_mbps = 16/' "$work/good.conf"
out=$("$BUILD/cxltierctl" --run-dir "$work/run" reload) || fail "cxltierctl reload failed: $out"
grep -q "reloaded: policy hotcold, 16 MiB/s" <<< "$out" || fail "cxltierctl reload answered: $out"
"$BUILD/cxltierctl" --run-dir "$work/run" status --json | jq -e '.agent.rate_mbps == 16' > /dev/null ||
	fail "cxltierctl reload did not apply the file"
kill -TERM "$agent"
wait "$agent" || fail "cxltierd exited $?"
agent=""

printf '[mover]\nrate_mbps = fast\n' > "$work/bad.conf"
chmod 0644 "$work/bad.conf"
out=$("$BUILD/cxltierd" --config "$work/bad.conf" --check-config 2>&1) && fail "bad config accepted"
grep -q "bad.conf:2: \[mover\] rate_mbps = fast" <<< "$out" || fail "bad config message: $out"
chmod 0666 "$work/good.conf"
out=$("$BUILD/cxltierd" --config "$work/good.conf" --check-config 2>&1) && fail "world-writable config accepted"
grep -q "writable by others" <<< "$out" || fail "unsafe config message: $out"
echo "config: ok"
