# tierbench-shift: tierbench's 64 MiB with a hot quarter, all on node 1 (CXL) at
# start, and the hot window moving on by its length every 10 s (--shift 10): the
# old hot set turns cold, a new one needs placing.  Hot counts the window as it is
# at each look, so steady% (the last 10 s) tells how well a system follows it, and
# the hot pages placed are counted window by window.
# Data checked by tierbench.
# guest-needs:
WL_DESC="tierbench 64 MiB, hot quarter moving every 10 s, on CXL"

wl_setup() {
	tb_start --size 64M --hot 0.25 --skew 1 --shift 10 --hot-node 1 --cold-node 1
}
wl_run() { :; }	# tierbench runs from its set-up on
wl_place() { tb_place; }
wl_finish() { tb_finish; }
wl_placed() { tb_placed_by_window; }
