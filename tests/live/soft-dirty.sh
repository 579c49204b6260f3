#!/usr/bin/env bash
# Live test (root): the soft-dirty source.  Whether this kernel keeps
# soft-dirty bits is asked here independently of the agent (a written page
# after clear_refs must read bit 55 in pagemap).  Where it does and has
# PAGEMAP_SCAN, the agent finds tierbench's hot set (written every epoch,
# --skew 1) and not its cold pages, and clears the bits each epoch.  Where it
# does not, --source soft-dirty is refused at start with the reason and
# nothing is left behind; the emulated machine (6.12) runs the working path
# in tests/vm promote-dirty either way.
set -euo pipefail
. "$(dirname "$0")/lib.bash"

kernel_has_soft_dirty() {
	python3 - <<'PY'
import mmap, struct, ctypes, sys
m = mmap.mmap(-1, 4096)
m[0] = 1
open('/proc/self/clear_refs', 'w').write('4')
m[0] = 2
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
with open('/proc/self/pagemap', 'rb') as f:
    f.seek(addr // 4096 * 8)
    sys.exit(0 if struct.unpack('Q', f.read(8))[0] >> 55 & 1 else 1)
PY
}
scan_capable() { # PAGEMAP_SCAN: 6.7 and later
	local v
	v=$(uname -r | sed 's/^\([0-9]*\)\.\([0-9]*\).*/\1 \2/')
	set -- $v
	[ "$1" -gt 6 ] || { [ "$1" -eq 6 ] && [ "$2" -ge 7 ]; }
}

"$BUILD/tierbench" --size 16M --hot 0.25 --skew 1 --duration 120 > "$work/bench.out" 2>&1 &
bench=$!
wait_for 30 "tierbench's info line" grep -q 'buf=0x' "$work/bench.out"
hot=$(sed -n 's/.*hot_pages=\([0-9]*\).*/\1/p' "$work/bench.out")

if ! kernel_has_soft_dirty || ! scan_capable; then
	if "$BUILD/cxltierd" --pid "$bench" --source soft-dirty --duration 2 --run-dir "$work/run" \
		> "$work/agent.log" 2>&1; then
		fail "soft-dirty accepted on a kernel without soft-dirty bits or PAGEMAP_SCAN ($(uname -r))"
	fi
	logged "error: source soft-dirty: no \(soft-dirty bits\|PAGEMAP_SCAN\)" || fail "refused without the reason"
	[ ! -e /sys/fs/bpf/cxltier/cxlt_heat ] || fail "pins left behind after the refusal"
	echo "soft-dirty: refused here with the reason ($(uname -r): $(grep -o 'no soft-dirty[^:]*\|no PAGEMAP_SCAN[^:]*' "$work/agent.log" | head -1))"
	exit 0
fi

"$BUILD/cxltierd" --pid "$bench" --source soft-dirty --run-dir "$work/run" > "$work/agent.log" 2>&1 &
agent=$!
wait_for 60 "three epochs" status_has "$work/run" '.agent.epoch >= 3'
written=$(jq '.sampler.soft_dirty.pages_last_epoch' "$work/run/status.json")
echo "pages written in the last epoch: $written (hot set $hot, buffer 4096)"
[ "$written" -ge $((hot * 9 / 10)) ] && [ "$written" -le $((hot + hot / 4)) ] ||
	fail "found $written pages written; the hot set is $hot and the cold pages are not written"
jq -e '.sampler.source == "soft-dirty" and .sampler.soft_dirty.clear_failures == 0' \
	"$work/run/status.json" > /dev/null || fail "status: $(jq -c .sampler "$work/run/status.json")"
kill -TERM "$agent"
wait "$agent" || fail "cxltierd exited $?"
agent=""
echo "soft-dirty: ok ($written pages written an epoch, hot set $hot)"
