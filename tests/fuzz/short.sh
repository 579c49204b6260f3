#!/usr/bin/env bash
# The fuzzing smoke test for tests/run: builds the targets and runs each for
# 5 seconds on the seed corpus (the regression inputs crash-* included).
set -euo pipefail
cd "$(dirname "$0")/../.."
tests/fuzz/build.sh
exec tests/fuzz/run.sh 5
