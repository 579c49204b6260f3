# redis: redis-server 7 with 140,000 keys of 1 KiB (about 50,000 pages) moved to
# node 1 after loading; redis-benchmark (4 clients) GETs 2,500 hot keys that were
# loaded one in 56, so that they sit on about 2,500 pages spread over the data
# set.  The hot and cold pages are found by marks in the values (pageset scan);
# data verified by DEBUG DIGEST and DBSIZE before and after.  GET only: a SET
# would reallocate a value and the page list would go stale.
# guest-needs: /usr/bin/redis-server /usr/bin/redis-cli /usr/bin/redis-benchmark /usr/bin/migratepages
WL_DESC="redis-server, 2,500 hot keys of 140,000 on CXL"
KEYS=${REDIS_KEYS:-140000}
HOTKEYS=2500	# REDIS_WRAP: a command to start redis-server under (numactl ...); REDIS_ARGS: more server flags
rcli() { redis-cli -s /tmp/redis.sock "$@"; }	# a unix socket: the guest has no network

wl_setup() {
	rm -f /tmp/redis.log
	${REDIS_WRAP:-} redis-server --port 0 --unixsocket /tmp/redis.sock --save '' --appendonly no --enable-debug-command yes \
		--protected-mode no ${REDIS_ARGS:-} > /tmp/redis.log 2>&1 &
	WL_PID=$!
	wait_until 300 "redis to answer (its log: /tmp/redis.log)" sh -c 'redis-cli -s /tmp/redis.sock ping 2>/dev/null | grep -q PONG'
	# key i < HOTKEYS is hot; it is loaded at position i * step, cold keys in between
	awk -v n="$KEYS" -v h="$HOTKEYS" 'BEGIN {
		step = int(n / h); pad = sprintf("%1000s", ""); gsub(/ /, "v", pad)
		for (p = 0; p < n; p++) {
			if (p % step == 0 && p / step < h) { id = p / step; m = "HOTVALUEMARK" }
			else { id = h + p - (p < h * step ? int(p / step) + 1 : h); m = "COLDVALUEMARK" }
			k = sprintf("key:%012d", id); v = m id pad
			printf "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(k), k, length(v), v
		}
	}' | rcli --pipe > /tmp/redis-load.log 2>&1 || fail "loading redis: $(tail -2 /tmp/redis-load.log)"
	[ "$(rcli dbsize)" = "$KEYS" ] || fail "redis has $(rcli dbsize) keys, not $KEYS"
	migratepages "$WL_PID" 0 1 || fail "migratepages"
	DIGEST0=$(rcli debug digest)
	pageset scan "$WL_PID" HOTVALUEMARK COLDVALUEMARK > /tmp/pages
	HOT=$(grep -c '^h' /tmp/pages)
	COLD=$(grep -c '^c' /tmp/pages)
}
wl_run() {
	redis-benchmark -s /tmp/redis.sock -c 4 -n 1000000000 -r "$HOTKEYS" -q GET 'key:__rand_int__' > /dev/null 2>&1 &
	WL_LOAD=$!
}
wl_place() { marked_place; }
wl_finish() {
	kill "$WL_LOAD"
	wait "$WL_LOAD" 2>/dev/null
	d=$(rcli debug digest) n=$(rcli dbsize)
	rcli shutdown nosave > /dev/null 2>&1
	wait "$WL_PID" 2>/dev/null
	[ "$d" = "$DIGEST0" ] && [ "$n" = "$KEYS" ] && echo ok || echo "FAIL:digest_${d}_keys_$n"
}
