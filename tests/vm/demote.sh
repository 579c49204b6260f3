#!/usr/bin/env bash
# Emulated CXL machine: DRAM short, the coldest pages go to CXL (tests/vm/guest/demote.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/vm/common.bash
vm_scenario demote
