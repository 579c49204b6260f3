# tierbench-full: DRAM nearly full, so every promotion needs a demotion.  384 MiB:
# the hot 24 MiB (6,144 pages) on node 1 (CXL), the cold 360 MiB on node 0 (DRAM,
# 462 MiB in this guest), leaving node 0 about at its high watermark.  Data checked
# by tierbench.  Its cold→DRAM is negative: cold pages demoted to make room.
# guest-needs:
WL_DESC="tierbench 384 MiB, DRAM full of cold pages, hot set on CXL"

wl_setup() {
	rm -f /tmp/wl.out
	tierbench --size 384M --hot 0.0625 --skew 1 --seed 1 --hot-node 1 --cold-node 0 \
		--duration 100000 --report-interval 1 --placement --verify > /tmp/wl.out 2>&1 &
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
