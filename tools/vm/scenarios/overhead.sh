# make bench, emulated part of the sampling overhead: tierbench's operations
# per second with the agent attached (each source) over without, alternating
# runs; the hint source pins the NUMA scanner's period here (debugfs); damon
# (the agent's own vaddr kdamond) where the guest kernel has DAMON.
. /tests/lib.sh
ops() { sed -n 's/.*ops_per_sec=\([0-9]*\).*/\1/p' "$1"; }
alone() { tierbench --size 64M --hot 0.25 --duration 5 > /tmp/a.out 2>&1; ops /tmp/a.out; }
attached() {
	tierbench --size 64M --hot 0.25 --duration 5 > /tmp/w.out 2>&1 &
	tb=$!
	wait_for /tmp/w.out '^tierbench: pid='
	cxltierd --pid "$tb" --source "$1" --observe > /tmp/agent.log 2>&1 &
	wait "$tb"
	wait
	ops /tmp/w.out
}
printf '%-8s %12s %12s %7s\n' source "alone ops/s" "with ops/s" ratio
srcs="fault hint"
[ -d /sys/kernel/mm/damon/admin ] && srcs="$srcs damon"
echo "kernel $(uname -r)"
for src in $srcs; do
	a=0; w=0
	for r in 1 2 3; do
		a=$((a + $(alone)))
		w=$((w + $(attached "$src")))
	done
	printf '%-8s %12d %12d %7s\n' "$src" $((a / 3)) $((w / 3)) "$(awk -v a="$a" -v w="$w" 'BEGIN { printf "%.3f", w / a }')"
done
echo "(means of 3 alternating runs of 5 s, 1 thread, 64 MiB, QEMU TCG; the attached run includes the agent's start)"
