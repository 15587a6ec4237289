# train_common.sh — sourced by the training demo's tests (train_test.sh, train_dp_test.sh) with
# the repository root as the working directory and $1 the build folder: the demo binary
# ($TRAIN), the Fashion-MNIST folder ($FASHION), the ok/bad/finish counters that end with
# "N passed, N failed", and a scratch folder $T (removed at exit) named after $TRAIN_TEST.
BUILD=${1:-build}
case $BUILD in /*) TRAIN=$BUILD/examples/train ;; *) TRAIN=$(pwd)/$BUILD/examples/train ;; esac
FASHION=/usr/share/datasets/fashion-mnist
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1: $2"; }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit $?; }

[ -x "$TRAIN" ] || { bad "examples/train is built" "no $TRAIN (make BUILD=$BUILD all)"; finish; }
[ -f "$FASHION/train-images-idx3-ubyte.gz" ] ||
  { bad "Fashion-MNIST is installed" "no $FASHION (scripts/setup.sh installs dataset-fashion-mnist)"; finish; }
T=$(mktemp -d "${TMPDIR:-/tmp}/cxla_$TRAIN_TEST.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT INT TERM
unset CXLA_FLAGS
