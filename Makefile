# cxltier — `make` builds everything into build/, `make test` runs all tests,
# `make deps` installs what a fresh Debian machine needs.  V=1 shows commands.
BUILD     ?= build
CC        ?= cc
CLANG     ?= clang
# Debian installs it in /usr/sbin, which is not in a normal user's PATH.
BPFTOOL   ?= $(or $(shell command -v bpftool 2>/dev/null),/usr/sbin/bpftool)
ARCH      := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')

CFLAGS    ?= -O2 -g
WARNINGS  := -Wall -Wextra -Werror -Wimplicit-fallthrough
# user/ in data-path order: sources -> tracking -> decision -> moving, the agent
# around them, replay beside it; the programs' main files and what all share at the top.
USER_DIRS := sources tracking decision moving agent
ALL_CFLAGS := -std=gnu11 $(CFLAGS) $(WARNINGS) -D_GNU_SOURCE \
	-Iinclude -Ibpf -Iuser $(patsubst %,-Iuser/%,$(USER_DIRS)) -I$(BUILD)
# Each object depends on the headers it includes: -MMD writes them to a .d beside it.
DEPFLAGS  := -MMD -MP
LDLIBS    := -lbpf -lelf -lz -lnuma -ljson-c -linih -lmicrohttpd -ldl -lm -lpthread
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	-I$(BUILD) -Ibpf

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.SECONDARY:

BPF_PROGS := sampler kmigrate damon marks
POLICIES  := $(patsubst tiering-policies/%.c,%,$(wildcard tiering-policies/*.c))
# Everything in user/ except the programs' main files is the agent library.
MAINS     := cxltierd cxltierctl cxltier-replay
LIB_SRCS  := $(filter-out $(patsubst %,user/%.c,$(MAINS)),$(wildcard user/*.c)) \
	$(foreach d,$(USER_DIRS),$(wildcard user/$(d)/*.c))
LIB_OBJS  := $(patsubst user/%.c,$(BUILD)/obj/%.o,$(LIB_SRCS))
# cxltier-replay's own parts (model, run, synthesis, output).
REPLAY_OBJS := $(patsubst user/%.c,$(BUILD)/obj/%.o,$(wildcard user/replay/*.c))
SKELS     := $(patsubst %,$(BUILD)/%.skel.h,$(BPF_PROGS))
UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))
LIVE_TESTS := $(patsubst tests/live/%.c,$(BUILD)/tests/%,$(wildcard tests/live/test_*.c))
TEST_POLICIES := $(patsubst tests/policies/%.c,$(BUILD)/tests/policies/%.so,$(wildcard tests/policies/*.c))

BINS := $(patsubst %,$(BUILD)/%,$(MAINS)) $(BUILD)/tierbench $(BUILD)/cxltier-capture \
	$(patsubst %,$(BUILD)/policies/%.so,$(POLICIES))

all: $(BINS)

$(BUILD) $(BUILD)/obj $(BUILD)/policies $(BUILD)/tests $(BUILD)/tests/policies:
	$(Q)mkdir -p $@

$(BUILD)/vmlinux.h: | $(BUILD)
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(BUILD)/%.bpf.o: bpf/%.bpf.c $(BUILD)/vmlinux.h | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

# The skeletons are generated before the first compile; after it, the .d files say what to rebuild.
$(BUILD)/obj/%.o: user/%.c | $(BUILD)/obj $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/libcxlt.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/cxltier-replay: $(REPLAY_OBJS)
$(patsubst %,$(BUILD)/%,$(MAINS)): $(BUILD)/%: $(BUILD)/obj/%.o $(BUILD)/libcxlt.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -rdynamic -o $@ $(filter %.o,$^) $(filter %.a,$^) $(LDLIBS)

# tierbench borrows one helper of the agent: page frame -> node.
$(BUILD)/tierbench: tools/tierbench.c $(BUILD)/obj/tracking/pfn_nodes.o $(BUILD)/obj/util.o | $(BUILD)
	$(call msg,CC,$@)
	$(Q)$(CC) -std=gnu11 $(CFLAGS) $(WARNINGS) -Iinclude -Iuser -Iuser/tracking -pthread -o $@ $^ -lnuma -lm

# A real program's loads and stores as a trace: cxltier-capture runs it under
# valgrind with cxltier's tool (tools/capture-valgrind.c), which links with
# valgrind's own core as Debian's valgrind package ships it, at valgrind's
# load address, without libc.  VALGRIND_LIB must name one directory holding
# the tool and valgrind's files: $(BUILD)/valgrind, links to the latter.
VG_ARCH     := $(patsubst x86_64,amd64,$(patsubst aarch64,arm64,$(shell uname -m)))
VG_PLATFORM := $(VG_ARCH)-linux
VG_CORE     := $(firstword $(wildcard /usr/lib/*/valgrind/libcoregrind-$(VG_PLATFORM).a))
VG_EXECDIR  := $(firstword $(patsubst %/lackey-$(VG_PLATFORM),%,$(wildcard \
	/usr/libexec/valgrind/lackey-$(VG_PLATFORM) /usr/lib/*/valgrind/lackey-$(VG_PLATFORM))))
VG_TOOL     := $(if $(and $(VG_CORE),$(VG_EXECDIR)),$(BUILD)/valgrind/cxltier-$(VG_PLATFORM))
VG_CFLAGS   := -O2 -g -fno-pie -fno-stack-protector -fno-builtin -fno-strict-aliasing \
	-Wall -Wextra -Wno-unused-parameter -I/usr/include/valgrind -Itools \
	-DVGA_$(VG_ARCH)=1 -DVGO_linux=1 -DVGP_$(VG_ARCH)_linux=1 -DVGPV_$(VG_ARCH)_linux_vanilla=1

$(BUILD)/cxltier-capture: tools/capture.c tools/capture-wire.h $(BUILD)/libcxlt.a $(VG_TOOL) | $(BUILD)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Itools -DVG_PLATFORM='"$(VG_PLATFORM)"' -o $@ $< $(BUILD)/libcxlt.a $(LDLIBS)

$(BUILD)/valgrind/cxltier-$(VG_PLATFORM): tools/capture-valgrind.c tools/capture-wire.h $(VG_CORE) | $(BUILD)/obj
	$(call msg,VGTOOL,$@)
	$(Q)mkdir -p $(BUILD)/valgrind && ln -sf $(VG_EXECDIR)/* $(BUILD)/valgrind/
	$(Q)gcc $(VG_CFLAGS) -c -o $(BUILD)/obj/capture-valgrind.o $<
	$(Q)gcc -static -nodefaultlibs -nostartfiles -u _start -Wl,--build-id=none \
		-Wl,-Ttext-segment=0x58000000 -o $@ $(BUILD)/obj/capture-valgrind.o \
		$(VG_CORE) $(dir $(VG_CORE))libvex-$(VG_PLATFORM).a -lgcc \
		$(dir $(VG_CORE))libgcc-sup-$(VG_PLATFORM).a

$(BUILD)/policies/%.so: tiering-policies/%.c include/cxltier/policy.h include/cxltier/policy-helpers.h | $(BUILD)/policies
	$(call msg,POLICY,$@)
	$(Q)$(CC) -std=gnu11 $(CFLAGS) $(WARNINGS) -Iinclude -shared -fPIC -o $@ $< -lm

$(BUILD)/tests/policies/%.so: tests/policies/%.c include/cxltier/policy.h | $(BUILD)/tests/policies
	$(call msg,POLICY,$@)
	$(Q)$(CC) -std=gnu11 $(CFLAGS) $(WARNINGS) -Iinclude -shared -fPIC -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libcxlt.a | $(BUILD)/tests $(SKELS)
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -o $@ $< $(BUILD)/libcxlt.a $(LDLIBS) -lcmocka

$(BUILD)/tests/%: tests/live/%.c $(BUILD)/libcxlt.a | $(BUILD)/tests $(SKELS)
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -o $@ $< $(BUILD)/libcxlt.a $(LDLIBS) -lcmocka

$(BUILD)/bench_controller: tests/bench/bench_controller.c $(BUILD)/libcxlt.a $(BUILD)/policies/hotcold.so
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ tests/bench/bench_controller.c $(BUILD)/libcxlt.a $(LDLIBS)

tests: $(UNIT_TESTS) $(LIVE_TESTS) $(TEST_POLICIES) $(BUILD)/pageset

-include $(wildcard $(BUILD)/*.d $(BUILD)/obj/*.d $(BUILD)/obj/*/*.d $(BUILD)/tests/*.d)

# Unit tests run anywhere; live tests load BPF into this kernel (root).  Then
# the unit and live tests again, built by clang with AddressSanitizer and
# UndefinedBehaviorSanitizer (the emulated machine runs the plain build).
SAN_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined
test: all tests
	$(Q)BUILD=$(BUILD) tests/run
	$(Q)$(MAKE) --no-print-directory sanitize

# The contributor's loop: the cmocka unit tests alone, no root, seconds.
check: all tests
	$(Q)BUILD=$(BUILD) CXLT_TEST_SETS=unit tests/run

sanitize:
	$(Q)$(MAKE) --no-print-directory BUILD=$(BUILD)/san CC=clang CFLAGS="$(SAN_FLAGS)" all tests
	$(Q)echo "== the same unit and live tests, ASan + UBSan build =="
	$(Q)BUILD=$(BUILD)/san TIERBENCH=$(BUILD)/tierbench CXLT_TEST_SETS="unit cli live" \
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 tests/run

# Real programs' full access streams, captured and replayed (tools/traces.sh).
traces: all
	$(Q)BUILD=$(BUILD) tools/traces.sh

# What every emulated-machine run copies into the guest (tests/vm/common.bash).
VM_INPUTS := all $(TEST_POLICIES)

# The main job on a machine without CXL: the emulated CXL machine, live.
demo: $(VM_INPUTS)
	$(Q)bash -c '. tests/vm/common.bash && vm_scenario tools/vm/scenarios/demo.sh'

$(BUILD)/bench_sandbox: tests/bench/bench_sandbox.c $(BUILD)/libcxlt.a $(BUILD)/policies/hotset.so
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ tests/bench/bench_sandbox.c $(BUILD)/libcxlt.a $(LDLIBS)

$(BUILD)/bench_mover: tests/bench/bench_mover.c $(BUILD)/libcxlt.a
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

# libFuzzer targets (clang): a short run of each is part of make test; this is the long one.
FUZZ_SECONDS ?= 600
fuzz: all
	$(Q)BUILD=$(BUILD) tests/fuzz/build.sh
	$(Q)BUILD=$(BUILD) tests/fuzz/run.sh $(FUZZ_SECONDS)

bench: all $(VM_INPUTS) $(BUILD)/bench_controller $(BUILD)/bench_mover $(BUILD)/bench_sandbox
	$(Q)echo "== controller cost (this machine) =="
	$(Q)$(BUILD)/bench_controller
	$(Q)echo "== the tracker at scale, live (this machine) =="
	$(Q)BUILD=$(BUILD) tests/bench/scale.sh
	$(Q)echo "== the policy's own process, per decision (this machine) =="
	$(Q)$(BUILD)/bench_sandbox $(BUILD)/policies
	$(Q)echo "== sampling overhead (this machine) =="
	$(Q)BUILD=$(BUILD) tests/bench/overhead.sh
	$(Q)echo "== policies in replay, against the oracle =="
	$(Q)BUILD=$(BUILD) tests/bench/replay.sh
	$(Q)echo "== real programs, captured whole (make traces) =="
	$(Q)BUILD=$(BUILD) tools/traces.sh --summary
	$(Q)echo "== sampling overhead (emulated CXL machine) =="
	$(Q)bash -c '. tests/vm/common.bash && vm_scenario tools/vm/scenarios/overhead.sh'
	$(Q)bash -c '. tests/vm/common.bash && vm_scenario tools/vm/scenarios/overhead.sh --kernel 6.12'
	$(Q)echo "== mover throughput (emulated CXL machine) =="
	$(Q)bash -c '. tests/vm/common.bash && vm_scenario tools/vm/scenarios/bench.sh --add $(BUILD)/bench_mover'

# cxltier beside the kernel's own tiering (NUMA balancing, DAMOS) on the
# emulated machine: tools/vm/compare/compare; README "Compared with the kernel".
$(BUILD)/pageset: tools/vm/compare/pageset.c
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -Wall -Wextra -o $@ $< -lnuma

compare: $(VM_INPUTS) $(BUILD)/pageset
	$(Q)BUILD=$(BUILD) tools/vm/compare/compare $(COMPARE_ARGS)

# Debian packages for building, testing and the emulated CXL machine.
DEB_PACKAGES := make clang llvm gcc libc6-dev pkg-config libbpf-dev bpftool \
	libelf-dev zlib1g-dev libnuma-dev numactl libcmocka-dev libjson-c-dev libinih-dev libmicrohttpd-dev \
	qemu-system-x86 busybox-static ndctl daxctl cpio xz-utils gzip \
	procps util-linux jq bc gnuplot-nox groff-base man-db systemd valgrind libclang-rt-14-dev \
	dpkg-dev debhelper python3 python3-numpy curl passwd sqlite3 \
	redis-server redis-tools

deps:
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(DEB_PACKAGES)

clean:
	rm -rf $(BUILD)

.PHONY: all tests test check sanitize fuzz bench traces demo compare deps clean

# ---- install and Debian package ------------------------------------------
# make install [DESTDIR=/staging] [PREFIX=/usr]: the FHS layout.  Policies go
# 0644 into $(LIBDIR)/cxltier/policies, where an installed cxltierd looks bare
# policy names up (/usr/lib/cxltier/policies is built into the agent: with
# another PREFIX pass --policy-dir or set [policy] dir).  Run as root, every
# file is root-owned, as the agent wants of policies and of its config.  An
# existing $(SYSCONFDIR)/cxltier/cxltier.conf is kept; the sample goes beside it
# as cxltier.conf.dist.  Man pages are installed uncompressed (dh_compress
# gzips them in the .deb).
PREFIX     ?= /usr
SBINDIR    ?= $(PREFIX)/sbin
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc
UNITDIR    ?= /lib/systemd/system
INSTALL    ?= install

install: all
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)$(INSTALL) -D -m 0755 $(BUILD)/cxltierd $(DESTDIR)$(SBINDIR)/cxltierd
	$(Q)for b in cxltierctl cxltier-replay tierbench; do \
		$(INSTALL) -D -m 0755 $(BUILD)/$$b $(DESTDIR)$(BINDIR)/$$b || exit 1; done
	$(Q)$(INSTALL) -d -m 0755 $(DESTDIR)$(LIBDIR)/cxltier/policies
	$(Q)$(INSTALL) -m 0644 $(patsubst %,$(BUILD)/policies/%.so,$(POLICIES)) \
		$(DESTDIR)$(LIBDIR)/cxltier/policies/
	$(Q)$(INSTALL) -D -m 0644 include/cxltier/policy.h $(DESTDIR)$(INCLUDEDIR)/cxltier/policy.h
	$(Q)$(INSTALL) -D -m 0644 include/cxltier/policy-helpers.h $(DESTDIR)$(INCLUDEDIR)/cxltier/policy-helpers.h
	$(Q)$(INSTALL) -D -m 0644 packaging/cxltierd.service $(DESTDIR)$(UNITDIR)/cxltierd.service
	$(Q)$(INSTALL) -d -m 0755 $(DESTDIR)$(SYSCONFDIR)/cxltier
	$(Q)if [ -e $(DESTDIR)$(SYSCONFDIR)/cxltier/cxltier.conf ]; then \
		$(INSTALL) -m 0644 packaging/cxltier.conf $(DESTDIR)$(SYSCONFDIR)/cxltier/cxltier.conf.dist && \
		echo "  kept $(DESTDIR)$(SYSCONFDIR)/cxltier/cxltier.conf; the new sample is cxltier.conf.dist"; \
	else \
		$(INSTALL) -m 0644 packaging/cxltier.conf $(DESTDIR)$(SYSCONFDIR)/cxltier/cxltier.conf; \
	fi
	$(Q)$(INSTALL) -D -m 0644 man/cxltierd.8 $(DESTDIR)$(MANDIR)/man8/cxltierd.8
	$(Q)$(INSTALL) -D -m 0644 man/cxltierctl.8 $(DESTDIR)$(MANDIR)/man8/cxltierctl.8
	$(Q)$(INSTALL) -D -m 0644 man/cxltier-replay.1 $(DESTDIR)$(MANDIR)/man1/cxltier-replay.1
	$(Q)$(INSTALL) -D -m 0644 man/tierbench.1 $(DESTDIR)$(MANDIR)/man1/tierbench.1
	$(Q)$(INSTALL) -D -m 0644 man/cxltier-policy.7 $(DESTDIR)$(MANDIR)/man7/cxltier-policy.7

# make deb: build/cxltier_VERSION_ARCH.deb with dpkg-buildpackage (debhelper;
# `apt-get install debhelper dpkg-dev` besides the build packages).  The
# package builds in debian/build (removed again afterwards), so this tree's
# build/ is left as it is.
deb:
	$(Q)command -v dpkg-buildpackage > /dev/null && command -v dh > /dev/null || \
		{ echo "make deb needs dpkg-dev and debhelper: apt-get install dpkg-dev debhelper" >&2; exit 1; }
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u BUILD dpkg-buildpackage -us -uc -b --post-clean
	$(Q)mkdir -p $(BUILD)
	$(Q)v=$$(dpkg-parsechangelog -S Version) && a=$$(dpkg --print-architecture) && \
		for f in ../cxltier_$${v}_$$a.deb ../cxltier-dbgsym_$${v}_$$a.deb \
			../cxltier_$${v}_$$a.buildinfo ../cxltier_$${v}_$$a.changes; do \
			[ ! -e $$f ] || mv -f $$f $(BUILD)/; done && \
		echo "  DEB      $(BUILD)/cxltier_$${v}_$$a.deb"

.PHONY: install deb
