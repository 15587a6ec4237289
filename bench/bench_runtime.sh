#!/bin/sh
# bench_runtime.sh [BUILD] [THREADS] — builds bench/bench_runtime.c against BUILD/libcxla.a
# (default build/, made by `make BUILD=...`) and runs it with THREADS threads (0: all CPUs).
# On a loaded machine, CPU_TIME=1 with THREADS=1 times by thread CPU time instead of wall time.
set -e
BUILD=${1:-build}
LLVM_LIBDIR=$(llvm-config-19 --libdir)
cc -std=c11 -O2 -g -D_GNU_SOURCE -Iinclude -Isrc -pthread bench/bench_runtime.c "$BUILD/libcxla.a" \
  -L"$LLVM_LIBDIR" -Wl,-rpath,"$LLVM_LIBDIR" -lLLVM-19 -lopenblas -lz -lm -ldl -lpthread -o "$BUILD/bench_runtime"
exec "$BUILD/bench_runtime" "${2:-0}"
