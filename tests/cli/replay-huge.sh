#!/usr/bin/env bash
# cxltier-replay models huge pages: a trace's huge-page records (source
# 0x8200 + order) make each 2 MiB huge page one unit of 512 pages, placed,
# moved, budgeted and counted whole, as the kernel moves a folio; the oracle
# places them whole too.  The same trace without the records replays page by
# page.
set -euo pipefail
BUILD=${BUILD:-build}
R="$BUILD/cxltier-replay"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Process 7: huge pages A (vpage 0x10000) and B (0x10200) resident on the slow
# node, 256 pages of 4 KiB from 0x20000 on the fast one.  8 pages of A are hot
# (weight 10, 6 epochs); B and the small pages are never sampled.
mk() {	# mk FILE HUGE(0/1)
	perl -e 'my ($f, $huge) = @ARGV; open(my $o, ">", $f) or die; binmode $o;
		print $o pack("a8 V6 Q< Q< Q<", "CXLTTRC", 2, 56, 4096, 2, 24, 0, 0, 0, 0);
		print $o pack("l< l< l< V Q<", 0, 0, 4, 0, 100000), pack("l< l< l< V Q<", 1, 1, 22, 0, 900000);
		print $o pack("Q< V v v Q<", 5, 7, 0x8101, 1024, 0x10000);
		print $o pack("Q< V v v Q<", 5, 7, 0x8100, 256, 0x20000);
		print $o pack("Q< V v v Q<", 5, 7, 0x8209, 1024, 0x10000) if $huge;
		for my $e (0..5) { for my $p (0..7) {
			print $o pack("Q< V v v Q<", $e * 1000000000 + $p + 10, 7, 2, 10, 0x10000 + 64 * $p) } }' "$1" "$2"
}
mk "$work/huge.trace" 1
mk "$work/small.trace" 0
promoted() { awk -v p="$1" '$1 == p { print $6 }' "$2"; }

"$R" --fast-pages 800 --epochs-csv "$work/h.csv" --watch 0x10000000-0x10200000 \
	"$work/huge.trace" hotset > "$work/out" || fail "replay: $(cat "$work/out")"
grep -q '^huge pages: 2 of 2 MiB' "$work/out" || fail "no huge-page line: $(cat "$work/out")"
grep -q '^trace: 48 samples, 1280 distinct pages' "$work/out" || fail "pages: $(cat "$work/out")"
# A moved whole (512 pages for 8 hot ones); B, cold, stayed.
[ "$(promoted hotset "$work/out")" = 512 ] || fail "hotset did not promote huge page A whole: $(cat "$work/out")"
line=$(grep '^hotset,5,' "$work/h.csv") || fail "no last epoch: $(cat "$work/h.csv")"
IFS=, read -r _ _ _ _ _ fast slow wf ws <<< "$line"
[ "$wf" = 512 ] && [ "$ws" = 0 ] || fail "huge page A not all on the fast tier: $line"
[ $((fast + slow)) = 1280 ] && [ "$fast" -le 800 ] || fail "pages lost or over capacity: $line"
while IFS=, read -r run e _ _ _ f s _ _; do
	[ "$run" = run ] && continue
	[ $((f + s)) = 1280 ] && [ "$f" -le 800 ] || fail "$run epoch $e: $f fast + $s slow"
done < "$work/h.csv"
jq -e '.huge_pages == 2' <("$R" --json --fast-pages 800 "$work/huge.trace" hotset) > /dev/null ||
	fail "--json has no huge_pages"

# Page by page without the records: only the 8 hot pages move.
"$R" --fast-pages 800 "$work/small.trace" hotset > "$work/out"
! grep -q '^huge pages:' "$work/out" || fail "huge pages in a trace without them"
[ "$(promoted hotset "$work/out")" = 8 ] || fail "small pages: $(cat "$work/out")"

# A fast tier smaller than a huge page: nothing hot can move up, for the oracle
# neither; page by page, the oracle has every hot page fast.
"$R" --fast-pages 300 "$work/huge.trace" hotset > "$work/out"
awk '$1 == "oracle" && $2 == "0.0%" { ok = 1 } END { exit !ok }' "$work/out" || fail "huge oracle: $(cat "$work/out")"
[ "$(promoted hotset "$work/out")" = 0 ] || fail "promoted past the fast tier: $(cat "$work/out")"
"$R" --fast-pages 300 "$work/small.trace" hotset > "$work/out"
awk '$1 == "oracle" && $2 == "100.0%" { ok = 1 } END { exit !ok }' "$work/out" || fail "page oracle: $(cat "$work/out")"

# First touch: a touch of huge page A places all 512 pages.
"$R" --start first-touch --fast-pages 800 --epochs-csv "$work/f.csv" "$work/huge.trace" hotset > "$work/out"
grep -q '^trace: 48 samples, 512 distinct pages' "$work/out" || fail "first touch pages: $(cat "$work/out")"
grep -qx 'none,0,1.000,0,0,512,0,0,0' "$work/f.csv" || fail "first touch: $(cat "$work/f.csv")"

# A huge-page record of another size (order 10) is read as pages, with a warning.
perl -e 'open(my $o, ">>", shift) or die; binmode $o;
	print $o pack("Q< V v v Q<", 5, 7, 0x820a, 1024, 0x30000);' "$work/small.trace"
"$R" --fast-pages 800 "$work/small.trace" hotset > "$work/out" 2> "$work/err"
grep -q '1 huge-page records not of 2 MiB' "$work/err" || fail "order 10: $(cat "$work/err")"
echo "replay-huge: ok"
