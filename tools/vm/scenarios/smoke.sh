#!/bin/sh
# Smoke test of the emulated CXL guest: node 1 is CPU-less, online, in a lower memory
# tier than node 0, and pages move 0 -> 1 -> 0 with their content intact.
#   tools/vm/run --result build/vm/smoke.result tools/vm/scenarios/smoke.sh [MIB]
# Writes /result (key=value) and exits 0 when every check passes.
set -u
MIB=${1:-32}
fail=0
res() { echo "$1=$2" >>/result; }
check() { # name condition...
	name=$1; shift
	if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fail=1; fi
}

# in_list N LIST: is node N in a nodelist like "0-1,3"?
in_list() (
	IFS=,
	for p in $2; do
		case "$p" in
		*-*) [ "$1" -ge "${p%-*}" ] && [ "$1" -le "${p#*-}" ] && exit 0 ;;
		*) [ "$1" = "$p" ] && exit 0 ;;
		esac
	done
	exit 1
)
tier_of() {
	for t in /sys/devices/virtual/memory_tiering/memory_tier*; do
		in_list "$1" "$(cat "$t/nodelist")" && { echo "${t##*memory_tier}"; return; }
	done
	echo none
}

: >/result
echo "kernel $(uname -r), $(nproc) CPUs"
res kernel "$(uname -r)"
for n in /sys/devices/system/node/node[0-9]*; do
	id=${n##*node}
	mib=$(awk '/MemTotal/ { print int($4 / 1024) }' "$n/meminfo")
	free=$(awk '/MemFree/ { print int($4 / 1024) }' "$n/meminfo")
	cpus=$(cat "$n/cpulist")
	echo "node$id: ${mib} MiB total, ${free} MiB free, cpus [${cpus}], memory_tier$(tier_of "$id"), distances $(cat "$n/distance")"
	res "node${id}_mib" "$mib"
	res "node${id}_cpus" "$cpus"
	res "node${id}_tier" "$(tier_of "$id")"
done
for t in /sys/devices/virtual/memory_tiering/memory_tier*; do
	echo "${t##*/}: nodes $(cat "$t/nodelist")"
done

t0=$(tier_of 0) t1=$(tier_of 1)
check "node 1 exists" [ -d /sys/devices/system/node/node1 ]
check "node 1 has no CPUs" [ -z "$(cat /sys/devices/system/node/node1/cpulist 2>/dev/null)" ]
check "node 1 has memory" [ "$(awk '/MemTotal/ { print $4 }' /sys/devices/system/node/node1/meminfo)" -gt 0 ]
if [ "${CXLVM_CXL:-1}" = 1 ]; then
	below() { [ "$t1" != none ] && [ "$t0" != none ] && [ "$t1" -gt "$t0" ]; }
	check "node 1 below node 0 (memory_tier$t1 > memory_tier$t0)" below
fi
check "bpffs mounted" grep -q ' /sys/fs/bpf bpf ' /proc/mounts
check "bpftool runs" sh -c 'bpftool version >/dev/null'

echo "moving ${MIB} MiB 0 -> 1 -> 0 with move_pages ..."
movecheck -m "$MIB" -f 0 -s 1 >/tmp/movecheck.out
mrc=$?
cat /tmp/movecheck.out
cat /tmp/movecheck.out >>/result
check "pages move 0 -> 1 -> 0 intact" [ "$mrc" = 0 ]

res smoke_ok $((1 - fail))
exit "$fail"
