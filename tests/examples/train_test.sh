#!/bin/sh
# train_test.sh BUILD — examples/train (the training demo, docs/train_demo.md) end to end, on a
# subset of Fashion-MNIST cut here from Debian's dataset-fashion-mnist (3000 training and 1000
# test images, written as plain and as gzip IDX files):
#   - each model trains: its loss goes down and its test accuracy is well above chance; the
#     learning-rate decay runs through one compiled step (the rate is an argument);
#   - --jit=both gives the same loss op by op, --steps-per-call=10 the same losses as one step
#     per call, --trace writes a timeline with the model's kernels, --dump-to the dumps,
#     --tutorial the tutorial's settings; --target-accuracy stops at the first evaluation that
#     reaches it;
#   - every bad data directory (missing, a file missing, wrong magic, truncated gzip, truncated
#     data, counts that differ, a label out of range) and a bad option: one line on stderr
#     naming the problem, nothing on stdout, a non-zero exit.
# Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
TRAIN_TEST=train
. tests/examples/train_common.sh

# be32 N: N as 4 big-endian bytes (printf octal escapes)
be32() { printf "\\$(printf %03o $(($1 >> 24 & 255)))\\$(printf %03o $(($1 >> 16 & 255)))\\$(printf %03o $(($1 >> 8 & 255)))\\$(printf %03o $(($1 & 255)))"; }

# subset NAME N DIR: the first N items of Fashion-MNIST's NAME, as a plain IDX file in DIR
subset() {
  case $1 in
    *images*) { printf '\000\000\010\003'; be32 "$2"; be32 28; be32 28; gzip -dc "$FASHION/$1.gz" | tail -c +17 | head -c $(($2 * 784)); } ;;
    *) { printf '\000\000\010\001'; be32 "$2"; gzip -dc "$FASHION/$1.gz" | tail -c +9 | head -c "$2"; } ;;
  esac >"$3/$1"
}

D=$T/small
mkdir -p "$D"
subset train-images-idx3-ubyte 3000 "$D"
subset train-labels-idx1-ubyte 3000 "$D"
subset t10k-images-idx3-ubyte 1000 "$D"
subset t10k-labels-idx1-ubyte 1000 "$D"
gzip -k "$D/train-images-idx3-ubyte" && rm "$D/train-images-idx3-ubyte" # one .gz, three plain

# run ARGS...: runs train in $T, stdout in out.txt, stderr in err.txt, status in $rc; no
# timeline unless ARGS ask for one.
cd "$T" || exit 2
run() { "$TRAIN" --trace= "$@" >"$T/out.txt" 2>"$T/err.txt"; rc=$?; }

# trains NAME: the last run succeeded, printed one "test accuracy" line above 0.5 (chance is
# 0.1), and its loss went down from the first progress line to the last.
trains() {
  if [ "$rc" != 0 ]; then bad "$1" "exit $rc: $(head -c 400 "$T/err.txt")"; return; fi
  acc=$(sed -n 's/^test accuracy \([0-9.]*\).*/\1/p' "$T/out.txt")
  first=$(sed -n 's/^ *step .* loss \([0-9.]*\) .*/\1/p' "$T/out.txt" | head -n 1)
  last=$(sed -n 's/^ *step .* loss \([0-9.]*\) .*/\1/p' "$T/out.txt" | tail -n 1)
  if [ "$(echo "$acc" | wc -w)" != 1 ]; then bad "$1" "not one 'test accuracy' line: $(cat "$T/out.txt")"
  elif [ -z "$first" ] || [ -z "$last" ]; then bad "$1" "no progress lines: $(cat "$T/out.txt")"
  elif ! awk "BEGIN { exit !($last < 0.8 * $first) }"; then bad "$1" "loss $first -> $last did not go down"
  elif ! awk "BEGIN { exit !($acc > 0.5) }"; then bad "$1" "test accuracy $acc"
  else ok "$1 (loss $first -> $last, test accuracy $acc)"; fi
}

run --model=softmax --data "$D" --steps=150 --batch=50 --log-every=30 --trace="$T/timeline.json" --dump-to="$T/dumps"
trains "softmax regression trains"
# the default schedule decays the rate for the last quarter: one compile serves both rates
# (one final dump of the step; a rate baked into the step made two)
if grep -q 'compiled the training step once for both learning rates' "$T/out.txt" &&
   [ "$(ls "$T/dumps" | grep -c 'softmax_loss.*cpu-final\.hlo$')" = 1 ]; then ok "the decay schedule compiles the step once"
else bad "one compile" "$(grep compiled "$T/out.txt"; ls "$T/dumps" | grep cpu-final)"; fi
if python3 - "$T/timeline.json" <<'EOF'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
kernels = [e["name"] for e in events if e.get("cat") in ("kernel", "library")]
sys.exit(not (any("gemm" in k for k in kernels) and any("exponential" in k for k in kernels)))
EOF
then ok "--trace writes a timeline whose kernels name the model's ops (gemm, exponential)"
else bad "--trace" "$T/timeline.json lacks the model's kernels"; fi
if ls "$T/dumps" | grep -q 'softmax_loss.*\.hlo$'; then ok "--dump-to writes the dumps"
else bad "--dump-to" "no softmax_loss dumps in $T/dumps"; fi

run --model=mlp --data "$D" --steps=100 --batch=64 --log-every=20 --jit=both --compare-steps=20
trains "MLP trains"
jit=$(sed -n 's/.*loss after step 20: \([0-9.]*\) op by op, \([0-9.]*\) with the JIT.*/\1 \2/p' "$T/out.txt")
if [ -n "$jit" ] && awk -v a="${jit% *}" -v b="${jit#* }" 'BEGIN { d = a - b; exit !(d < 1e-3 && d > -1e-3) }' &&
   grep -q 'ms with the JIT, [0-9.]* ms op by op' "$T/out.txt"; then ok "--jit=both: the same loss op by op ($jit), both step times"
else bad "--jit=both" "$(grep -E 'mean step|loss after' "$T/out.txt")"; fi

run --model=cnn --data "$D" --steps=60 --batch=32 --log-every=20
trains "CNN trains"

# losses LOG: the loss column of the progress lines, one line
losses() { sed -n 's/^ *step .* loss \([0-9.]*\) .*/\1/p' "$1" | tr '\n' ' '; }
run --model=mlp --data "$D" --steps=40 --batch=32 --log-every=10
cp "$T/out.txt" "$T/k1.txt"
run --model=mlp --data "$D" --steps=40 --batch=32 --log-every=10 --steps-per-call=10
k1=$(losses "$T/k1.txt") k10=$(losses "$T/out.txt")
# the same numbers up to float rounding (the loop may fuse the step differently)
same() { awk -v a="$1" -v b="$2" 'BEGIN { n = split(a, x, " "); if (n < 2 || n != split(b, y, " ")) exit 1
  for (i = 1; i <= n; i++) if (x[i] - y[i] > 1e-3 || y[i] - x[i] > 1e-3) exit 1 }'; }
if [ "$rc" = 0 ] && same "$k1" "$k10" && grep -q 'compiled the training loop' "$T/out.txt"; then
  ok "--steps-per-call=10: one loop of 10 steps per execution, the same losses ($k10)"
else bad "--steps-per-call=10" "exit $rc, losses '$k10' against '$k1' with one step per call: $(cat "$T/err.txt")"; fi

# the GPU backend on the emulated GPU: the weights and the Adam state stay in (emulated) device
# memory for the whole run, and the losses are the cpu's to float tolerance
for model in mlp cnn; do
  steps=20 batch=32
  [ "$model" = cnn ] && steps=8 batch=8
  run --model=$model --data "$D" --steps=$steps --batch=$batch --log-every=2 --decay=0
  cpu=$(losses "$T/out.txt")
  run --model=$model --data "$D" --steps=$steps --batch=$batch --log-every=2 --decay=0 --backend=gpu-emu
  emu=$(losses "$T/out.txt")
  if [ "$rc" = 0 ] && same "$cpu" "$emu" && grep -q '^test accuracy' "$T/out.txt"; then
    ok "--backend=gpu-emu: the $model's $steps steps give the cpu's losses ($emu)"
  else bad "--backend=gpu-emu ($model)" "exit $rc, losses '$emu' against the cpu's '$cpu': $(head -c 400 "$T/err.txt")"; fi
done

run --model=softmax --data "$D" --tutorial --log-every=500
if [ "$rc" = 0 ] && grep -q 'SGD lr 0.5, batch 100, 1000 steps' "$T/out.txt"; then ok "--tutorial: SGD lr 0.5, batch 100, 1000 steps"
else bad "--tutorial" "exit $rc: $(head -n 3 "$T/out.txt") $(cat "$T/err.txt")"; fi

# --target-accuracy stops at the first evaluation that reaches it: a low target at the first
# of --eval-every's evaluations, a target no run reaches after all the steps
run --model=softmax --data "$D" --steps=300 --batch=50 --decay=0 --eval-every=50 --target-accuracy=0.5
evals=$(grep -c 'test accuracy .* s since start' "$T/out.txt")
if [ "$rc" = 0 ] && [ "$evals" = 1 ] && grep -q 'reached test accuracy 0.50 at step 50, .* s after the program started' "$T/out.txt"
then ok "--target-accuracy=0.5: stops at step 50, the first evaluation"
else bad "--target-accuracy=0.5" "exit $rc, $evals evaluations: $(cat "$T/out.txt" "$T/err.txt" | head -c 600)"; fi
run --model=softmax --data "$D" --steps=100 --batch=50 --eval-every=50 --target-accuracy=1
evals=$(grep -c 'test accuracy .* s since start' "$T/out.txt")
if [ "$rc" = 0 ] && [ "$evals" = 2 ] && grep -q 'did not reach test accuracy 1.00 in 100 steps' "$T/out.txt"
then ok "--target-accuracy=1: evaluates at steps 50 and 100, says it was not reached"
else bad "--target-accuracy=1" "exit $rc, $evals evaluations: $(cat "$T/out.txt" "$T/err.txt" | head -c 600)"; fi
run --model=softmax --data "$D" --target-accuracy=1.5
if [ "$rc" = 2 ] && grep -q -- "--target-accuracy=1.5: expected 0 < A <= 1" "$T/err.txt"; then ok "a bad --target-accuracy: exit 2"
else bad "a bad --target-accuracy" "exit $rc: $(cat "$T/err.txt")"; fi
run --model=softmax --data "$D" --steps-per-call=10 --steps=100 --eval-every=25
if [ "$rc" = 2 ] && grep -q -- "--eval-every=25 is not a multiple of --steps-per-call=10" "$T/err.txt"; then
  ok "--eval-every not a multiple of --steps-per-call: exit 2"
else bad "--eval-every with --steps-per-call" "exit $rc: $(cat "$T/err.txt")"; fi

# fails NAME TEXT ARGS...: exit 1, nothing on stdout, one line on stderr containing TEXT.
fails() {
  name=$1 text=$2
  shift 2
  run "$@"
  n=$(wc -l <"$T/err.txt")
  if [ "$rc" != 1 ]; then bad "$name" "exit $rc, expected 1 (stderr: $(head -c 300 "$T/err.txt"))"
  elif [ "$n" != 1 ]; then bad "$name" "stderr has $n lines: $(head -c 300 "$T/err.txt")"
  elif [ -s "$T/out.txt" ]; then bad "$name" "stdout not empty: $(head -c 200 "$T/out.txt")"
  elif ! grep -qF -- "$text" "$T/err.txt"; then bad "$name" "stderr lacks '$text': $(cat "$T/err.txt")"
  else ok "$name: $(cat "$T/err.txt")"; fi
}

# broken WHAT: a fresh copy of the subset in $B to break
broken() { B=$T/$1; rm -rf "$B"; cp -r "$D" "$B"; }

fails "missing directory" "$T/none: No such file or directory" --data "$T/none"
fails "a timeline that cannot be written" "cannot write the timeline $T/none/t.json" --data "$D" --trace="$T/none/t.json"
broken nolabels && rm "$B/t10k-labels-idx1-ubyte"
fails "missing file" "$B/t10k-labels-idx1-ubyte: no such file" --data "$B"
broken magic && printf '\000\000\010\002' | dd of="$B/t10k-labels-idx1-ubyte" bs=1 conv=notrunc 2>/dev/null
fails "wrong magic number" "not an IDX file of unsigned bytes with 1 dimension (magic number 00000802" --data "$B"
broken gz && head -c 400000 "$D/train-images-idx3-ubyte.gz" >"$B/train-images-idx3-ubyte.gz"
fails "truncated gzip" "$B/train-images-idx3-ubyte.gz: truncated" --data "$B"
broken short && head -c 100000 "$D/t10k-images-idx3-ubyte" >"$B/t10k-images-idx3-ubyte"
fails "truncated data" "truncated: 99984 of the 784000 data bytes" --data "$B"
broken counts && subset t10k-labels-idx1-ubyte 999 "$B"
fails "counts that differ" "1000 images but 999 labels" --data "$B"
broken label && printf '\014' | dd of="$B/t10k-labels-idx1-ubyte" bs=1 seek=8 conv=notrunc 2>/dev/null
fails "label out of range" "label 12 of example 0 is not a class 0..9" --data "$B"

run --model=resnet
if [ "$rc" = 2 ] && grep -q "expected softmax, mlp, cnn or all" "$T/err.txt" && [ "$(wc -l <"$T/err.txt")" = 1 ]; then
  ok "a bad option: exit 2 and one line"
else bad "a bad option" "exit $rc: $(cat "$T/err.txt")"; fi
run --backend=tpu
if [ "$rc" = 2 ] && grep -q "expected cpu, gpu or gpu-emu" "$T/err.txt"; then ok "a bad --backend: exit 2"
else bad "a bad --backend" "exit $rc: $(cat "$T/err.txt")"; fi
finish
