#!/usr/bin/env bash
# tools/cxltrace.py, the Python (numpy) reader of docs/trace-format.md,
# agrees with the C reader: the CSV of a synthetic trace and of a
# hand-made one (every source, weight 0, out-of-order times, nodes, a
# header longer than version 1's; a version-2 one with resident runs and an
# unknown event) equals cxltier-replay --to-csv byte for byte, the runs read
# alike, and a truncated trace or a version 3 is refused by both.
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

# Version 2: resident runs (source 0x8100 + node record), an epoch mark and
# an event of a later kind among the samples; the CSVs are the samples alone, the runs come
# with their node's role.
perl -e 'open(my $o, ">", shift) or die; binmode $o;
	print $o pack("a8 V6 Q< Q< Q<", "CXLTTRC", 2, 56, 4096, 2, 24, 0, 0, 0, 0);
	print $o pack("l< l< l< V Q<", 0, 0, 4, 0, 1000), pack("l< l< l< V Q<", 1, 1, 22, 0, 9000);
	my @s = ([10, 7, 2, 1, 0x10], [12, 7, 0x8101, 300, 0x10], [12, 7, 0x8100, 20, 0x200],
		 [12, 7, 0x81ff, 4, 0x300], [13, 7, 0x9000, 1, 0], [15, 0, 0x8001, 0, 1],
		 [20, 7, 2, 1, 0x11]);
	print $o pack("Q< V v v Q<", @$_) for @s;' "$work/v2.trace"
"$R" --to-csv "$work/v2.trace" -O "$work/v2c.csv"
"$PY" tools/cxltrace.py --to-csv "$work/v2.trace" > "$work/v2py.csv"
cmp -s "$work/v2c.csv" "$work/v2py.csv" || fail "version 2: the CSVs differ: $(diff "$work/v2c.csv" "$work/v2py.csv")"
[ "$(wc -l < "$work/v2py.csv")" -eq 3 ] || fail "version 2: not the 2 samples: $(cat "$work/v2py.csv")"
"$PY" - "$work/v2.trace" <<'PY' || fail "the reader's runs"
import sys
sys.path.insert(0, "tools")
import cxltrace
t = cxltrace.read(sys.argv[1])
assert t.header["version"] == 2
assert t.samples["vpage"].tolist() == [0x10, 0x11], t.samples
assert t.runs["vpage"].tolist() == [0x10, 0x200, 0x300], t.runs
assert t.runs["pages"].tolist() == [300, 20, 4]
assert t.runs["node"].tolist() == [1, 0, -1] and t.runs["role"].tolist() == [1, 0, -1]
assert t.marks["time_ns"].tolist() == [15] and t.marks["epoch"].tolist() == [1], t.marks
PY
out=$("$PY" tools/cxltrace.py "$work/v2.trace")
grep -q "^3 resident runs of 1 processes: 324 pages (20 fast, 300 slow, 4 unknown)" <<< "$out" ||
	fail "summary: $out"
# Version 3 is refused by both, naming the versions read.
perl -e 'open(my $o, ">", shift) or die; binmode $o;
	print $o pack("a8 V6 Q< Q< Q<", "CXLTTRC", 3, 56, 4096, 0, 24, 0, 0, 0, 0);' "$work/v3.trace"
out=$("$R" --to-csv "$work/v3.trace" 2>&1) && fail "C reader took version 3"
grep -q "trace version 3, this build reads versions 1 to 2" <<< "$out" || fail "C, version 3: $out"
out=$("$PY" tools/cxltrace.py "$work/v3.trace" 2>&1) && fail "Python reader took version 3"
grep -q "trace version 3, this reader reads versions 1 to 2" <<< "$out" || fail "Python, version 3: $out"

# Truncated: both refuse, naming the reason.
head -c $((56 + 2 * 24 + 24 * 10 + 5)) "$work/z.trace" > "$work/t.trace"
! "$R" --to-csv "$work/t.trace" > /dev/null 2>&1 || fail "C reader took a truncated trace"
out=$("$PY" tools/cxltrace.py --to-csv "$work/t.trace" 2>&1) && fail "Python reader took a truncated trace"
grep -q "truncated: 5 stray bytes" <<< "$out" || fail "truncated: $out"
echo "trace-python: ok"
