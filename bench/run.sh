#!/bin/sh
# bench/run.sh — builds the library in build/bench (or $BUILD), the benchmark driver against it,
# and runs it; extra arguments go to bench_main (--threads=N --rounds=N --gap-us=N --only=...).
# `make test` builds the same programs and runs each group once at tiny sizes (tests/bench/smoke.sh).
# Usage: ./bench/run.sh [bench_main args]   (or: make bench)
# Environment: BUILD (default build/bench), BENCH_FROM_HEAD=1 (build the committed tree only),
# BENCH_DIAG=1 (also a diagnostic chain9/softmax run where glibc recycles freed result memory).
set -e
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build/bench}
JOBS=${JOBS:-2}
ROOT=$(pwd)
SRC=.
if [ -n "$BENCH_FROM_HEAD" ]; then
  # The committed tree only (others' uncommitted edits in the work tree may not build yet).
  BUILD=${BUILD%/}-head
  SRC="$BUILD/src-head"
  rm -rf "$SRC" && mkdir -p "$SRC"
  git archive HEAD Makefile include src tools | tar -x -C "$SRC"
  echo "building the library from HEAD $(git rev-parse --short HEAD) in $SRC"
fi
make --no-print-directory -C "$SRC" BUILD="$ROOT/$BUILD" -j"$JOBS" "$ROOT/$BUILD/libcxla.a" "$ROOT/$BUILD/libcxla.so" \
  "$ROOT/$BUILD/cxla" "$ROOT/$BUILD/cxla.pc" >/dev/null
./bench/build.sh "$BUILD" "$SRC"
if [ -n "$BENCH_FROM_HEAD" ]; then
  echo "library: HEAD $(git rev-parse --short HEAD)"
else
  echo "library: work tree at $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src include tools Makefile 2>/dev/null || echo ' + uncommitted changes under src/include/tools')"
fi
"$BUILD/bench-bin/bench_main" "$@"
if [ -n "$BENCH_DIAG" ]; then
  # Diagnostic, not a result: glibc keeps freed memory (no mmap), so cxla's per-call 64 MiB result
  # reuses already-faulted pages (calloc then memsets it). Separates page-fault cost from kernels.
  echo
  echo "==== diagnostic run: GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4000000000 ===="
  GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4000000000 "$BUILD/bench-bin/bench_main" \
    --only=chain9,softmax --label="Diagnostic (glibc mmap_max=0: results reuse faulted memory; not the API's default)" "$@"
fi
