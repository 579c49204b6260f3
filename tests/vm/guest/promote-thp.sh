# promote-thp: tierbench's hot set, in transparent huge pages, starts on node 1
# (CXL); the agent brings >= 90% of it to node 0 within 60 s (it splits each hot
# huge page first, then moves its pages), the cold huge pages stay on node 1,
# the 8 hot huge pages, all of whose pages are on node 0 then, are huge pages
# again there (collapsed: the status counts 8, and smaps has the hot set's 16 MiB
# in huge pages; the cold huge pages, PROT_NONE from the NUMA scanner and never
# touched, are not in AnonHugePages then), every byte checks out, and the agent
# counts the pages the kernel moved.
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

collapsed() { [ "$(cxltierctl status --json 2>/dev/null | jq '.mover.collapsed // 0' 2>/dev/null)" -ge 8 ]; }
collapse_wait() {
	wait_until 300 "8 hot huge pages made huge again on node 0" collapsed
	huge_end=$(awk '/^AnonHugePages/ { s += $2 } END { print s + 0 }' "/proc/$tb/smaps")
}
after_90pct=collapse_wait
agent_to_90pct
res hot_pages "$hot"
res seconds_to_90pct "${reached:-never}"
res hot_on_node0_at_end "$(placement_of /tmp/tb.out hot 0)"
res cold_on_node1_at_end "$cold1"
res huge_pages_split "$(jq '.mover.split' /tmp/status.json)"
res huge_pages_collapsed "$(jq '.mover.collapsed' /tmp/status.json)"
res anon_huge_kb_at_end "${huge_end:-}"
res move_pages_pages "$(jq '.kernel_migrations.syscall.pages // 0' /tmp/status.json)"
res agent_moved_pages "$(jq '.mover.promoted + .mover.demoted + .mover.moved_other' /tmp/status.json)"
[ -n "$reached" ] || fail "90% of the hot set never reached node 0"
[ "$cold1" -ge $((cold * 9 / 10)) ] || fail "cold huge pages left node 1: $cold1 of $cold still there"
[ "${huge_end:-0}" -ge $((hot * 4)) ] || fail "the hot set is not in huge pages again: ${huge_end:-?} kB in huge pages"
jq -e '.kernel_migrations.syscall.pages == .mover.promoted + .mover.demoted + .mover.moved_other' \
	/tmp/status.json > /dev/null || fail "move_pages migrations seen by the kernel != the agent's count: $(jq -c '[.kernel_migrations, .mover]' /tmp/status.json)"
echo "promote-thp: ok"
