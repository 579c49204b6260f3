# sqlite: sqlite3 with an in-memory database of 40,000 rows of 1 KiB (its pages
# in the process's heap, about 12,000 pages) moved to node 1 (CXL) after
# loading; a query stream reads 1,500 hot rows spread over the table (one row
# in 26), by primary key, at random.  The hot and cold pages are found by marks
# in the values (pageset scan); data verified by a checksum query over every
# row before and after.  A different kind of program from redis: a B-tree in
# 4 KiB pages, one thread, queries parsed per statement.
# guest-needs: /usr/bin/sqlite3 /usr/bin/migratepages
WL_DESC="sqlite3 :memory:, 1,500 hot rows of 40,000 on CXL"
ROWS=${SQLITE_ROWS:-40000}
HOTROWS=1500
CHECK="SELECT 'CHECK', count(*), sum(length(v)), sum(k * unicode(substr(v, 5, 1))), sum(instr(v, 'HOT') > 0) FROM kv;"

wl_setup() {
	rm -f /tmp/sql.in /tmp/sql.out
	mkfifo /tmp/sql.in
	sqlite3 :memory: < /tmp/sql.in > /tmp/sql.out 2>&1 &
	WL_PID=$!
	exec 3> /tmp/sql.in	# held open: sqlite3 reads until the workload ends
	step=$((ROWS / HOTROWS))
	cat >&3 <<SQL
PRAGMA cache_size = -400000;
CREATE TABLE kv (k INTEGER PRIMARY KEY, v TEXT);
WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c WHERE x < $ROWS - 1)
INSERT INTO kv SELECT x, CASE WHEN x % $step = 0 AND x / $step < $HOTROWS
	THEN 'HOTVALUEMARK' ELSE 'COLDVALUEMARK' END || x || printf('%.1000c', 'v') FROM c;
SELECT 'LOADED', count(*) FROM kv;
$CHECK
SQL
	wait_until 3000 "sqlite3 to load (its output: /tmp/sql.out)" grep -q '^CHECK' /tmp/sql.out
	CHECK0=$(grep '^CHECK' /tmp/sql.out)
	grep -q "^LOADED|$ROWS$" /tmp/sql.out || fail "sqlite3 did not load $ROWS rows: $(head -3 /tmp/sql.out)"
	migratepages "$WL_PID" 0 1 || fail "migratepages"
	pageset scan "$WL_PID" HOTVALUEMARK COLDVALUEMARK > /tmp/pages
	HOT=$(grep -c '^h' /tmp/pages)
	COLD=$(grep -c '^c' /tmp/pages)
}
wl_run() {
	echo ".output /dev/null" >&3	# the stream's answers
	awk -v h="$HOTROWS" -v s="$((ROWS / HOTROWS))" 'BEGIN { srand(1)
		for (;;) printf "SELECT length(v) FROM kv WHERE k = %d;\n", int(rand() * h) * s }' >&3 &
	WL_LOAD=$!
}
wl_place() { marked_place; }
wl_finish() {
	kill "$WL_LOAD"
	wait "$WL_LOAD" 2>/dev/null
	# the stream may have stopped mid-statement: end it before the dot-command
	printf '\n;\n.output /tmp/check.out\n%s\n' "$CHECK" >&3
	exec 3>&-
	wait "$WL_PID" 2>/dev/null
	c=$(grep '^CHECK' /tmp/check.out)
	[ "$c" = "$CHECK0" ] && echo ok || echo "FAIL:${c// /_}_was_${CHECK0// /_}"
}
