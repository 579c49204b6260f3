#!/bin/sh
# /init (PID 1) of the emulated CXL guest built by tools/vm/build-guest.
#
# Channels (see tools/vm/run):
#   ttyS0  kernel console + this script's progress  -> host file console.log
#   ttyS1  the scenario's stdout/stderr + framed protocol lines -> host reader
# Protocol lines on ttyS1 look like "@@<nonce>@@ <verb> ...". The nonce comes from the
# kernel command line, so nothing a scenario prints can be mistaken for a marker.
# If this script ever exits, the kernel panics (init died), panic=-1 reboots and QEMU's
# -no-reboot turns that into an exit: the host then reports a failed boot.

export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TMPDIR=/tmp
umask 022

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm /tmp /run /root /sys/fs/bpf
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
mount -t bpf bpf /sys/fs/bpf
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t cgroup2 cgroup2 /sys/fs/cgroup
ln -sf /proc/self/fd /dev/fd 2>/dev/null
hostname cxlvm

NONCE=none CXL=1 SLOW_MB=0
for w in $(cat /proc/cmdline); do
	case "$w" in
	cxlvm.nonce=*) NONCE=${w#*=} ;;
	cxlvm.cxl=*) CXL=${w#*=} ;;
	cxlvm.slow_mb=*) SLOW_MB=${w#*=} ;;
	esac
done

CHAN=/dev/ttyS1
# No echo (nothing should come back from the host) and no CR insertion.
stty -F "$CHAN" raw -echo 2>/dev/null

mark() { printf '@@%s@@ %s\n' "$NONCE" "$*" >"$CHAN"; }
log() { echo "cxlvm: $*" >/dev/console; mark log "$*"; }

# Report a setup failure to the host and stop: the host exits non-zero with $1.
die() {
	[ -s /run/cxl-setup.log ] && cat /run/cxl-setup.log >/dev/console
	echo "cxlvm: SETUP FAILED: $*" >/dev/console
	mark setup-failed "$*"
	sleep 1
	poweroff -f
	echo o >/proc/sysrq-trigger
	sleep 10
}

# in_list N LIST: is node N in a kernel nodelist like "0-1,3"?
in_list() (
	IFS=,
	for part in $2; do
		case "$part" in
		*-*) [ "$1" -ge "${part%-*}" ] && [ "$1" -le "${part#*-}" ] && exit 0 ;;
		*) [ "$1" = "$part" ] && exit 0 ;;
		esac
	done
	exit 1
)

# tier_of N: the memory_tier id holding node N (bigger id = slower tier).
tier_of() {
	for t in /sys/devices/virtual/memory_tiering/memory_tier*; do
		[ -r "$t/nodelist" ] || continue
		if in_list "$1" "$(cat "$t/nodelist")"; then
			echo "${t##*memory_tier}"
			return 0
		fi
	done
	return 1
}

node_mib() {
	awk '/MemTotal/ { print int($4 / 1024) }' "/sys/devices/system/node/node$1/meminfo" 2>/dev/null
}

# Wait up to $2 tenths of a second for path $1: nd/dax devices probe asynchronously.
wait_for() {
	i=0
	while [ ! -e "$1" ]; do
		i=$((i + 1))
		[ "$i" -gt "$2" ] && return 1
		sleep 0.1
	done
}

setup_cxl() {
	for m in nd_e820 nd_pmem dax_pmem device_dax kmem; do
		modprobe "$m" || die "modprobe $m failed"
	done
	wait_for /sys/bus/nd/devices/namespace0.0 100 ||
		die "no namespace0.0: the memmap=...! pmem range did not show up (see console.log)"
	# Their JSON chatter goes to a log that is shown only when a step fails.
	ndctl create-namespace -f -e namespace0.0 -m devdax --map=mem -a 4k >>/run/cxl-setup.log 2>&1 ||
		die "ndctl create-namespace (devdax) failed"
	wait_for /sys/bus/dax/devices/dax0.0 100 || die "no dax0.0 after create-namespace"
	# Kernels built to auto-online hotplugged memory (6.12 Debian) make daxctl refuse
	# --no-online; onlining is the next step, done by daxctl with the right zone.
	[ -w /sys/devices/system/memory/auto_online_blocks ] &&
		echo offline >/sys/devices/system/memory/auto_online_blocks
	daxctl reconfigure-device --mode=system-ram --no-online dax0.0 >>/run/cxl-setup.log 2>&1 ||
		die "daxctl reconfigure-device --mode=system-ram failed"
	daxctl online-memory dax0.0 >>/run/cxl-setup.log 2>&1 || die "daxctl online-memory failed"

	n1=$(node_mib 1)
	[ -n "$n1" ] && [ "$n1" -gt 0 ] || die "node 1 has no memory after onlining dax0.0"
	[ -z "$(cat /sys/devices/system/node/node1/cpulist)" ] || die "node 1 has CPUs"
	t0=$(tier_of 0) || die "node 0 is in no memory tier"
	t1=$(tier_of 1) || die "node 1 is in no memory tier"
	[ "$t1" -gt "$t0" ] || die "node 1 (memory_tier$t1) is not below node 0 (memory_tier$t0)"
	# 6.1 counts MemTotal in whole pages minus nothing for hotplugged blocks: expect exact.
	if [ "$SLOW_MB" -gt 0 ] && [ "$n1" -ne "$SLOW_MB" ]; then
		die "node 1 has $n1 MiB, expected $SLOW_MB MiB"
	fi
	log "cxl: node1 ${n1} MiB online in memory_tier$t1, node0 $(node_mib 0) MiB in memory_tier$t0"
}

# Under 512 MiB of boot RAM the kernel switches THP off whatever its config says; put
# back the Debian kernel's defaults (enabled=always, defrag=madvise) so the guest
# behaves like a server. Scenarios may change them.
thp=/sys/kernel/mm/transparent_hugepage
if grep -q '\[never\]' $thp/enabled 2>/dev/null; then
	echo always >$thp/enabled
	echo madvise >$thp/defrag
	echo 1 >$thp/use_zero_page
fi

if [ "$CXL" = 1 ]; then
	setup_cxl
else
	log "no-cxl: node1 $(node_mib 1) MiB as plain boot memory"
fi

export CXLVM=1 CXLVM_FAST_NODE=0 CXLVM_SLOW_NODE=1 CXLVM_CXL="$CXL"
log "scenario start"
rm -f /result
cd /
# The subshell loads the argument vector ("set -- ...") written by tools/vm/run.
(. /cxlvm/args.sh && exec sh /cxlvm/scenario.sh "$@") </dev/null >"$CHAN" 2>&1
rc=$?

if [ -f /result ]; then
	mark result-begin
	gzip -c /result | base64 >"$CHAN"
	mark result-end
fi
mark exit "$rc"
echo "cxlvm: scenario exit status $rc" >/dev/console
# The host stops QEMU once it has read the exit line; give the UART time to drain.
sleep 2
poweroff -f
echo o >/proc/sysrq-trigger
sleep 10
