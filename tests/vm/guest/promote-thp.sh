# promote-thp: tierbench's hot set, in transparent huge pages, starts on node 1
# (CXL); the agent brings >= 90% of it to node 0 within 60 s, moving each hot
# huge page whole, the cold huge pages stay on node 1, every byte checks out,
# and the agent counts the pages the kernel moved: a huge page counts 512,
# in its counters as in the kernel's (issue 14: it used to count one).
. /tests/lib.sh

[ -e /sys/kernel/mm/transparent_hugepage/enabled ] || fail "no THP in this kernel"
tierbench --size 64M --thp --hot 0.25 --skew 1 --hot-node 1 --cold-node 1 --duration 120 \
	--report-interval 1 --placement --verify > /tmp/tb.out 2>&1 &
wait_for /tmp/tb.out '^tierbench: placement'
tb=$(tb_pid /tmp/tb.out)
hot=$(sed -n 's/.*hot_pages=\([0-9]*\).*/\1/p' /tmp/tb.out)
[ "$(placement_of /tmp/tb.out hot 1)" = "$hot" ] || fail "hot set not on node 1 at start: $(grep placement /tmp/tb.out)"
huge_kb=$(awk '/^AnonHugePages/ { s += $2 } END { print s + 0 }' "/proc/$tb/smaps")
res anon_huge_kb_at_start "$huge_kb"
[ "$huge_kb" -ge $((48 * 1024)) ] || fail "tierbench has only $huge_kb kB in huge pages"

agent_to_90pct
res hot_pages "$hot"
res seconds_to_90pct "${reached:-never}"
res hot_on_node0_at_end "$(placement_of /tmp/tb.out hot 0)"
res cold_on_node1_at_end "$cold1"
res move_pages_pages "$(jq '.kernel_migrations.syscall.pages // 0' /tmp/status.json)"
res agent_moved_pages "$(jq '.mover.promoted + .mover.demoted + .mover.moved_other' /tmp/status.json)"
[ -n "$reached" ] || fail "90% of the hot set never reached node 0"
[ "$cold1" -ge $((cold * 9 / 10)) ] || fail "cold huge pages left node 1: $cold1 of $cold still there"
jq -e '.kernel_migrations.syscall.pages == .mover.promoted + .mover.demoted + .mover.moved_other' \
	/tmp/status.json > /dev/null || fail "move_pages migrations seen by the kernel != the agent's count: $(jq -c '[.kernel_migrations, .mover]' /tmp/status.json)"
echo "promote-thp: ok"
