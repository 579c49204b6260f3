#!/usr/bin/env bash
# cxltier-replay --start: a version-2 trace's resident runs put the pages
# where the recording found them, pages never sampled included (they take
# capacity and may be demoted); --start first-touch and a version-1 trace
# place each page on its first sample, as before; --epochs-csv follows a
# --watch range per epoch; epoch marks cut the epochs where the recorded
# agent's ended (--epoch-bounds); a process recorded again later gains the
# pages it lacked then.
set -euo pipefail
BUILD=${BUILD:-build}
R="$BUILD/cxltier-replay"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Process 7: 100 pages from 0x1000 on the slow node, 50 from 0x2000 on the
# fast one; 10 pages of the slow ones (the hot set) sampled 6 epochs, weight 10.
mk() {	# mk VERSION FILE
	perl -e 'my ($v, $f) = @ARGV; open(my $o, ">", $f) or die; binmode $o;
		print $o pack("a8 V6 Q< Q< Q<", "CXLTTRC", $v, 56, 4096, 2, 24, 0, 0, 0, 0);
		print $o pack("l< l< l< V Q<", 0, 0, 4, 0, 1000), pack("l< l< l< V Q<", 1, 1, 22, 0, 9000);
		if ($v >= 2) {
			print $o pack("Q< V v v Q<", 5, 7, 0x8101, 100, 0x1000);
			print $o pack("Q< V v v Q<", 5, 7, 0x8100, 50, 0x2000);
		}
		for my $e (0..5) { for my $p (0..9) {
			print $o pack("Q< V v v Q<", $e * 1000000000 + $p, 7, 2, 10, 0x1000 + $p) } }' "$1" "$2"
}
mk 2 "$work/v2.trace"
mk 1 "$work/v1.trace"

# As recorded: the hot set starts slow, so nothing hits the fast tier without
# migration; hotset brings the 10 pages up, demoting cold fast pages to make room.
"$R" --fast-pages 60 --epochs-csv "$work/e.csv" --watch 0x1000000-0x100a000 \
	"$work/v2.trace" hotset > "$work/out" || fail "replay: $(cat "$work/out")"
grep -q '^start: as recorded, 150 resident pages in 2 runs' "$work/out" || fail "no start line: $(cat "$work/out")"
grep -q '^trace: 60 samples, 150 distinct pages' "$work/out" || fail "pages: $(cat "$work/out")"
awk '$1 == "none" && $2 == "0.0%" { ok = 1 } END { exit !ok }' "$work/out" || fail "none: $(cat "$work/out")"
awk '$1 == "hotset" && $6 == 10 { ok = 1 } END { exit !ok }' "$work/out" || fail "hotset promoted: $(cat "$work/out")"
head -1 "$work/e.csv" | grep -qx 'run,epoch,end_s,promoted,demoted,fast_pages,slow_pages,watch_fast,watch_slow' ||
	fail "csv header: $(head -1 "$work/e.csv")"
grep -qx 'none,0,1.000,0,0,50,100,0,10' "$work/e.csv" || fail "none's start: $(cat "$work/e.csv")"
line=$(grep '^hotset,5,' "$work/e.csv") || fail "no hotset line: $(cat "$work/e.csv")"
IFS=, read -r _ _ _ _ _ fast slow wf ws <<< "$line"
[ "$wf" = 10 ] && [ "$ws" = 0 ] || fail "the hot set is not fast at the end: $line"
[ $((fast + slow)) = 150 ] && [ "$fast" -le 60 ] || fail "pages lost or over capacity: $line"

# Recorded again later (a process that grew): the pages the model lacks join
# at that time, on their runs' node; pages it has keep theirs.
cp "$work/v2.trace" "$work/g.trace"
perl -e 'open(my $o, ">>", shift) or die; binmode $o;
	print $o pack("Q< V v v Q<", 3000000000, 7, 0x8100, 60, 0x1000);' "$work/g.trace"
"$R" --fast-pages 200 --epochs-csv "$work/g.csv" "$work/g.trace" hotset > "$work/out"
grep -qx 'none,2,3.000,0,0,50,100,0,0' "$work/g.csv" || fail "before the second group: $(cat "$work/g.csv")"
grep -qx 'none,3,4.000,0,0,50,100,0,0' "$work/g.csv" || fail "0x1000-0x1063 are had: $(cat "$work/g.csv")"
perl -e 'open(my $o, ">>", shift) or die; binmode $o;
	print $o pack("Q< V v v Q<", 3000000000, 7, 0x8100, 60, 0x1000);
	print $o pack("Q< V v v Q<", 3000000000, 7, 0x8100, 40, 0x5000);' "$work/g.trace"
"$R" --fast-pages 200 --epochs-csv "$work/g.csv" "$work/g.trace" hotset > "$work/out"
grep -qx 'none,2,3.000,0,0,50,100,0,0' "$work/g.csv" || fail "before the second group: $(cat "$work/g.csv")"
grep -qx 'none,3,4.000,0,0,90,100,0,0' "$work/g.csv" || fail "the second group's new pages: $(cat "$work/g.csv")"

# The fast tier too small for what the trace puts there: the rest go slow, counted.
"$R" --fast-pages 20 "$work/v2.trace" hotset > "$work/out" 2> "$work/err" || fail "small fast tier"
grep -q '30 resident pages did not fit the tier the trace puts them on' "$work/err" || fail "spill: $(cat "$work/err")"

# First touch: the hot set starts fast, as the model places first touches.
"$R" --start first-touch --fast-pages 60 "$work/v2.trace" hotset > "$work/out"
! grep -q '^start:' "$work/out" || fail "first-touch printed a start"
grep -q '^trace: 60 samples, 10 distinct pages' "$work/out" || fail "first-touch pages: $(cat "$work/out")"
awk '$1 == "none" && $2 == "100.0%" { ok = 1 } END { exit !ok }' "$work/out" || fail "first-touch none: $(cat "$work/out")"

# A version-1 trace: first touch, as ever; --start trace asks for what it lacks.
"$R" --fast-pages 60 "$work/v1.trace" hotset > "$work/out1"
awk '$1 == "none" && $2 == "100.0%" { ok = 1 } END { exit !ok }' "$work/out1" || fail "version 1: $(cat "$work/out1")"
out=$("$R" --start trace "$work/v1.trace" hotset 2>&1) && fail "--start trace took a trace without runs"
grep -q 'holds no resident runs' <<< "$out" || fail "--start trace, version 1: $out"
# Epoch marks (source 0x8001) at 0.5 s and 2.5 s: the epochs end there, and the
# last takes the rest; --epoch-bounds fixed ignores them.
cp "$work/v2.trace" "$work/m.trace"
perl -e 'open(my $o, ">>", shift) or die; binmode $o;
	print $o pack("Q< V v v Q<", 500000000, 0, 0x8001, 0, 1), pack("Q< V v v Q<", 2500000000, 0, 0x8001, 0, 2);' \
	"$work/m.trace"
"$R" --fast-pages 60 --epochs-csv "$work/m.csv" "$work/m.trace" hotset > "$work/out"
grep -q '^trace: 60 samples, 150 distinct pages, 3 epochs' "$work/out" || fail "marks: $(cat "$work/out")"
[ "$(grep '^none,' "$work/m.csv" | cut -d, -f3 | tr '\n' ' ')" = "0.500 2.500 5.000 " ] ||
	fail "epochs not cut at the marks: $(cat "$work/m.csv")"
"$R" --fast-pages 60 --epoch-bounds fixed "$work/m.trace" hotset > "$work/out"
grep -q '^trace: 60 samples, 150 distinct pages, 6 epochs' "$work/out" || fail "fixed: $(cat "$work/out")"
out=$("$R" --epoch-bounds live "$work/v2.trace" hotset 2>&1) && fail "--epoch-bounds live took a trace without marks"
grep -q 'holds no epoch marks' <<< "$out" || fail "--epoch-bounds live, no marks: $out"

out=$("$R" --start nowhere "$work/v2.trace" hotset 2>&1) && fail "--start nowhere accepted"
grep -q "expected trace or first-touch" <<< "$out" || fail "--start nowhere: $out"
out=$("$R" --watch 0x2000-0x1000 "$work/v2.trace" hotset 2>&1) && fail "--watch backwards accepted"
echo "replay-start: ok"
