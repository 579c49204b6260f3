# make bench, emulated-machine part: the mover against raw move_pages.
. /tests/lib.sh
echo "emulated CXL machine (QEMU TCG, $(nproc) CPUs): node 0 $(awk '/MemTotal/ { printf "%d MiB", $4 / 1024 }' /sys/devices/system/node/node0/meminfo), node 1 $(awk '/MemTotal/ { printf "%d MiB", $4 / 1024 }' /sys/devices/system/node/node1/meminfo)"
bench_mover
