#!/usr/bin/env bash
# `make install DESTDIR=...` lays the files out where the FHS says, with the
# modes the agent and dpkg expect; the installed agent finds its policies in
# that layout; the man pages format without groff warnings and cover every
# option of --help; the systemd unit passes `systemd-analyze verify`.
# Run from the project root (tests/run does), as root, with BUILD set.
set -euo pipefail
BUILD=${BUILD:-build}
dest=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$dest" "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
checks=0
ok() { checks=$((checks + 1)); }

make -s BUILD="$BUILD" install DESTDIR="$dest" > "$work/install.log" 2>&1 ||
	fail "make install DESTDIR=$dest failed: $(cat "$work/install.log")"
echo "installed into $dest"

# path mode: every file, where it belongs, with its mode (and root's, as root).
expect=(
	"usr/sbin/cxltierd 755"
	"usr/bin/cxltierctl 755"
	"usr/bin/cxltier-replay 755"
	"usr/bin/tierbench 755"
	"usr/include/cxltier/policy.h 644"
	"usr/include/cxltier/policy-helpers.h 644"
	"lib/systemd/system/cxltierd.service 644"
	"etc/cxltier/cxltier.conf 644"
	"usr/share/man/man8/cxltierd.8 644"
	"usr/share/man/man8/cxltierctl.8 644"
	"usr/share/man/man7/cxltier-policy.7 644"
	"usr/share/man/man1/cxltier-replay.1 644"
	"usr/share/man/man1/tierbench.1 644"
)
for p in tiering-policies/*.c; do
	expect+=("usr/lib/cxltier/policies/$(basename "$p" .c).so 644")
done
for e in "${expect[@]}"; do
	read -r path mode <<< "$e"
	f="$dest/$path"
	# A man page may be installed gzipped.
	[ -e "$f" ] || [ ! -e "$f.gz" ] || f="$f.gz"
	[ -f "$f" ] || fail "/$path not installed"
	[ "$(stat -c %a "$f")" = "$mode" ] || fail "/$path has mode $(stat -c %a "$f"), expected $mode"
	if [ "$(id -u)" -eq 0 ]; then
		[ "$(stat -c %u:%g "$f")" = 0:0 ] || fail "/$path is owned by $(stat -c %u:%g "$f"), not root"
	fi
	ok
done
# The agent refuses policies in a directory others can write.
for d in usr/lib/cxltier/policies usr/lib/cxltier etc/cxltier; do
	[ "$(stat -c %a "$dest/$d")" = 755 ] || fail "/$d has mode $(stat -c %a "$dest/$d"), expected 755"
	ok
done
# Nothing stray: every installed file is one of the expected ones.
extra=$(cd "$dest" && find . -type f | sed 's|^\./||; s|\.gz$||' | sort |
	comm -23 - <(printf '%s\n' "${expect[@]}" | cut -d' ' -f1 | sort))
[ -z "$extra" ] || fail "unexpected files installed: $extra"
cmp -s packaging/cxltier.conf "$dest/etc/cxltier/cxltier.conf" || fail "installed config differs from packaging/cxltier.conf"
echo "layout: ${#expect[@]} files at their FHS paths with the right modes"

# A second install keeps the administrator's config and puts the sample beside it.
echo "# edited by the administrator" >> "$dest/etc/cxltier/cxltier.conf"
make -s BUILD="$BUILD" install DESTDIR="$dest" > "$work/install2.log" 2>&1 ||
	fail "second make install failed: $(cat "$work/install2.log")"
tail -1 "$dest/etc/cxltier/cxltier.conf" | grep -q 'edited by the administrator' ||
	fail "make install overwrote an existing /etc/cxltier/cxltier.conf"
cmp -s packaging/cxltier.conf "$dest/etc/cxltier/cxltier.conf.dist" ||
	fail "the new sample config was not installed as cxltier.conf.dist"
rm "$dest/etc/cxltier/cxltier.conf.dist"
ok
echo "config: an existing cxltier.conf is kept, the sample goes to cxltier.conf.dist"

# The installed agent loads a shipped policy from the installed policy directory.
policy=hotset
[ -e "$dest/usr/lib/cxltier/policies/hotset.so" ] || policy=hotcold
"$dest/usr/sbin/cxltierd" --policy-dir "$dest/usr/lib/cxltier/policies" --policy $policy \
	--policy-help > "$work/help" 2>&1 || fail "installed cxltierd cannot load $policy: $(cat "$work/help")"
[ -s "$work/help" ] || fail "--policy-help printed nothing"
ok
# Without --policy-dir the installed agent (no policies/ beside /usr/sbin/cxltierd)
# looks in /usr/lib/cxltier/policies.
if "$dest/usr/sbin/cxltierd" --policy $policy --policy-help > "$work/help2" 2>&1; then
	echo "policies: /usr/lib/cxltier/policies of this machine has $policy.so"
else
	grep -q '/usr/lib/cxltier/policies/' "$work/help2" ||
		fail "installed cxltierd does not look in /usr/lib/cxltier/policies: $(cat "$work/help2")"
fi
ok
echo "policies: installed cxltierd loads $policy from the installed layout"

# Man pages: no groff warnings, and every long option of --help documented.
command -v groff > /dev/null || fail "groff is missing (apt-get install groff-base)"
for f in "$dest"/usr/share/man/man*/*; do
	case $f in *.gz) zcat "$f" > "$work/page" ;; *) cp "$f" "$work/page" ;; esac
	warn=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$work/page" 2>&1) ||
		fail "groff failed on $(basename "$f"): $warn"
	[ -z "$warn" ] || fail "groff warnings in $(basename "$f"): $warn"
	if command -v man > /dev/null; then
		warn=$(MANWIDTH=80 man --warnings -E UTF-8 -l "$work/page" 2>&1 > /dev/null) || true
		[ -z "$warn" ] || fail "man warnings in $(basename "$f"): $warn"
	fi
	ok
done
for b in usr/sbin/cxltierd:man8/cxltierd.8 usr/bin/cxltierctl:man8/cxltierctl.8 \
	usr/bin/cxltier-replay:man1/cxltier-replay.1 usr/bin/tierbench:man1/tierbench.1; do
	bin=$dest/${b%%:*}
	page=$dest/usr/share/man/${b#*:}
	[ -e "$page" ] || page=$page.gz
	zcat -f "$page" | sed 's/\\-/-/g' > "$work/page"
	for opt in $("$bin" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		grep -q -- "$opt\\b" "$work/page" || fail "$(basename "$page"): option $opt of --help is not documented"
	done
	ok
done
echo "man pages: format without warnings, every --help option documented"

# What a newcomer copies must work as printed: the policy build command of
# cxltier-policy(7) builds the README's example policy from the top of the tree,
# and no --help shows printf's escapes.
sed -n '/<!-- example-policy:begin -->/,/<!-- example-policy:end -->/p' tiering-policies/README.md |
	sed '1,2d;$d' | sed '$d' > "$work/my.c"
build=$(sed -n 's/^\.B \(cc .*-o my.so my.c.*\)$/\1/p' man/cxltier-policy.7 | sed 's/\\-/-/g')
[ -n "$build" ] || fail "cxltier-policy.7 shows no build command"
(cd "$work" && ln -s "$OLDPWD/include" include && $build) > "$work/cc.log" 2>&1 ||
	fail "the man page's '$build' fails on the README's example: $(cat "$work/cc.log")"
ok
for bin in "$dest"/usr/sbin/cxltierd "$dest"/usr/bin/*; do
	! "$bin" --help 2>&1 | grep -q '%%' || fail "$(basename "$bin") --help prints a literal %%"
	ok
done
echo "as printed: cxltier-policy(7)'s '$build' builds the README's example; no %% in --help"

# The unit: systemd-analyze verify, with ExecStart pointing at the installed
# binary (this machine has none in /usr/sbin).
command -v systemd-analyze > /dev/null || fail "systemd-analyze is missing (make deps installs systemd)"
mkdir "$work/unit"
sed "s|/usr/sbin/cxltierd|$dest/usr/sbin/cxltierd|g" "$dest/lib/systemd/system/cxltierd.service" \
	> "$work/unit/cxltierd.service"
out=$(systemd-analyze verify --man=no "$work/unit/cxltierd.service" 2>&1) ||
	fail "systemd-analyze verify: $out"
[ -z "$out" ] || fail "systemd-analyze verify warns: $out"
ok
echo "unit: systemd-analyze verify passes"
grep -q '^Type=notify$' "$dest/lib/systemd/system/cxltierd.service" &&
	grep -q '^ExecStart=/usr/sbin/cxltierd --config /etc/cxltier/cxltier.conf$' \
		"$dest/lib/systemd/system/cxltierd.service" || fail "unit lacks Type=notify or the ExecStart"
ok

echo "install: $checks checks passed"
