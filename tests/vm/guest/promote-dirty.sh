# promote-dirty: the soft-dirty source on a program that was running before the
# agent (which fault cannot see) with no NUMA scanner at work: tierbench's hot set,
# which it writes, starts on node 1 (CXL); the agent with --source soft-dirty
# brings >= 90% of it to node 0 within 30 s, the cold pages (never written after
# set-up) stay on node 1, the status shows the pages found written, and every byte
# checks out.  The kernel here must have soft-dirty bits and PAGEMAP_SCAN (6.7+).
. /tests/lib.sh

start_hot_on_cxl /tmp/tb.out
agent_to_90pct --source soft-dirty
grep -q 'sampler: soft-dirty (pages written each epoch' /tmp/agent.log || fail "the agent did not say which source"
written=$(jq '.sampler.soft_dirty.pages_last_epoch' /tmp/status.json)
res hot_pages "$hot"
res seconds_to_90pct "${reached:-never}"
res cold_on_node1_at_end "$cold1"
res written_pages_last_epoch "$written"
res scan_ms "$(jq '.sampler.soft_dirty.scan_ms' /tmp/status.json)"
[ -n "$reached" ] || fail "90% of the hot set never reached node 0"
awk -v r="$reached" 'BEGIN { exit !(r <= 30) }' || fail "90% of the hot set took ${reached}s (> 30 s)"
[ "$cold1" -eq "$cold" ] || fail "cold pages left node 1: $cold1 of $cold still there"
# The hot set is written every epoch; the cold pages are not.  A few of the
# program's own pages (stack, heap) are written too.
[ "$written" -ge $((hot * 9 / 10)) ] && [ "$written" -le $((hot + hot / 10)) ] ||
	fail "soft-dirty found $written pages written in the last epoch, the hot set is $hot"
jq -e '.sampler.soft_dirty.clear_failures == 0' /tmp/status.json > /dev/null ||
	fail "clearing the bits failed: $(jq -c .sampler.soft_dirty /tmp/status.json)"
echo "promote-dirty: ok (90% in ${reached}s, $written pages written in the last epoch)"
