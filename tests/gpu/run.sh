#!/bin/sh
# run.sh — `make test-gpu`: the gpu backend's differential suite on a real GPU. The same tests
# that `make test` runs on the emulated GPU (--backend=gpu-emu): every tests/hlo module the gpu
# backend accepts, the hand-made ones (reductions, ragged launches, dots, TF32, loops and
# conditionals, and as CUDA graphs: test_gpu_graph.c) and the random graphs, each against the
# reference interpreter, here with CXLA_TEST_GPU_BACKEND=gpu. Without a GPU every
# module is refused with the driver's message, which is a failure here (not in `make test`).
# Environment: CXLA_BUILD (default build): where cxla_tests is; CXLA_RANDGRAPH_GPU_N (150).
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${CXLA_BUILD:-build}
export CXLA_SRC="$(pwd)" CXLA_TEST_GPU_BACKEND=gpu
if ! "$BUILD/cxla" run tests/hlo/ops/add.hlo --random-inputs --backend=gpu --check >/dev/null; then
  echo "test-gpu: the gpu backend cannot run here (above); 0 passed, 1 failed"
  echo "0 passed, 1 failed"
  exit 1
fi
passed=0 failed=0
for filter in gpu_emu gpu_graph random_graph_gpu; do
  out=$("$BUILD/cxla_tests" "$filter" 2>&1)
  rc=$?
  printf '%s\n' "$out" | grep -v '^  input [0-9]'
  line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -1)
  p=${line%% passed*}
  f=${line#*, }
  f=${f%% failed*}
  [ -n "$line" ] || { p=0; f=1; }
  [ "$rc" -eq 0 ] || [ "$f" -gt 0 ] || f=1
  passed=$((passed + p)) failed=$((failed + f))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
