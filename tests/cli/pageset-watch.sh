#!/usr/bin/env bash
# make compare's time to 90%: tierbench --hot-list writes the hot set it starts
# with (its --spread layout included), and `pageset watch` says when 90% of
# those pages sit on node 0, in seconds since a given /proc/uptime, with its
# look period and its own system time; "never" once the program is gone; a
# list without hot pages is an error.  (On a one-node machine every page is
# on node 0: the emulated machine runs the rest, in make compare.)
set -euo pipefail
. "$(dirname "$0")/../live/lib.bash"
listed() { [ -s "$work/hot" ] && [ "$(wc -l < "$work/hot")" -eq "$1" ]; }

# --spread 64: 64 hot pages at the start of each 2 MiB block.
"$BUILD/tierbench" --size 8M --hot 0.125 --spread 64 --duration 60 --hot-list "$work/hot" \
	> "$work/tb.out" 2>&1 &
bench=$!
wait_for 30 "tierbench to list its 256 hot pages" listed 256
buf=$(sed -n 's/^tierbench: pid=.* buf=\(0x[0-9a-f]*\) .*/\1/p' "$work/tb.out")
[ -n "$buf" ] || fail "no buf= in tierbench's first line: $(head -1 "$work/tb.out")"
i=0
while read -r k a; do
	want=$((buf + ((i / 64) * 512 + i % 64) * 4096))
	[ "$k" = h ] && [ $((0x$a)) -eq "$want" ] ||
		fail "hot page $i listed as '$k $a', not h $(printf %x "$want") (the spread layout)"
	i=$((i + 1))
done < "$work/hot"

t0=$(cut -d' ' -f1 /proc/uptime)
read -r t90 look sys < <("$BUILD/pageset" watch "$bench" "$work/hot" "$t0" 30) ||
	fail "pageset watch failed"
awk -v t="$t90" -v l="$look" -v s="$sys" 'BEGIN { exit !(t >= 0 && t < 30 && l >= 0 && s >= 0) }' ||
	fail "watch printed '$t90 $look $sys', not the seconds to 90%, the look period and its system time"

kill "$bench"
wait "$bench" 2>/dev/null || true
bench=""
read -r t90 _ < <("$BUILD/pageset" watch 999999999 "$work/hot" "$t0" 30)
[ "$t90" = never ] || fail "a program that is gone gave '$t90', not never"

sed 's/^h/c/' "$work/hot" > "$work/cold"
if "$BUILD/pageset" watch 1 "$work/cold" "$t0" 1 2> "$work/err"; then
	fail "a list without hot pages was accepted"
fi
grep -q "lists no hot page" "$work/err" || fail "no reason given: $(cat "$work/err")"
echo "tierbench --hot-list (spread layout) and pageset watch: 90% on node 0 at once here, never when gone"
