#!/bin/sh
# run.sh — GPU benchmarks (issue 12), on a machine with an NVIDIA GPU: the time of each module's
# kernels per execution (CUDA events around every step, from the --trace file; host<->device
# copies at the edges are not in it) and the bandwidth against a device-to-device copy of the
# same size, measured in the same run:
#   chain    a 10-op elementwise fusion over 64 Mi f32 (goal: >= 85% of the copy's GB/s)
#   softmax  row softmax of f32[65536,1024] (goal: >= 70%)
# and the f32 and bf16 8192^3 GEMMs' TFLOP/s against cuBLASLt called directly
# (bench/gpu/lt_direct.c, built here when missing; goal >= 95%).
# Environment: CXLA (default build/cxla), LT_DIRECT (build/lt_direct), CXLA_BENCH_REPEAT (10).
set -eu
cd "$(dirname "$0")/../.."
CXLA=${CXLA:-build/cxla}
REPEAT=${CXLA_BENCH_REPEAT:-10}
LT_DIRECT=${LT_DIRECT:-build/lt_direct}
[ -x "$LT_DIRECT" ] || cc -std=c11 -O2 -o "$LT_DIRECT" bench/gpu/lt_direct.c -ldl
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
MiB=1048576
measure() { # NAME BYTES: prints "NAME: us GB/s (steps)"; the GB/s goes to $T/NAME
  "$CXLA" run "bench/gpu/$1.hlo" --random-inputs --backend=gpu --repeat="$REPEAT" --trace="$T/$1.json" >/dev/null 2>"$T/$1.err" ||
    { cat "$T/$1.err"; exit 1; }
  line=$(python3 bench/gpu/kernels.py "$T/$1.json" "$2")
  echo "$1: $line"
  echo "$line" | awk '{print $3}' > "$T/$1.gbs"
}
"$CXLA" run bench/gpu/copy.hlo --random-inputs --backend=gpu --stats 2>&1 | grep -o 'gpu="[^"]*" ptx_target=[^ ]* ptx_isa=[^ ]*' | head -1
measure copy $((512 * MiB))
measure chain $((768 * MiB))
measure softmax $((512 * MiB))
copy=$(cat "$T/copy.gbs")
for m in chain softmax; do
  echo "$m / copy bandwidth: $(awk -v a="$(cat "$T/$m.gbs")" -v b="$copy" 'BEGIN{printf "%.2f", a / b}')"
done
for t in f32 bf16; do
  measure gemm_$t $((3 * 8192 * 8192 * 4)) >/dev/null
  us=$(python3 bench/gpu/kernels.py "$T/gemm_$t.json" 1 | awk '{print $1}')
  direct=$("$LT_DIRECT" 8192 8192 8192 $t)
  awk -v t="$t" -v us="$us" -v d="$direct" 'BEGIN { split(d, f, " "); r = 2 * 8192^3 / us / 1e6;
    printf "gemm %s 8192^3: cxla %.1f us %.1f TFLOP/s, cuBLASLt direct %s; ratio %.2f\n", t, us, r, d, r / f[3] }'
done
