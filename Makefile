# cxla — one Makefile. `make` builds everything into build/; `make demo` and `make test` first
# install missing Debian packages (scripts/setup.sh).
CC          ?= cc
LLVM_CONFIG ?= llvm-config-19
BUILD       ?= build
OPT         ?= -O2 -g
SAN         ?=
CLANG       ?= clang-19

LLVM_INC    := $(shell $(LLVM_CONFIG) --includedir 2>/dev/null)
LLVM_LIBDIR := $(shell $(LLVM_CONFIG) --libdir 2>/dev/null)
CPPFLAGS    += -Iinclude -Isrc -D_GNU_SOURCE $(if $(LLVM_INC),-isystem $(LLVM_INC))
CFLAGS_ALL  := -std=c11 -Wall -Wextra -Wno-missing-field-initializers -fPIC -pthread $(OPT) $(SAN) $(CFLAGS)
comma       := ,
LIBS        := $(if $(LLVM_LIBDIR),-L$(LLVM_LIBDIR) -Wl$(comma)-rpath$(comma)$(LLVM_LIBDIR)) -lLLVM-19 -lopenblas -lz -lm -ldl -lpthread

LIB_SRCS    := $(sort $(wildcard src/*/*.c src/*/*/*.c))
LIB_OBJS    := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
TEST_SRCS   := $(sort $(wildcard tests/unit/*.c))
TEST_OBJS   := $(TEST_SRCS:%.c=$(BUILD)/obj/%.o)
CLI_OBJS    := $(patsubst %.c,$(BUILD)/obj/%.o,$(sort $(wildcard tools/*.c)))
DEPS        := $(LIB_OBJS:.o=.d) $(TEST_OBJS:.o=.d) $(CLI_OBJS:.o=.d)

.PHONY: all demo test setup clean asan fuzz bench check-fast docs
all: $(BUILD)/libcxla.a $(BUILD)/libcxla.so $(BUILD)/cxla $(BUILD)/cxla_tests

# V=1 shows full command lines.
Q := $(if $(V),,@)
# Objects rebuild when the compiler or its flags change (e.g. the sanitizer set of `make asan`).
FLAGS_STAMP := $(BUILD)/.flags
COMPILE_CMD := $(CC) $(CPPFLAGS) $(CFLAGS_ALL)
$(shell mkdir -p $(BUILD) && (echo '$(COMPILE_CMD)' | cmp -s - $(FLAGS_STAMP) || echo '$(COMPILE_CMD)' > $(FLAGS_STAMP)))
$(BUILD)/obj/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  CC  $<")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(BUILD)/libcxla.a: $(LIB_OBJS)
	@rm -f $@
	@$(if $(V),,echo "  AR  $@")
	$(Q)ar rcs $@ $^

$(BUILD)/libcxla.so: $(LIB_OBJS)
	@$(if $(V),,echo "  LD  $@")
	$(Q)$(CC) -shared $(SAN) -o $@ $^ $(LIBS)

$(BUILD)/cxla: $(CLI_OBJS) $(BUILD)/libcxla.a
	@$(if $(V),,echo "  LD  $@")
	$(Q)$(CC) $(SAN) -o $@ $(CLI_OBJS) $(BUILD)/libcxla.a $(LIBS)

$(BUILD)/cxla_tests: $(TEST_OBJS) $(BUILD)/libcxla.a
	@$(if $(V),,echo "  LD  $@")
	$(Q)$(CC) $(SAN) -o $@ $(TEST_OBJS) $(BUILD)/libcxla.a $(LIBS)

# Sanitizer build of the library, CLI and tests (clang, ASan + UBSan, no recovery). UBSan's
# "function" check reads a type hash in front of every function called through a pointer,
# which JIT-compiled kernels do not carry (and the page before them may be unmapped).
asan:
	$(MAKE) BUILD=build/asan CC=$(CLANG) OPT="-O1 -g" \
	  SAN="-fsanitize=address,undefined -fno-sanitize=function -fno-sanitize-recover=all -fno-omit-frame-pointer" all

# libFuzzer harness over parse + verify.
FUZZ_SAN := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
fuzz:
	$(MAKE) BUILD=build/fuzz CC=$(CLANG) OPT="-O1 -g" SAN="$(FUZZ_SAN)" build/fuzz/libcxla.a
	$(CLANG) $(CPPFLAGS) -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	  tests/fuzz/fuzz_parse.c build/fuzz/libcxla.a $(LIBS) -o build/fuzz/fuzz_parse

setup:
	@./scripts/setup.sh

demo: setup
	@$(MAKE) --no-print-directory all
	@./examples/demo.sh

test: setup
	@$(MAKE) --no-print-directory all asan fuzz
	@./tests/run_all.sh

# The normal-build suite only (what a developer runs between edits).
check-fast: all
	@./tests/run_all.sh --fast

# docs/ops.md from the op table and the library's own predicates; the unit test docs_ops_md
# fails while the checked-in file differs from what this writes.
docs: $(BUILD)/cxla_tests
	@CXLA_WRITE_OPS_DOC=docs/ops.md $(BUILD)/cxla_tests docs_ops_md

# Benchmarks against their peers (bench/README.md); never part of `make test`. Builds the
# library in build/bench. BENCH_ARGS go to bench_main, e.g. BENCH_ARGS="--only=gemm --rounds=30".
bench:
	@./bench/run.sh $(BENCH_ARGS)

clean:
	rm -rf build

-include $(DEPS)
