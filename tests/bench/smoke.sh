#!/bin/sh
# tests/bench/smoke.sh BUILD — a part of `make test`: the benchmarks build (bench/build.sh, the
# link line from pkg-config, as `make bench` builds them) and each one runs once at tiny sizes,
# checking its results, so that they cannot rot between the sessions that measure with them.
# Their timings mean nothing here. Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${1:-build}
BIN="$BUILD/bench-bin"
PASSED=0
FAILED=0
LOG=$(mktemp "${TMPDIR:-/tmp}/cxla-bench-smoke.XXXXXX")
DUMP=$(mktemp -d "${TMPDIR:-/tmp}/cxla-bench-dump.XXXXXX")
trap 'rm -rf "$LOG" "$DUMP"' EXIT

# check NAME COMMAND...: one check; its output is shown only when it fails.
check() {
  name=$1
  shift
  if "$@" > "$LOG" 2>&1; then
    PASSED=$((PASSED + 1))
    echo "ok   $name"
  else
    FAILED=$((FAILED + 1))
    tail -n 30 "$LOG"
    echo "FAIL $name"
  fi
}

check "bench/build.sh links every benchmark (pkg-config --static --libs cxla)" \
  sh -c "make --no-print-directory -s BUILD='$BUILD' '$BUILD/cxla.pc' && ./bench/build.sh '$BUILD'"
# Each group of bench_main once, results checked against its baseline (non-zero exit if wrong).
check "bench_main --smoke: every group at tiny sizes, results checked" "$BIN/bench_main" --smoke --threads=2
check "bench_runtime: parallel_for, GEMM wrapper, im2col convolutions" "$BIN/bench_runtime" 2
check "bench_gemm_pool --smoke: the MLP step's GEMMs split over the pool, results checked" "$BIN/bench_gemm_pool" --smoke
check "bench_gemm_pool --smoke --work: the same, shares one after the other" "$BIN/bench_gemm_pool" --smoke --work
if [ -x "$BIN/bench_vecmath" ]; then
  check "bench_vecmath: f32 sin/cos/tan/pow against libmvec and libm, cxla within its bound" "$BIN/bench_vecmath" 4099 1
fi
if [ -x "$BIN/bench_vecmath_f64" ]; then
  check "bench_vecmath_f64: f64 math with libmvec on and off, cxla within its bound" "$BIN/bench_vecmath_f64" 4099 1
fi
if [ -x "$BIN/bench_libs" ]; then
  check "bench_libs --smoke: GEMM and convolution libraries, results checked" "$BIN/bench_libs" --smoke
fi
check "diag_llvm on a --dump-to IR file" sh -c "'$BUILD/cxla' compile bench/hlo/chain9.hlo --backend=cpu --dump-to='$DUMP' &&
  '$BIN/diag_llvm' \"\$(ls '$DUMP'/*ir-before-opt.ll | head -n 1)\" 1"
JAX_PY=$BUILD/venv/bin/python
check "time_to_accuracy.py: the CNN to test accuracy 0.5 in cxla (and jax, torch where installed)" \
  python3 bench/time_to_accuracy.py --cxla "$BUILD/examples/train" --jax-python "$JAX_PY" --target 0.5
# jax as the python tests install it (tests/python/python_test.sh); without PyPI the venv is there
# but holds no jax, and that part is skipped there as here
if [ -x "$JAX_PY" ] && "$JAX_PY" -c "import jax" > /dev/null 2>&1; then
  check "compile_depth.py: 1 and 2 stacked transformer blocks, cxla's CLI and jax" \
    env CXLA_BUILD="$BUILD" "$JAX_PY" bench/compile_depth.py --depths 1,2 --rounds 1
fi
if [ -x "$BIN/bench_allreduce" ] && command -v mpirun > /dev/null 2>&1; then
  ROOT_FLAG=""
  [ "$(id -u)" = 0 ] && ROOT_FLAG="--allow-run-as-root"
  MPIRUN="mpirun $ROOT_FLAG --oversubscribe --mca btl self,vader -np 2"
  check "bench_allreduce under mpirun -np 2, one round" $MPIRUN "$BIN/bench_allreduce" 1
  check "bench_train_dp under mpirun -np 2, 2 rounds at batch 32" $MPIRUN "$BIN/bench_train_dp" 2 32
fi
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
