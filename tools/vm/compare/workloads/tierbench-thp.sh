# tierbench-thp: 64 MiB in transparent huge pages, all on node 1 (CXL) at start; the
# hot set is 64 pages at the start of each of the first 16 huge pages (tierbench
# --spread 64), the other 16 huge pages wholly cold.  The kernel moves a huge page
# only whole, so bringing the hot pages to DRAM drags the cold ones sharing their
# huge pages (7,168): cold→DRAM counts them.  Data checked by tierbench.
# guest-needs:
WL_DESC="tierbench 64 MiB THP, 64 hot pages in each of 16 huge pages, on CXL"

wl_setup() {
	tb_start --size 64M --thp --hot 0.0625 --spread 64 --skew 1 --hot-node 1 --cold-node 1
}
wl_run() { :; }	# tierbench runs from its set-up on
wl_place() { tb_place; }
wl_finish() { tb_finish; }
