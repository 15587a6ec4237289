#!/bin/sh
# train_dp_test.sh BUILD — data-parallel training with examples/train under mpirun (docs/train.md,
# docs/train_demo.md): `mpirun -np 2 train --model=mlp` (each rank half of every batch, the
# gradients averaged by an all-reduce inside the step) against the same training in one process
# on the whole batch, on a Fashion-MNIST subset (3000 training, 1000 test images):
#   - the final weights (--save-weights, .npy) equal to rounding: the batch sums split in two
#     round differently from one sum, so the weights differ in their last bits. SGD with
#     momentum: every weight within 1e-6 absolute. Adam divides by the root of the second
#     moment, so a gradient element near zero whose rounding differs moves its weight by up to
#     lr a step differently: every weight within lr / 10 = 1e-4, and all but 0.01% of them
#     within 1e-6 (measured: 2 of 109386 above 1e-6, the largest 1.04e-5, after 30 steps);
#   - the same losses (to the 4 printed decimals) and the same test accuracy, printed once (by
#     rank 0); the step compiled natively (no interpreter fallback for its all-reduce); with
#     --steps-per-call=5 the loop's body carries the all-reduce;
#   - the same with --replicas=2 (the two devices as threads of one process, no MPI);
#   - a batch that does not split among the ranks: one line on stderr, exit 1.
# Open MPI as root needs --allow-run-as-root, and more ranks than cores --oversubscribe. Ends
# with "N passed, N failed"; without mpirun only the threads run ("mpirun unavailable").
set -u
cd "$(dirname "$0")/../.." || exit 2
TRAIN_TEST=train_dp
. tests/examples/train_common.sh
MPIRUN="mpirun --oversubscribe --mca btl self,vader"
[ "$(id -u)" = 0 ] && MPIRUN="$MPIRUN --allow-run-as-root"

be32() { printf "\\$(printf %03o $(($1 >> 24 & 255)))\\$(printf %03o $(($1 >> 16 & 255)))\\$(printf %03o $(($1 >> 8 & 255)))\\$(printf %03o $(($1 & 255)))"; }
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
cd "$T" || exit 2

# maxdiff DIR1 DIR2: the largest |a - b| over every weight file of both and the fraction of
# elements that differ by more than 1e-6, or "error ..."
maxdiff() {
  python3 - "$1" "$2" <<'EOF'
import array, ast, glob, os, sys
def load(p):
    b = open(p, "rb").read()
    if b[:6] != b"\x93NUMPY": raise SystemExit("error: %s is not .npy" % p)
    n = b[8] | b[9] << 8
    h = ast.literal_eval(b[10:10 + n].decode())
    a = array.array("f"); a.frombytes(b[10 + n:])
    return h["shape"], a
files = sorted(glob.glob(os.path.join(sys.argv[1], "*.npy")))
if not files: raise SystemExit("error: no weights in %s" % sys.argv[1])
worst, above, count = 0.0, 0, 0
for p in files:
    s1, a = load(p)
    s2, b = load(os.path.join(sys.argv[2], os.path.basename(p)))
    if s1 != s2 or len(a) != len(b): raise SystemExit("error: %s: shapes %s and %s" % (p, s1, s2))
    d = [abs(x - y) for x, y in zip(a, b)]
    worst, above, count = max([worst] + d), above + sum(x > 1e-6 for x in d), count + len(d)
print("%.3g %.3g" % (worst, above / count))
EOF
}
losses() { sed -n 's/^ *step .* loss \([0-9.]*\) .*/\1/p' "$1" | tr '\n' ' '; }
acc() { sed -n 's/^test accuracy \([0-9.]*\).*/\1/p' "$1" | tr '\n' ' '; }

# compare NAME TOL HOW ARGS...: ARGS in one process and on 2 devices, HOW mpi (mpirun -np 2) or
# threads (--replicas=2); weights within TOL and no more than 0.01% of them beyond 1e-6, the
# same losses and accuracy, printed once.
compare() {
  name=$1 tol=$2 how=$3
  shift 3
  rm -rf "$T/w1" "$T/w2" && mkdir "$T/w1" "$T/w2"
  "$TRAIN" --trace= --data "$D" --save-weights="$T/w1" "$@" >"$T/one.txt" 2>"$T/one.err"
  rc1=$?
  if [ "$how" = mpi ]; then
    timeout -k 5 120 $MPIRUN -np 2 "$TRAIN" --trace= --data "$D" --save-weights="$T/w2" "$@" >"$T/two.txt" 2>"$T/two.err"
  else
    timeout -k 5 120 "$TRAIN" --replicas=2 --trace= --data "$D" --save-weights="$T/w2" "$@" >"$T/two.txt" 2>"$T/two.err"
  fi
  rc2=$?
  if [ $rc1 != 0 ] || [ $rc2 != 0 ]; then
    bad "$name" "exit $rc1 alone, $rc2 on 2 devices: $(head -c 400 "$T/one.err") $(head -c 400 "$T/two.err")"
    return
  fi
  d=$(maxdiff "$T/w1" "$T/w2")
  l1=$(losses "$T/one.txt") l2=$(losses "$T/two.txt") a1=$(acc "$T/one.txt") a2=$(acc "$T/two.txt")
  if ! grep -q "data-parallel over 2 " "$T/two.txt"; then bad "$name" "no data-parallel line: $(cat "$T/two.txt")"
  elif ! grep -q "compiled the training.*interpreter fallbacks 0" "$T/two.txt"; then
    bad "$name" "the step with its all-reduce is not native on the cpu: $(grep compiled "$T/two.txt")"
  elif [ "$(echo "$a2" | wc -w)" != 1 ]; then bad "$name" "accuracy printed '$a2' on 2 devices, expected once"
  elif ! awk -v d="$d" -v t="$tol" 'BEGIN { split(d, v, " "); exit !(d !~ /error/ && v[1] + 0 <= t + 0 && v[2] + 0 <= 1e-4) }'; then
    bad "$name" "weights differ by up to ${d% *} (tolerance $tol), ${d#* } of them by more than 1e-6 (at most 1e-4)"
  elif [ "$l1" != "$l2" ]; then bad "$name" "losses '$l2' on 2 devices, '$l1' alone"
  elif [ "$a1" != "$a2" ]; then bad "$name" "test accuracy $a2 on 2 devices, $a1 alone"
  else ok "$name: weights within ${d% *} (tolerance $tol; ${d#* } beyond 1e-6), losses $l2, accuracy $a2"; fi
}

compare "mlp, Adam, --replicas=2 threads = one process" 1e-4 threads --model=mlp --steps=30 --batch=64 --log-every=10
if ! command -v mpirun >/dev/null 2>&1; then
  echo "mpirun unavailable (scripts/setup.sh installs openmpi-bin): the runs under mpirun are skipped"
  finish
fi
compare "mlp, Adam, mpirun -np 2 = one process" 1e-4 mpi --model=mlp --steps=30 --batch=64 --log-every=10
compare "mlp, SGD with momentum, mpirun -np 2 = one process" 1e-6 mpi --model=mlp --steps=30 --batch=64 --log-every=10 \
  --optimizer=momentum
compare "mlp, 5 steps per call, mpirun -np 2 = one process" 1e-4 mpi --model=mlp --steps=30 --batch=64 --log-every=10 \
  --steps-per-call=5

run_err() { "$@" >"$T/out.txt" 2>"$T/err.txt"; rc=$?; }
run_err timeout -k 5 60 $MPIRUN -np 2 "$TRAIN" --trace= --data "$D" --model=mlp --steps=2 --replicas=2
if [ $rc != 0 ] && grep -q -- "--replicas=2 runs the devices as threads of one process: not under mpirun" "$T/err.txt"; then
  ok "--replicas under mpirun: $(head -n 1 "$T/err.txt")"
else bad "--replicas under mpirun" "exit $rc: $(cat "$T/err.txt")"; fi

timeout -k 5 60 $MPIRUN -np 2 "$TRAIN" --trace= --data "$D" --model=mlp --steps=2 --batch=63 >"$T/out.txt" 2>"$T/err.txt"
rc=$?
if [ $rc != 0 ] && grep -q "a batch of 63 does not split evenly among 2 processes" "$T/err.txt"; then
  ok "a batch that does not split: $(head -n 1 "$T/err.txt")"
else bad "a batch that does not split" "exit $rc: $(cat "$T/err.txt")"; fi
finish
