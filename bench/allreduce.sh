#!/bin/sh
# allreduce.sh [BUILD] [NP] [ROUNDS] — cxla's all-reduce against MPI_Allreduce under mpirun
# (bench/allreduce.c): builds it (bench/build.sh: mpicc against BUILD's libcxla.so) and prints a markdown
# table of bus bandwidths. Not part of `make test`.
set -e
cd "$(dirname "$0")/.."
BUILD=${1:-build}
NP=${2:-2}
ROUNDS=${3:-15}
make --no-print-directory BUILD="$BUILD" "$BUILD/cxla.pc" >/dev/null
./bench/build.sh "$BUILD"
ROOT=""
[ "$(id -u)" = 0 ] && ROOT="--allow-run-as-root"
mpirun $ROOT --oversubscribe --mca btl self,vader -np "$NP" "$BUILD/bench-bin/bench_allreduce" "$ROUNDS"
