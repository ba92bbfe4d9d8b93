# ksearch build. `make` builds build/ksearch and build/ksearch-runner;
# `make test` runs every test (unit, integration, adversarial);
# `make asan-test` runs the unit tests under AddressSanitizer + UBSan;
# `make fuzz` builds the libFuzzer targets tests/fuzz/fuzz_<name>.c with clang
# (ASan + UBSan) into build-fuzz/ and runs each for FUZZ_SECONDS (default 60).
#
# Sources are found by wildcard: adding a file under src/ needs no edit here.
# Files named *_native.c hold measurement kernels (roofline) and are built with
# -O3 -march=native -fopenmp, like candidates, because they measure this machine.

CC      ?= cc
BUILD   ?= build
WERROR  ?= -Werror
OPT     ?= -O2 -g
SAN     ?=
CFLAGS_COMMON = -std=c11 -D_GNU_SOURCE -Wall -Wextra $(WERROR) -Iinclude -Isrc \
                $(shell pkg-config --cflags jansson libseccomp sqlite3 libcurl hiredis openssl)
LIBS    = $(shell pkg-config --libs jansson libseccomp sqlite3 libcurl hiredis openssl) -lOpenCL -ldl -lm -lpthread

LIB_SRC    := $(shell find src -name '*.c' ! -name main.c ! -path 'src/cli/*' | sort)
CLI_SRC    := $(shell find src/cli -name '*.c' | sort) src/main.c
RUNNER_SRC := $(shell find runner -name '*.c' | sort)
UNIT_SRC   := $(shell find tests/unit -name '*.c' | sort)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
LIB_OBJ    := $(call obj,$(LIB_SRC))
CLI_OBJ    := $(call obj,$(CLI_SRC))
RUNNER_OBJ := $(call obj,$(RUNNER_SRC))
UNIT_OBJ   := $(call obj,$(UNIT_SRC))

.PHONY: all test unit-test integration-test asan-test format format-check clean bench \
        fuzz fuzz-build sanitize-build
all: $(BUILD)/ksearch $(BUILD)/ksearch-runner

$(BUILD)/obj/%_native.o: %_native.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -O3 -march=native -fopenmp -fno-sanitize=all -MMD -MP -c $< -o $@

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(OPT) $(SAN) -MMD -MP -c $< -o $@

$(BUILD)/libksearch.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/ksearch: $(CLI_OBJ) $(BUILD)/libksearch.a
	$(CC) $(SAN) -fopenmp -o $@ $^ $(LIBS)

# The runner hosts untrusted code: it is never built with sanitizers (their
# shadow memory defeats the memory rlimit; `make asan-test` uses the plain
# build's runner) and exports its symbols so that its malloc family interposes
# on the candidate's (DESIGN.md: Evaluation).
$(BUILD)/ksearch-runner: $(RUNNER_OBJ) $(BUILD)/libksearch.a
	$(CC) $(SAN) -rdynamic -fopenmp -o $@ $^ $(LIBS)

$(BUILD)/test_unit: $(UNIT_OBJ) $(BUILD)/libksearch.a
	$(CC) $(SAN) -fopenmp -o $@ $^ $(LIBS) -lcriterion

RUNNER_BIN ?= $(abspath $(BUILD)/ksearch-runner)
unit-test: all $(BUILD)/test_unit
	KSEARCH_RUNNER=$(RUNNER_BIN) KSEARCH_BIN=$(abspath $(BUILD)/ksearch) \
	  KSEARCH_SRC=$(abspath .) $(BUILD)/test_unit --jobs 2

integration-test: all
	KSEARCH=$(abspath $(BUILD)/ksearch) bash tests/integration/run_all.sh

test: unit-test integration-test

asan-test:
	$(MAKE) all
	$(MAKE) BUILD=build-asan RUNNER_BIN=$(abspath build/ksearch-runner) SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" OPT="-O1 -g" unit-test

# The CLI under ASan + UBSan at -O2 (the flags a user fuzzing it black-box
# picks): gcc 12 reports false -Wformat-overflow / -Wstringop-overread under
# the sanitizers at this level that -O1 (asan-test) does not, and -Werror
# turns them into build failures (issue 13). Built only, not run.
sanitize-build:
	$(MAKE) BUILD=build-san SAN="-fsanitize=address,undefined -fno-omit-frame-pointer" OPT="-O2 -g" all

bench: all $(BUILD)/bench_harness_overhead $(BUILD)/bench_broker_roundtrip
	bash bench/run_all.sh

# ---- fuzzing (DESIGN.md: Tests and CI). A target is one file,
# tests/fuzz/fuzz_<name>.c, plus seed inputs in tests/fuzz/corpus/<name>/:
# found by wildcard, so adding one needs no edit here. The library is built
# again with clang and the sanitizers; the *_native.c measurement kernels
# stay gcc + OpenMP without sanitizers, as in the main build.
FUZZ_CC      ?= clang-14
FUZZ_DIR     ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_SAN      = -fsanitize=address,undefined -fno-sanitize-recover=undefined \
                -fno-omit-frame-pointer
# -Wno-error: the gcc build (`make`) is the -Werror gate; clang's extra
# warnings do not stop a fuzz run (libseccomp's SCMP_A0 macros trip clang's
# -Wmissing-field-initializers in every use, so that one is off)
FUZZ_CFLAGS   = $(CFLAGS_COMMON) -Wno-error -Wno-missing-field-initializers \
                -O1 -g $(FUZZ_SAN) -fsanitize=fuzzer-no-link
FUZZ_LIB_OBJ := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(LIB_SRC))
FUZZ_NAMES   := $(patsubst tests/fuzz/fuzz_%.c,%,$(sort $(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_BINS    := $(addprefix $(FUZZ_DIR)/fuzz_,$(FUZZ_NAMES))

$(FUZZ_DIR)/obj/%_native.o: %_native.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -O3 -march=native -fopenmp -fno-sanitize=all -MMD -MP -c $< -o $@

$(FUZZ_DIR)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

$(FUZZ_DIR)/libksearch.a: $(FUZZ_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_DIR)/fuzz_%: $(FUZZ_DIR)/obj/tests/fuzz/fuzz_%.o $(FUZZ_DIR)/libksearch.a
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(LIBS) -lgomp

fuzz-build: $(FUZZ_BINS)

fuzz: fuzz-build
	FUZZ_DIR=$(FUZZ_DIR) FUZZ_SECONDS=$(FUZZ_SECONDS) bash tests/fuzz/run.sh $(FUZZ_NAMES)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

format-check:
	clang-format --dry-run -Werror $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-asan build-fuzz build-san

-include $(shell find $(BUILD) $(FUZZ_DIR) -name '*.d' 2>/dev/null)

$(BUILD)/bench_harness_overhead: bench/harness_overhead.c $(BUILD)/libksearch.a
	$(CC) $(CFLAGS_COMMON) $(OPT) -fopenmp -o $@ $^ $(LIBS)

$(BUILD)/bench_broker_roundtrip: bench/broker_roundtrip.c $(BUILD)/libksearch.a
	$(CC) $(CFLAGS_COMMON) $(OPT) -fopenmp -o $@ $^ $(LIBS)
