#!/bin/sh
# python_test.sh BUILD — the Python package (python/cxla), a part of `make test`:
#   1. tests/python/test_cxla.py and test_layout.py (the ctypes structs against include/cxla.h,
#      through a C program compiled then) with Debian's python3 and numpy, the package from the tree;
#   2. `make python`: pip installs the package into a venv (BUILD/pyenv), which then finds the
#      library from anywhere;
#   3. tests/python/test_jax.py (cxla.jit against jax.jit, a jax training loop) in a venv with
#      jax: $CXLA_JAX_VENV (default build/venv), where jax is installed from PyPI when missing
#      (pinned to the version the README's checks used). Skipped, with the reason printed, only
#      when that install is impossible (no network). Then tests/python/test_pjrt.py: JAX on cxla
#      through the PJRT plugin BUILD/libcxla_pjrt.so, against JAX's CPU backend.
# Then mypy on the package, only where a venv with mypy is there: $CXLA_MYPY_VENV (default
# BUILD/venv-dev); mypy is no dependency of the tests.
# Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
BUILD=${1:-build}
PY=${CXLA_PYTHON:-/usr/bin/python3}
[ -x "$PY" ] || PY=$(command -v python3)
JAX_VENV=${CXLA_JAX_VENV:-build/venv}
JAX_VERSION=0.10.2
# what test_pjrt.py's training tests import besides jax; versions that work with JAX_VERSION
JAX_EXTRAS="flax==0.12.8 optax==0.2.8"
PASSED=0
FAILED=0
LOG=$(mktemp "${TMPDIR:-/tmp}/cxla-python.XXXXXX")
trap 'rm -f "$LOG"' EXIT

# count LOG: adds the "N passed, N failed" line of a run (none: one failure)
count() {
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$LOG" | tail -n 1)
  if [ -z "$line" ]; then
    FAILED=$((FAILED + 1))
    echo "FAIL $1 (no summary line)"
    return
  fi
  PASSED=$((PASSED + $(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')))
  FAILED=$((FAILED + $(echo "$line" | sed -E 's/.* ([0-9]+) failed$/\1/')))
}
check() { name=$1; shift; if "$@"; then PASSED=$((PASSED + 1)); echo "ok   $name"; else FAILED=$((FAILED + 1)); echo "FAIL $name"; fi; }

# 1. numpy alone
echo "--- $PY ($($PY --version 2>&1)), numpy $($PY -c 'import numpy; print(numpy.__version__)' 2>&1)"
CXLA_BUILD=$BUILD PYTHONPATH=python "$PY" tests/python/run_tests.py tests/python/test_cxla.py tests/python/test_layout.py \
  > "$LOG" 2>&1
cat "$LOG"
count "test_cxla.py test_layout.py"

# 2. make python, then the installed package from another folder
echo "--- make python VENV=$BUILD/pyenv"
check "make python (pip install ./python into a venv)" make --no-print-directory -s BUILD="$BUILD" VENV="$BUILD/pyenv" PYTHON3="$PY" python
check "the installed package finds the tree's library and runs" sh -c "cd / && CXLA_BUILD='$BUILD' '$ROOT/$BUILD/pyenv/bin/python' -c \"
import cxla, numpy as np
assert cxla.__file__.startswith('$ROOT/$BUILD/pyenv/'), cxla.__file__
assert cxla.library_path == '$ROOT/$BUILD/libcxla.so', cxla.library_path
f = cxla.compile('HloModule m\\nENTRY e {\\n  x = f32[3] parameter(0)\\n  ROOT y = f32[3] multiply(x, x)\\n}\\n')
assert (f(np.arange(3, dtype=np.float32)) == [0, 1, 4]).all()
\""
check "the installed package has its py.typed marker" sh -c "ls '$ROOT/$BUILD'/pyenv/lib/python3*/site-packages/cxla/py.typed > /dev/null"
check "a CXLA_LIBRARY that is not there is an ImportError naming it" sh -c "cd / && CXLA_LIBRARY=/nonexistent/libcxla.so '$ROOT/$BUILD/pyenv/bin/python' -c 'import cxla' 2>&1 | grep -q 'ImportError: cxla: cannot find the cxla library.*nonexistent/libcxla.so (not there)'"

# The package outside any tree (a copy), against a library installed under a prefix: found by
# the loader (LD_LIBRARY_PATH here, ldconfig after a real `make install`) or through pkg-config.
INST=$(mktemp -d "${TMPDIR:-/tmp}/cxla-pyinst.XXXXXX")
if make --no-print-directory -s BUILD="$BUILD" PREFIX="$INST/prefix" install > "$LOG" 2>&1; then
  cp -r python/cxla "$INST/cxla"
  rm -rf "$INST/cxla/__pycache__"
  probe="import cxla; print(cxla.library_path); assert float(cxla.compile('HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  ROOT n = f32[] negate(x)\n}\n')(2.0)) == -2.0"
  check "a copy of the package finds an installed libcxla.so.N through the loader" sh -c "cd '$INST' && LD_LIBRARY_PATH='$INST/prefix/lib' PKG_CONFIG_PATH=/nonexistent '$PY' -c \"$probe\" | grep -qx 'libcxla.so.[0-9]*'"
  check "a copy of the package finds an installed library through pkg-config" sh -c "cd '$INST' && PKG_CONFIG_PATH='$INST/prefix/lib/pkgconfig' '$PY' -c \"$probe\" | grep -qx '$INST/prefix/lib/libcxla.so'"
else
  cat "$LOG"
  check "make install PREFIX=... for the package's tests" false
fi
rm -rf "$INST"

# 3. jax
echo "--- jax in $JAX_VENV"
if ! "$JAX_VENV/bin/python" -c "import jax" > /dev/null 2>&1; then
  echo "installing jax==$JAX_VERSION from PyPI into $JAX_VENV"
  start=$(date +%s)
  if { [ -x "$JAX_VENV/bin/python" ] || "$PY" -m venv "$JAX_VENV"; } &&
     timeout 600 "$JAX_VENV/bin/python" -m pip install --quiet --disable-pip-version-check "jax==$JAX_VERSION" > "$LOG" 2>&1; then
    echo "installed in $(( $(date +%s) - start ))s"
  else
    tail -n 3 "$LOG"
  fi
fi
if "$JAX_VENV/bin/python" -c "import jax" > /dev/null 2>&1 &&
   ! "$JAX_VENV/bin/python" -c "import flax, optax" > /dev/null 2>&1; then
  echo "installing $JAX_EXTRAS from PyPI into $JAX_VENV"
  # shellcheck disable=SC2086  # the list is word-split on purpose
  timeout 600 "$JAX_VENV/bin/python" -m pip install --quiet --disable-pip-version-check $JAX_EXTRAS > "$LOG" 2>&1 ||
    { tail -n 3 "$LOG"; check "pip install $JAX_EXTRAS (test_pjrt.py's training tests need them)" false; }
fi
if "$JAX_VENV/bin/python" -c "import jax" > /dev/null 2>&1; then
  echo "jax $("$JAX_VENV/bin/python" -c 'import jax; print(jax.__version__)')"
  CXLA_BUILD=$BUILD PYTHONPATH=python "$JAX_VENV/bin/python" tests/python/run_tests.py tests/python/test_jax.py > "$LOG" 2>&1
  grep -v -e '^WARNING' -e 'Warning' "$LOG"
  count test_jax.py
  # JAX itself on cxla, through the PJRT plugin (docs/pjrt.md).
  CXLA_BUILD=$BUILD PYTHONPATH=python "$JAX_VENV/bin/python" tests/python/run_tests.py tests/python/test_pjrt.py > "$LOG" 2>&1
  grep -v -e '^WARNING' -e 'Warning' -e 'is experimental' "$LOG"
  count test_pjrt.py
else
  echo "skip test_jax.py: jax cannot be installed into $JAX_VENV (no network?); the jax tests did not run"
fi

# 4. TensorFlow, only where a venv with it is given (it is large, and optional for cxla.jit)
if [ -n "${CXLA_TF_VENV:-}" ] && "$CXLA_TF_VENV/bin/python" -c "import tensorflow" > /dev/null 2>&1; then
  echo "--- tensorflow in $CXLA_TF_VENV"
  CXLA_BUILD=$BUILD PYTHONPATH=python TF_CPP_MIN_LOG_LEVEL=3 "$CXLA_TF_VENV/bin/python" tests/python/run_tests.py tests/python/test_tf.py > "$LOG" 2>&1
  grep -E '^(ok|FAIL|skip|Traceback|  |[A-Za-z.]*Error|[0-9]+ passed)' "$LOG"
  count test_tf.py
else
  echo "skip test_tf.py: no TensorFlow (set CXLA_TF_VENV to a venv with tensorflow to run it)"
fi

# 5. mypy, where it is installed (python/pyproject.toml's [tool.mypy] says what it checks)
MYPY_VENV=${CXLA_MYPY_VENV:-$BUILD/venv-dev}
if "$MYPY_VENV/bin/python" -m mypy --version > /dev/null 2>&1; then
  echo "--- $("$MYPY_VENV/bin/python" -m mypy --version) on python/cxla"
  check "mypy --strict finds nothing in python/cxla" sh -c "cd python && '$ROOT/$MYPY_VENV/bin/python' -m mypy"
else
  echo "skip mypy: not in $MYPY_VENV (python3 -m venv --system-site-packages $MYPY_VENV && $MYPY_VENV/bin/pip install mypy)"
fi

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
