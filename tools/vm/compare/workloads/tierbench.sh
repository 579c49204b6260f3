# tierbench: 64 MiB, the first quarter hot (all operations; as in tests/vm promote),
# node 1 (CXL) at start, one thread, seed 1; tierbench checks each page it
# touches and all of them at the end.
# guest-needs:
WL_DESC="tierbench 64 MiB, hot quarter on CXL"

wl_setup() {
	tb_start --size 64M --hot 0.25 --skew 1 --hot-node 1 --cold-node 1
}
wl_run() { :; }	# tierbench runs from its set-up on
wl_place() { tb_place; }
wl_finish() { tb_finish; }
