#!/usr/bin/env bash
# Emulated CXL machine: node 1's memory offline and online under the agent
# (tests/vm/guest/hotplug.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/vm/common.bash
vm_scenario hotplug
