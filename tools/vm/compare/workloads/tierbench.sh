# tierbench: 64 MiB, the first quarter hot (all operations; as in tests/vm promote),
# node 1 (CXL) at start, one thread, seed 1; tierbench checks each page it
# touches and all of them at the end.
# guest-needs:
WL_DESC="tierbench 64 MiB, hot quarter on CXL"

wl_setup() {
	rm -f /tmp/wl.out
	tierbench --size 64M --hot 0.25 --skew 1 --seed 1 --hot-node 1 --cold-node 1 \
		--duration 100000 --report-interval 1 --placement --verify > /tmp/wl.out 2>&1 &
	wait_for /tmp/wl.out '^tierbench: placement'
	WL_PID=$(tb_pid /tmp/wl.out)
	HOT=$(sed -n 's/.*hot_pages=\([0-9]*\).*/\1/p' /tmp/wl.out)
	COLD=$(( $(sed -n 's/.*pages=\([0-9]*\) hot_start.*/\1/p' /tmp/wl.out) - HOT ))
}
wl_run() { :; }	# tierbench runs from its set-up on
# "HOT_ON_0 COLD_ON_0" from tierbench's last placement line
wl_place() { echo "$(placement_of /tmp/wl.out hot 0) $(placement_of /tmp/wl.out cold 0)"; }
wl_finish() {
	kill -INT "$WL_PID"
	wait "$WL_PID"
	grep -q 'verify=ok' /tmp/wl.out && echo ok || echo "FAIL:$(tail -1 /tmp/wl.out | tr ' ' _)"
}
