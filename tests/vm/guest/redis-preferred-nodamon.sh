# redis-preferred-nodamon: redis-preferred on a kernel without DAMON (Debian 6.1)
# and a CPU without a memory-sampling PMU: no source here sees memory under
# numactl --preferred.  The agent says so with --source hint (log, status,
# metrics: nothing to suggest but what would see it), and auto takes hint and
# warns that the memory stays unseen.
. /tests/redis-preferred.sh
