#!/bin/sh
# bench/run.sh — builds the library in build/bench (or $BUILD), the benchmark driver against it,
# and runs it; extra arguments go to bench_main (--threads=N --rounds=N --gap-us=N --only=...).
# Not part of `make test`. Usage: ./bench/run.sh [bench_main args]   (or: make bench)
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
make --no-print-directory -C "$SRC" BUILD="$ROOT/$BUILD" -j"$JOBS" "$ROOT/$BUILD/libcxla.a" "$ROOT/$BUILD/cxla" >/dev/null
LLVM_LIBDIR=$(llvm-config-19 --libdir)
CC=${CC:-cc}
OBJ="$BUILD/benchobj"
mkdir -p "$OBJ"
# The peers: exactly the STREAM-style flags, and -ffast-math only for the softmax peer (libmvec expf).
gcc -std=c11 -O3 -march=native -fopenmp -Wall -Wextra -c bench/baselines.c -o "$OBJ/baselines.o"
gcc -std=c11 -O3 -march=native -fopenmp -ffast-math -Wall -Wextra -c bench/baseline_fast.c -o "$OBJ/baseline_fast.o"
for f in bench_main bench_util bench_mem bench_blas bench_compile; do
  $CC -std=c11 -O2 -g -Wall -Wextra -Wno-missing-field-initializers -D_GNU_SOURCE -I"$SRC/include" -pthread \
    -c bench/$f.c -o "$OBJ/$f.o"
done
$CC -fopenmp -o "$BUILD/bench_main" "$OBJ"/bench_main.o "$OBJ"/bench_util.o "$OBJ"/bench_mem.o \
  "$OBJ"/bench_blas.o "$OBJ"/bench_compile.o "$OBJ"/baselines.o "$OBJ"/baseline_fast.o "$BUILD/libcxla.a" \
  -L"$LLVM_LIBDIR" -Wl,-rpath,"$LLVM_LIBDIR" -lLLVM-19 -lopenblas -lz -lm -ldl -lpthread
exec "$BUILD/bench_main" "$@"
