# Guest-side helpers for the scenarios (busybox sh).
set -u
export PATH=/usr/bin:/bin:/sbin:/usr/sbin
: > /result

fail() {
	echo "FAIL: $*"
	[ -f /tmp/agent.log ] && sed "s/^/  agent: /" /tmp/agent.log | tail -"${FAIL_TAIL:-40}"
	[ -f /tmp/tb.out ] && sed "s/^/  tierbench: /" /tmp/tb.out | tail -8
	exit 1
}
res() { echo "$1=$2" >> /result; echo "  $1=$2"; }
vmstat() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }
# Seconds since boot with centiseconds.
now() { cut -d' ' -f1 /proc/uptime; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# wait_for FILE PATTERN [TENTHS [COUNT]]: until PATTERN shows up in COUNT (1)
# lines of FILE.
wait_for() {
	i=0
	while seen=$(grep -c "$2" "$1" 2>/dev/null); [ "${seen:-0}" -lt "${4:-1}" ]; do
		i=$((i + 1))
		[ "$i" -gt "${3:-300}" ] && fail "timed out waiting for '$2' in $1${4:+ (line $4)}"
		sleep 0.1
	done
}
# wait_until TENTHS WHAT CMD...: until CMD succeeds, polling every 0.1 s; fails naming WHAT.
wait_until() {
	i=0 t=$1 w=$2
	shift 2
	until "$@"; do
		i=$((i + 1))
		[ "$i" -gt "$t" ] && fail "timed out waiting for $w"
		sleep 0.1
	done
}
# epoch_now: the running agent's epoch count (0 before its first status).
epoch_now() { cxltierctl status --json 2>/dev/null | jq '.agent.epoch' 2>/dev/null || echo 0; }
epochs_past() { [ "$(epoch_now)" -ge "$1" ]; }
# wait_epochs N: until the agent has finished N more epochs.
wait_epochs() { wait_until 600 "$1 more epochs of the agent" epochs_past $(($(epoch_now) + $1)); }
tb_pid() { sed -n 's/^tierbench: pid=\([0-9]*\).*/\1/p' "$1" | head -1; }
# placement_of FILE SET NODE: pages of SET (hot|cold) on NODE in the last placement line.
placement_of() {
	grep '^tierbench: placement' "$1" | tail -1 |
		sed -n "s/.* $2:\([^a-z]*\( node[0-9]*=[0-9]*\)*\) err=.*/\1/p;s/.* $2:\(\( node[0-9]*=[0-9]*\)*\) err=.*/\1/p" |
		head -1 | tr ' ' '\n' | sed -n "s/^node$3=//p" | head -1 | grep . || echo 0
}
# time_to_90pct OUT HOT T0 PID [LABEL]: while PID lives, reports once a second how many of
# the HOT hot pages tierbench (output OUT) has on node 0; prints the seconds since T0 at
# which 90% were there, or nothing if PID ended first.
# running PID: PID exists and has not exited.  (A child that exited stays a zombie until
# its parent waits, and the parent of a $(...) is blocked on it: kill -0 still succeeds.)
running() {
	local st
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) && [ "${st%% *}" != Z ]
}
time_to_90pct() {
	while running "$4"; do
		sleep 1
		on0=$(placement_of "$1" hot 0)
		echo "${5:-}t=$(elapsed "$3")s hot on node 0: $on0 of $2" >&2
		if [ "$on0" -ge $(($2 * 9 / 10)) ]; then
			elapsed "$3"
			return
		fi
	done
}
# start_hot_on_cxl OUT: tierbench in the background (output OUT) with its hot set and its
# cold pages on node 1, for 120 s; sets tb (its pid) and hot (hot pages) once it is set up.
start_hot_on_cxl() {
	tierbench --size 64M --hot 0.25 --skew 1 --hot-node 1 --cold-node 1 --duration 120 \
		--report-interval 1 --placement --verify > "$1" 2>&1 &
	wait_for "$1" '^tierbench: placement'
	tb=$(tb_pid "$1")
	hot=$(sed -n 's/.*hot_pages=\([0-9]*\).*/\1/p' "$1")
	[ "$(placement_of "$1" hot 1)" = "$hot" ] || fail "hot set not on node 1 at start: $(grep placement "$1")"
}
# agent_to_90pct [CXLTIERD ARGS...]: the agent on tierbench $tb (output /tmp/tb.out,
# hot set $hot) until 90% of the hot set is on node 0 or 62 s; then its status in
# /tmp/status.json, both stopped, tierbench's data checked.  Sets reached (seconds,
# empty: never), cold (cold pages) and cold1 (of them on node 1 at the end).  A
# scenario's after_90pct, when set, runs once 90% is reached, the agent still running.
agent_to_90pct() {
	local t0 agent
	t0=$(now)
	cxltierd --pid "$tb" --duration 62 "$@" > /tmp/agent.log 2>&1 &
	agent=$!
	reached=$(time_to_90pct /tmp/tb.out "$hot" "$t0" "$agent")
	[ -z "$reached" ] || ${after_90pct:-:}
	cxltierctl status --json > /tmp/status.json || fail "no status"
	kill -TERM "$agent"
	wait "$agent" || fail "cxltierd exited $? after SIGTERM"
	kill -INT "$tb"
	wait "$tb" || fail "tierbench failed: $(tail -3 /tmp/tb.out)"
	grep -q 'verify=ok' /tmp/tb.out || fail "tierbench: $(tail -2 /tmp/tb.out)"
	cold=$(sed -n 's/.*pages=\([0-9]*\) hot_start.*/\1/p' /tmp/tb.out)
	cold=$((cold - hot))
	cold1=$(placement_of /tmp/tb.out cold 1)
}
# The compare workloads' (tools/vm/compare/workloads), here for the tests that run
# them too: where the pages of /tmp/pages are, with the ping-pong seen since
# /tmp/pingpong.state was removed; and "HOT_ON_0 COLD_ON_0 PINGPONG" of them as marked.
pages_where() { pageset where "$WL_PID" /tmp/pages /tmp/pingpong.state; }
marked_place() { pages_where | sed 's/hot0=\([0-9]*\).*cold0=\([0-9]*\).*pingpong=\([0-9]*\).*/\1 \2 \3/'; }

# wl_until_90pct T0 LIMIT PID: while PID lives, once a second, where the workload's
# HOT hot and COLD cold pages are (wl_place: pages on node 0); sets half and reached
# to the seconds since T0 at which 50% and 90% of the hot pages were on node 0 (empty:
# not yet), and returns at 90% or after LIMIT seconds.
wl_until_90pct() {
	reached="" half=""
	while kill -0 "$3" 2>/dev/null; do
		sleep 1
		set -- "$1" "$2" "$3" $(wl_place)
		echo "t=$(elapsed "$1")s hot on node 0: $4 of $HOT, cold: $5 of $COLD"
		[ -z "$half" ] && [ "$4" -ge $((HOT / 2)) ] && half=$(elapsed "$1")
		if [ "$4" -ge $((HOT * 9 / 10)) ]; then
			reached=$(elapsed "$1")
			return
		fi
		awk -v t="$(elapsed "$1")" -v l="$2" 'BEGIN { exit !(t > l) }' && return
	done
}
