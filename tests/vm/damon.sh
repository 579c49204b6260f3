#!/usr/bin/env bash
# Emulated CXL machine with Debian's 6.12 kernel, which has DAMON: the agent's own
# vaddr kdamond as the sampler (tests/vm/guest/damon.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/vm/common.bash
vm_scenario damon --kernel 6.12
