#!/bin/sh
# demo.sh — what `make demo` shows: cxla parsing, verifying and running a JAX-style module
# (examples/showcase.hlo: a 2-layer MLP classifier with softmax) on seeded random inputs, then
# saving its results as .npy files; then training on Fashion-MNIST from C (examples/train.c):
# softmax regression and an MLP, each step JIT-compiled and timed against op by op.
# Usage: examples/demo.sh [path/to/cxla]   (examples/train is looked for beside it)
set -eu
cd "$(dirname "$0")/.."
CXLA=${1:-build/cxla}
TRAIN=$(dirname "$CXLA")/examples/train
TIMELINE=$(dirname "$CXLA")/timeline.json
MODULE=examples/showcase.hlo
out=$(mktemp -d "${TMPDIR:-/tmp}/cxla_demo.XXXXXX")
trap 'rm -rf "$out"' EXIT INT TERM

echo "== cxla demo: $MODULE"
echo "   a 2-layer MLP forward pass as JAX dumps it: 8 inputs x 16 features -> 32 hidden (ReLU)"
echo "   -> 10 classes -> softmax; parameters x, w1, b1, w2, b2 filled with seeded random values."
echo
echo "\$ $CXLA run $MODULE --random-inputs=42 --stats"
"$CXLA" run "$MODULE" --random-inputs=42 --stats
echo
echo "   [0] holds each input's class probabilities (every row sums to 1); [1] each row's"
echo "   largest probability. The same seed always gives the same inputs and results."
echo
echo "\$ $CXLA run $MODULE --random-inputs=42 --out $out"
"$CXLA" run "$MODULE" --random-inputs=42 --out "$out"
echo
echo "   Each result leaf is now a .npy file numpy can load (np.load). With real inputs, run:"
echo "   $CXLA run $MODULE x.npy w1.npy b1.npy w2.npy b2.npy [--out DIR]"
echo
echo "== the same module JIT-compiled for this CPU (LLVM, fused kernels, every core)"
echo "\$ $CXLA run $MODULE --random-inputs=42 --backend=cpu --repeat=200"
"$CXLA" run "$MODULE" --random-inputs=42 --backend=cpu --repeat=200 2>&1 | grep -E '^(compile|execute|\[1\])'
echo "   (the reference interpreter, for comparison:)"
"$CXLA" run "$MODULE" --random-inputs=42 --repeat=20 2>&1 | grep -E '^execute'
echo
echo "\$ $CXLA compile $MODULE --backend=cpu --dump-to=$out/dump"
"$CXLA" compile "$MODULE" --backend=cpu --dump-to="$out/dump" | head -n 1
grep '^kernels=' "$out/dump"/*.buffer-assignment.txt | sed 's/^/   /'
echo "   $(ls "$out/dump" | wc -l) files: the module after every pass (.hlo, .dot; --dump-format=hlo,dot,svg adds .svg), each pass's time,"
echo "   the buffer assignment, LLVM IR before and after optimisation, and the assembly."
echo "   The same results as above: the interpreter is the reference every backend is checked against."
echo
echo "== training on Fashion-MNIST from C (examples/train.c, only the public API): each model is built"
echo "   with the builder, cxla_module_train_step turns its loss into one executable doing forward, loss,"
echo "   gradients and the Adam update, and the weights stay in buffers each execution updates in place."
echo "\$ $TRAIN --model=softmax,mlp --jit=both --trace=$TIMELINE"
"$TRAIN" --model=softmax,mlp --jit=both --trace="$TIMELINE"
echo
echo "   The CNN (two conv + ReLU + max-pool layers, two dense) trains to about 0.90 in 3 epochs:"
echo "   $TRAIN --model=cnn            (a few minutes on two cores; --help lists the options,"
echo "   docs/train_demo.md explains them and the timeline)"
