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
# Hidden by default: libcxla.so exports only what include/cxla.h declares (it says so itself).
# -Werror=switch: a switch over an enum with no default: must name every value, so a new op or
# element type makes the build list each place that has to decide what it means.
CFLAGS_ALL  := -std=c11 -Wall -Wextra -Werror=switch -Wno-missing-field-initializers -fPIC -fvisibility=hidden -pthread $(OPT) $(SAN) $(CFLAGS)
comma       := ,
# LLVM from Debian's static archives (llvm-19-dev ships them beside libLLVM.so), only the
# components cxla calls: a new process then loads a few MB of LLVM's code with no symbol
# lookups, instead of relocating all of libLLVM.so (381k relocations, 14.6 ms before main on
# its own, 20+ ms beside cxla's other libraries: half a warm-cache first step, bench/README.md).
# Without the archives, the shared library.
LLVM_COMPONENTS := orcjit passes x86 nvptx
LLVM_STATIC := $(if $(wildcard $(LLVM_LIBDIR)/libLLVMCore.a),$(shell $(LLVM_CONFIG) --link-static --libs $(LLVM_COMPONENTS) 2>/dev/null))
LLVM_LIBS   := $(if $(LLVM_STATIC),-L$(LLVM_LIBDIR) $(LLVM_STATIC) -lzstd -lstdc++,$(if $(LLVM_LIBDIR),-L$(LLVM_LIBDIR) -Wl$(comma)-rpath$(comma)$(LLVM_LIBDIR)) -lLLVM-19)
LIBS        := $(LLVM_LIBS) -lopenblas -ldnnl -lgomp -lfftw3f_threads -lfftw3_threads -lfftw3f -lfftw3 -lz -lm -ldl -lpthread
# Links drop the archives' unused sections. A shared library keeps their symbols to itself,
# and stays loaded once loaded, as libLLVM.so does (NODELETE): LLVM's static state is never
# torn down, so unloading it would leave what its globals hold behind.
LDFLAGS_ALL := -Wl,--gc-sections $(LDFLAGS)
SHARED_LD   := -Wl,--exclude-libs,ALL -Wl,-z,nodelete
# Open MPI (docs/collectives.md), through its pkg-config file; a build without it runs every
# process as a run of one device.
MPI_LIBS    := $(shell pkg-config --libs ompi-c 2>/dev/null)
CPPFLAGS    += $(if $(MPI_LIBS),$(shell pkg-config --cflags ompi-c) -DCX_HAVE_MPI)
LIBS        += $(MPI_LIBS)

# The version is written once, in include/cxla.h (CXLA_VERSION_MAJOR/MINOR/PATCH).
version_of   = $(shell sed -n 's/^.define CXLA_VERSION_$(1)  *\([0-9][0-9]*\).*/\1/p' include/cxla.h)
VERSION     := $(call version_of,MAJOR).$(call version_of,MINOR).$(call version_of,PATCH)
SONAME      := libcxla.so.$(call version_of,MAJOR)
SHLIB       := libcxla.so.$(VERSION)

# `make install PREFIX=... [DESTDIR=...]`: header, libraries (the PJRT plugin libcxla_pjrt.so
# among them), cxla.pc, the CLI and its man page.
PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/bin
LIBDIR      ?= $(PREFIX)/lib
INCLUDEDIR  ?= $(PREFIX)/include
MANDIR      ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig

LIB_SRCS    := $(sort $(wildcard src/*/*.c src/*/*/*.c))
LIB_OBJS    := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
TEST_SRCS   := $(sort $(wildcard tests/unit/*.c))
TEST_OBJS   := $(TEST_SRCS:%.c=$(BUILD)/obj/%.o)
CLI_OBJS    := $(patsubst %.c,$(BUILD)/obj/%.o,$(sort $(wildcard tools/*.c)))
PJRT_OBJS   := $(patsubst %.c,$(BUILD)/obj/%.o,$(sort $(wildcard pjrt/*.c)))
DEPS        := $(LIB_OBJS:.o=.d) $(TEST_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(PJRT_OBJS:.o=.d)

.PHONY: all demo test test-gpu setup clean asan fuzz bench check-fast docs install uninstall python
all: $(BUILD)/libcxla.a $(BUILD)/libcxla.so $(BUILD)/cxla $(BUILD)/cxla_tests $(BUILD)/examples/train \
     $(BUILD)/libcxla_pjrt.so $(BUILD)/pjrt_test

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

$(BUILD)/$(SHLIB): $(LIB_OBJS)
	@$(if $(V),,echo "  LD  $@")
	$(Q)$(CC) -shared $(SAN) $(LDFLAGS_ALL) $(SHARED_LD) -Wl,-soname,$(SONAME) -o $@ $^ $(LIBS)

# The usual links: libcxla.so (for -lcxla) -> libcxla.so.MAJOR (the soname) -> the file.
$(BUILD)/libcxla.so: $(BUILD)/$(SHLIB)
	$(Q)ln -sf $(SHLIB) $(BUILD)/$(SONAME)
	$(Q)ln -sf $(SONAME) $@

# pkg-config: Libs.private is what a static link of libcxla.a needs as well.
# Written on every make (PREFIX may differ from the last one); cheap.
$(BUILD)/cxla.pc: FORCE
	@$(if $(V),,echo "  GEN $@")
	$(Q)printf '%s\n' 'prefix=$(PREFIX)' 'exec_prefix=$${prefix}' \
	  'libdir=$(patsubst $(PREFIX)%,$${exec_prefix}%,$(LIBDIR))' \
	  'includedir=$(patsubst $(PREFIX)%,$${prefix}%,$(INCLUDEDIR))' '' \
	  'Name: cxla' 'Description: a just-in-time compiler for XLA HLO (C API)' 'Version: $(VERSION)' \
	  'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -lcxla' 'Libs.private: $(LIBS)' > $@

# The man page is cxla --help and --version, through Debian's help2man (scripts/setup.sh), with a
# section per command (its --help up to the flags, unfilled) for the commands `cxla --help` lists.
$(BUILD)/cxla.1: $(BUILD)/cxla
	@$(if $(V),,echo "  GEN $@")
	$(Q)command -v help2man >/dev/null || { echo "make: help2man is missing (scripts/setup.sh installs it)" >&2; exit 1; }
	$(Q)for c in $$($(BUILD)/cxla --help | awk '/^commands:/ { on = 1; next } on && NF == 0 { exit } on && $$1 != "help" && $$1 !~ /^-/ { print $$1 }'); do \
	  printf '[COMMAND %s]\n.nf\n' "$$(echo $$c | tr a-z A-Z)"; $(BUILD)/cxla $$c --help | sed -e '/^cxla flags (any command/,$$d' -e 's/\\/\\e/g'; printf '.fi\n'; \
	done > $@.inc
	$(Q)help2man --no-info --section=1 --name="a just-in-time compiler for XLA HLO" --include=$@.inc --output=$@ $(BUILD)/cxla

install: $(BUILD)/libcxla.a $(BUILD)/libcxla.so $(BUILD)/cxla $(BUILD)/cxla.pc $(BUILD)/cxla.1 $(BUILD)/libcxla_pjrt.so
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 644 include/cxla.h $(DESTDIR)$(INCLUDEDIR)/cxla.h
	install -m 755 $(BUILD)/$(SHLIB) $(DESTDIR)$(LIBDIR)/$(SHLIB)
	ln -sf $(SHLIB) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libcxla.so
	install -m 644 $(BUILD)/libcxla.a $(DESTDIR)$(LIBDIR)/libcxla.a
	install -m 755 $(BUILD)/libcxla_pjrt.so $(DESTDIR)$(LIBDIR)/libcxla_pjrt.so
	install -m 644 $(BUILD)/cxla.pc $(DESTDIR)$(PKGCONFIGDIR)/cxla.pc
	install -m 755 $(BUILD)/cxla $(DESTDIR)$(BINDIR)/cxla
	install -m 644 $(BUILD)/cxla.1 $(DESTDIR)$(MANDIR)/man1/cxla.1
	@# A real install (no DESTDIR) as root refreshes the loader's cache so the soname is found.
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi

# The Python package python/cxla (pure Python over libcxla.so, docs/python.md): pip installs it
# into the virtual environment VENV, which is made first, from Debian's python3 with its system
# packages (numpy among them), when it does not exist. Any venv of one's own works as VENV.
VENV    ?= $(BUILD)/pyenv
PYTHON3 ?= $(firstword $(wildcard /usr/bin/python3) python3)
python: $(BUILD)/libcxla.so
	@[ -x $(VENV)/bin/python ] || $(PYTHON3) -m venv --system-site-packages $(VENV)
	$(Q)$(VENV)/bin/python -m pip install --quiet --no-build-isolation ./python
	@echo "cxla for Python is in $(VENV): $(VENV)/bin/python -c 'import cxla' (or . $(VENV)/bin/activate)"

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/cxla.h $(DESTDIR)$(LIBDIR)/$(SHLIB) $(DESTDIR)$(LIBDIR)/$(SONAME) \
	  $(DESTDIR)$(LIBDIR)/libcxla.so $(DESTDIR)$(LIBDIR)/libcxla.a $(DESTDIR)$(LIBDIR)/libcxla_pjrt.so $(DESTDIR)$(PKGCONFIGDIR)/cxla.pc \
	  $(DESTDIR)$(BINDIR)/cxla $(DESTDIR)$(MANDIR)/man1/cxla.1

$(BUILD)/cxla: $(CLI_OBJS) $(BUILD)/libcxla.a
	@$(if $(V),,echo "  LD  $@")
	$(Q)$(CC) $(SAN) $(LDFLAGS_ALL) -o $@ $(CLI_OBJS) $(BUILD)/libcxla.a $(LIBS)

$(BUILD)/cxla_tests: $(TEST_OBJS) $(BUILD)/libcxla.a
	@$(if $(V),,echo "  LD  $@")
	$(Q)$(CC) $(SAN) $(LDFLAGS_ALL) -o $@ $(TEST_OBJS) $(BUILD)/libcxla.a $(LIBS)

# The PJRT C API plugin (docs/pjrt.md): cxla linked in statically, and a version script so
# that GetPjrtApi is its only exported symbol (-z defs: no undefined symbol left, except in a
# sanitizer build, whose runtime the executable brings). pjrt_test (tests/pjrt/) loads it as JAX does,
# with dlopen, so it links nothing of cxla itself.
$(BUILD)/libcxla_pjrt.so: $(PJRT_OBJS) $(BUILD)/libcxla.a pjrt/exports.lds
	@$(if $(V),,echo "  LD  $@")
	$(Q)$(CC) -shared $(SAN) $(LDFLAGS_ALL) $(SHARED_LD) -Wl,--version-script=pjrt/exports.lds $(if $(SAN),,-Wl,-z,defs) -o $@ $(PJRT_OBJS) $(BUILD)/libcxla.a $(LIBS)

$(BUILD)/pjrt_test: tests/pjrt/pjrt_test.c $(wildcard tests/pjrt/*.inc) $(wildcard pjrt/pjrt_abi*.h) $(FLAGS_STAMP)
	@$(if $(V),,echo "  LD  $@")
	$(Q)$(CC) -std=c11 -Wall -Wextra -D_GNU_SOURCE $(OPT) $(SAN) $(CFLAGS) -Ipjrt -pthread -o $@ tests/pjrt/pjrt_test.c -ldl -lm

# examples/train, the training demo (docs/train_demo.md), is built as a user's program is: from
# the public header alone, linked against the shared library (found through its rpath).
TRAIN_SRCS  := $(sort $(wildcard examples/*.c))
$(BUILD)/examples/train: $(TRAIN_SRCS) $(wildcard examples/*.h) include/cxla.h $(BUILD)/libcxla.so
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  LD  $@")
	$(Q)$(CC) -std=c11 -Wall -Wextra $(OPT) $(SAN) $(CFLAGS) -Iinclude -o $@ $(TRAIN_SRCS) \
	  -L$(BUILD) -lcxla -lz -lm -Wl,-rpath,$(abspath $(BUILD))

# Sanitizer build of the library, CLI and tests (clang, ASan + UBSan, no recovery). UBSan's
# "function" check reads a type hash in front of every function called through a pointer,
# which JIT-compiled kernels do not carry (and the page before them may be unmapped).
asan:
	$(MAKE) BUILD=build/asan CC=$(CLANG) OPT="-O1 -g" \
	  SAN="-fsanitize=address,undefined -fno-sanitize=function -fno-sanitize-recover=all -fno-omit-frame-pointer" all

# libFuzzer harnesses: HLO text (parse + verify), MLIR bytecode (StableHLO artifacts: the
# reader, and the reader with the translation and the verifier).
FUZZ_SAN := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
fuzz:
	$(MAKE) BUILD=build/fuzz CC=$(CLANG) OPT="-O1 -g" SAN="$(FUZZ_SAN)" build/fuzz/libcxla.a
	$(CLANG) $(CPPFLAGS) -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	  tests/fuzz/fuzz_parse.c build/fuzz/libcxla.a $(LIBS) -o build/fuzz/fuzz_parse
	$(CLANG) $(CPPFLAGS) -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	  tests/fuzz/fuzz_stablehlo.c build/fuzz/libcxla.a $(LIBS) -o build/fuzz/fuzz_stablehlo
	$(CLANG) $(CPPFLAGS) -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	  tests/fuzz/fuzz_stablehlo_translate.c build/fuzz/libcxla.a $(LIBS) -o build/fuzz/fuzz_stablehlo_translate

setup:
	@./scripts/setup.sh

demo: setup
	@$(MAKE) --no-print-directory all
	@./examples/demo.sh $(BUILD)/cxla

test: setup
	@$(MAKE) --no-print-directory all asan fuzz
	@./tests/run_all.sh

# The gpu backend's differential suite on this machine's NVIDIA GPU (tests/gpu/run.sh); a
# machine without one gets the driver's message and a failure.
test-gpu: setup
	@$(MAKE) --no-print-directory all
	@CXLA_BUILD=$(BUILD) ./tests/gpu/run.sh

# The normal-build suite only (what a developer runs between edits).
check-fast: all
	@./tests/run_all.sh --fast

# docs/ops.md from the op table and the library's own predicates; the unit test docs_ops_md
# fails while the checked-in file differs from what this writes.
docs: $(BUILD)/cxla_tests
	@CXLA_WRITE_OPS_DOC=docs/ops.md $(BUILD)/cxla_tests docs_ops_md

# Benchmarks against their peers (bench/README.md). Builds the library in build/bench (`make
# test` builds the same programs against build/ and runs each once, tiny: tests/bench/smoke.sh). BENCH_ARGS go to bench_main, e.g. BENCH_ARGS="--only=gemm --rounds=30".
bench:
	@./bench/run.sh $(BENCH_ARGS)

clean:
	rm -rf build

FORCE:

-include $(DEPS)
