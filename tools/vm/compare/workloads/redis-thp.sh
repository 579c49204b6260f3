# redis-thp: the redis workload (redis.sh) with transparent huge pages allowed: redis
# turns them off for itself unless told --disable-thp no.  Its values then sit in
# huge pages, each hot page among cold ones, so bringing the hot keys to DRAM whole
# drags the cold data with them: cold→DRAM counts it.
# guest-needs: /usr/bin/redis-server /usr/bin/redis-cli /usr/bin/redis-benchmark /usr/bin/migratepages
. /compare/workloads/redis.sh
WL_DESC="redis-server with THP, 2,500 hot keys of 140,000 on CXL"
REDIS_ARGS="--disable-thp no"
