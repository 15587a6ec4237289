#!/bin/sh
# train_dp.sh [BUILD] [NP] [ROUNDS] [BATCH] — scaling of the data-parallel MLP training step
# from one process to NP under mpirun, at the same global batch (bench/train_dp.c: the
# contenders in turns in one job, medians, steps/s and images/s, and the ratios). Builds it
# (bench/build.sh: mpicc against BUILD's libcxla.so) and examples/train_models.c (the demo's models). Not
# part of `make test`.
set -e
cd "$(dirname "$0")/.."
BUILD=${1:-build}
NP=${2:-2}
ROUNDS=${3:-200}
BATCH=${4:-128}
make --no-print-directory BUILD="$BUILD" "$BUILD/cxla.pc" >/dev/null
./bench/build.sh "$BUILD"
ROOT=""
[ "$(id -u)" = 0 ] && ROOT="--allow-run-as-root"
mpirun $ROOT --oversubscribe --mca btl self,vader -np "$NP" "$BUILD/bench-bin/bench_train_dp" "$ROUNDS" "$BATCH"
