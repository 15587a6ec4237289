#!/bin/sh
# device_run.sh — on a lent GPU machine that has the NVIDIA driver but not cxla's build
# dependencies: unpacks scripts/gpu_bundle.sh's binaries (carried in build/gpu-bundle), then
# runs `make test-gpu`'s suite (tests/gpu/run.sh), the GPU benchmarks (bench/gpu/run.sh) and
# the MLP training step against jax (bench/gpu/mlp_step.py), logging each into $OUT (or
# build/gpu-logs). Arguments pick and order them (test, bench, mlp; none skips a place).
set -u
cd "$(dirname "$0")/../.." || exit 2
LOGS=${OUT:-build/gpu-logs}
BIN=/tmp/cxla-gpu
mkdir -p "$LOGS" "$BIN"
for b in cxla cxla_tests; do
  python3 -c 'import lzma, sys; open(sys.argv[2], "wb").write(lzma.open(sys.argv[1]).read())' \
    "build/gpu-bundle/$b.xz" "$BIN/$b" && chmod +x "$BIN/$b" || exit 2
done
export LD_LIBRARY_PATH="$(pwd)/build/gpu-bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee "$LOGS/gpu.txt"
for what in "${1:-test}" "${2:-bench}" "${3:-mlp}"; do
  case "$what" in
    test) CXLA_BUILD=$BIN timeout 420 tests/gpu/run.sh > "$LOGS/test-gpu.log" 2>&1; echo "test-gpu exit $?" ;;
    bench) CXLA=$BIN/cxla LT_DIRECT=build/gpu-bundle/lt_direct timeout 150 bench/gpu/run.sh > "$LOGS/bench-gpu.log" 2>&1; echo "bench exit $?" ;;
    mlp) CXLA=$BIN/cxla timeout 150 python3 bench/gpu/mlp_step.py > "$LOGS/mlp-gpu.log" 2>&1; echo "mlp exit $?" ;;
    none) ;;
  esac
done
tail -5 "$LOGS/test-gpu.log" 2>/dev/null
cat "$LOGS/bench-gpu.log" "$LOGS/mlp-gpu.log" 2>/dev/null || true
