# tierbench-full: DRAM nearly full, so that every promotion needs a demotion.
# The cold part fills node 0 (DRAM) up to 48 MiB of its free memory; the hot part,
# 96 MiB, starts on node 1 (CXL): at most half of it fits in what DRAM has free,
# the rest only where cold pages make room.  Sized from node 0's free memory at
# set-up.  Cold on DRAM at the end says how much cold memory stayed.  Data checked
# by tierbench.
# guest-needs:
WL_DESC="tierbench, DRAM full of cold pages but 48 MiB, 96 MiB hot on CXL"

wl_setup() {
	free_mb=$(awk '/MemFree/ { print int($4 / 1024) }' /sys/devices/system/node/node0/meminfo)
	cold_mb=$((free_mb - 48)) hot_mb=96
	[ "$cold_mb" -gt 64 ] || { echo "tierbench-full: node 0 has only $free_mb MiB free" >&2; return 1; }
	tb_start --size $((cold_mb + hot_mb))M --skew 1 --hot-node 1 --cold-node 0 \
		--hot "$(awk -v h=$hot_mb -v c=$cold_mb 'BEGIN { printf "%.6f", h / (h + c) }')"
}
wl_run() { :; }	# tierbench runs from its set-up on
wl_place() { tb_place; }
wl_finish() { tb_finish; }
