# thp-probe: what move_pages does to a THP holding one hot 4 KiB page
# (docs/design.md, "Huge pages").  Build the probe first, then:
#   cc -O2 -static -o build/thpprobe tools/vm/thpprobe.c
#   tools/vm/run [--kernel 6.12] --add build/thpprobe tools/vm/scenarios/thp-probe.sh
cat /sys/kernel/mm/transparent_hugepage/enabled
uname -r
thpprobe | tee /result
