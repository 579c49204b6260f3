# tierbench-thp: 64 MiB in transparent huge pages, all on node 1 (CXL) at start; the
# hot set is 64 pages at the start of each of the first 16 huge pages (tierbench
# --spread 64), the other 16 huge pages wholly cold.  The kernel moves a huge page
# only whole, so bringing the hot pages to DRAM drags the cold ones sharing their
# huge pages (7,168): cold→DRAM counts them.  Data checked by tierbench.
# guest-needs:
WL_DESC="tierbench 64 MiB THP, 64 hot pages in each of 16 huge pages, on CXL"

wl_setup() {
	rm -f /tmp/wl.out
	tierbench --size 64M --thp --hot 0.0625 --spread 64 --skew 1 --seed 1 --hot-node 1 \
		--cold-node 1 --duration 100000 --report-interval 1 --placement --verify > /tmp/wl.out 2>&1 &
	wait_for /tmp/wl.out '^tierbench: placement'
	WL_PID=$(tb_pid /tmp/wl.out)
	HOT=$(sed -n 's/.*hot_pages=\([0-9]*\).*/\1/p' /tmp/wl.out)
	COLD=$(( $(sed -n 's/.*pages=\([0-9]*\) hot_start.*/\1/p' /tmp/wl.out) - HOT ))
}
wl_run() { :; }
wl_place() { echo "$(placement_of /tmp/wl.out hot 0) $(placement_of /tmp/wl.out cold 0)"; }
wl_finish() {
	kill -INT "$WL_PID"
	wait "$WL_PID"
	grep -q 'verify=ok' /tmp/wl.out && echo ok || echo "FAIL:$(tail -1 /tmp/wl.out | tr ' ' _)"
}
