#!/usr/bin/env bash
# Emulated CXL machine: the hot set moves from CXL to DRAM (tests/vm/guest/promote.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/vm/common.bash
vm_scenario promote
