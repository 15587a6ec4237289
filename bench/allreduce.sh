#!/bin/sh
# allreduce.sh [BUILD] [NP] [ROUNDS] — cxla's all-reduce against MPI_Allreduce under mpirun
# (bench/allreduce.c): builds it against BUILD's libcxla.so with mpicc and prints a markdown
# table of bus bandwidths. Not part of `make test`.
set -e
cd "$(dirname "$0")/.."
BUILD=${1:-build}
NP=${2:-2}
ROUNDS=${3:-15}
mpicc -std=c11 -O2 -Iinclude bench/allreduce.c -L"$BUILD" -lcxla -lm -Wl,-rpath,"$(pwd)/$BUILD" -o "$BUILD/bench_allreduce"
ROOT=""
[ "$(id -u)" = 0 ] && ROOT="--allow-run-as-root"
mpirun $ROOT --oversubscribe --mca btl self,vader -np "$NP" "$BUILD/bench_allreduce" "$ROUNDS"
