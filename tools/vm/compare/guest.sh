# The guest side of `make compare` (tools/vm/compare/compare): one workload
# (workloads/NAME.sh) under each tiering system in turn, each from the same
# fresh start.  Writes to /result, per system:
#   series WORKLOAD SYSTEM SECONDS HOT_ON_DRAM COLD_ON_DRAM HINT_FAULTS PINGPONG
#          (once a second; hint faults and ping-pong since the run's start)
#   (the time to 90% comes from `pageset watch` on the hot pages, looking about
#   every tenth of a second: the series' looks are 1.2-1.5 s apart under TCG)
#   result WORKLOAD SYSTEM key=value...
# A workload's wl_setup lists the pages it follows in /tmp/pages ("h ADDR" or
# "c ADDR", pageset's format; its "h" pages are watched for the time to 90%, unless
# it names another list in WL_HOT) and its wl_place prints "HOT_ON_0 COLD_ON_0
# PINGPONG" (marked_place does, from that list).  One whose hot set moves defines
# wl_placed, the hot pages placed over the run (else: the hot set's rise on node 0).
# Usage: sh guest.sh WORKLOAD SECONDS SYSTEM...
. /tests/lib.sh
wl=$1 secs=$2
shift 2
systems="$*"
# For the tierbench workloads: tb_start FLAGS... runs tierbench with FLAGS and the
# common ones (seed 1, placement reports each second, data verified) and sets
# WL_PID, HOT and COLD; tb_place and tb_finish are their wl_place and wl_finish.
tb_start() {
	rm -f /tmp/wl.out
	# the hot list: the window as it starts (tierbench-shift's moves 10 s on)
	WL_HOT=/tmp/hot
	tierbench "$@" --seed 1 --duration 100000 --report-interval 1 --placement --verify \
		--hot-list "$WL_HOT" > /tmp/wl.out 2>&1 &
	wait_for /tmp/wl.out '^tierbench: placement'
	WL_PID=$(tb_pid /tmp/wl.out)
	HOT=$(sed -n 's/.*hot_pages=\([0-9]*\).*/\1/p' /tmp/wl.out)
	COLD=$(( $(sed -n 's/.*pages=\([0-9]*\) hot_start.*/\1/p' /tmp/wl.out) - HOT ))
	# One page in TB_PP_STEP of its buffer, for the ping-pong count (tierbench itself
	# says which are hot): every page took a look 0.3 s of the guest's time on
	# tierbench's 16 Ki pages under TCG, more on tierbench-full's 100 Ki.
	pageset range $(sed -n 's/^tierbench: pid=.* buf=\(0x[0-9a-f]*\) .* pages=\([0-9]*\) .*/\1 \2/p' /tmp/wl.out) \
		$TB_PP_STEP > /tmp/pages
}
TB_PP_STEP=8
# "HOT_ON_0 COLD_ON_0 PINGPONG": tierbench's last placement line, and pageset's count
# of the sampled pages, scaled to all
tb_place() {
	pp=$(pages_where | sed -n 's/.*pingpong=\([0-9]*\).*/\1/p')
	echo "$(placement_of /tmp/wl.out hot 0) $(placement_of /tmp/wl.out cold 0) ${pp:+$((pp * TB_PP_STEP))}"
}
# The hot pages placed over the run, window by window (tierbench-shift's wl_placed):
# for each hot window, from tierbench's reports, the most of it on node 0 less what was
# there as it started (tierbench reports as the window moves).
tb_placed_by_window() {
	awk '/^tierbench: (pid=|progress)/ { sub(/.*hot_start=/, ""); id = $1 }
	/^tierbench: placement/ {
		n = 0
		for (i = 3; i <= NF && $i != "cold:"; i++)
			if ($i ~ /^node0=/) n = substr($i, 7) + 0
		if (!seen || id != cur) { sum += max - first; cur = id; first = max = n; seen = 1 }
		else if (n > max) max = n
	}
	END { print sum + max - first }' /tmp/wl.out
}
tb_finish() {
	local rc=0
	kill -INT "$WL_PID"
	wait "$WL_PID" || rc=$?
	if grep -q 'verify=ok' /tmp/wl.out; then
		echo ok
	elif dmesg | grep -q "Killed process $WL_PID "; then
		# what memory looked like, on the console (stderr), for whoever reads the log
		dmesg | grep -E 'invoked oom-killer|Node [01] (Normal|DMA32) free|Killed process|Mem-Info' >&2
		echo "FAIL:killed_by_the_OOM_killer"
	else
		echo "FAIL:exit_$rc:$(tail -1 /tmp/wl.out | tr ' ' _)"
	fi
}
. "/compare/workloads/$wl.sh"
D=/sys/kernel/mm/damon/admin/kdamonds
nb_rl0=$(cat /proc/sys/kernel/numa_balancing_promote_rate_limit_MBps)

ticks() { awk '$1 == "cpu" { print $4 + $7 + $8 }' /proc/stat; }	# system+irq+softirq
proc_ticks() { [ -r "/proc/$1/stat" ] && awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" || echo 0; }
kdamond_ticks() {
	t=0
	for c in /proc/[0-9]*/comm; do
		case $(cat "$c" 2>/dev/null) in kdamond*) p=${c#/proc/}; t=$((t + $(proc_ticks "${p%/comm}"))) ;; esac
	done
	echo $t
}

# node_range N: "START END" physical bytes of node N's memory blocks
node_range() {
	bs=$((0x$(cat /sys/devices/system/memory/block_size_bytes)))
	ls -d /sys/devices/system/node/node$1/memory[0-9]* | sed 's/.*memory//' | sort -n |
		awk -v bs="$bs" 'NR == 1 { a = $1 } { b = $1 } END { printf "%.0f %.0f\n", a * bs, (b + 1) * bs }'
}
# damos_kdamond IDX NODE ACTION DEST MIN MAX METRIC VALUE: one paddr kdamond over
# NODE whose one scheme applies ACTION (to DEST) to regions with MIN..MAX accesses
# per aggregation, with a quota goal METRIC/VALUE where the kernel has it.
damos_kdamond() {
	k=$D/$1 c=$D/$1/contexts/0
	echo 1 > $k/contexts/nr_contexts
	echo paddr > $c/operations
	echo 5000 > $c/monitoring_attrs/intervals/sample_us
	echo 100000 > $c/monitoring_attrs/intervals/aggr_us
	echo 1000000 > $c/monitoring_attrs/intervals/update_us
	echo 1 > $c/targets/nr_targets
	echo 1 > $c/targets/0/regions/nr_regions
	set -- "$@" $(node_range "$2")
	echo "${10}" > $c/targets/0/regions/0/end
	echo "$9" > $c/targets/0/regions/0/start
	echo 1 > $c/schemes/nr_schemes
	s=$c/schemes/0
	echo "$3" > $s/action
	echo "$4" > $s/target_nid
	echo "$5" > $s/access_pattern/nr_accesses/min
	echo "$6" > $s/access_pattern/nr_accesses/max
	# sysfs starts every range at 0..0: open the size and age ranges
	echo 1099511627776 > $s/access_pattern/sz/max
	echo 4294967295 > $s/access_pattern/age/max
	echo 1000000 > $s/apply_interval_us 2>/dev/null
	echo 1000 > $s/quotas/reset_interval_ms
	echo $((200 << 20)) > $s/quotas/bytes
	echo 1 > $s/quotas/goals/nr_goals
	if echo "$7" > $s/quotas/goals/0/target_metric 2>/dev/null; then
		echo "$8" > $s/quotas/goals/0/target_value
		[ -f $s/quotas/goals/0/nid ] && echo 0 > $s/quotas/goals/0/nid
		damos_goal=$7
	else
		# node_mem_*_bp goals came in 6.16.  Without them the hot scheme runs at its
		# fixed quota; the cold one would demote all of DRAM's idle pages at once,
		# so it is held back by free-memory watermarks: active below 4% free.
		echo 0 > $s/quotas/goals/nr_goals
		damos_goal="no_$7"
		if [ "$3" = migrate_cold ]; then
			echo free_mem_rate > $s/watermarks/metric
			echo 1000000 > $s/watermarks/interval_us
			echo 50 > $s/watermarks/high
			echo 40 > $s/watermarks/mid
			echo 0 > $s/watermarks/low
			damos_goal="$damos_goal(watermark_free<4%)"
		fi
	fi
	if [ "$3" = migrate_cold ]; then	# as damo's example: never demote a page just used
		echo 1 > $s/filters/nr_filters
		echo young > $s/filters/0/type
		echo Y > $s/filters/0/matching
	fi
}
# As samples/damon/mtier.c and damo's tiering example: node 1 hot -> node 0
# (aiming at 99.7% of node 0 used), node 0 cold -> node 1 (aiming at 0.5% free).
damos_start() {
	echo 2 > $D/nr_kdamonds
	damos_kdamond 0 1 migrate_hot 0 1 20 node_mem_used_bp 9970
	g0=$damos_goal
	damos_kdamond 1 0 migrate_cold 1 0 0 node_mem_free_bp 50
	damos_goal="$g0,$damos_goal"
	echo on > $D/0/state && echo on > $D/1/state || fail "DAMOS kdamonds did not start"
	echo "damos: node 1 $(node_range 1) migrate_hot 0; node 0 $(node_range 0) migrate_cold 1; goals $damos_goal"
}
# damos_stats: what each scheme did (regions tried/applied, quota exceeded)
damos_stats() {
	for k in 0 1; do
		echo update_schemes_stats > $D/$k/state
		st=$D/$k/contexts/0/schemes/0/stats
		printf "k%s_applied_mb=%s,k%s_tried_mb=%s," $k $(( $(cat $st/sz_applied) >> 20 )) $k $(( $(cat $st/sz_tried) >> 20 ))
	done
}
damos_stop() {
	[ -f $D/nr_kdamonds ] || return 0
	for k in $D/[0-9]*; do [ -f $k/state ] && [ "$(cat $k/state)" = on ] && echo off > $k/state; done
	echo 0 > $D/nr_kdamonds
}

system_start() {
	agent="" damos_goal=""
	case $1 in
	none) ;;
	kernel-nb2) echo 2 > /proc/sys/kernel/numa_balancing ;;
	kernel-nb2-rl)
		echo $((nb_rl0 * 16)) > /proc/sys/kernel/numa_balancing_promote_rate_limit_MBps
		echo 2 > /proc/sys/kernel/numa_balancing ;;
	damos) damos_start ;;
	cxltier-*)
		# cxltier-SOURCE[:OPTION,OPTION...]: more cxltierd options, e.g. :--hint-period-ms=250
		# (no commas, slashes or spaces in them: the name is a file name's part too)
		src=${1#cxltier-} opts=""
		case $src in *:*) opts=$(echo "${src#*:}" | tr , ' ') src=${src%%:*} ;; esac
		# shellcheck disable=SC2086
		cxltierd --pid "$WL_PID" --source "$src" $opts > "/tmp/agent-$1.log" 2>&1 &
		agent=$! ;;
	*) fail "unknown system $1" ;;
	esac
}
system_stop() {
	[ -n "$agent" ] && { kill -TERM "$agent"; wait "$agent"; }
	echo 0 > /proc/sys/kernel/numa_balancing
	echo "$nb_rl0" > /proc/sys/kernel/numa_balancing_promote_rate_limit_MBps
	damos_stop
}

echo 0 > /proc/sys/kernel/numa_balancing
damos_stop
for sys in $systems; do
	echo "== $wl under $sys"
	wl_setup
	[ -s /tmp/pages ] || fail "$wl: wl_setup listed no pages in /tmp/pages"
	rm -f /tmp/pingpong.state	# the last run's; its first look sets the nodes
	set -- $(wl_place)
	[ $# = 3 ] || fail "$wl: wl_place printed '$*', not HOT_ON_0 COLD_ON_0 PINGPONG"
	hot0_start=$1 cold0_start=$2
	mig0=$(vmstat pgmigrate_success) hint0=$(vmstat numa_hint_faults) k0=$(ticks) kd0=$(kdamond_ticks)
	t0=$(now)
	system_start "$sys"
	# The clock starts when the system is live: the kernel's when its setting is
	# written, the agent's when its set-up is done (its log says how long that
	# took, counted from its main(), so t0 falls before it really was live).
	start_s=0
	if [ -n "$agent" ]; then
		i=0
		until grep -q 'set-up done in' "/tmp/agent-$sys.log" 2>/dev/null; do
			kill -0 "$agent" 2>/dev/null || break	# it failed to start: its log says why
			i=$((i + 1))
			[ "$i" -gt 600 ] && fail "the agent did not finish its set-up in 60 s"
			sleep 0.1
		done
		start_s=$(sed -n 's/.*set-up done in \([0-9.]*\) s.*/\1/p' "/tmp/agent-$sys.log")
		t0=$(awk -v t="$t0" -v s="${start_s:-0}" 'BEGIN { printf "%.2f", t + s }')
	fi
	pageset watch "$WL_PID" "${WL_HOT:-/tmp/pages}" "$t0" "$secs" > /tmp/t90 &
	watcher=$!
	wl_run
	reached="" agent_ticks=0
	while :; do
		sleep 1
		t=$(elapsed "$t0")
		set -- $(wl_place)
		echo "series $wl $sys $t $1 $2 $(( $(vmstat numa_hint_faults) - hint0 )) ${3:--}" >> /result
		[ -z "$reached" ] && [ "$1" -ge $((HOT * 9 / 10)) ] && reached=$t
		[ -n "$agent" ] && agent_ticks=$(proc_ticks "$agent")
		awk -v t="$t" -v s="$secs" 'BEGIN { exit !(t >= s) }' && break
	done
	hot0=$1 cold0=$2 pingpong=${3:--}	# "-": pageset could not say (its error is in the log)
	# the watcher's finer look where it had one; else the series' (its error is in the log)
	look=- watch_sys=0
	if wait "$watcher" && read -r t90 look watch_sys < /tmp/t90; then
		case $t90 in never) reached="" ;; *) reached=$t90 ;; esac
	fi
	kd=$(( $(kdamond_ticks) - kd0 ))
	[ "$sys" = damos ] && damos_goal="$damos_goal,$(damos_stats)"
	[ -n "$agent" ] && grep -E '^(cxltierd: )?(warn|WARN)|sampler:|cannot see|preferred|bind' "/tmp/agent-$sys.log" | head -5
	system_stop
	# the agent's own account, for compare to keep beside the table
	[ -n "$agent" ] && sed "s/^/agentlog $wl $sys /" "/tmp/agent-$sys.log" >> /result
	# less the watcher's own system time (its move_pages calls)
	k=$(( $(ticks) - k0 - $(awk -v c="$watch_sys" 'BEGIN { printf "%d", c * 100 }') ))
	mig=$(( $(vmstat pgmigrate_success) - mig0 ))
	hints=$(( $(vmstat numa_hint_faults) - hint0 ))
	wl_finish > /tmp/verified	# not in $(): it waits for the workload
	verified=$(cat /tmp/verified)
	# a workload whose hot set moves counts each set's placed pages (wl_placed)
	if type wl_placed > /dev/null 2>&1; then placed=$(wl_placed); else placed=$((hot0 - hot0_start)); fi
	line="result $wl $sys hot=$HOT cold=$COLD seconds_to_90pct=${reached:-never} t90_look_s=$look agent_start_s=${start_s:--}"
	line="$line steady_pct=-"	# from the series, by compare
	line="$line hot_placed=$placed migrated=$mig"
	line="$line migrated_per_placed=$(awk -v m=$mig -v p=$placed 'BEGIN { if (p > 0) printf "%.2f", m / p; else print "-" }')"
	line="$line cold_dragged=$((cold0 - cold0_start)) kernel_cpu_s=$(awk -v k=$k 'BEGIN { printf "%.1f", k / 100 }')"
	line="$line kdamond_cpu_s=$(awk -v k=$kd 'BEGIN { printf "%.1f", k / 100 }')"
	line="$line agent_cpu_s=$(awk -v k=$agent_ticks 'BEGIN { printf "%.1f", k / 100 }')"
	line="$line hint_faults=$hints pingpong=$pingpong verified=$verified${damos_goal:+ damos_goal=$damos_goal}"
	echo "$line" >> /result
	echo "$line"
done
