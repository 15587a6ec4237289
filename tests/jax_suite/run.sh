#!/bin/sh
# tests/jax_suite/run.sh BUILD — a part of `make test`: a fixed subset of JAX's own test suite,
# the judge of JAX on cxla (issue 20), run through the PJRT plugin BUILD/libcxla_pjrt.so with
# JAX_PLATFORMS=cxla. The files are JAX's, unchanged, at the release the tests install
# (tests/jax_suite/upstream, README.md there): nn_test.py, random_test.py, lax_autodiff_test.py,
# each run whole with JAX_NUM_GENERATED_CASES=1 (JAX's tests compare with numpy and with their
# own references; a test JAX's suite skips on a device that is not a CPU stays skipped). The
# venv is the one tests/python/python_test.sh makes (build/venv, jax from PyPI); pytest and
# absl-py, what JAX's tests import, are installed into it when missing. Each test is one check;
# ends with "N passed, N failed". scripts/jax_suite.py runs more files on both platforms.
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
BUILD=${1:-build}
VENV=${CXLA_JAX_VENV:-build/venv}
FILES="nn_test.py random_test.py lax_autodiff_test.py"
PASSED=0
FAILED=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cxla-jax-suite.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

if ! "$VENV/bin/python" -c "import jax" > /dev/null 2>&1; then
  echo "skip: no jax in $VENV (tests/python/python_test.sh installs it from PyPI; no network?)"
  echo "0 passed, 0 failed"
  exit 0
fi
if ! "$VENV/bin/python" -c "import pytest, absl" > /dev/null 2>&1; then
  timeout 300 "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "pytest==9.2.0" "absl-py==2.5.1" \
    > "$TMP/pip.log" 2>&1 || { tail -n 3 "$TMP/pip.log"; echo "FAIL pip install pytest absl-py"; echo "0 passed, 1 failed"; exit 1; }
fi
# JAX finds the plugin through the package's jax_plugins entry point, as after `pip install`.
(cd python && "$ROOT/$VENV/bin/python" setup.py -q egg_info --egg-base "$TMP" > "$TMP/egg.log" 2>&1) ||
  { cat "$TMP/egg.log"; echo "0 passed, 1 failed"; exit 1; }
for f in $FILES; do
  echo "--- JAX's tests/$f on cxla"
  # One device, the cxla cpu, on any machine (the plugin's GPU device: docs/pjrt.md "Devices").
  CXLA_FLAGS="--pjrt-gpu=off ${CXLA_FLAGS:-}" \
  JAX_PLATFORMS=cxla JAX_NUM_GENERATED_CASES=1 CXLA_BUILD="$BUILD" PYTHONPATH="$TMP:$ROOT/python" \
    timeout 1200 "$VENV/bin/python" -m pytest -q -p no:cacheprovider -o addopts= --rootdir="$TMP" \
    --junitxml="$TMP/$f.xml" "tests/jax_suite/upstream/$f" > "$TMP/$f.log" 2>&1
  rc=$?
  tail -n 1 "$TMP/$f.log"
  # counts from the junit report: passed = run - failures - errors - skipped
  counts=$("$VENV/bin/python" -c "
import sys, xml.etree.ElementTree as ET
try:
    r = ET.parse(sys.argv[1]).getroot()
except Exception:
    print(0, 1); sys.exit()
s = r if r.tag == 'testsuite' else r.find('testsuite')
t, f, e, k = (int(s.get(a, 0)) for a in ('tests', 'failures', 'errors', 'skipped'))
print(t - f - e - k, f + e)" "$TMP/$f.xml")
  p=${counts% *}
  n=${counts#* }
  [ "$rc" -ne 0 ] && [ "$n" -eq 0 ] && n=1 # died without a report of its failures
  if [ "$n" -ne 0 ]; then grep -E '^(FAILED|ERROR) ' "$TMP/$f.log" | head -n 20; tail -n 30 "$TMP/$f.log"; fi
  PASSED=$((PASSED + p))
  FAILED=$((FAILED + n))
done
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
