# The demo: a workload whose hot set starts on CXL (node 1) and cxltierd with
# its defaults.  Once per epoch: where the hot and cold pages are, and what
# the agent moved; then a summary.
. /tests/lib.sh

echo "== emulated CXL machine =="
for n in 0 1; do
	echo "node $n: $(awk '/MemTotal/ { printf "%d MiB", $4 / 1024 }' /sys/devices/system/node/node$n/meminfo), CPUs: $(cat /sys/devices/system/node/node$n/cpulist | grep . || echo none)"
done
for t in /sys/devices/virtual/memory_tiering/memory_tier*; do
	echo "${t##*/}: nodes $(cat "$t/nodelist")"
done
promote0=$(vmstat pgpromote_success)

echo "== tierbench: 64 MiB, hot set 16 MiB, all of it placed on node 1 (CXL) =="
tierbench --size 64M --hot 0.25 --skew 1 --hot-node 1 --cold-node 1 --duration 120 \
	--report-interval 1 --placement --verify > /tmp/tb.out 2>&1 &
tb=$!
wait_for /tmp/tb.out '^tierbench: placement'
hot=$(sed -n 's/.*hot_pages=\([0-9]*\).*/\1/p' /tmp/tb.out)

echo "== cxltierd --pid $tb (default policy and source) =="
t0=$(now)
cxltierd --pid "$tb" --duration 15 > /tmp/agent.log 2>&1 &
agent=$!
wait_for /tmp/agent.log 'maps and programs pinned'
i=0
while [ ! -S /run/cxltier/cxltier.sock ] && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
grep -E '^(node|fast|migrate|observe|set|sampler)' /tmp/agent.log | sed 's/^/  agent: /'
printf '%6s  %-22s %-22s %9s %9s\n' time "hot pages node0/node1" "cold pages node0/node1" promoted demoted
reached=""
while kill -0 "$agent" 2>/dev/null; do
	sleep 1
	st=$(cxltierctl status --json 2>/dev/null) || break	# the agent has stopped
	h0=$(placement_of /tmp/tb.out hot 0); h1=$(placement_of /tmp/tb.out hot 1)
	c0=$(placement_of /tmp/tb.out cold 0); c1=$(placement_of /tmp/tb.out cold 1)
	pro=$(echo "$st" | jq '.mover.promoted' 2>/dev/null)
	dem=$(echo "$st" | jq '.mover.demoted' 2>/dev/null)
	printf '%5ss  %-22s %-22s %9s %9s\n' "$(elapsed "$t0")" "$h0 / $h1" "$c0 / $c1" \
		"${pro:-0}" "${dem:-0}"
	[ -z "$reached" ] && [ "$h0" -ge $((hot * 9 / 10)) ] && reached=$(elapsed "$t0")
done
wait "$agent"
kill -INT "$tb"
wait "$tb"
echo "== summary =="
echo "90% of the hot set on DRAM after: ${reached:-never} s"
echo "pages moved by cxltierd:          $(sed -n 's/.*stopped after .* moved \([0-9]*\) pages.*/\1/p' /tmp/agent.log)"
echo "pages the kernel promoted itself: $(( $(vmstat pgpromote_success) - promote0 ))"
echo "tierbench data check:             $(sed -n 's/.*\(verify=[a-zA-Z]*\).*/\1/p' /tmp/tb.out)"
res seconds_to_90pct "${reached:-never}"
