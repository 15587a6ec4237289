#!/bin/sh
# bench_runtime.sh [BUILD] [THREADS] — builds the benchmarks against BUILD's library (default
# build/, made by `make BUILD=... all BUILD/cxla.pc`; bench/build.sh) and runs bench_runtime with
# THREADS threads (0: all CPUs). On a loaded machine, CPU_TIME=1 with THREADS=1 times by thread
# CPU time instead of wall time.
set -e
cd "$(dirname "$0")/.."
BUILD=${1:-build}
make --no-print-directory BUILD="$BUILD" "$BUILD/cxla.pc" >/dev/null
./bench/build.sh "$BUILD"
exec "$BUILD/bench-bin/bench_runtime" "${2:-0}"
