#!/bin/sh
# train_dp.sh [BUILD] [ROUNDS] [STEPS] [BATCH] — scaling of the data-parallel MLP training step
# (examples/train --model=mlp, docs/train_demo.md) from one process to two under mpirun, at the
# same global batch: each of the two takes half of every batch and the step all-reduces the
# gradients. Three runs per round, in turns (the order rotated every round), each training
# STEPS steps on Fashion-MNIST; the demo reports its median step time (the first call left out),
# the table the median over rounds:
#   np=1 t=1   one process, cxla on one thread (--threads=1)
#   np=1 t=2   one process, cxla on both cores (--threads=2)
#   np=2 t=1   two processes, one thread each: the same cores, split by data
# and the ratios np=2 over each np=1 in steps/s (images/s is steps/s times BATCH). Not part of
# `make test`; run it on an idle machine.
set -e
cd "$(dirname "$0")/.."
BUILD=${1:-build}
ROUNDS=${2:-5}
STEPS=${3:-400}
BATCH=${4:-128}
TRAIN=$BUILD/examples/train
[ -x "$TRAIN" ] || { echo "no $TRAIN (make BUILD=$BUILD all)" >&2; exit 2; }
MPIRUN="mpirun --oversubscribe --mca btl self,vader"
[ "$(id -u)" = 0 ] && MPIRUN="$MPIRUN --allow-run-as-root"
T=$(mktemp -d "${TMPDIR:-/tmp}/cxla_train_dp.XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM
ARGS="--model=mlp --steps=$STEPS --batch=$BATCH --trace= --log-every=$STEPS"

# run NAME: one training of configuration NAME; appends its median step time (ms) to $T/NAME
run() {
  case $1 in
    np1t1) CXLA_FLAGS=--threads=1 "$TRAIN" $ARGS >"$T/out" ;;
    np1t2) CXLA_FLAGS=--threads=2 "$TRAIN" $ARGS >"$T/out" ;;
    np2t1) $MPIRUN -np 2 -x CXLA_FLAGS=--threads=1 "$TRAIN" $ARGS >"$T/out" ;;
  esac
  grep -q "data-parallel over 2" "$T/out" || [ "$1" != np2t1 ] || { echo "np2t1 did not run data-parallel" >&2; exit 1; }
  sed -n 's/.*(median \([0-9.]*\) ms).*/\1/p' "$T/out" >>"$T/$1"
}
for r in $(seq 1 "$ROUNDS"); do
  case $((r % 3)) in
    0) order="np1t1 np1t2 np2t1" ;;
    1) order="np1t2 np2t1 np1t1" ;;
    *) order="np2t1 np1t1 np1t2" ;;
  esac
  for c in $order; do run "$c"; done
done
med() { sort -n "$T/$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
a=$(med np1t1) b=$(med np1t2) c=$(med np2t1)
echo "MLP 784-128-64-10, Adam, global batch $BATCH, $STEPS steps a run, median of $ROUNDS runs each ($(nproc) cores)"
echo
echo "| configuration | step (ms) | steps/s | images/s | np=2 speed-up |"
echo "|---|---|---|---|---|"
awk -v a="$a" -v b="$b" -v c="$c" -v B="$BATCH" 'BEGIN {
  printf "| np=1, 1 thread | %.3f | %.0f | %.0f | %.2fx |\n", a, 1000 / a, 1000 * B / a, a / c
  printf "| np=1, 2 threads | %.3f | %.0f | %.0f | %.2fx |\n", b, 1000 / b, 1000 * B / b, b / c
  printf "| np=2, 1 thread each | %.3f | %.0f | %.0f | — |\n", c, 1000 / c, 1000 * B / c
}'
