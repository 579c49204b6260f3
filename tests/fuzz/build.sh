#!/usr/bin/env bash
# Builds the libFuzzer targets into $BUILD/fuzz/ (default build/fuzz/) with
# clang, ASan and UBSan, plus ASan/UBSan copies of the shipped policies in
# $BUILD/fuzz/policies/ for fuzz_policy_params.  Each target links only the
# user/ sources it needs.  Run from anywhere; `make` must have run first
# (the user/ headers include generated files from build/).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
CLANG=${CLANG:-clang}
OUT=$BUILD/fuzz
V=${V:-0}

FLAGS=(-g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined -D_GNU_SOURCE -std=gnu11
       -Wall -Wextra -Werror -Iinclude -Ibpf -Iuser -Iuser/sources -Iuser/tracking -Iuser/decision
       -Iuser/moving -Iuser/agent -I"$BUILD")
# The policies are loaded with dlopen: sanitized, but without libFuzzer's
# coverage counters, which would dangle after each dlclose.
POLICY_FLAGS=(-g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined
	      -fno-sanitize-recover=undefined -std=gnu11 -Wall -Wextra -Werror
	      -Iinclude -shared -fPIC)

if [ ! -e "$BUILD/sampler.skel.h" ]; then
	echo "tests/fuzz/build.sh: $BUILD/ is not built yet: run make first" >&2
	exit 1
fi
mkdir -p "$OUT/policies"

run() {
	[ "$V" = 1 ] && echo "$*"
	"$@"
}

target() {
	local name=$1
	shift
	printf '  %-8s %s\n' FUZZ "$OUT/$name"
	run "$CLANG" "${FLAGS[@]}" "tests/fuzz/$name.c" "$@" -o "$OUT/$name"
}

# The source registry's rows point at each source's code: the agent library
# supplies it, uninstrumented, after the instrumented files.
AGENT_LIB=("$BUILD/libcxlt.a" -lbpf -lelf -lz -lnuma -ljson-c -lmicrohttpd -lpthread -ldl -lm)
target fuzz_config user/agent/config.c user/decision/shares.c user/sources/sources.c user/util.c -linih "${AGENT_LIB[@]}"
target fuzz_trace user/trace.c user/tracking/pfn_nodes.c user/util.c -lm
target fuzz_control user/agent/control.c user/util.c -ljson-c -lmicrohttpd -lpthread -lm
target fuzz_policy_params user/decision/policy_host.c user/util.c -ldl -lm
# The replay's main as replay_main, without gnuplot, at most 10000 epochs.
target fuzz_replay user/cxltier-replay.c user/replay/*.c user/agent/config.c user/decision/engine.c user/moving/mover.c user/decision/pipeline.c user/moving/platform.c user/decision/policy_host.c user/decision/sandbox.c user/decision/shares.c user/sources/sources.c \
	user/tracking/pfn_nodes.c user/tracking/sweep.c user/tracking/topology.c user/trace.c user/tracking/tracker.c user/util.c -Dmain=replay_main -DREPLAY_NO_GNUPLOT \
	-DREPLAY_MAX_EPOCHS=10000 -linih "${AGENT_LIB[@]}"

for src in tiering-policies/*.c; do
	so=$OUT/policies/$(basename "$src" .c).so
	printf '  %-8s %s\n' POLICY "$so"
	run "$CLANG" "${POLICY_FLAGS[@]}" -o "$so" "$src" -lm
	chmod 0644 "$so"	# policy_host refuses group/other-writable files
done
