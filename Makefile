# laplace — build, test and install.
#
#   make                 build build/laplace
#   make demo            build and merge the demo capture in fixtures/demo
#   make check           unit and end-to-end tests, then again under ASan+UBSan
#   make install         PREFIX=/usr/local DESTDIR= (program and man pages)
#   make fuzz            build the libFuzzer targets (clang) and run each briefly
#   make bench           see bench/run

PREFIX ?= /usr/local
DESTDIR ?=
BUILD ?= build
CC ?= cc
PKG_CONFIG ?= pkg-config
PKGS = glib-2.0 gio-2.0 yaml-0.1 zlib libzstd

PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS))
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(PKGS))
CRITERION_CFLAGS := $(shell $(PKG_CONFIG) --cflags criterion 2>/dev/null)
CRITERION_LIBS := $(shell $(PKG_CONFIG) --libs criterion 2>/dev/null)

OPTFLAGS ?= -O2 -g
WARNFLAGS = -Wall -Wextra -Werror
VERSION = 0.1.0
CFLAGS_ALL = -std=c11 -D_GNU_SOURCE -DLP_VERSION=\"$(VERSION)\" $(OPTFLAGS) $(WARNFLAGS) $(SANFLAGS) -Iinclude $(PKG_CFLAGS) $(CFLAGS)
LDFLAGS_ALL = $(SANFLAGS) $(LDFLAGS)

# The library: everything but the command-line front end.
LIB_SRCS := $(sort $(wildcard src/core/*.c src/io/*.c src/formats/*.c src/pipeline/*.c src/jobs/*.c src/gen/*.c))
CMD_SRCS := $(sort $(wildcard src/cmd/*.c))
TEST_SRCS := $(sort $(wildcard tests/unit/*.c))
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/*.c))
HEADERS := $(wildcard include/laplace/*.h src/*/*.h)

LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CMD_OBJS := $(CMD_SRCS:%.c=$(BUILD)/%.o)
TEST_OBJS := $(TEST_SRCS:%.c=$(BUILD)/%.o)

MAN1 := $(wildcard man/*.1)
MAN5 := $(wildcard man/*.5)

.PHONY: all demo check check-plain check-asan unit e2e install uninstall clean fuzz bench

all: $(BUILD)/laplace

# The README's first command: merge the bundled demo capture.
demo: $(BUILD)/laplace
	$(BUILD)/laplace merge -o $(BUILD)/demo.merge fixtures/demo/demo.ref fixtures/demo/demo.kern
	@echo "first lines of $(BUILD)/demo.merge:"
	@head -n 10 $(BUILD)/demo.merge

$(BUILD)/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c -o $@ $<

$(BUILD)/tests/unit/%.o: tests/unit/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(CRITERION_CFLAGS) -c -o $@ $<

$(BUILD)/liblaplace.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/laplace: $(CMD_OBJS) $(BUILD)/liblaplace.a
	$(CC) $(LDFLAGS_ALL) -o $@ $(CMD_OBJS) $(BUILD)/liblaplace.a $(PKG_LIBS)

$(BUILD)/unit-tests: $(TEST_OBJS) $(BUILD)/liblaplace.a
	$(CC) $(LDFLAGS_ALL) -o $@ $(TEST_OBJS) $(BUILD)/liblaplace.a $(PKG_LIBS) $(CRITERION_LIBS)

unit: $(BUILD)/unit-tests
	$(BUILD)/unit-tests

e2e: $(BUILD)/laplace
	tests/run-cases $(BUILD)/laplace

check-plain: unit e2e

ASAN = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
check-asan:
	$(MAKE) BUILD=build/asan SANFLAGS="$(ASAN)" OPTFLAGS="-O1 -g" check-plain

check:
	$(MAKE) check-plain
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $(MAKE) check-asan

# libFuzzer targets (tests/fuzz/fuzz_*.c), built with clang against the
# library instrumented for coverage; each runs FUZZ_SECONDS on its corpus,
# seeded from tests/fuzz/corpus/TARGET.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_DIR = $(BUILD)/fuzz
FUZZ_CFLAGS = -std=c11 -D_GNU_SOURCE -DLP_VERSION=\"$(VERSION)\" -g -O1 -Iinclude $(PKG_CFLAGS) \
	-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -DINBUF_INITIAL_SIZE=32768 -DINPUT_BUFFER_SIZE=32768
FUZZ_LIB_OBJS := $(LIB_SRCS:%.c=$(FUZZ_DIR)/%.o)
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(FUZZ_DIR)/%)

$(FUZZ_DIR)/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_input.h $(FUZZ_LIB_OBJS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB_OBJS) $(PKG_LIBS)

.SECONDARY: $(FUZZ_LIB_OBJS)

fuzz: $(FUZZ_BINS)
	@for bin in $(FUZZ_BINS); do \
		mkdir -p $$bin-corpus; \
		echo "$$bin: $(FUZZ_SECONDS) s, log in $$bin.log"; \
		$$bin -max_total_time=$(FUZZ_SECONDS) -max_len=20000 -len_control=0 \
			-print_final_stats=1 $$bin-corpus tests/fuzz/corpus/$$(basename $$bin) \
			> $$bin.log 2>&1 || { tail -40 $$bin.log; exit 1; }; \
		grep -E '^stat::(number_of_executed_units|peak_rss_mb)' $$bin.log; \
	done

install: $(BUILD)/laplace
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man5
	install -m 755 $(BUILD)/laplace $(DESTDIR)$(PREFIX)/bin/laplace
	for f in $(MAN1); do install -m 644 $$f $(DESTDIR)$(PREFIX)/share/man/man1/ || exit; done
	for f in $(MAN5); do install -m 644 $$f $(DESTDIR)$(PREFIX)/share/man/man5/ || exit; done

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/laplace
	rm -f $(MAN1:man/%=$(DESTDIR)$(PREFIX)/share/man/man1/%) $(MAN5:man/%=$(DESTDIR)$(PREFIX)/share/man/man5/%)

clean:
	rm -rf build
