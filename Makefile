# SPDX-License-Identifier: MIT
# Makefile -- eatmydata: the preload library (64-bit and, where a 32-bit
# compiler works, 32-bit), the launcher, tests, demo and benchmark.

VERSION = 0.1.0
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
CC ?= cc
CFLAGS ?= -O2 -g
PYTHON ?= python3

-include config.mak

B = build
WARN = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
ifeq ($(CI),true)
WARN += -Werror
endif
ALL_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) -MMD -MP
LIB_CFLAGS = $(ALL_CFLAGS) -fPIC -fvisibility=hidden
LIB_LDFLAGS = $(LDFLAGS) -shared -Wl,--no-undefined -Wl,-z,relro -Wl,-z,now

LIB_SRC = $(wildcard lib/*.c)
CLI_SRC = $(filter-out src/eatmydata.c,$(wildcard src/*.c))

# What ld.so calls each ELF class's platform: the library's directory name.
platform_of = $(shell mkdir -p $(B) && $(CC) $(1) -o $(B)/platform$(2) \
	build-aux/platform.c 2>/dev/null && $(B)/platform$(2))
PLATFORM64 := $(call platform_of,,64)
PLATFORM32 := $(call platform_of,-m32,32)

LIB64 = $(B)/lib/eatmydata/$(PLATFORM64)/libeatmydata.so
LIB32 = $(if $(PLATFORM32),$(B)/lib/eatmydata/$(PLATFORM32)/libeatmydata.so)
LIBS = $(LIB64) $(LIB32)
BIN = $(B)/bin/eatmydata
FLOOR = $(B)/bench/libfloor.so

TEST_C = $(wildcard tests/c/*.c)
TEST_BINS = $(TEST_C:tests/c/%.c=$(B)/tests/%) \
	$(B)/tests/probe-fortify $(B)/tests/entry-fortify \
	$(if $(PLATFORM32),$(B)/tests/probe32 $(B)/tests/entry32) \
	$(B)/tests/libctor.so

all: $(BIN) $(LIBS)

$(B)/obj64/%.o: lib/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(LIB_CFLAGS) -c $< -o $@

$(B)/obj32/%.o: lib/%.c
	@mkdir -p $(@D)
	$(CC) -m32 $(CPPFLAGS) $(LIB_CFLAGS) -c $< -o $@

$(LIB64): $(LIB_SRC:lib/%.c=$(B)/obj64/%.o)
	@mkdir -p $(@D)
	$(CC) $(LIB_LDFLAGS) -o $@ $^ -ldl -lpthread

$(B)/lib/eatmydata/$(PLATFORM32)/libeatmydata.so: $(LIB_SRC:lib/%.c=$(B)/obj32/%.o)
	@mkdir -p $(@D)
	$(CC) -m32 $(LIB_LDFLAGS) -o $@ $^ -ldl -lpthread

$(B)/cli/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -DEMD_VERSION='"$(VERSION)"' \
		-DEMD_LIBDIR='"$(LIBDIR)/eatmydata"' -c $< -o $@

$(BIN): $(B)/cli/eatmydata.o $(CLI_SRC:src/%.c=$(B)/cli/%.o)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^

# Test programs: plain, fortified (open becomes __open_2) and 32-bit.
$(B)/tests/%: tests/c/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< -lpthread

$(B)/tests/%-fortify: tests/c/%.c
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -O2 -D_FORTIFY_SOURCE=2 -o $@ $< -lpthread

$(B)/tests/%32: tests/c/%.c
	$(CC) -m32 $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< -lpthread

$(B)/tests/unit: tests/c/unit.c lib/glob.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $^

$(B)/tests/lib%.so: tests/lib/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -fPIC -shared -o $@ $< -lpthread

$(FLOOR): bench/floor.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(LIB_CFLAGS) $(LIB_LDFLAGS) -o $@ $< -ldl

tests: all $(TEST_BINS) $(FLOOR)

check: tests
	$(B)/tests/unit
	$(PYTHON) -m pytest -q tests/py

demo: all
	$(PYTHON) bench/demo.py

$(B)/bench/openclose: bench/openclose.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $<

bench: all $(FLOOR) $(B)/bench/openclose
	$(PYTHON) bench/bench.py

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(LIBDIR)/eatmydata/$(PLATFORM64)
	install -m 755 $(BIN) $(DESTDIR)$(BINDIR)/eatmydata
	install -m 755 $(LIB64) $(DESTDIR)$(LIBDIR)/eatmydata/$(PLATFORM64)/
	$(if $(LIB32),install -d $(DESTDIR)$(LIBDIR)/eatmydata/$(PLATFORM32) && \
		install -m 755 $(LIB32) $(DESTDIR)$(LIBDIR)/eatmydata/$(PLATFORM32)/)
	install -m 644 doc/eatmydata.1 $(DESTDIR)$(MANDIR)/man1/eatmydata.1
	install -m 644 doc/eatmydata.bash $(DESTDIR)$(BASHCOMPDIR)/eatmydata

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/eatmydata $(DESTDIR)$(MANDIR)/man1/eatmydata.1 \
		$(DESTDIR)$(BASHCOMPDIR)/eatmydata
	rm -rf $(DESTDIR)$(LIBDIR)/eatmydata

clean:
	rm -rf $(B)

.PHONY: all tests check demo bench install uninstall clean
-include $(wildcard $(B)/*/*.d $(B)/*/*/*.d)
