#!/usr/bin/env bash
# One policy file, live and offline: the probe policy describes the view it
# gets in cxltier-replay (here) and in the live agent (emulated CXL machine);
# the descriptions must match line for line.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/vm/common.bash
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$BUILD/cxltier-replay" --synth hotset --pages 8192 --samples 50000 --epochs 5 -O "$work/t.trace" 2>/dev/null
"$BUILD/cxltier-replay" -o "probe:out=$work/replay.txt" "$work/t.trace" \
	"$BUILD/tests/policies/probe.so" > /dev/null
vm_scenario samefile
if ! diff -u "$work/replay.txt" "$BUILD/vm/samefile.result"; then
	echo "FAIL: the view differs between replay (-) and the live agent (+)"
	exit 1
fi
echo "samefile: ok (replay and live agent gave the probe the same kind of view)"
