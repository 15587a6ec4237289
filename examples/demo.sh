#!/bin/sh
# demo.sh — what `make demo` shows: cxla parsing, verifying and running a JAX-style module
# (examples/showcase.hlo: a 2-layer MLP classifier with softmax) on seeded random inputs, then
# saving its results as .npy files. Usage: examples/demo.sh [path/to/cxla]
set -eu
cd "$(dirname "$0")/.."
CXLA=${1:-build/cxla}
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
