#!/usr/bin/env bash
# Emulated CXL machine: >= 100,000 migrations under concurrent writers, no data lost
# (tests/vm/guest/integrity.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/vm/common.bash
vm_scenario integrity
