#!/bin/sh
# run_all.sh — everything `make test` (and CI) runs, after `make all asan fuzz`:
#   1. the unit tests + HLO corpus (build/cxla_tests)
#   2. the layering check (tests/layers.sh: which src/ folder calls which, from nm), the check
#      that every function of src/ is called (tests/dead_functions.sh), the CLI
#      tests against build/cxla (tests/cli/cli_test.sh, when present), and the C package
#      (tests/package/package_test.sh: exported symbols, version, make install + pkg-config),
#      collectives under mpirun -np 2 and 4 (tests/devices/mpi_test.sh), the PJRT plugin
#      libcxla_pjrt.so (tests/pjrt/pjrt_test.sh; again against the ASan build in part 4),
#      the Python package (tests/python/python_test.sh: numpy with Debian's python3,
#      pip install, cxla.jit against jax in a venv where jax is installed from PyPI if missing),
#      and the training demo examples/train on a Fashion-MNIST subset (tests/examples/train_test.sh),
#      also data-parallel under mpirun -np 2 against one process (tests/examples/train_dp_test.sh),
#      JAX's own tests (nn, random, lax_autodiff) on cxla through the PJRT plugin
#      (tests/jax_suite/run.sh), and the benchmarks built as `make bench` builds them, each run once at tiny sizes
#      (tests/bench/smoke.sh)
#   3. the whole unit suite + corpus again under ASan + UBSan (build/asan/cxla_tests)
#   4. the CLI tests and the training demo's test against the ASan builds of the CLI and of
#      examples/train
#   5. the parser fuzzer for about a minute, and the two StableHLO fuzzers (reader, reader and
#      translation) for half as long each (each counts as one check: it passes if it exits 0)
# Each part ends with an "N passed, N failed" line; this script adds them up and ends with a
# single "N passed, N failed" line. It exits non-zero if anything failed.
#   --fast   only parts 1 and 2 (the normal build; what `make check-fast` runs)
# Environment: CXLA_BUILD (default build), CXLA_ASAN_BUILD (build/asan),
# CXLA_FUZZ_BUILD (build/fuzz), CXLA_FUZZ_SECONDS (60), CXLA_TEST_JOBS (worker processes of a
# unit-test binary: the number of CPUs, at most 4), CXLA_SUITE_TIMEOUT (1800: seconds a
# unit-test binary may run before it counts as hung), CXLA_TEST_TIMEOUT (600: the same for one
# test when the remaining tests are run one at a time).
set -u

cd "$(dirname "$0")/.." || exit 2
ROOT=$(pwd)
BUILD=${CXLA_BUILD:-build}
ASAN_BUILD=${CXLA_ASAN_BUILD:-build/asan}
TEST_JOBS=${CXLA_TEST_JOBS:-$(n=$(nproc 2>/dev/null || echo 1); [ "$n" -gt 4 ] && n=4; echo "$n")}
FUZZ_BUILD=${CXLA_FUZZ_BUILD:-build/fuzz}
FUZZ_SECONDS=${CXLA_FUZZ_SECONDS:-60}
SUITE_TIMEOUT=${CXLA_SUITE_TIMEOUT:-1800}
TEST_TIMEOUT=${CXLA_TEST_TIMEOUT:-600}
FAST=0
for arg in "$@"; do
  case "$arg" in
    --fast) FAST=1 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run_all.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

export CXLA_SRC="$ROOT"
TOTAL_PASSED=0
TOTAL_FAILED=0
SUMMARY=""
LOG_DIR="$BUILD/test-logs"
mkdir -p "$LOG_DIR"

# part NAME LOGFILE COMMAND...: runs COMMAND with its output shown and logged, then adds the
# last "N passed, N failed" line it printed. A part that prints no such line, or exits
# non-zero while reporting no failure, counts one extra failure.
part() {
  name=$1
  log=$2
  shift 2
  echo "=== $name: $*"
  start=$(date +%s)
  # The exit status of the command, not of tee, decides; keep it in a file.
  { "$@" 2>&1; echo $? > "$log.rc"; } | tee "$log"
  rc=$(cat "$log.rc" 2>/dev/null || echo 1)
  secs=$(( $(date +%s) - start ))
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
  if [ -n "$line" ]; then
    p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
    f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed$/\1/')
  else
    p=0
    f=1
    echo "=== $name: no 'N passed, N failed' line (exit status $rc): counted as a failure"
  fi
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    f=1
    echo "=== $name: exit status $rc although no test failed: counted as a failure"
  fi
  TOTAL_PASSED=$((TOTAL_PASSED + p))
  TOTAL_FAILED=$((TOTAL_FAILED + f))
  SUMMARY="$SUMMARY
  $name: $p passed, $f failed (${secs}s)"
}

missing() {
  echo "=== $1: $2 is missing (build it first): counted as a failure"
  TOTAL_FAILED=$((TOTAL_FAILED + 1))
  SUMMARY="$SUMMARY
  $1: missing $2"
}

# run_suite BIN: runs a unit-test binary in TEST_JOBS worker processes (tests/unit/test_main.c:
# 2 on 2 cores halved the ASan suite, 684 s -> 329 s). Until 98b1b23 one test,
# gpu_ptx_graph_control_kernel, failed in 2 of 8 two-worker runs (a stale LLVM NVPTX annotation
# cache, src/backend/gpu/ptx.c forget_annotations); after it, 6 normal and 1 ASan two-worker
# runs passed whole. CXLA_TEST_JOBS=1 runs one process, as before. If it dies without its summary
# line (a sanitizer abort, a crash, or a hang stopped by the time limit), the tests it did not
# report are run one at a time (names from the TEST(...) lines of tests/unit/*.c; the filter is a substring, so
# only the line for the exact name counts), so one bad test does not hide all the others.
run_suite() {
  bin=$1
  tmp="$LOG_DIR/suite.$$"
  suite_start=$(date +%s)
  { CXLA_TEST_JOBS=$TEST_JOBS timeout -k 10 "$SUITE_TIMEOUT" "$bin" 2>&1; echo $? > "$tmp.rc"; } | tee "$tmp"
  rc=$(cat "$tmp.rc" 2>/dev/null || echo 1)
  if grep -qE '^[0-9]+ passed, [0-9]+ failed$' "$tmp"; then rm -f "$tmp" "$tmp.rc"; return $rc; fi
  [ "$rc" -eq 124 ] && echo "=== $bin did not finish in ${SUITE_TIMEOUT}s"
  echo "=== $bin stopped without a summary (exit status $rc); running the remaining tests one at a time"
  passed=$(grep -c '^ok   ' "$tmp")
  failed=$(grep -c '^FAIL ' "$tmp")
  for name in $(grep -ho '^TEST([A-Za-z0-9_]*)' tests/unit/*.c | sed 's/^TEST(\(.*\))$/\1/' | sort -u); do
    grep -qxE "(ok  |FAIL) $name" "$tmp" && continue
    if [ $(( $(date +%s) - suite_start )) -ge $((2 * SUITE_TIMEOUT)) ]; then
      echo "FAIL (out of time: the remaining tests were not run)"
      failed=$((failed + 1))
      break
    fi
    CXLA_TEST_JOBS=1 timeout -k 10 "$TEST_TIMEOUT" "$bin" "$name" > "$tmp.one" 2>&1
    if grep -qx "0 passed, 0 failed" "$tmp.one" && ! grep -qxE "(ok  |FAIL) $name" "$tmp.one"; then
      continue # not in this binary (a source newer than the build)
    elif grep -qx "ok   $name" "$tmp.one"; then
      passed=$((passed + 1))
      echo "ok   $name"
    elif grep -qx "FAIL $name" "$tmp.one"; then
      failed=$((failed + 1))
      cat "$tmp.one"
    else
      failed=$((failed + 1))
      tail -n 40 "$tmp.one"
      echo "FAIL $name (crashed or hung; see above)"
    fi
  done
  rm -f "$tmp" "$tmp.rc" "$tmp.one"
  echo "$passed passed, $failed failed"
  return 1
}

# run_fuzzer NAME SECONDS SEEDS [DICT]: runs fuzzer NAME on a scratch copy of the seeds so the
# committed seed corpus never changes; prints the one-check summary line itself.
run_fuzzer() {
  work="$FUZZ_BUILD/corpus-$1"
  mkdir -p "$work" "$FUZZ_BUILD/artifacts"
  "$FUZZ_BUILD/$1" -max_total_time="$2" -timeout=10 -rss_limit_mb=4096 ${4:+-dict=$4} \
    -artifact_prefix="$FUZZ_BUILD/artifacts/$1-" -print_final_stats=1 "$work" "$3"
  rc=$?
  if [ $rc -eq 0 ]; then
    echo "1 passed, 0 failed"
  else
    echo "fuzzer exited with status $rc; the crashing input is in $FUZZ_BUILD/artifacts/"
    echo "0 passed, 1 failed"
  fi
  return $rc
}

# 1-2: the normal build.
if [ -x "$BUILD/cxla_tests" ]; then
  part "unit+corpus" "$LOG_DIR/unit.log" run_suite "$BUILD/cxla_tests"
else
  missing "unit+corpus" "$BUILD/cxla_tests"
fi
part "layers" "$LOG_DIR/layers.log" sh tests/layers.sh "$BUILD"
part "dead functions" "$LOG_DIR/dead.log" sh tests/dead_functions.sh "$BUILD"
if [ -f tests/cli/cli_test.sh ]; then
  if [ -x "$BUILD/cxla" ]; then
    part "cli" "$LOG_DIR/cli.log" timeout -k 10 "$SUITE_TIMEOUT" sh tests/cli/cli_test.sh "$BUILD/cxla"
  else
    missing "cli" "$BUILD/cxla"
  fi
fi
part "package" "$LOG_DIR/package.log" sh tests/package/package_test.sh "$BUILD"
part "mpi" "$LOG_DIR/mpi.log" timeout -k 10 "$SUITE_TIMEOUT" sh tests/devices/mpi_test.sh "$BUILD"
part "train demo" "$LOG_DIR/train.log" timeout -k 10 "$SUITE_TIMEOUT" sh tests/examples/train_test.sh "$BUILD"
part "train data-parallel" "$LOG_DIR/train-dp.log" timeout -k 10 "$SUITE_TIMEOUT" sh tests/examples/train_dp_test.sh "$BUILD"
part "pjrt" "$LOG_DIR/pjrt.log" timeout -k 10 "$SUITE_TIMEOUT" sh tests/pjrt/pjrt_test.sh "$BUILD"
part "python" "$LOG_DIR/python.log" timeout -k 10 "$SUITE_TIMEOUT" sh tests/python/python_test.sh "$BUILD"
part "jax suite" "$LOG_DIR/jax-suite.log" timeout -k 10 "$SUITE_TIMEOUT" sh tests/jax_suite/run.sh "$BUILD"
part "bench smoke" "$LOG_DIR/bench.log" timeout -k 10 "$SUITE_TIMEOUT" sh tests/bench/smoke.sh "$BUILD"

if [ $FAST -eq 0 ]; then
  # 3-4: sanitizers. Leak checks on; UBSan reports abort (-fno-sanitize-recover).
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:allocator_may_return_null=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
  # The sanitizers look for memory errors, not for breadth: fewer random graphs than the
  # normal run (which uses the test's own default), to keep `make test` near 10 minutes.
  export CXLA_RANDGRAPH_N="${CXLA_RANDGRAPH_N:-60}"
  if [ -x "$ASAN_BUILD/cxla_tests" ]; then
    part "asan unit+corpus" "$LOG_DIR/asan-unit.log" run_suite "$ASAN_BUILD/cxla_tests"
  else
    missing "asan unit+corpus" "$ASAN_BUILD/cxla_tests"
  fi
  if [ -f tests/cli/cli_test.sh ]; then
    if [ -x "$ASAN_BUILD/cxla" ]; then
      part "asan cli" "$LOG_DIR/asan-cli.log" timeout -k 10 "$SUITE_TIMEOUT" sh tests/cli/cli_test.sh "$ASAN_BUILD/cxla"
    else
      missing "asan cli" "$ASAN_BUILD/cxla"
    fi
  fi
  if [ -x "$ASAN_BUILD/pjrt_test" ]; then
    part "asan pjrt" "$LOG_DIR/asan-pjrt.log" timeout -k 10 "$SUITE_TIMEOUT" sh tests/pjrt/pjrt_test.sh "$ASAN_BUILD"
  else
    missing "asan pjrt" "$ASAN_BUILD/pjrt_test"
  fi
  if [ -x "$ASAN_BUILD/examples/train" ]; then
    part "asan train demo" "$LOG_DIR/asan-train.log" timeout -k 10 "$SUITE_TIMEOUT" sh tests/examples/train_test.sh "$ASAN_BUILD"
  else
    missing "asan train demo" "$ASAN_BUILD/examples/train"
  fi
  # 5: the fuzzer.
  if [ -x "$FUZZ_BUILD/fuzz_parse" ]; then
    part "fuzz (${FUZZ_SECONDS}s)" "$LOG_DIR/fuzz.log" run_fuzzer fuzz_parse "$FUZZ_SECONDS" tests/fuzz/seeds tests/fuzz/hlo.dict
  else
    missing "fuzz" "$FUZZ_BUILD/fuzz_parse"
  fi
  # The StableHLO front door: the bytecode reader alone, then reader + translation + verify.
  half=$(( (FUZZ_SECONDS + 1) / 2 ))
  for f in fuzz_stablehlo fuzz_stablehlo_translate; do
    if [ -x "$FUZZ_BUILD/$f" ]; then
      part "$f (${half}s)" "$LOG_DIR/$f.log" run_fuzzer "$f" "$half" tests/fuzz/seeds_stablehlo
    else
      missing "$f" "$FUZZ_BUILD/$f"
    fi
  done
fi

echo "=== summary (logs in $LOG_DIR):$SUMMARY"
echo "$TOTAL_PASSED passed, $TOTAL_FAILED failed"
[ $TOTAL_FAILED -eq 0 ]
