# laplace — build, test and install.
#
#   make                 build build/laplace and the library, build/liblaplace.so.1
#                        and build/liblaplace.a; and the recorder that laplace record
#                        runs, build/record/laplace-record-amd64-linux, when Valgrind's
#                        development files (Debian's valgrind package) are there
#   make demo            build and merge the demo capture in fixtures/demo
#   make check           with warnings as errors: the layer rule of README's
#                        Layout section (tests/check-layers), unit and end-to-end tests
#                        (those that merge also with their references widened,
#                        the per-process ones also in the binary task form),
#                        the recorder's (tests/record/run; skipped without Valgrind),
#                        the man pages' tables of formats,
#                        the library's exports and contents, its installed use
#                        from C, C++ and Python (the module also through pip),
#                        then again under ASan+UBSan (each pass builds on every
#                        processor, and the end-to-end cases run as many at once)
#   make install         PREFIX=/usr/local DESTDIR= (program, the recorder in
#                        libexec/laplace, library, header, laplace.pc, Python
#                        module, man pages, systemd units)
#   make fuzz            build the libFuzzer targets (clang) and run each briefly
#                        (make -j N -O: N at once)
#   make bench           run the benchmarks, bench/run (long; BENCH_ARGS=N for one
#                        capture of N references)
#   make check-slurm     batch --submit slurm on a one-node Slurm cluster of its
#                        own (root only: installs slurm-wlm and munge if missing)

PREFIX ?= /usr/local
DESTDIR ?=
BUILD ?= build
CC ?= cc
PKG_CONFIG ?= pkg-config
PKGS = glib-2.0 gio-2.0 yaml-0.1 zlib libzstd
# What the library needs (gio is the daemon's alone; yaml reads a
# per-process directory's index.yaml for lp_sweep_memory; zlib only the
# unit tests, to write gzip files the way gzip does: the library's gzip is
# ISA-L).
LIB_PKGS = glib-2.0 yaml-0.1 libzstd

PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS))
# ISA-L (igzip, the gzip codec) ships no pkg-config file; -lm: the report's
# figures and sim's miniature sizes (the library too).
ISAL_LIBS = -lisal
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(PKGS)) $(ISAL_LIBS) -lm
LIB_PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(LIB_PKGS)) $(ISAL_LIBS) -lm
CRITERION_CFLAGS := $(shell $(PKG_CONFIG) --cflags criterion 2>/dev/null)
CRITERION_LIBS := $(shell $(PKG_CONFIG) --libs criterion 2>/dev/null)

OPTFLAGS ?= -O2 -g
# Warnings are errors in `make check` (and so in CI), not in a plain build:
# a packager's newer compiler may warn where ours does not.
WERROR ?=
WARNFLAGS = -Wall -Wextra $(WERROR)
# The version: laplace.h's LP_VERSION_MAJOR, _MINOR and _PATCH.
VERSION := $(shell sed -n 's/^\#define LP_VERSION_\(MAJOR\|MINOR\|PATCH\) //p' include/laplace/laplace.h | paste -sd.)
COMMON_CFLAGS = -std=c11 -D_GNU_SOURCE -DLP_VERSION=\"$(VERSION)\" $(OPTFLAGS) $(WARNFLAGS) $(SANFLAGS) -Iinclude -Isrc $(PKG_CFLAGS) $(CFLAGS)
CFLAGS_ALL = $(COMMON_CFLAGS) $(OBJ_CFLAGS)
# Each compiler run also writes the headers its object depends on (-MMD;
# -MP: a removed header is no error), read back below.
DEPFLAGS = -MMD -MP
LDFLAGS_ALL = $(SANFLAGS) $(LDFLAGS)

# The library's objects: everything but the command-line front end and
# the daemon's engine (src/jobs/daemon.c, the one part that needs gio),
# position-independent, every symbol hidden but the interface of
# include/laplace/laplace.h (LP_API). The program, the unit tests and the
# replayed fuzz targets link them all, with the engine's, from
# build/internal.a, where every function stays in reach.
DAEMON_SRCS := src/jobs/daemon.c
LIB_SRCS := $(filter-out $(DAEMON_SRCS),$(sort $(wildcard src/core/*.c src/analysis/*.c src/io/*.c \
	src/formats/*.c src/pipeline/*.c src/jobs/*.c src/gen/*.c src/sched/*.c src/report/*.c \
	src/record/decode.c src/record/record.c)))
# liblaplace.so.1 and liblaplace.a hold only the objects that the functions
# of laplace.h need, as the linker pulls them from build/internal.a (-u:
# each of them): no daemon, spool, Slurm, generator or report code
# (tests/check-lib-contents).
OPEN_PAREN := (
LIB_API := $(shell sed -n 's/^LP_API.*[ *]\(lp_[a-z0-9_]*\)$(OPEN_PAREN).*/\1/p' include/laplace/laplace.h)
CMD_SRCS := $(sort $(wildcard src/cmd/*.c))
TEST_SRCS := $(sort $(wildcard tests/unit/*.c))
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/*.c))

LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
$(LIB_OBJS): OBJ_CFLAGS = -fPIC -fvisibility=hidden
DAEMON_OBJS := $(DAEMON_SRCS:%.c=$(BUILD)/%.o)
# The soname's number is LP_VERSION_MAJOR (laplace.h): it changes when
# the ABI does.
SONAME = liblaplace.so.$(firstword $(subst ., ,$(VERSION)))
LIB_SHARED = $(BUILD)/liblaplace.so.$(VERSION)
CMD_OBJS := $(CMD_SRCS:%.c=$(BUILD)/%.o)
TEST_OBJS := $(TEST_SRCS:%.c=$(BUILD)/%.o)

MAN1 := $(wildcard man/*.1)
MAN3 := $(wildcard man/*.3)
MAN5 := $(wildcard man/*.5)

.PHONY: all demo check check-units check-slurm check-plain check-asan unit e2e e2e-widen e2e-task-bin check-exports \
	check-man-formats check-layers check-make-targets check-lib-contents check-python check-python-venv check-install install \
	uninstall clean fuzz bench recorder check-record

all: $(BUILD)/laplace $(BUILD)/$(SONAME) $(BUILD)/liblaplace.so $(BUILD)/liblaplace.a

# The README's first command: merge the bundled demo capture; and build
# the recorder too (when Valgrind's development files are there, else say
# why not), for the README's recording example.
# The library and the Python package of the build tree too (PYTHON_BUILT,
# below), so that the README's `import laplace` works after `make demo`.
demo: $(BUILD)/laplace $(BUILD)/$(SONAME)
	$(BUILD)/laplace merge -o $(BUILD)/demo.merge fixtures/demo/demo.ref fixtures/demo/demo.kern
	@echo "(unmapped pages 3 is expected: the demo touches a buffer after mremap moved it, a page"
	@echo "after munmap and a segment after shmdt; see tests/cases/merge-demo. A capture of a real"
	@echo "run, laplace record's, has none.)"
	@echo "first lines of $(BUILD)/demo.merge:"
	@head -n 10 $(BUILD)/demo.merge
	@echo "Run laplace as $(BUILD)/laplace, or with $(BUILD) first on PATH:"
	@echo "  export PATH=\"$(CURDIR)/$(BUILD):\$$PATH\"    (or: make install)"

# Objects are rebuilt when the flags change (WERROR, SANFLAGS, CFLAGS...):
# the flags are kept in a file rewritten only when they differ.
FLAGS_FILE = $(BUILD)/cflags
.PHONY: FORCE
$(FLAGS_FILE): FORCE
	@mkdir -p $(dir $@)
	@echo '$(COMMON_CFLAGS) $(LDFLAGS_ALL)' | cmp -s - $@ || echo '$(COMMON_CFLAGS) $(LDFLAGS_ALL)' > $@

$(BUILD)/%.o: %.c $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(DEPFLAGS) -c -o $@ $<

# SOURCE_ROOT: tests find the data beside the repository whatever the
# directory they are run from.
$(BUILD)/tests/unit/%.o: tests/unit/%.c $(FLAGS_FILE)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(CRITERION_CFLAGS) -DSOURCE_ROOT='"$(CURDIR)"' $(DEPFLAGS) -c -o $@ $<

$(BUILD)/internal.a: $(LIB_OBJS) $(DAEMON_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(LIB_SHARED): $(BUILD)/internal.a include/laplace/laplace.h
	$(CC) $(LDFLAGS_ALL) -shared -Wl,-soname,$(SONAME) -Wl,-z,defs -Wl,--as-needed \
		-o $@ $(LIB_API:%=-Wl,-u,%) $(BUILD)/internal.a $(LIB_PKG_LIBS)

$(BUILD)/$(SONAME): $(LIB_SHARED)
	ln -sf $(notdir $<) $@

$(BUILD)/liblaplace.so: $(BUILD)/$(SONAME)
	ln -sf $(notdir $<) $@

# The static library: the same objects linked into one, its hidden symbols
# made local, so that it exports what the shared library does.
$(BUILD)/liblaplace.a: $(BUILD)/internal.a include/laplace/laplace.h
	$(LD) -r -o $(BUILD)/liblaplace.o $(LIB_API:%=-u %) $(BUILD)/internal.a
	objcopy --localize-hidden $(BUILD)/liblaplace.o
	@rm -f $@
	ar rcs $@ $(BUILD)/liblaplace.o

$(BUILD)/laplace: $(CMD_OBJS) $(BUILD)/internal.a
	$(CC) $(LDFLAGS_ALL) -o $@ $(CMD_OBJS) $(BUILD)/internal.a $(PKG_LIBS)

$(BUILD)/unit-tests: $(TEST_OBJS) $(BUILD)/internal.a
	$(CC) $(LDFLAGS_ALL) -o $@ $(TEST_OBJS) $(BUILD)/internal.a $(PKG_LIBS) $(CRITERION_LIBS)

# Criterion's skips are said, and fail a CI run (tests/ci-skip).
unit: $(BUILD)/unit-tests
	$(BUILD)/unit-tests --tap=$(BUILD)/unit-tests.tap
	tests/ci-skip --tap unit $(BUILD)/unit-tests.tap

# The I/O fault shim the end-to-end cases preload (tests/faultinject.c);
# tests/run-cases finds it beside the program. Never sanitized: it only
# forwards calls.
$(BUILD)/faultinject.so: tests/faultinject.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 $(WARNFLAGS) -fPIC -shared -o $@ $< -ldl

# The attacker of the daemon's confinement case (tests/exchange-loop.c).
$(BUILD)/exchange-loop: tests/exchange-loop.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 $(WARNFLAGS) -o $@ $<

# The recorder: a Valgrind tool (GPL-2.0-or-later, src/record/tool/),
# built against Debian's valgrind package with the flags of Valgrind's own
# Makefile.tool.am; never sanitized (it is its own static program, loaded
# at valt_load_address).
# -isystem: warnings are ours to fix, not the headers'.
VALGRIND_CFLAGS := $(patsubst -I%,-isystem %,$(shell $(PKG_CONFIG) --cflags valgrind 2>/dev/null))
VALGRIND_LOAD := $(shell $(PKG_CONFIG) --variable=valt_load_address valgrind 2>/dev/null)
VALGRIND_LIBDIR = /usr/lib/x86_64-linux-gnu/valgrind
RECORD_TOOL = $(BUILD)/record/laplace-record-amd64-linux
# Built by `make` when Valgrind's development files are there (its
# pkg-config file and static libraries); otherwise make says so, and
# laplace record says the recorder is not installed.
VALGRIND_DEV := $(if $(VALGRIND_LOAD),$(wildcard $(VALGRIND_LIBDIR)/libcoregrind-amd64-linux.a))
RECORDER_ALL = $(if $(VALGRIND_DEV),$(RECORD_TOOL),recorder-missing)
all: $(RECORDER_ALL)
# (Prerequisites are read where their rule is: the demo's recorder is here.)
demo: $(RECORDER_ALL)
.PHONY: recorder-missing
recorder-missing:
	@echo "make: the recorder (laplace record) is not built: Valgrind's development files are missing" \
		"(valgrind.pc, $(VALGRIND_LIBDIR)/libcoregrind-amd64-linux.a: the valgrind package," \
		"which scripts/install-deps installs)"
RECORD_TOOL_SRCS := $(sort $(wildcard src/record/tool/*.c))
$(RECORD_TOOL): $(RECORD_TOOL_SRCS)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -m64 -O2 -g $(WARNFLAGS) -fno-stack-protector -fno-strict-aliasing \
		-fno-builtin -fomit-frame-pointer -fno-pie -DVGA_amd64=1 -DVGO_linux=1 \
		-DVGP_amd64_linux=1 -DVGPV_amd64_linux_vanilla=1 $(VALGRIND_CFLAGS) \
		-static -nodefaultlibs -nostartfiles -u _start -Wl,--build-id=none \
		-Wl,-Ttext-segment=$(VALGRIND_LOAD) -o $@ $(RECORD_TOOL_SRCS) \
		-L$(VALGRIND_LIBDIR) -lcoregrind-amd64-linux -lvex-amd64-linux -lgcc

# The streams' decoder on its own: merges a directory of streams into a
# capture (src/record/decode.h), for the tests of its errors on hand-made
# streams; not installed.
RECORD_DECODE_OBJS := $(BUILD)/src/record/decode-main.o
$(BUILD)/record/laplace-record-decode: $(RECORD_DECODE_OBJS) $(BUILD)/internal.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $(RECORD_DECODE_OBJS) $(BUILD)/internal.a $(PKG_LIBS)

recorder: $(RECORD_TOOL) $(BUILD)/record/laplace-record-decode

# A suite's exit status 77 is a skip, its reason printed; in CI (CI=true) a
# failure unless tests/skips allows it (tests/ci-skip).
# $(call skipped,NAME,REASON) after status=$$?.
skipped = [ $$status -eq 0 ] || { [ $$status -eq 77 ] && tests/ci-skip $(1) "$(2)"; }

# tests/record/run: exit 77 when Valgrind is not installed.
check-record: $(BUILD)/laplace $(BUILD)/record/laplace-record-decode $(if $(VALGRIND_DEV),$(RECORD_TOOL))
	tests/record/run $(BUILD); status=$$?; $(call skipped,record/run,valgrind is not installed)

e2e: $(BUILD)/laplace $(BUILD)/faultinject.so $(BUILD)/exchange-loop
	tests/run-cases $(BUILD)/laplace

# The cases that merge, again with each 32-bit reference trace widened by
# convert --wide (and --page-offset c0000000): the same outputs.
e2e-widen: $(BUILD)/laplace $(BUILD)/faultinject.so $(BUILD)/exchange-loop
	tests/widen-all $(BUILD)/laplace

# The per-process cases again, each per-process merge also made in the
# binary task form and compared with the text form (tests/task-bin-cases).
e2e-task-bin: $(BUILD)/laplace $(BUILD)/faultinject.so $(BUILD)/exchange-loop
	tests/task-bin-cases $(BUILD)/laplace

# The shared library exports the functions of include/laplace/laplace.h
# and nothing else; so does the static one.
check-exports: $(BUILD)/$(SONAME) $(BUILD)/liblaplace.a
	readelf -d $(BUILD)/$(SONAME) | grep -q 'Library soname: \[$(SONAME)\]'
	nm -D --defined-only $(BUILD)/$(SONAME) | awk '{print $$3}' | sort | diff -u tests/exports -
	nm -g --defined-only $(BUILD)/liblaplace.a | awk 'NF == 3 {print $$3}' | sort | diff -u tests/exports -

# Each #include of src/ keeps the layer rule of README's Layout section
# (tests/check-layers reads the rule from there).
check-layers:
	tests/check-layers

# The man pages' tables of formats name what the program takes.
check-man-formats: $(BUILD)/laplace
	tests/check-man-formats $(BUILD)/laplace man

# The library holds no code of the layers its interface does not need
# (daemon, jobs, spool, Slurm, generator, reports); the check
# itself finds them in build/internal.a, which holds them all.
check-lib-contents: $(BUILD)/$(SONAME) $(BUILD)/liblaplace.a
	tests/check-lib-contents $(BUILD)/$(SONAME) $(BUILD)/liblaplace.a
	! tests/check-lib-contents $(BUILD)/internal.a 2>/dev/null
	size $(BUILD)/$(SONAME)

# The Python module from the build tree (tests/python), with Debian's
# python3 and python3-numpy.
PYTHON = /usr/bin/python3
PYTHON_SRCS := $(wildcard python/laplace/*.py)
# With its pyproject.toml: pip installs the package from $(BUILD)/python,
# where setuptools' build directory and egg-info go (pip install ./python
# would leave them in the source tree).
PYTHON_BUILT := $(PYTHON_SRCS:%=$(BUILD)/%) $(BUILD)/python/laplace/_library.py \
	$(BUILD)/python/pyproject.toml

$(BUILD)/python/laplace/%.py: python/laplace/%.py
	@mkdir -p $(dir $@)
	cp $< $@
$(BUILD)/python/pyproject.toml: python/pyproject.toml
	@mkdir -p $(dir $@)
	cp $< $@
demo all: $(PYTHON_BUILT)

# Where the package finds the library: written by make, here and on install.
$(BUILD)/python/laplace/_library.py:
	@mkdir -p $(dir $@)
	printf "# Generated by make: the library this package loads.\nLIBRARY = '%s'\n" \
		'$(CURDIR)/$(BUILD)/$(SONAME)' > $@

# Under ASan the interpreter needs the sanitizers' run-time libraries first
# (and its own allocations are not ours to check for leaks).
PYTHON_SANENV = $(if $(SANFLAGS),env LD_PRELOAD=$(shell $(CC) -print-file-name=libasan.so):$(shell \
	$(CC) -print-file-name=libubsan.so) ASAN_OPTIONS=detect_leaks=0)
PYTHON_RUN = $(PYTHON_SANENV) $(PYTHON)

check-python: $(PYTHON_BUILT) $(BUILD)/$(SONAME) $(BUILD)/laplace
	PYTHONPATH=$(BUILD)/python LAPLACE_PROGRAM=$(BUILD)/laplace $(PYTHON_RUN) tests/python/test_laplace.py

# The module installed with pip into a virtual environment (python/
# pyproject.toml), the library named by LAPLACE_LIBRARY; exit 77 when
# python3 cannot make one.
check-python-venv: $(BUILD)/$(SONAME) $(BUILD)/laplace $(PYTHON_BUILT)
	tests/check-python-venv $(BUILD)/venv $(BUILD)/$(SONAME) $(BUILD)/laplace $(PYTHON_SANENV); \
		status=$$?; $(call skipped,python/venv,python3 -m venv failed (Debian: python3-venv))

# Installed into a scratch prefix, the library is used as a user would:
# the examples built with pkg-config in C and C++ and run, the Python
# module imported (tests/check-install).
check-install: all
	rm -rf $(CURDIR)/$(BUILD)/inst
	$(MAKE) install PREFIX=$(CURDIR)/$(BUILD)/inst DESTDIR=
	PYTHON_RUN='$(PYTHON_RUN)' tests/check-install $(CURDIR)/$(BUILD)/inst $(BUILD)/laplace \
		"$(SANFLAGS)"

# Suites that compare whole outputs made two ways (widened references,
# binary task files): their outputs are the same under the sanitizers, whose
# pass runs the same code through the e2e cases, so check-asan leaves them
# out (they would double its time).
COMPARE_SUITES = e2e-widen e2e-task-bin

# check-plain builds what its suites run on every processor first, then
# runs the suites one after another (each runs its own tests in parallel:
# Criterion's workers, tests/run-cases' jobs).
NPROC := $(shell nproc)
CHECK_SUITES = check-layers check-make-targets unit e2e $(COMPARE_SUITES) fuzz-replay check-exports \
	check-man-formats check-lib-contents check-python check-python-venv check-install check-record
.PHONY: check-programs
check-programs: all $(BUILD)/unit-tests $(BUILD)/faultinject.so $(BUILD)/exchange-loop $(REPLAY_BINS) \
	$(BUILD)/record/laplace-record-decode
check-plain:
	$(MAKE) -j$(NPROC) check-programs
	$(MAKE) $(CHECK_SUITES)

ASAN = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
check-asan:
	$(MAKE) BUILD=build/asan SANFLAGS="$(ASAN)" OPTFLAGS="-O1 -g" COMPARE_SUITES= check-plain

# The benchmarks: bench/run (it builds its own tree, build/bench, and
# prints its tables; long: BENCH_ARGS=10000000 for one capture of 10^7
# references, THROUGHPUT_ONLY=1 for the throughput table alone).
BENCH_ARGS ?=
bench:
	bench/run $(BENCH_ARGS)

# The advertised targets (this file's opening comment, the README) have rules.
check-make-targets:
	tests/check-make-targets

# The systemd units, sysusers.d and tmpfiles.d files, installed into a
# scratch tree and checked with systemd-analyze (contrib/check-units).
check-units: $(BUILD)/laplace
	rm -rf $(BUILD)/units-inst
	$(MAKE) install PREFIX=/usr DESTDIR=$(CURDIR)/$(BUILD)/units-inst
	contrib/check-units $(CURDIR)/$(BUILD)/units-inst /usr

# laplace batch --submit slurm --wait on a real one-node cluster, started
# and stopped by tests/check-slurm; skipped with a message unless root.
check-slurm: $(BUILD)/laplace
	tests/check-slurm $(BUILD)/laplace

check:
	$(MAKE) WERROR=-Werror check-plain
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $(MAKE) WERROR=-Werror check-asan

# libFuzzer targets (tests/fuzz/fuzz_*.c), built with clang against the
# library instrumented for coverage; each runs FUZZ_SECONDS on its corpus,
# seeded from tests/fuzz/corpus/TARGET and the saved crashes in
# tests/fuzz/regress/TARGET, with inputs up to 1 MiB. FUZZ_TARGETS picks
# some (e.g. FUZZ_TARGETS="fuzz_kern fuzz_merge"). Per target it prints
# the inputs run, CPU time and peak memory; a crash stops the run with the
# reproducer's path (move it to tests/fuzz/regress/TARGET/ to keep it).
# The small buffers make records straddle refills (and the schedule's
# read-ahead blocks many a stream).
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_DIR = $(BUILD)/fuzz
FUZZ_CFLAGS = -std=c11 -D_GNU_SOURCE -DLP_VERSION=\"$(VERSION)\" -g -O1 -Iinclude -Isrc $(PKG_CFLAGS) \
	-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -DINBUF_INITIAL_SIZE=32768 -DINPUT_BUFFER_SIZE=32768 \
	-DBLOCK_REFS_MAX=3
FUZZ_OPTIONS = -max_len=1048576 -len_control=0 -rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=10 \
	-print_final_stats=1
FUZZ_LIB_OBJS := $(LIB_SRCS:%.c=$(FUZZ_DIR)/%.o)
FUZZ_TARGETS ?= $(FUZZ_SRCS:tests/fuzz/%.c=%)
FUZZ_NAMES := $(filter fuzz_%,$(FUZZ_TARGETS))
FUZZ_BINS := $(FUZZ_NAMES:%=$(FUZZ_DIR)/%)

$(FUZZ_DIR)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB_OBJS) $(wildcard include/laplace/*.h src/*/*.h tests/fuzz/*.h)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(WARNFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB_OBJS) $(PKG_LIBS)

.SECONDARY: $(FUZZ_LIB_OBJS)

# Each target's run is a target of its own, so that make -j runs as many
# at once (make -O keeps each one's lines together).
FUZZ_RUNS := $(FUZZ_NAMES:%=fuzz-run-%)
.PHONY: $(FUZZ_RUNS)
fuzz: $(FUZZ_RUNS)
$(FUZZ_RUNS): fuzz-run-%: $(FUZZ_DIR)/%
	@tests/fuzz/run-fuzzer $< $(FUZZ_SECONDS) $(FUZZ_OPTIONS)

# The same targets without clang or libFuzzer: each target with the replay
# driver, built like the rest of the tree (SANFLAGS included), run over its
# saved crashes and its seed corpus.
REPLAY_DIR = $(BUILD)/fuzz-replay
REPLAY_BINS := $(FUZZ_NAMES:%=$(REPLAY_DIR)/%)

# (Two sources in one run: -MMD would keep one's headers only, so these
# depend on every header.)
$(REPLAY_DIR)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c $(BUILD)/internal.a $(FLAGS_FILE) \
		$(wildcard include/laplace/*.h src/*/*.h tests/fuzz/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< tests/fuzz/replay.c $(BUILD)/internal.a $(PKG_LIBS)

.PHONY: fuzz-replay
fuzz-replay: $(REPLAY_BINS)
	@for bin in $(REPLAY_BINS); do \
		name=$$(basename $$bin); dirs=; \
		for d in tests/fuzz/regress/$$name tests/fuzz/corpus/$$name; do \
			if [ -d $$d ]; then dirs="$$dirs $$d"; fi; \
		done; \
		$$bin $$dirs 2>$$bin.log || { tail -n 40 $$bin.log; echo "$$name: FAILED"; exit 1; }; \
	done

# The daemon's systemd units, its user (sysusers.d) and its spool
# (tmpfiles.d), from contrib/; see "RUNNING UNDER SYSTEMD" in
# laplace-daemon(1). The units name the program as /usr/local/bin/laplace,
# rewritten to $(PREFIX)/bin/laplace on install.
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d
UNITS := contrib/laplace-daemon.service contrib/laplace-daemon-root.service

# The library: shared (with its SONAME link and the link for -llaplace),
# static, its one header, laplace.pc; the Python package, told where the
# shared library went (python/laplace/_library.py is generated).
LIBDIR ?= $(PREFIX)/lib
# The recorder (a Valgrind tool, GPL-2.0-or-later): laplace record finds it
# in ../libexec/laplace beside its bin directory; its licence and README go
# with the documentation.
LIBEXECDIR ?= $(PREFIX)/libexec
RECORDER_DOCDIR ?= $(PREFIX)/share/doc/laplace/recorder
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
PYTHONDIR ?= $(PREFIX)/lib/python3/dist-packages
# Where bash-completion looks for a command's completion when it is first
# typed (bash-completion's own completionsdir under /usr).
BASHCOMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions

# A man page of another's name (lp_basic_read.3) is a link to the page that
# describes it, in the tree (man -l reads it there) and installed.
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man3 \
		$(DESTDIR)$(PREFIX)/share/man/man5
	install -m 755 $(BUILD)/laplace $(DESTDIR)$(PREFIX)/bin/laplace
	if [ -n "$(VALGRIND_DEV)" ]; then \
		install -d $(DESTDIR)$(LIBEXECDIR)/laplace $(DESTDIR)$(RECORDER_DOCDIR) && \
		install -m 755 $(RECORD_TOOL) $(DESTDIR)$(LIBEXECDIR)/laplace/ && \
		install -m 644 src/record/tool/COPYING src/record/tool/README $(DESTDIR)$(RECORDER_DOCDIR)/; \
	fi
	for f in $(MAN1); do install -m 644 $$f $(DESTDIR)$(PREFIX)/share/man/man1/ || exit; done
	for f in $(MAN3); do \
		if [ -L $$f ]; then ln -sf $$(readlink $$f) $(DESTDIR)$(PREFIX)/share/man/man3/$${f##*/}; \
		else install -m 644 $$f $(DESTDIR)$(PREFIX)/share/man/man3/; fi || exit; \
	done
	for f in $(MAN5); do install -m 644 $$f $(DESTDIR)$(PREFIX)/share/man/man5/ || exit; done
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/laplace $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(PYTHONDIR)/laplace
	install -m 755 $(LIB_SHARED) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(LIB_SHARED)) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/liblaplace.so
	install -m 644 $(BUILD)/liblaplace.a $(DESTDIR)$(LIBDIR)/
	install -m 644 include/laplace/laplace.h $(DESTDIR)$(INCLUDEDIR)/laplace/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(VERSION)|' -e 's|@LIBS_PRIVATE@|$(LIB_PKG_LIBS)|' laplace.pc.in \
		> $(DESTDIR)$(PKGCONFIGDIR)/laplace.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/laplace.pc
	for f in $(PYTHON_SRCS); do install -m 644 $$f $(DESTDIR)$(PYTHONDIR)/laplace/ || exit; done
	printf "# Generated by make install: the library this package loads.\nLIBRARY = '%s'\n" \
		'$(LIBDIR)/$(SONAME)' > $(DESTDIR)$(PYTHONDIR)/laplace/_library.py
	chmod 644 $(DESTDIR)$(PYTHONDIR)/laplace/_library.py
	install -d $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(TMPFILESDIR)
	for f in $(UNITS); do \
		sed 's|/usr/local/bin/laplace|$(PREFIX)/bin/laplace|g' $$f > $(DESTDIR)$(SYSTEMDUNITDIR)/$${f##*/} && \
		chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/$${f##*/} || exit; \
	done
	install -m 644 contrib/sysusers.d/laplace.conf $(DESTDIR)$(SYSUSERSDIR)/laplace.conf
	install -m 644 contrib/tmpfiles.d/laplace.conf $(DESTDIR)$(TMPFILESDIR)/laplace.conf
	install -d $(DESTDIR)$(BASHCOMPLETIONDIR)
	install -m 644 contrib/bash-completion/laplace $(DESTDIR)$(BASHCOMPLETIONDIR)/laplace

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/laplace
	rm -f $(DESTDIR)$(LIBEXECDIR)/laplace/laplace-record-amd64-linux
	-rmdir $(DESTDIR)$(LIBEXECDIR)/laplace
	rm -rf $(DESTDIR)$(RECORDER_DOCDIR)
	rm -f $(MAN1:man/%=$(DESTDIR)$(PREFIX)/share/man/man1/%) $(MAN5:man/%=$(DESTDIR)$(PREFIX)/share/man/man5/%)
	rm -f $(MAN3:man/%=$(DESTDIR)$(PREFIX)/share/man/man3/%)
	rm -f $(DESTDIR)$(LIBDIR)/$(notdir $(LIB_SHARED)) $(DESTDIR)$(LIBDIR)/$(SONAME) \
		$(DESTDIR)$(LIBDIR)/liblaplace.so $(DESTDIR)$(LIBDIR)/liblaplace.a \
		$(DESTDIR)$(PKGCONFIGDIR)/laplace.pc $(DESTDIR)$(INCLUDEDIR)/laplace/laplace.h
	-rmdir $(DESTDIR)$(INCLUDEDIR)/laplace
	rm -rf $(DESTDIR)$(PYTHONDIR)/laplace
	rm -f $(UNITS:contrib/%=$(DESTDIR)$(SYSTEMDUNITDIR)/%)
	rm -f $(DESTDIR)$(SYSUSERSDIR)/laplace.conf $(DESTDIR)$(TMPFILESDIR)/laplace.conf
	rm -f $(DESTDIR)$(BASHCOMPLETIONDIR)/laplace

clean:
	rm -rf build

# What -MMD wrote: every object's headers.
-include $(LIB_OBJS:.o=.d) $(DAEMON_OBJS:.o=.d) $(CMD_OBJS:.o=.d) $(TEST_OBJS:.o=.d) $(FUZZ_LIB_OBJS:.o=.d) $(RECORD_DECODE_OBJS:.o=.d)
