#!/bin/sh
# pjrt_test.sh BUILD — the PJRT plugin (docs/pjrt.md), a part of `make test`:
#   1. BUILD/libcxla_pjrt.so exports GetPjrtApi and nothing else (nm), so cxla and LLVM inside
#      it cannot clash with the process that loads it;
#   2. BUILD/pjrt_test drives the plugin through the PJRT C API as JAX's client does, against
#      the artifacts and JAX-computed values in tests/pjrt/artifacts: with every execution on
#      the client's stream (--pjrt-async=on), then again as by default.
# Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${1:-build}
LIB=$BUILD/libcxla_pjrt.so
PASSED=0
FAILED=0

exports=$(nm -D --defined-only "$LIB" 2>/dev/null | awk '{print $NF}' | sort | tr '\n' ' ')
if [ "$exports" = "GetPjrtApi " ]; then
  PASSED=$((PASSED + 1)); echo "ok   libcxla_pjrt.so exports only GetPjrtApi"
else
  FAILED=$((FAILED + 1)); echo "FAIL libcxla_pjrt.so exports: '$exports' (want GetPjrtApi only)"
fi

LOG=$(mktemp "${TMPDIR:-/tmp}/cxla-pjrt.XXXXXX")
trap 'rm -f "$LOG"' EXIT
# twice: every execution queued on the client's stream (--pjrt-async=on; by default only the
# GPU device's are), then the default (the cpu device's on the calling thread)
for flags in "--pjrt-async=on" ""; do
  echo "--- CXLA_FLAGS=${CXLA_FLAGS:-} $flags"
  CXLA_FLAGS="${CXLA_FLAGS:-} $flags" "$BUILD/pjrt_test" "$LIB" tests/pjrt/artifacts > "$LOG" 2>&1
  rc=$?
  cat "$LOG"
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$LOG" | tail -n 1)
  if [ -n "$line" ]; then
    PASSED=$((PASSED + $(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')))
    FAILED=$((FAILED + $(echo "$line" | sed -E 's/.* ([0-9]+) failed$/\1/')))
    [ $rc -ne 0 ] && [ "$(echo "$line" | sed -E 's/.* ([0-9]+) failed$/\1/')" -eq 0 ] && { FAILED=$((FAILED + 1)); echo "FAIL pjrt_test exited with status $rc"; }
  else
    FAILED=$((FAILED + 1)); echo "FAIL pjrt_test stopped without a summary (exit status $rc)"
  fi
done
echo "$PASSED passed, $FAILED failed"
[ $FAILED -eq 0 ]
