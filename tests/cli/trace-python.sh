#!/usr/bin/env bash
# tools/cxltrace.py, the Python (numpy) reader of docs/trace-format.md,
# agrees with the C reader: the CSV of a synthetic trace and of a
# hand-made one (every source, weight 0, out-of-order times, nodes, a
# header longer than version 1's) equals cxltier-replay --to-csv byte for
# byte, and a truncated trace is refused by both.
set -euo pipefail
BUILD=${BUILD:-build}
R="$BUILD/cxltier-replay"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# pyenv and friends may shadow Debian's python3, which has numpy (make deps).
PY=
for p in python3 /usr/bin/python3; do
	if command -v "$p" > /dev/null && "$p" -c 'import numpy' 2> /dev/null; then
		PY=$p
		break
	fi
done
[ -n "$PY" ] || { echo "SKIP: no python3 with numpy (make deps installs python3-numpy)"; exit 77; }

"$R" --synth zipf --pages 4096 --samples 50000 --epochs 6 --seed 5 -O "$work/z.trace" 2> /dev/null
"$R" --to-csv "$work/z.trace" -O "$work/c.csv"
"$PY" tools/cxltrace.py --to-csv "$work/z.trace" > "$work/py.csv"
cmp -s "$work/c.csv" "$work/py.csv" || fail "synthetic trace: the CSVs differ: $(diff "$work/c.csv" "$work/py.csv" | head -5)"

# Hand-made: a 64-byte header (8 bytes a later version-1 writer appended),
# two nodes, samples of sources 0-4, weight 0 and 65535, time going back.
perl -e 'open(my $o, ">", shift) or die; binmode $o;
	print $o pack("a8 V6 Q< Q< Q< Q<", "CXLTTRC", 1, 64, 4096, 2, 24, 0, 5, 0, 0, 42);
	print $o pack("l< l< l< V Q<", 0, 0, 4, 0, 1000), pack("l< l< l< V Q<", 2, 1, 22, 0, 9000);
	my @s = ([10, 7, 1, 1, 0x10], [30, 7, 2, 0, 0x11], [20, 8, 3, 65535, 0xfffffffffffff],
		 [40, 9, 0, 3, 0], [50, 9, 4, 2, 1]);
	print $o pack("Q< V v v Q<", @$_) for @s;' "$work/h.trace"
"$R" --to-csv "$work/h.trace" -O "$work/hc.csv"
"$PY" tools/cxltrace.py --to-csv "$work/h.trace" > "$work/hpy.csv"
cmp -s "$work/hc.csv" "$work/hpy.csv" || fail "hand-made trace: the CSVs differ: $(diff "$work/hc.csv" "$work/hpy.csv")"
[ "$(wc -l < "$work/hpy.csv")" -eq 6 ] || fail "hand-made trace: $(cat "$work/hpy.csv")"
"$PY" - "$work/h.trace" <<'PY' || fail "the reader's arrays"
import sys
sys.path.insert(0, "tools")
import cxltrace
t = cxltrace.read(sys.argv[1])
assert t.header["header_size"] == 64 and t.header["start_ns"] == 5, t.header
assert [int(n["capacity_pages"]) for n in t.nodes] == [1000, 9000], t.nodes
assert t.samples["weight"].tolist() == [1, 0, 65535, 3, 2]
assert t.samples["vpage"][2] == 0xfffffffffffff
PY

# Truncated: both refuse, naming the reason.
head -c $((56 + 2 * 24 + 24 * 10 + 5)) "$work/z.trace" > "$work/t.trace"
! "$R" --to-csv "$work/t.trace" > /dev/null 2>&1 || fail "C reader took a truncated trace"
out=$("$PY" tools/cxltrace.py --to-csv "$work/t.trace" 2>&1) && fail "Python reader took a truncated trace"
grep -q "truncated: 5 stray bytes" <<< "$out" || fail "truncated: $out"
echo "trace-python: ok"
