#!/usr/bin/env bash
# Emulated CXL machine: 200 short-lived targets, a tiny heat map, full nodes
# (tests/vm/guest/churn.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/vm/common.bash
vm_scenario churn
