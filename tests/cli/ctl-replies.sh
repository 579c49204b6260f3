#!/usr/bin/env bash
# cxltierctl against a fake agent (no BPF, no root needed): a reply of the
# wrong shape is a clear error, never an abort or a crash; names holding
# escape sequences reach the terminal escaped, in status, top and metrics.
set -euo pipefail
BUILD=${BUILD:-build}
work=$(mktemp -d)
fake=""
cleanup() {
	[ -n "$fake" ] && kill "$fake" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir "$work/run"

# The fake agent answers every request with the file's content.
cat > "$work/fake.py" << 'EOF'
import os, socket, sys
path, reply_file = sys.argv[1:3]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
s.listen(8)
while True:
    c, _ = s.accept()
    c.recv(4096)
    c.sendall(open(reply_file, "rb").read())
    c.close()
EOF
printf '{}' > "$work/reply"
/usr/bin/python3 "$work/fake.py" "$work/run/cxltier.sock" "$work/reply" &
fake=$!
for _ in $(seq 100); do [ -S "$work/run/cxltier.sock" ] && break; sleep 0.05; done
[ -S "$work/run/cxltier.sock" ] || fail "the fake agent did not start"

ctl() { "$BUILD/cxltierctl" --run-dir "$work/run" --pin-dir "$work/nopins" "$@"; }
# expect error|survives REPLY COMMAND...: error: exit 1 (not a signal) with a
# message; survives: any exit but a crash (json-c's asserts abort).
expect() {
	local want=$1 reply=$2 rc=0 out
	shift 2
	printf '%s' "$reply" > "$work/reply"
	out=$(ctl "$@" 2>&1) || rc=$?
	[ "$rc" -lt 128 ] || fail "'$*' on reply $reply: killed by signal $((rc - 128)): $out"
	[ "$want" = survives ] && return
	[ "$rc" -eq 1 ] || fail "'$*' on reply $reply: exit $rc (want 1): $out"
	grep -q "^cxltierctl: " <<< "$out" || fail "'$*' on reply $reply: no clear message: $out"
}
expect_error() { expect error "$@"; }
expect_survives() { expect survives "$@"; }

expect_error '[]' status
expect_error '5' status
expect_error '"text"' status
expect_error '{"agent": 1}' status
expect_error 'not json' status
expect_error '{"ok": false, "error": "nope"}' status
expect_error '[1]' pause
expect_error '7' rate 5
expect_error '{"ok": false}' resume
expect_error '5' targets
expect_survives '{"agent": {}, "nodes": 5, "targets": {"a": 1}, "sampler": [], "policy": 3}' status
expect_survives '{"agent": {"pid": []}, "nodes": [1, "x", null, []], "targets": [[], {}, 5],
	"sampler": {"damon": 5, "hint": []}, "policy": {"params": [1]}, "kernel_migrations": [3],
	"mover": "x"}' status
expect_survives '{"agent": {}, "sampler": {"damon": {}, "hint": {}}, "policy": {"params": {"k": {}}},
	"kernel_migrations": {"x": 5}, "mover": {"y": "z"}}' status
expect_survives '{"done": []}' pause
expect_survives '{"x": 1}' targets

# Names with escape sequences: printed as \x1b..., never as the raw bytes.
esc=$(printf '\033]0;pwned\007\033[2J')
printf '{"agent": {"pid": 1, "mode": "observe%s"}, "nodes": [], "policy": {"name": "p%s", "params": {"k%s": "v%s"}},
	"targets": [{"pid": 42, "comm": "%s"}], "mover": {"x%s": 3}}' \
	"$esc" "$esc" "$esc" "$esc" "$esc" "$esc" > "$work/reply"
ctl status > "$work/status.out" || fail "status with escapes failed"
! grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$work/status.out" || fail "raw control bytes in status: $(od -c "$work/status.out" | head)"
grep -qF '\x1b]0;pwned\x07\x1b[2J' "$work/status.out" || fail "the escaped comm is not shown: $(cat "$work/status.out")"
# top: one refresh (stdin at EOF ends it); its own screen clear is the only escape.
ctl top < /dev/null > "$work/top.out" || fail "top with escapes failed"
sed 's/\x1b\[H\x1b\[2J//' "$work/top.out" | grep -q $'[\x01-\x08\x0b-\x1f\x7f]' &&
	fail "raw control bytes in top"
grep -qF '\x1b]0;pwned' "$work/top.out" || fail "top does not show the escaped comm"
printf 'cxltier_target_pages{comm="%s"} 1\n' "$esc" > "$work/reply"
ctl metrics > "$work/metrics.out" || fail "metrics failed"
! grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$work/metrics.out" || fail "raw control bytes in metrics"
echo "ctl-replies: ok"
