#!/usr/bin/env bash
# cxltier-capture: lackey text becomes per-page access counts per window of
# instructions, every access kept (weights split at 65535, a modify counts
# twice, valgrind's own lines skipped); a real program run under lackey
# through the pipe gives a trace the replay reads, with as many accesses
# as the capture counted.
set -euo pipefail
BUILD=${BUILD:-build}
C="$BUILD/cxltier-capture"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

{
	printf '==123== Lackey, an example Valgrind tool\nI  04000000,3\n L 00001008,4\n S 00001010,8\n M 00002000,4\nI  04000003,2\n'
	for _ in $(seq 70000); do echo " L 00005000,4"; done
	printf 'I  04000005,2\nI  04000007,2\n L 00001000,8\n'
} > "$work/lackey.txt"
"$C" -q --window 2 -o "$work/t.trace" --import - < "$work/lackey.txt" || fail "import failed"
"$BUILD/cxltier-replay" --to-csv "$work/t.trace" > "$work/t.csv"
cat > "$work/want.csv" <<'CSV'
time_ns,tgid,vaddr,source,weight
2,1000,0x1000,pmu,2
2,1000,0x2000,pmu,2
4,1000,0x5000,pmu,65535
4,1000,0x5000,pmu,4465
6,1000,0x1000,pmu,1
CSV
diff -u "$work/want.csv" "$work/t.csv" || fail "imported samples differ"
echo "import: exact"

# A real program through valgrind, streamed: the weights sum to the accesses counted.
head -c 65536 "$C" > "$work/input"
"$C" -o "$work/xz.trace" -- xz -1 -c "$work/input" > /dev/null 2> "$work/xz.err" ||
	fail "capture of xz failed: $(tail -3 "$work/xz.err")"
n=$(sed -n 's/.* instructions, \([0-9]*\) accesses.*/\1/p' "$work/xz.err" | tail -1)
[ -n "$n" ] && [ "$n" -gt 100000 ] || fail "xz made only '$n' accesses: $(tail -2 "$work/xz.err")"
sum=$("$BUILD/cxltier-replay" --to-csv "$work/xz.trace" | awk -F, 'NR > 1 { s += $5 } END { print s }')
[ "$sum" -eq "$n" ] || fail "the trace weighs $sum accesses, the capture counted $n"
"$BUILD/cxltier-replay" --time-scale 1000 "$work/xz.trace" hotset > "$work/replay.out" ||
	fail "the replay refused the capture: $(cat "$work/replay.out")"
grep -q '^hotset ' "$work/replay.out" || fail "no hotset row: $(cat "$work/replay.out")"
echo "xz: $n accesses, all in the trace"

out=$("$C" -o "$work/x.trace" 2>&1) && fail "no program accepted"
grep -q "give -o TRACE and either" <<< "$out" || fail "usage message: $out"
echo "capture: ok"
