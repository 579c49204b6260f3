#!/usr/bin/env bash
# cxltier-capture: lackey text becomes per-page access counts per window of
# instructions, every access kept (weights split at 65535, a modify counts
# twice, valgrind's own lines skipped); a real program run under cxltier's
# valgrind tool through the pipe gives a trace the replay reads, with as
# many accesses as the capture counted, the same instructions and the same
# accesses on every page as under lackey; a program that forks leaves a
# trace of its own accesses only; one that execs, what ran before, and a
# warning.
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
! grep -q "running lackey" "$work/xz.err" || fail "cxltier's valgrind tool was not used: $(cat "$work/xz.err")"
n=$(sed -n 's/.* instructions, \([0-9]*\) accesses.*/\1/p' "$work/xz.err" | tail -1)
[ -n "$n" ] && [ "$n" -gt 100000 ] || fail "xz made only '$n' accesses: $(tail -2 "$work/xz.err")"
sum=$("$BUILD/cxltier-replay" --to-csv "$work/xz.trace" | awk -F, 'NR > 1 { s += $5 } END { print s }')
[ "$sum" -eq "$n" ] || fail "the trace weighs $sum accesses, the capture counted $n"
"$BUILD/cxltier-replay" --time-scale 1000 "$work/xz.trace" hotset > "$work/replay.out" ||
	fail "the replay refused the capture: $(cat "$work/replay.out")"
grep -q '^hotset ' "$work/replay.out" || fail "no hotset row: $(cat "$work/replay.out")"
echo "xz: $n accesses, all in the trace"

# The tool against lackey.  The program's environment must be the same in
# both (the capture gives the tool's run VALGRIND_LIB, and the dynamic
# loader's instructions depend on the environment's length).
head -c 16384 "$C" > "$work/small"   # lackey runs 100 times slower
per_page() { "$BUILD/cxltier-replay" --to-csv "$1" | awk -F, 'NR > 1 { s[$3] += $5 } END { for (p in s) print p, s[p] }' | sort; }
for how in tool lackey; do
	flag=; [ "$how" = tool ] || flag=--lackey
	VALGRIND_LIB="$(cd "$BUILD" && pwd)/valgrind" "$C" $flag -o "$work/$how.trace" -- \
		gzip -6 -c "$work/small" > /dev/null 2> "$work/$how.err" || fail "capture under $how failed: $(tail -3 "$work/$how.err")"
	tail -1 "$work/$how.err" | sed 's/.*trace: //' > "$work/$how.sum"
	per_page "$work/$how.trace" > "$work/$how.pages"
done
diff "$work/lackey.sum" "$work/tool.sum" || fail "instructions or accesses differ from lackey's"
diff -q "$work/lackey.pages" "$work/tool.pages" > /dev/null || fail "accesses per page differ from lackey's"
echo "tool and lackey: $(cat "$work/tool.sum"), $(wc -l < "$work/tool.pages") pages, each the same"

# A shell that forks xz: the child's moments under valgrind before its exec
# send nothing, so the records stay whole.
"$C" -o "$work/sh.trace" -- sh -c "xz -1 -c '$work/input' > /dev/null; exit 0" 2> "$work/sh.err" ||
	fail "capture of a forking shell failed: $(tail -3 "$work/sh.err")"
"$BUILD/cxltier-replay" --to-csv "$work/sh.trace" > /dev/null || fail "the forking shell's trace is unreadable"
echo "forking shell: $(tail -1 "$work/sh.err" | sed 's/.*trace: //')"

# A shell that execs: valgrind does not follow, so the capture keeps the
# shell's part and says why the rest is missing.
"$C" -o "$work/exec.trace" -- sh -c "exec xz -1 -c '$work/input' > /dev/null" 2> "$work/exec.err" ||
	fail "capture of an exec'ing shell failed: $(tail -3 "$work/exec.err")"
grep -q "replaced itself with exec(2)" "$work/exec.err" || fail "no word of the exec: $(cat "$work/exec.err")"
n=$(sed -n 's/.*trace: \([0-9]*\) instructions.*/\1/p' "$work/exec.err")
[ -n "$n" ] && [ "$n" -gt 1000 ] && [ "$n" -lt 10000000 ] || fail "the shell's part: '$n' instructions"
"$BUILD/cxltier-replay" --to-csv "$work/exec.trace" > /dev/null || fail "the exec'ing shell's trace is unreadable"
echo "exec'ing shell: $n instructions before the exec, and a warning"

out=$("$C" -o "$work/x.trace" 2>&1) && fail "no program accepted"
grep -q "give -o TRACE and either" <<< "$out" || fail "usage message: $out"
echo "capture: ok"
