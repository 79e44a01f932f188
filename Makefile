# SPDX-License-Identifier: MIT
# Makefile -- eatmydata, nocache and hirestimes: the preload libraries
# (64-bit and, where a 32-bit compiler works, 32-bit), the launchers, tests,
# demo and benchmark.

VERSION = 0.1.0
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
DATADIR ?= $(PREFIX)/share/eatmydata
CC ?= cc
CFLAGS ?= -O2 -g
PYTHON ?= python3

-include config.mak

.DEFAULT_GOAL := all

# make check SANITIZE=1: the launchers, the report and the test programs
# with ASan and UBSan, in a build directory of their own that the tests are
# told of (EATMYDATA_BUILD).  The preload libraries run inside programs that
# were not built for ASan, whose runtime must be the first library loaded, and
# libubsan's runtime would print from inside the host program: they get
# UBSan's checks that trap (SIGILL) without a runtime instead.  Static test
# programs cannot link ASan and stay as they are.
# The C library the compiler links, told by the loader its programs name:
# glibc's ld.so expands $LIB in LD_PRELOAD, musl's takes each path as it is
# written.  ld_of(compiler, flags): "musl" and its loader's path, or what
# glibc's ld.so
# substitutes for $LIB in that ELF class ("lib/x86_64-linux-gnu",
# "lib32"...), asked of ld.so itself: the last directory it searches in
# LD_LIBRARY_PATH=/@/$LIB.
ld_of = $(shell d=$$(mktemp -d) && $(1) $(2) -o "$$d/platform" build-aux/platform.c 2>/dev/null && \
	if LC_ALL=C grep -q /ld-musl- "$$d/platform"; then echo musl \
		"$$(LC_ALL=C grep -ao '/[[:graph:]]*/ld-musl-[[:graph:]]*' "$$d/platform" | head -n 1)"; \
	else LD_DEBUG=libs LD_LIBRARY_PATH='/@/$$LIB' "$$d/platform" 2>&1 | \
	sed -n 's|.*[=:]/@/\([^:]*[^:[:space:]]\)[[:space:]]*(LD_LIBRARY_PATH).*|\1|p' | head -n 1; fi; \
	rm -rf "$$d")
LD64 := $(call ld_of,$(CC),)
LIBC = $(if $(filter musl,$(firstword $(LD64))),musl,glibc)

ifeq ($(SANITIZE),1)
B = build-san
SAN = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LIB_SAN = -fsanitize=undefined -fsanitize-undefined-trap-on-error
# A preloaded library comes before libasan in the test programs; the
# launchers and the report are one-shot processes that leave freeing to exit,
# and LeakSanitizer's ptrace is refused under the seccomp supervisor.
export ASAN_OPTIONS ?= verify_asan_link_order=0:detect_leaks=0
export UBSAN_OPTIONS ?= print_stacktrace=1
else ifeq ($(LIBC),musl)
B = build-musl
else
B = build
endif
export SANITIZE
export EATMYDATA_BUILD = $(abspath $(B))
WARN = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
ifeq ($(CI),true)
WARN += -Werror
endif
ALL_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) $(LIBC_CFLAGS) -MMD -MP
LIB_CFLAGS = $(ALL_CFLAGS) $(LIB_SAN) -fPIC -fvisibility=hidden
CLI_CFLAGS = $(ALL_CFLAGS) $(SAN)
LIB_LDFLAGS = $(LDFLAGS) -shared -Wl,--no-undefined -Wl,-z,relro -Wl,-z,now

TOOLS = eatmydata nocache hirestimes crashtest
LAUNCHERS = $(TOOLS) syncstat cachestats cachedel

# The libraries live in PREFIX/$LIB, and LD_PRELOAD names
# PREFIX/$LIB/lib<tool>.so, so each process loads its own: glibc's ld.so
# reads $LIB as its ELF class's directory ("lib/x86_64-linux-gnu",
# "lib32"...), musl's as a directory named "$LIB", where the musl build's
# libraries are.  One tree may hold both builds' (install-libs of each).
ifeq ($(LIBC),musl)
LIB64 := $$LIB
# musl-gcc builds for its own class only (no -m32).
LIB32 :=
# The libraries are built into $(B)/lib, and $(B)/$LIB is a link to it.
LIBDIR64 = $(B)/lib
LIBLINK = $(B)/lib/.dollar-lib
# Installed where musl's C library is (lib/x86_64-linux-musl on Debian, lib
# on Alpine), out of glibc's ld.so's search path, with PREFIX/$LIB a
# directory of links to them.
MULTI64 := $(or $(patsubst /%,%,$(patsubst /usr/%,/%,$(shell \
	d=$$(dirname "$$(readlink -f '$(word 2,$(LD64))')") && cd "$$d" 2>/dev/null && pwd -P))),lib)
MULTI32 :=
# The directory as a shell word (install, installed).
LIB64_SH = \$$LIB
# What glibc's ld.so reads for $LIB on this machine, if it has one: a glibc
# program is served only where the tree holds a glibc build's library
# there (shared/elf_kind.c).
HOSTCC ?= cc
GLIBC_LIB64 := $(filter-out musl%,$(call ld_of,$(HOSTCC),))
GLIBC_LIB32 := $(filter-out musl%,$(call ld_of,$(HOSTCC),-m32))
LIBC_CFLAGS = -DEMD_GLIBC_LIB64='"$(GLIBC_LIB64)"' -DEMD_GLIBC_LIB32='"$(GLIBC_LIB32)"'
# The *64 names glibc has of its own (open64, pwrite64, off64_t) are musl's
# macros for the plain ones with _LARGEFILE64_SOURCE (older musl's with
# _GNU_SOURCE too): the same code names them in either build.
LIBC_CFLAGS += -D_LARGEFILE64_SOURCE
# Debian's musl-gcc sees musl's headers alone: the kernel's (linux/, asm/,
# asm-generic/; Alpine's linux-headers) are linked from the system's into
# $(B)/kernel-headers when it cannot find them.
ifneq ($(shell printf '\043include <linux/seccomp.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 || echo no),)
KERNEL_HEADERS = $(B)/kernel-headers
ASM_DIR := $(firstword $(wildcard /usr/include/$(shell $(HOSTCC) -print-multiarch 2>/dev/null)/asm) \
	/usr/include/asm)
$(shell mkdir -p $(KERNEL_HEADERS) && ln -sfn /usr/include/linux $(KERNEL_HEADERS)/linux && \
	ln -sfn /usr/include/asm-generic $(KERNEL_HEADERS)/asm-generic && \
	ln -sfn $(ASM_DIR) $(KERNEL_HEADERS)/asm)
LIBC_CFLAGS += -isystem $(KERNEL_HEADERS)
endif
else
LIB64 := $(LD64)
LIB32 := $(call ld_of,$(CC),-m32)
ifeq ($(LIB64),)
$(error cannot tell what ld.so substitutes for $$LIB)
endif
LIBDIR64 = $(B)/$(LIB64)
LIBDIR32 = $(B)/$(LIB32)
LIB64_SH = $(LIB64)

# Each class's multiarch directory, where Debian's libeatmydata1 puts its
# library ("lib/x86_64-linux-gnu", "lib/i386-linux-gnu"); a compiler that
# knows no multiarch name installs to $LIB alone.
multiarch_of = $(if $(1),$(patsubst %,lib/%,$(shell $(CC) $(2) -print-multiarch 2>/dev/null)))
MULTI64 := $(or $(call multiarch_of,$(LIB64)),$(LIB64))
MULTI32 := $(if $(LIB32),$(or $(call multiarch_of,$(LIB32),-m32),$(LIB32)))
endif
SONAME = 1

# The libraries see preload/ and the protocols in include/; the tools see
# include/ and what the tools share (common/: messages, running the
# command, sync-on-exit).  What is built into both eatmydata's library and
# the launchers is in shared/.
LIB_INC = -Iinclude -Ipreload
CLI_INC = -I. -Iinclude

# One preload library per tool, from lib<tool>/*.c and the shared
# preload/*.c, in each ELF class; eatmydata's also from shared/*.c.
$(B)/obj64/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(LIB_CFLAGS) $(LIB_INC) -c $< -o $@

$(B)/obj32/%.o: %.c
	@mkdir -p $(@D)
	$(CC) -m32 $(CPPFLAGS) $(LIB_CFLAGS) $(LIB_INC) -c $< -o $@

# hirestimes wraps no exec: preload/exec_list.c is for the others.  nocache
# and crashtest put a static or Go program under the seccomp filter as
# libeatmydata does.
NOCACHE_SHARED = shared/elf_kind.c shared/exec_filter.c shared/filter.c shared/rendezvous.c
# What a file's page cache held: nocache's library and supervisor alone.
NOCACHE_ONLY = shared/residency.c
define preload_library
$(1)_SRC = $$(filter-out $$(if $$(filter hirestimes,$(1)),preload/exec_list.c),\
	$$(wildcard lib$(1)/*.c preload/*.c $$(if $$(filter eatmydata,$(1)),$$(filter-out $$(NOCACHE_ONLY),$$(wildcard shared/*.c))))) \
	$$(if $$(filter nocache,$(1)),$$(NOCACHE_SHARED) $$(NOCACHE_ONLY)) \
	$$(if $$(filter crashtest,$(1)),$$(NOCACHE_SHARED))
LIBS += $(LIBDIR64)/lib$(1).so $(if $(LIB32),$(LIBDIR32)/lib$(1).so)

$(LIBDIR64)/lib$(1).so: $$($(1)_SRC:%.c=$(B)/obj64/%.o)
	@mkdir -p $$(@D)
	$$(CC) $$(LIB_LDFLAGS) -Wl,-soname,lib$(1).so.$(SONAME) -o $$@ $$^ -ldl -lpthread

$(LIBDIR32)/lib$(1).so: $$($(1)_SRC:%.c=$(B)/obj32/%.o)
	@mkdir -p $$(@D)
	$$(CC) -m32 $$(LIB_LDFLAGS) -Wl,-soname,lib$(1).so.$(SONAME) -o $$@ $$^ -ldl -lpthread
endef
$(foreach t,$(TOOLS),$(eval $(call preload_library,$(t))))

# The tools: each launcher in launch/, with what they share; the seccomp
# supervisor (seccomp/) and the report (report/) are linked into those that
# use them.
BINS = $(LAUNCHERS:%=$(B)/bin/%)
LAUNCH_OBJS = $(B)/cli/common/common.o $(B)/cli/common/libc.o $(B)/cli/shared/elf_kind.o
REPORT_OBJS = $(patsubst %.c,$(B)/cli/%.o,$(wildcard report/*.c))
# crashtest's engine: the journal, the model, the states and the report.
CRASHTEST_OBJS = $(patsubst %.c,$(B)/cli/%.o,$(wildcard crashtest/*.c))
# What the supervisor and the launcher share with the library (shared/).
SECCOMP_OBJS = $(patsubst %.c,$(B)/cli/%.o,$(wildcard seccomp/*.c shared/*.c))
FLOOR = $(B)/bench/libfloor.so

TEST_C = $(wildcard tests/c/*.c)
TEST_BINS = $(TEST_C:tests/c/%.c=$(B)/tests/%) \
	$(B)/tests/probe-fortify $(B)/tests/entry-fortify \
	$(if $(LIB32),$(B)/tests/probe32 $(B)/tests/entry32 $(B)/tests/timesprobe32 \
		$(B)/tests/ioprobe32 $(B)/tests/execs32) \
	$(B)/tests/libctor.so $(B)/tests/entry-static $(B)/tests/probe-static \
	$(B)/tests/hostile-static $(B)/tests/aio-submit-static $(B)/tests/sigchld-static \
	$(B)/tests/fsyncs-static $(B)/tests/uring-fsyncs-static $(B)/tests/rw-static \
	$(B)/tests/rwedge-static $(B)/tests/servedread-static $(B)/tests/fsyncthen-static \
	$(B)/tests/threadsyncs-static $(B)/tests/crashhostile-static $(B)/tests/rwflags-static \
	$(B)/tests/ctprocs-static $(B)/tests/lines-static $(B)/tests/syncdup-static \
	$(B)/tests/uring-osync-static $(B)/tests/leftsyncs-static \
	$(B)/tests/transact-static $(B)/tests/ctcalls-static $(B)/tests/behalf-static \
	$(if $(LIB32),$(B)/tests/entry32-static $(B)/tests/probe32-static \
		$(B)/tests/bigopen32-static $(B)/tests/fsyncs32-static $(B)/tests/rw32-static \
		$(B)/tests/rwedge32-static $(B)/tests/rwflags32-static $(B)/tests/transact32 \
		$(B)/tests/syncdup32 $(B)/tests/syncdup32-static \
		$(B)/tests/transact32-static)

all: $(BINS) $(LIBS) $(LIBLINK)
libs: $(LIBS) $(LIBLINK)

# The musl build's $(B)/$LIB, which the launcher's LD_PRELOAD entry names.
$(B)/lib/.dollar-lib:
	@mkdir -p $(@D)
	ln -sfn lib '$(B)/$$LIB' && touch $@

$(B)/cli/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CLI_CFLAGS) $(CLI_INC) -c $< -o $@

# What the launchers embed: rebuilt when PREFIX or the version changes.  The
# stamp is rewritten as the Makefile is read, and only when its text changes,
# so that an unchanged tree is up to date (make -q) and relinks nothing.
EMBEDDED = -DEMD_VERSION='"$(VERSION)"' -DEMD_PREFIX='"$(PREFIX)"' -DEMD_LIB='"$(LIB64)"'
$(shell mkdir -p $(B) && echo '$(EMBEDDED)' | cmp -s - $(B)/embedded || echo '$(EMBEDDED)' > $(B)/embedded)
$(B)/cli/common/common.o: common/common.c $(B)/embedded
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CLI_CFLAGS) $(CLI_INC) $(EMBEDDED) -c $< -o $@

# The launchers need nothing beyond libc: JSON is the project's own
# (common/json.c, written; json_parse.c, read), and elfutils' libdw, which
# names call sites, is loaded by the report when it first needs it
# (report/symbols.c, with the part of its interface it uses declared in
# report/dwfl.h), so that a fresh machine builds with a C compiler alone.
JSON_OBJS = $(B)/cli/common/json.o $(B)/cli/common/json_parse.o
DW_LIBS ?= -ldl
LAUNCH_LIBS =
$(B)/bin/eatmydata: $(B)/cli/common/sync_on_exit.o $(REPORT_OBJS) $(JSON_OBJS) $(B)/cli/common/junit.o \
	$(SECCOMP_OBJS)
$(B)/bin/syncstat: $(B)/cli/common/sync_on_exit.o $(REPORT_OBJS) $(JSON_OBJS) $(B)/cli/common/junit.o \
	$(SECCOMP_OBJS)
$(B)/bin/nocache: $(B)/cli/common/sync_on_exit.o $(SECCOMP_OBJS)
$(B)/bin/eatmydata $(B)/bin/syncstat: LAUNCH_LIBS += $(DW_LIBS)
$(B)/bin/crashtest: $(CRASHTEST_OBJS) $(B)/cli/common/sync_on_exit.o $(JSON_OBJS) $(B)/cli/common/junit.o \
	$(SECCOMP_OBJS)
$(B)/bin/%: $(B)/cli/launch/%.o $(LAUNCH_OBJS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $(SAN) -o $@ $^ $(LAUNCH_LIBS)

# Test programs: plain, fortified (open becomes __open_2) and 32-bit.
$(B)/tests/%: tests/c/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CLI_CFLAGS) $(TEST_CFLAGS) -o $@ $< -lpthread -lrt $(TEST_LIBS)

$(B)/tests/uring-sync $(B)/tests/uring-rings $(B)/tests/uring-fsyncs: TEST_LIBS = -luring
$(B)/tests/uring-fsyncs-static $(B)/tests/uring-osync $(B)/tests/uring-osync-static: TEST_LIBS = -luring
# A FUSE file system of the tests' own, with libfuse (build-aux/deps).
$(B)/tests/fuselog: CPPFLAGS += $(shell pkg-config --cflags fuse3 2>/dev/null)
$(B)/tests/fuselog: TEST_LIBS = $(shell pkg-config --libs fuse3 2>/dev/null || echo -lfuse3)
$(B)/tests/requests $(B)/tests/ctcalls $(B)/tests/ctcalls-static: CPPFLAGS += -Iinclude
$(B)/tests/entry $(B)/tests/entry32 $(B)/tests/entry-fortify $(B)/tests/entry-static \
	$(B)/tests/entry32-static: CPPFLAGS += -Iinclude

$(B)/tests/%-fortify: tests/c/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CLI_CFLAGS) -O2 -D_FORTIFY_SOURCE=2 -o $@ $< -lpthread

$(B)/tests/%-static: tests/c/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(TEST_CFLAGS) -static -o $@ $< -lpthread $(TEST_LIBS)

$(B)/tests/%32-static: tests/c/%.c
	@mkdir -p $(@D)
	$(CC) -m32 $(CPPFLAGS) $(ALL_CFLAGS) -static -o $@ $< -lpthread

# 32-bit ASan will not start behind a preloaded library: trapping UBSan only.
$(B)/tests/%32: tests/c/%.c
	@mkdir -p $(@D)
	$(CC) -m32 $(CPPFLAGS) $(ALL_CFLAGS) $(LIB_SAN) -o $@ $< -lpthread

$(B)/tests/unit: tests/c/unit.c shared/glob.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CLI_CFLAGS) $(LIB_INC) -o $@ $(wildcard $(filter %.c,$^))

# The project's JSON, written and read back (common/json.h), under
# AddressSanitizer: the reader takes untrusted reports.
$(B)/tests/json: tests/c/json.c common/json.c common/json_parse.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all \
		$(CLI_INC) -o $@ $(filter %.c,$^)

# The supervisor's symbol reading, its allocations counted: site.c is
# #included by the test, which links what site.c calls of shared/.
$(B)/tests/symbols: tests/c/symbols.c seccomp/site.c seccomp/cfi.c seccomp/pclntab.c shared/maps.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CLI_CFLAGS) $(CLI_INC) -o $@ tests/c/symbols.c shared/maps.c -lpthread

# fdid.c with its statx stood in for: #included by the test.
$(B)/tests/fdid: tests/c/fdid.c libeatmydata/fdid.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all \
		$(LIB_INC) -o $@ tests/c/fdid.c

# The library's sources built into a test program under AddressSanitizer,
# which sees a write past the end of its tables (tests/c/marks.c).
$(B)/tests/marks: tests/c/marks.c $(eatmydata_SRC)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all \
		$(LIB_INC) -o $@ $(wildcard $^) -ldl -lpthread

# The sources that moved from libeatmydata/ to shared/, which the dependency
# files of a build made before still name: nothing to make (the recipes
# above take only the sources that exist).
$(patsubst shared/%,libeatmydata/%,$(wildcard shared/*.c)):

$(B)/tests/lib%.so: tests/lib/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -fPIC -shared -o $@ $< -lpthread

$(FLOOR): bench/floor.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(LIB_CFLAGS) $(LIB_LDFLAGS) -o $@ $< -ldl

$(B)/bench/openclose: bench/openclose.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $<

# The musl build's test programs: those tests/py/test_musl.py runs against
# it, with what they take of glibc's (tests/c/musl.h).
ifeq ($(LIBC),musl)
MUSL_TESTS = entry entry-static probe fsyncs fsyncs-static loaded cancel ioprobe timesprobe rw
TEST_BINS = $(MUSL_TESTS:%=$(B)/tests/%)
TEST_CFLAGS = -include tests/c/musl.h
FLOOR =
endif

# Where musl-gcc is installed, make tests also makes the musl build and its
# test programs (build-musl/), which test_musl.py runs beside this one.
MUSL_CC ?= $(if $(filter glibc,$(LIBC)),$(shell command -v musl-gcc 2>/dev/null))
musl-tests:
	$(MAKE) --no-print-directory CC=$(MUSL_CC) B=build-musl SANITIZE= tests

tests: all $(TEST_BINS) $(FLOOR) $(if $(MUSL_CC),musl-tests)

# What the tests need is installed (or named) before anything is built: a
# test program links liburing.  `make check DEPS=` skips the check;
# PYTESTS=tests/py/test_x.py runs some of the tests.
DEPS = build-aux/deps
PYTESTS = tests/py
deps:
	$(DEPS)

# make lint: no line of the C sources wider than .clang-format's ColumnLimit.
C_SOURCES = $(wildcard */*.c */*.h tests/*/*.c)
lint:
	@build-aux/columns $(shell sed -n 's/^ColumnLimit: *//p' .clang-format) $(C_SOURCES)

check: deps lint
	@$(MAKE) --no-print-directory tests
	$(B)/tests/unit
	$(B)/tests/json
	$(B)/tests/marks
	$(PYTHON) -m pytest -q --durations=15 $(PYTESTS)

# make check-quick: the tests that take a second or less and need neither
# a language toolchain nor root beyond perf's counters (tests/py/conftest.py
# names the markers); about 5 minutes on 2 cores.  Without root, the tests
# that count with perf skip, saying why.
QUICK = not slow and not root and not go and not java and not node and not rust and not \
	postgres and not browser
check-quick: lint
	@$(MAKE) --no-print-directory tests
	$(B)/tests/unit
	$(B)/tests/json
	$(B)/tests/marks
	$(PYTHON) -m pytest -q --durations=5 -m "$(QUICK)" $(PYTESTS)

# make check-build: what a package's check step can run without root or perf
# (alpine/APKBUILD's check()): the build's test programs under strace.
check-build: tests
	build-aux/check-build $(B)

demo: all
	$(PYTHON) bench/demo.py

$(B)/bench/syscalls: bench/syscalls.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -static -o $@ $<

$(B)/bench/fsyncs-static: tests/c/fsyncs.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -static -o $@ $<

$(B)/bench/fsyncs: tests/c/fsyncs.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $<

# The tests' programs too (the musl build's where musl-gcc is): the
# policies' and crashtest's rows run them.
bench: tests $(B)/bench/openclose $(B)/bench/syscalls $(B)/bench/fsyncs-static \
	$(B)/bench/fsyncs
	$(PYTHON) bench/bench.py

# The libraries as Debian lays out libeatmydata1: lib<tool>.so.1 (the
# soname) in each class's multiarch directory, with lib<tool>.so, the name
# LD_PRELOAD gives, a link to it; where ld.so's $LIB is another directory
# (lib32 beside Debian's biarch libc6-i386), lib<tool>.so there is a relative
# link to the same file.  So the launcher's PREFIX/$LIB/lib<tool>.so, a bare
# name in LD_PRELOAD or /etc/ld.so.preload, and LD_LIBRARY_PATH naming either
# directory find each class's own library, in a moved tree too.  Paths are
# quoted: DESTDIR may hold spaces.
# install_libs(build dir, multiarch dir, $LIB dir)
define install_libs
	install -d "$(DESTDIR)$(PREFIX)/$(2)" "$(DESTDIR)$(PREFIX)/$(3)"
	for t in $(TOOLS); do \
		install -m 644 $(1)/lib$$t.so "$(DESTDIR)$(PREFIX)/$(2)/lib$$t.so.$(SONAME)" && \
		ln -sfn lib$$t.so.$(SONAME) "$(DESTDIR)$(PREFIX)/$(2)/lib$$t.so" && \
		{ [ "$(2)" = "$(3)" ] || ln -sfnr "$(DESTDIR)$(PREFIX)/$(2)/lib$$t.so.$(SONAME)" \
			"$(DESTDIR)$(PREFIX)/$(3)/lib$$t.so"; } || exit; done
endef

# The JSON schemas of the reports, installed beside the manual.
SCHEMAS = syncstat.schema.json crashtest.schema.json

# What install adds, relative to DESTDIR, one a line (uninstall and the
# packages read it).
installed:
	@for t in $(LAUNCHERS); do echo "$(BINDIR)/$$t"; \
		echo "$(MANDIR)/man1/$$t.1"; echo "$(BASHCOMPDIR)/$$t"; done
	@for s in $(SCHEMAS); do echo "$(DATADIR)/$$s"; done
	@for t in $(TOOLS); do for d in $(MULTI64) $(MULTI32); do \
		echo "$(PREFIX)/$$d/lib$$t.so"; echo "$(PREFIX)/$$d/lib$$t.so.$(SONAME)"; done; \
		for d in $(filter-out $(MULTI64) $(MULTI32),$(LIB64_SH) $(LIB32)); do \
		echo "$(PREFIX)/$$d/lib$$t.so"; done; done

print-multiarch:
	@echo $(MULTI64) $(MULTI32)

# ld.so's cache is refreshed when installing to the live system as root: a
# PREFIX in /etc/ld.so.conf but not among ld.so's own directories
# (/usr/local) is found by bare name only through it.
LDCONFIG = if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then ldconfig || :; fi

# On the live system, files a package owns are neither replaced nor removed:
# make install PREFIX=/usr beside Debian's eatmydata would change its files
# behind dpkg, and make uninstall would then delete them.  The packages of
# make deb replace Debian's through dpkg.  dpkg is asked about every
# spelling of each path (PREFIX=/ on merged /usr: //bin is /usr/bin).
OWNED = if [ -z "$(DESTDIR)" ] && command -v dpkg-query >/dev/null; then \
	owned=$$($(MAKE) -s --no-print-directory installed | build-aux/spellings | \
		xargs -r dpkg-query -S 2>/dev/null | \
		sed -n 's|^\([^ ]*\): \(/.*\)|$@: \2 belongs to package \1|p'); \
	[ -z "$$owned" ] || { echo "$$owned" >&2; echo "$@: remove those packages first," \
		"install make deb's packages instead, or choose another PREFIX" >&2; exit 1; }; fi

# The libraries alone: the i386 libeatmydata1 (debian/rules).
install-libs: libs
	@$(OWNED)
	$(call install_libs,$(LIBDIR64),$(MULTI64),$(LIB64_SH))
	$(if $(LIB32),$(call install_libs,$(LIBDIR32),$(MULTI32),$(LIB32)))
	@$(LDCONFIG)

install: all
	@$(OWNED)
	install -d "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(MANDIR)/man1" "$(DESTDIR)$(BASHCOMPDIR)" \
		"$(DESTDIR)$(DATADIR)"
	install -m 755 $(BINS) "$(DESTDIR)$(BINDIR)/"
	$(call install_libs,$(LIBDIR64),$(MULTI64),$(LIB64_SH))
	$(if $(LIB32),$(call install_libs,$(LIBDIR32),$(MULTI32),$(LIB32)))
	install -m 644 $(LAUNCHERS:%=doc/%.1) "$(DESTDIR)$(MANDIR)/man1/"
	install -m 644 $(SCHEMAS:%=doc/%) "$(DESTDIR)$(DATADIR)/"
	for t in $(LAUNCHERS); do \
		install -m 644 doc/completion.bash "$(DESTDIR)$(BASHCOMPDIR)/$$t" || exit; done
	@$(LDCONFIG)

uninstall:
	@$(OWNED)
	@$(MAKE) -s --no-print-directory installed | while IFS= read -r f; do \
		rm -f "$(DESTDIR)$$f" || exit; done
	@$(LDCONFIG)

# make deb: the Debian packages (eatmydata, eatmydata-tools, libeatmydata1,
# nocache, and their -dbgsym) in $(B)/deb, by dpkg-buildpackage on a copy of
# the tree (its by-products stay out of the checkout); on amd64 with a
# working gcc -m32, the i386 libeatmydata1 too, by a second run for that
# architecture (debian/rules says how).
DEB_DIR = $(B)/deb
DEB_SRC = $(B)/deb-src/eatmydata
DEB_BUILD = dpkg-buildpackage -us -uc --no-sign
deb:
	rm -rf $(B)/deb-src $(DEB_DIR)
	mkdir -p $(DEB_SRC) $(DEB_DIR)
	tar -c --exclude=./build --exclude=./build-san --exclude=./build-musl --exclude=./.git \
		--exclude=./config.mak . | tar -x -C $(DEB_SRC)
	cd $(DEB_SRC) && $(DEB_BUILD) -b
	if [ -n "$(LIB32)" ] && [ "$$(dpkg --print-architecture)" = amd64 ]; then \
		cd $(DEB_SRC) && DEB_BUILD_OPTIONS=nocheck $(DEB_BUILD) -B -ai386 -d \
			-Pcross,nocheck,pkg.eatmydata.libonly; fi
	cp $(B)/deb-src/*.deb $(DEB_DIR)/
	ls $(DEB_DIR)

clean:
	rm -rf build build-san build-musl

.PHONY: all libs deps lint tests musl-tests check-build check check-quick demo bench install install-libs installed print-multiarch uninstall deb clean
.SECONDARY:
-include $(shell find $(B) -name deb-src -prune -o -name '*.d' -print 2>/dev/null)
