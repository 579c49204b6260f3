# samefile: the probe policy in the live agent (the same .so the host just
# ran in cxltier-replay); its description of the view goes back in /result.
. /tests/lib.sh
tierbench --size 32M --hot 0.25 --skew 1 --hot-node 1 --cold-node 1 --duration 60 > /tmp/tb.out 2>&1 &
tb=$!
wait_for /tmp/tb.out '^tierbench: placement'
# The policy's own process may not open files: the probe describes on stderr, into the log.
cxltierd --pid "$tb" --policy /usr/lib/cxltier/test-policies/probe.so -o out=- \
	--duration 5 > /tmp/agent.log 2>&1 || fail "cxltierd exited $?"
sed -n 's/^probe: //p' /tmp/agent.log > /tmp/probe.txt
kill -INT "$tb"
wait "$tb"
[ -s /tmp/probe.txt ] || fail "the probe policy described nothing"
cat /tmp/probe.txt >> /result
cat /tmp/probe.txt
