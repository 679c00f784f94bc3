# libwholedb2lake — one GNU Makefile (see README). `make check` is THE test command.
#
#   make                 library (.a, .so), the w2l CLI and the examples
#   make check           install missing dependencies (as root), build, run every test
#   make check-fast      the developer loop: unit suites, layering, format, man pages
#                        (minutes, no root, no MariaDB install)
#   make check-asan      the unit tests under ASan + UBSan
#   make install         PREFIX, DESTDIR, LIBDIR, INCLUDEDIR, BINDIR, MANDIR, PKGCONFIGDIR
#   make bench           benchmarks (not part of check)

PREFIX       ?= /usr/local
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
BINDIR       ?= $(PREFIX)/bin
MANDIR       ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig

MAJOR   := $(shell sed -n 's/^\#define W2L_VERSION_MAJOR \([0-9]*\)/\1/p' include/w2l/version.h)
VERSION := $(shell sed -n 's/^\#define W2L_VERSION_STRING "\(.*\)"/\1/p' include/w2l/version.h)

B        ?= build
CC       ?= cc
DEPS_PC  := libzstd zlib libcurl libmariadb avro-c rdkafka libmicrohttpd
WARN     := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wno-unused-parameter
# -O3: the hot paths (JSON scan, value conversion, column writer) run 2-3% fewer
# instructions than at -O2 (bench/README, the CDC JSON benchmark)
CFLAGS   ?= -O3 -g
ALL_CFLAGS = -std=c11 $(WARN) -fvisibility=hidden -fPIC -D_POSIX_C_SOURCE=200809L \
             -D_DEFAULT_SOURCE -Iinclude -Ilib $(PC_CFLAGS) $(CFLAGS) $(EXTRA_CFLAGS)
PC_CFLAGS = $(shell pkg-config --cflags $(DEPS_PC) 2>/dev/null)
PC_LIBS   = $(shell pkg-config --libs $(DEPS_PC) 2>/dev/null) -lpthread -lm
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null)

LIB_SRC  := $(shell find lib -name '*.c' | LC_ALL=C sort)
LIB_OBJ  := $(LIB_SRC:%.c=$(B)/%.o)
TLIB_OBJ := $(LIB_SRC:%.c=$(B)/testing/%.o)
CLI_SRC  := $(wildcard cli/*.c)
CLI_OBJ  := $(CLI_SRC:%.c=$(B)/%.o)
EX_SRC   := $(wildcard examples/*.c)
EX_BIN   := $(EX_SRC:examples/%.c=$(B)/examples/%)
TEST_SRC := $(wildcard test/check_*.c) $(wildcard test/support/*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(B)/%.o)
SUPPORT_OBJ := $(patsubst %.c,$(B)/%.o,$(wildcard test/support/*.c))
GEN_SRC  := $(wildcard test/gen/*.c)
GEN_BIN  := $(GEN_SRC:test/gen/%.c=$(B)/test/gen/%)
SUITES   := $(sort $(patsubst test/check_%.c,%,$(filter-out test/check_main.c,$(wildcard test/check_*.c))))

STATIC := $(B)/libwholedb2lake.a
SHARED := $(B)/libwholedb2lake.so.$(VERSION)
SONAME := libwholedb2lake.so.$(MAJOR)
W2L    := $(B)/w2l
TESTS  := $(B)/test/check_w2l

.PHONY: all lib cli examples deps have-deps format format-check check check-fast check-unit check-examples check-interop check-install \
        check-asan check-layering man-check install install-lib install-headers install-pc \
        install-man install-cli uninstall clean bench demo
.DEFAULT_GOAL := all

all: lib cli examples
lib: $(STATIC) $(SHARED)
cli: $(W2L)
examples: $(EX_BIN)

# Installs the build dependencies (Debian, as root; otherwise prints the exact command and
# stops). `make` itself installs nothing: it builds with what pkg-config finds and names
# what is missing (have-deps); `make check` and `make demo` install first.
deps:
	@scripts/install-deps --build

PC_MISSING = $(shell for p in $(DEPS_PC); do pkg-config --exists $$p 2>/dev/null || printf '%s ' $$p; done)
have-deps:
	@m="$(PC_MISSING)"; if [ -n "$$m" ]; then \
	    echo "make: missing build dependencies (pkg-config modules): $$m" >&2; \
	    echo "make: install their -dev packages (on Debian: scripts/install-deps --build, as root)" >&2; \
	    exit 1; fi

$(B)/%.o: %.c | have-deps
	@mkdir -p $(@D)
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(B)/testing/%.o: %.c
	@mkdir -p $(@D)
	@echo "  CC [T]  $<"
	@$(CC) $(ALL_CFLAGS) -DW2L_TESTING -MMD -MP -c $< -o $@

$(STATIC): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(SHARED): $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,$(SONAME) -o $@ $^ $(PC_LIBS) $(LDFLAGS)
	ln -sf libwholedb2lake.so.$(VERSION) $(B)/$(SONAME)
	ln -sf $(SONAME) $(B)/libwholedb2lake.so

$(B)/testing/libw2l_testing.a: $(TLIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(W2L): $(CLI_OBJ) $(STATIC)
	$(CC) -o $@ $(CLI_OBJ) $(STATIC) $(PC_LIBS) $(LDFLAGS)

$(B)/examples/%: examples/%.c $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(STATIC) $(PC_LIBS) $(LDFLAGS)

# The test runner: one Check suite per module, found by file name (test/check_X.c
# defines Suite *suite_X(void)).
$(B)/test/suites.h: $(wildcard test/check_*.c) Makefile
	@mkdir -p $(@D)
	@{ for s in $(SUITES); do echo "Suite *suite_$$s(void);"; done; \
	   echo "#define W2L_SUITES \\"; \
	   for s in $(SUITES); do echo "    X($$s) \\"; done; echo; } > $@

$(B)/test/check_main.o: $(B)/test/suites.h
$(B)/test/%.o: test/%.c
	@mkdir -p $(@D)
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) -DW2L_TESTING -I$(B)/test -Itest -MMD -MP -c $< -o $@

$(TESTS): $(TEST_OBJ) $(B)/testing/libw2l_testing.a
	$(CC) -o $@ $(TEST_OBJ) $(B)/testing/libw2l_testing.a $(CHECK_LIBS) $(PC_LIBS) $(LDFLAGS)

# Generators: small programs that write files for the interop tests (test/interop/*.test.mjs)
# to read with readers we did not write.
$(B)/test/gen/%: test/gen/%.c $(SUPPORT_OBJ) $(B)/testing/libw2l_testing.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DW2L_TESTING -Itest -o $@ $< $(SUPPORT_OBJ) $(B)/testing/libw2l_testing.a $(CHECK_LIBS) $(PC_LIBS) $(LDFLAGS)

# w2l-config(5) is generated from the property table by a program linked with the library.
CONFIG_MAN := $(B)/man/man5/w2l-config.5

$(B)/tools/gen_config_man: tools/gen_config_man.c $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(STATIC) $(PC_LIBS) $(LDFLAGS)

$(CONFIG_MAN): $(B)/tools/gen_config_man man/w2l-config.5.in
	@mkdir -p $(@D)
	$(B)/tools/gen_config_man man/w2l-config.5.in > $@.tmp && mv $@.tmp $@

# ---- tests -------------------------------------------------------------------------
# The unit suites run twice: on the shipped -O3 build (check-unit) and under ASan + UBSan
# (check-asan). Check's per-test timers catch a hang, not a slow machine: they are scaled
# for the build (CK_TIMEOUT_MULTIPLIER; ASan runs the same loops several times slower), so
# a loaded 2-core machine never turns good work into a timeout.
check:
	@scripts/install-deps --test
	$(MAKE) all $(GEN_BIN)
	$(MAKE) check-examples check-readme check-layering format-check man-check check-install check-interop check-unit check-asan
	@echo "make check: all passed"

# The developer loop beside check: what needs neither root nor a MariaDB install nor the
# interop tests' node modules. check stays the full test command (CI runs it).
check-fast:
	$(MAKE) check-layering format-check man-check check-unit
	@echo "make check-fast: all passed"

CK_TIMEOUT_UNIT ?= 3
CK_TIMEOUT_ASAN ?= 8

check-unit: $(TESTS)
	CK_TIMEOUT_MULTIPLIER=$(CK_TIMEOUT_UNIT) W2L_TEST_BIN=$(abspath $(B)) W2L_SRCDIR=$(CURDIR) \
	    scripts/run-suites $(TESTS)

check-examples: $(EX_BIN)
	@scripts/run-examples $(B)/examples

# The README's ```sh blocks, run against a private MariaDB (scripts/check-readme).
.PHONY: check-readme
check-readme: cli
	@B=$(B) scripts/check-readme

check-interop: $(GEN_BIN)
	@W2L_TEST_BIN=$(abspath $(B)) scripts/check-interop

check-install: lib cli
	@scripts/check-install

format:
	@scripts/format

format-check:
	@scripts/format --check

# Reads the lib objects' symbols (nm), so it needs them built.
check-layering: $(LIB_OBJ)
	@scripts/check-layering $(B)

man-check: $(CONFIG_MAN)
	@scripts/man-check $(CONFIG_MAN)

check-asan:
	@$(MAKE) --no-print-directory B=build-asan CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer" \
	    LDFLAGS="-fsanitize=address,undefined" build-asan/test/check_w2l
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	    CK_TIMEOUT_MULTIPLIER=$(CK_TIMEOUT_ASAN) W2L_SRCDIR=$(CURDIR) scripts/run-suites build-asan/test/check_w2l

bench:
	@scripts/bench

# The libraries a program linking libwholedb2lake.a needs (bench/*.sh link with them).
.PHONY: print-libs
print-libs:
	@echo $(PC_LIBS)

# The fuzz targets, run one after the other: the binlog decoder's (fuzz/fuzz_binlog.c,
# test/data/binlog/README), the JSON parser's (fuzz/fuzz_json.c, seeds from test/data/cdc)
# and canal-json's fast path against its tree path (fuzz/fuzz_canal.c, seeds from
# test/data/cdc/canal*.jsonl, two lines an input). Not part of check: built in FUZZ_B with
# ASan + UBSan, as libFuzzer targets when clang is there (FUZZ_CLANG= forces the standalone
# drivers: fixed seed, mutated seeds), and each run for FUZZ_SECS seconds.
FUZZ_SECS  ?= 60
FUZZ_CLANG ?= $(shell command -v clang 2>/dev/null)
# one directory per kind of build: objects of the other compiler are never linked in
FUZZ_B     ?= build-fuzz$(if $(FUZZ_CLANG),-libfuzzer,)
FUZZ_SAN   := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined
FUZZ_ENV   := UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
.PHONY: fuzz
fuzz:
ifneq ($(FUZZ_CLANG),)
	@$(MAKE) --no-print-directory B=$(FUZZ_B) CC=$(FUZZ_CLANG) CFLAGS="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" \
	    LDFLAGS="-fsanitize=address,undefined" FUZZ_MAIN="-DW2L_LIBFUZZER -fsanitize=fuzzer" $(FUZZ_B)/fuzz/fuzz_binlog
	@mkdir -p $(FUZZ_B)/fuzz/corpus && cp test/data/binlog/*.bin $(FUZZ_B)/fuzz/corpus/
	$(FUZZ_ENV) $(FUZZ_B)/fuzz/fuzz_binlog -max_total_time=$(FUZZ_SECS) -seed=1 -artifact_prefix=$(FUZZ_B)/fuzz/ \
	    $(FUZZ_B)/fuzz/corpus
	@$(MAKE) --no-print-directory B=$(FUZZ_B) CC=$(FUZZ_CLANG) CFLAGS="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" \
	    LDFLAGS="-fsanitize=address,undefined" FUZZ_MAIN="-DW2L_LIBFUZZER -fsanitize=fuzzer" $(FUZZ_B)/fuzz/fuzz_json
	@mkdir -p $(FUZZ_B)/fuzz/json-corpus && for f in test/data/cdc/*.jsonl; do \
	    head -n 4 $$f | split -l 1 - $(FUZZ_B)/fuzz/json-corpus/$$(basename $$f .jsonl)-; done
	$(FUZZ_ENV) $(FUZZ_B)/fuzz/fuzz_json -max_total_time=$(FUZZ_SECS) -seed=1 -artifact_prefix=$(FUZZ_B)/fuzz/ \
	    $(FUZZ_B)/fuzz/json-corpus
	@$(MAKE) --no-print-directory B=$(FUZZ_B) CC=$(FUZZ_CLANG) CFLAGS="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" \
	    LDFLAGS="-fsanitize=address,undefined" FUZZ_MAIN="-DW2L_LIBFUZZER -fsanitize=fuzzer" $(FUZZ_B)/fuzz/fuzz_canal
	@mkdir -p $(FUZZ_B)/fuzz/canal-corpus && for f in test/data/cdc/canal*.jsonl; do \
	    b=$(FUZZ_B)/fuzz/canal-corpus/$$(basename $$f .jsonl); \
	    split -l 2 $$f $$b-; tail -n +2 $$f | split -l 2 - $$b-odd-; done
	$(FUZZ_ENV) $(FUZZ_B)/fuzz/fuzz_canal -max_total_time=$(FUZZ_SECS) -seed=1 -artifact_prefix=$(FUZZ_B)/fuzz/ \
	    $(FUZZ_B)/fuzz/canal-corpus
else
	@$(MAKE) --no-print-directory B=$(FUZZ_B) CFLAGS="$(FUZZ_SAN)" LDFLAGS="-fsanitize=address,undefined" \
	    $(FUZZ_B)/fuzz/fuzz_binlog
	$(FUZZ_ENV) $(FUZZ_B)/fuzz/fuzz_binlog -n 1000000 -s 1 -t $(FUZZ_SECS) -o $(FUZZ_B)/fuzz/last-input.bin \
	    test/data/binlog/stream.bin test/data/binlog/seed-mariadb-variants.bin
	@$(MAKE) --no-print-directory B=$(FUZZ_B) CFLAGS="$(FUZZ_SAN)" LDFLAGS="-fsanitize=address,undefined" \
	    $(FUZZ_B)/fuzz/fuzz_json
	$(FUZZ_ENV) $(FUZZ_B)/fuzz/fuzz_json -n 1000000 -s 1 -t $(FUZZ_SECS) test/data/cdc/*.jsonl
	@$(MAKE) --no-print-directory B=$(FUZZ_B) CFLAGS="$(FUZZ_SAN)" LDFLAGS="-fsanitize=address,undefined" \
	    $(FUZZ_B)/fuzz/fuzz_canal
	$(FUZZ_ENV) $(FUZZ_B)/fuzz/fuzz_canal -n 1000000 -s 1 -t $(FUZZ_SECS) test/data/cdc/canal*.jsonl
endif

$(B)/fuzz/fuzz_binlog: fuzz/fuzz_binlog.c $(B)/test/support/binlog_replay.o $(B)/testing/libw2l_testing.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DW2L_TESTING -Itest $(FUZZ_MAIN) -o $@ $^ $(PC_LIBS) $(LDFLAGS)

$(B)/fuzz/fuzz_json: fuzz/fuzz_json.c $(B)/testing/libw2l_testing.a fuzz/fuzz_main.h fuzz/fuzz_rng.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DW2L_TESTING $(FUZZ_MAIN) -o $@ $(filter-out %.h,$^) $(PC_LIBS) $(LDFLAGS)

$(B)/fuzz/fuzz_canal: fuzz/fuzz_canal.c $(B)/test/support/canal_diff.o $(B)/testing/libw2l_testing.a \
                      fuzz/fuzz_main.h fuzz/fuzz_rng.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DW2L_TESTING -Itest $(FUZZ_MAIN) -o $@ $(filter-out %.h,$^) $(PC_LIBS) $(LDFLAGS)

# The README's first command: a throwaway MariaDB, a shop database synced into ./demo-lake.
demo:
	@scripts/install-deps --demo
	@$(MAKE) --no-print-directory all
	@scripts/demo

# ---- install -----------------------------------------------------------------------
install: install-lib install-headers install-pc install-man install-cli

install-lib: lib
	install -d $(DESTDIR)$(LIBDIR)
	install -m 644 $(STATIC) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SHARED) $(DESTDIR)$(LIBDIR)/
	ln -sf libwholedb2lake.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libwholedb2lake.so

install-headers:
	install -d $(DESTDIR)$(INCLUDEDIR)/w2l
	install -m 644 include/w2l.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 include/w2l/*.h $(DESTDIR)$(INCLUDEDIR)/w2l/

install-pc:
	install -d $(DESTDIR)$(PKGCONFIGDIR)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|' -e 's|@REQUIRES@|$(DEPS_PC)|' \
	    pkgconfig/libwholedb2lake.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/libwholedb2lake.pc

install-man: $(CONFIG_MAN)
	for s in 1 3 5 7; do \
	    [ -z "$$(ls man/man$$s 2>/dev/null)" ] && continue; \
	    install -d $(DESTDIR)$(MANDIR)/man$$s; install -m 644 man/man$$s/* $(DESTDIR)$(MANDIR)/man$$s/; \
	done
	install -d $(DESTDIR)$(MANDIR)/man5
	install -m 644 $(CONFIG_MAN) $(DESTDIR)$(MANDIR)/man5/

install-cli: cli
	install -d $(DESTDIR)$(BINDIR)
	install -m 755 $(W2L) $(DESTDIR)$(BINDIR)/

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libwholedb2lake.* $(DESTDIR)$(PKGCONFIGDIR)/libwholedb2lake.pc
	rm -rf $(DESTDIR)$(INCLUDEDIR)/w2l $(DESTDIR)$(INCLUDEDIR)/w2l.h
	rm -f $(DESTDIR)$(BINDIR)/w2l

clean:
	rm -rf build build-asan

-include $(shell find $(B) -name '*.d' 2>/dev/null)
