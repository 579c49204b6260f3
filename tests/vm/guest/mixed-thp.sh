# mixed-thp: huge pages that hold a few hot pages among cold ones (tierbench --spread:
# 64 hot 4 KiB pages at the start of each of 16 huge pages, 16 more huge pages wholly
# cold), all on node 1 (CXL). The kernel moves a huge page only whole; the agent splits
# each mixed one before it promotes it (docs/design.md, "Huge pages"), so >= 90% of the
# hot pages reach node 0 within 60 s and at most a quarter of the 7,168 cold pages that
# share their huge pages come along (the kernel's tiering brings all of them); the
# wholly cold huge pages stay on node 1, the agent's count of pages moved is the
# kernel's, and every byte checks out.
. /tests/lib.sh

[ -e /sys/kernel/mm/transparent_hugepage/enabled ] || fail "no THP in this kernel"
tierbench --size 64M --thp --hot 0.0625 --spread 64 --skew 1 --hot-node 1 --cold-node 1 \
	--duration 120 --report-interval 1 --placement --verify > /tmp/tb.out 2>&1 &
wait_for /tmp/tb.out '^tierbench: placement'
tb=$(tb_pid /tmp/tb.out)
hot=$(sed -n 's/.*hot_pages=\([0-9]*\).*/\1/p' /tmp/tb.out)
[ "$hot" = 1024 ] || fail "expected 1024 hot pages: $(head -1 /tmp/tb.out)"
[ "$(placement_of /tmp/tb.out hot 1)" = "$hot" ] || fail "hot set not on node 1 at start: $(grep placement /tmp/tb.out)"
huge_kb=$(awk '/^AnonHugePages/ { s += $2 } END { print s + 0 }' "/proc/$tb/smaps")
res anon_huge_kb_at_start "$huge_kb"
[ "$huge_kb" -ge $((48 * 1024)) ] || fail "tierbench has only $huge_kb kB in huge pages"

agent_to_90pct
wholly_cold=$((16 * 512)) sharing=$((16 * 512 - hot))
dragged=$(placement_of /tmp/tb.out cold 0)
res hot_pages "$hot"
res seconds_to_90pct "${reached:-never}"
res hot_on_node0_at_end "$(placement_of /tmp/tb.out hot 0)"
res cold_on_node1_at_end "$cold1/$cold"
res cold_dragged_to_node0 "$dragged"
res huge_pages_split "$(jq '.mover.split' /tmp/status.json)"
res move_pages_pages "$(jq '.kernel_migrations.syscall.pages // 0' /tmp/status.json)"
res agent_moved_pages "$(jq '.mover.promoted + .mover.demoted + .mover.moved_other' /tmp/status.json)"
[ -n "$reached" ] || fail "90% of the hot pages never reached node 0"
[ "$cold1" -ge $((wholly_cold * 9 / 10)) ] || fail "wholly cold huge pages left node 1: $cold1 cold pages there, $wholly_cold in them"
[ "$dragged" -le $((sharing / 4)) ] || fail "$dragged of the $sharing cold pages sharing huge pages with hot ones came to node 0"
jq -e '.mover.split >= 16' /tmp/status.json > /dev/null || fail "the 16 mixed huge pages were not split: $(jq -c .mover /tmp/status.json)"
jq -e '.kernel_migrations.syscall.pages == .mover.promoted + .mover.demoted + .mover.moved_other' \
	/tmp/status.json > /dev/null || fail "move_pages migrations seen by the kernel != the agent's count: $(jq -c '[.kernel_migrations, .mover]' /tmp/status.json)"
echo "mixed-thp: ok"
