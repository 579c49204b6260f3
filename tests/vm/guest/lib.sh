# Guest-side helpers for the scenarios (busybox sh).
set -u
export PATH=/usr/bin:/bin:/sbin:/usr/sbin
: > /result

fail() { echo "FAIL: $*"; [ -f /tmp/agent.log ] && sed "s/^/  agent: /" /tmp/agent.log | tail -${FAIL_TAIL:-40}; exit 1; }
res() { echo "$1=$2" >> /result; echo "  $1=$2"; }
vmstat() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }
# Seconds since boot with centiseconds.
now() { cut -d' ' -f1 /proc/uptime; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# wait_for FILE PATTERN [TENTHS]: until PATTERN shows up in FILE.
wait_for() {
	i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -gt "${3:-300}" ] && fail "timed out waiting for '$2' in $1"
		sleep 0.1
	done
}
tb_pid() { sed -n 's/^tierbench: pid=\([0-9]*\).*/\1/p' "$1" | head -1; }
# placement_of FILE SET NODE: pages of SET (hot|cold) on NODE in the last placement line.
placement_of() {
	grep '^tierbench: placement' "$1" | tail -1 |
		sed -n "s/.* $2:\([^a-z]*\( node[0-9]*=[0-9]*\)*\) err=.*/\1/p;s/.* $2:\(\( node[0-9]*=[0-9]*\)*\) err=.*/\1/p" |
		head -1 | tr ' ' '\n' | sed -n "s/^node$3=//p" | head -1 | grep . || echo 0
}
