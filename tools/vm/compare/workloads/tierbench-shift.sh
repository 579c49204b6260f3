# tierbench-shift: tierbench's 64 MiB with a hot quarter, all on node 1 (CXL) at
# start, and the hot window moving on by its length every 10 s (--shift 10): the
# old hot set turns cold, a new one needs placing.  Hot counts the window as it is
# at each look, so steady% (the last 10 s) tells how well a system follows it.
# Data checked by tierbench.
# guest-needs:
WL_DESC="tierbench 64 MiB, hot quarter moving every 10 s, on CXL"

wl_setup() {
	rm -f /tmp/wl.out
	tierbench --size 64M --hot 0.25 --skew 1 --seed 1 --shift 10 --hot-node 1 --cold-node 1 \
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
