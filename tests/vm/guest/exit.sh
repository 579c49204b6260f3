# exit: target processes exit and new ones start while migrations are in
# flight.  The agent (by command name, flip policy: always migrating) keeps
# running, drops the pages of each process that exits, reports no error but
# counted "page gone" statuses, and migrates the pages of every new process.
. /tests/lib.sh

procs=8
t0=$(now)
cxltierd --comm tierbench --policy /usr/lib/cxltier/test-policies/flip.so --source fault \
	--pingpong-epochs 0 --rate 100000 --epoch-ms 100 --scan-epochs 1 \
	--low-wmark 0 --high-wmark 0 --duration 120 > /tmp/agent.log 2>&1 &
agent=$!
wait_for /tmp/agent.log 'maps and programs pinned'
# Each process runs until the agent has moved some of its pages, then the one
# two before it is stopped: about three live at a time, one exiting while the
# agent migrates the others.  Conditions, not durations: an epoch here can take a
# second when the machine is busy, and a process that ran a fixed 3 s was once
# never reached.
moved_some() {
	cxltierctl status --json 2>/dev/null |
		jq -e --argjson p "$1" '.targets[] | select(.pid == $p) | .promoted + .demoted > 0' > /dev/null
}
stop_bench() { kill -INT "$1"; wait "$1" || fail "tierbench pid $1 failed"; }
pids=""
for n in $(seq 1 $procs); do	# not i: wait_for and wait_until count with it
	tierbench --size 16M --threads 1 --duration 300 --verify > "/tmp/tb$n.out" 2>&1 &
	pid=$!
	wait_for "/tmp/tb$n.out" '^tierbench: pid='
	wait_until 900 "pages of tierbench $n (pid $pid) moved by the agent" moved_some "$pid"
	pids="$pids $pid"
	set -- $pids
	if [ $# -gt 2 ]; then
		stop_bench "$1"
		shift
		pids="$*"
	fi
done
for p in $pids; do
	stop_bench "$p"
done
wait_for /tmp/agent.log 'target pid .* exited' 300 "$procs"
kill -0 "$agent" 2>/dev/null || fail "the agent died"
cxltierctl status --json > /tmp/status.json || fail "no status from the agent"
kill -TERM "$agent"
wait "$agent" || fail "cxltierd exited $? after SIGTERM"

for i in $(seq 1 $procs); do
	grep -q 'verify=ok mismatches=0' "/tmp/tb$i.out" || fail "tierbench $i: $(tail -2 /tmp/tb$i.out)"
done
added=$(grep -c 'target pid .* added' /tmp/agent.log)
dropped=$(grep -c 'target pid .* exited' /tmp/agent.log)
unmoved=$(grep 'target pid .* exited' /tmp/agent.log | grep -c '(moved 0:')
res processes "$procs"
res targets_added "$added"
res targets_dropped "$dropped"
res targets_never_migrated "$unmoved"
res seconds "$(elapsed "$t0")"
for k in promoted demoted gone busy process_gone nomem access other_error unreported call_failed; do
	res "mover_$k" "$(jq ".mover.$k" /tmp/status.json)"
done
[ "$added" -eq "$procs" ] || fail "$added of $procs processes were picked up"
[ "$dropped" -eq "$procs" ] || fail "$dropped of $procs exits were noticed"
[ "$unmoved" -eq 0 ] || fail "$unmoved processes had no page migrated"
grep -E '^(warning|error):' /tmp/agent.log && fail "the agent reported errors"
# busy and unreported (the kernel stopped a call early) are retried, not errors; nor is
# access: a page other processes map too, sampled before a sweep could tell (the record goes).
jq -e '.mover | .nomem + .other_error + .call_failed == 0' \
	/tmp/status.json > /dev/null || fail "errors other than page gone: $(jq -c .mover /tmp/status.json)"
echo "exit: ok"
