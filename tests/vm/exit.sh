#!/usr/bin/env bash
# Emulated CXL machine: targets exit and start during migration (tests/vm/guest/exit.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/vm/common.bash
vm_scenario exit
