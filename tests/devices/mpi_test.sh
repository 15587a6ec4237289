#!/bin/sh
# mpi_test.sh BUILD — modules with collectives on several processes (docs/collectives.md), part
# of `make test`:
#   - the collective corpus (tests/hlo/devices) under mpirun -np 2 and -np 4, one device per
#     rank, on the interpreter and the cpu backend (cxla_tests collective_corpus_mpi), and the
#     C API's communicator (collective_communicator);
#   - `mpirun -np N cxla run --backend=cpu --inputs-per-replica=DIR --out OUT` writes
#     OUT/rank<r>/, bit for bit what `cxla run --replicas=N` writes on the interpreter and on
#     the cpu with threads;
#   - a rank that never reaches a collective makes the others fail with a timeout error, and a
#     rank that fails ends the job, instead of a hang.
# Open MPI as root needs --allow-run-as-root, and more ranks than cores --oversubscribe. Ends
# with "N passed, N failed"; without mpirun it says "skipped: mpirun unavailable".
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${1:-build}
CXLA=$BUILD/cxla
PASSED=0
FAILED=0
ok() { PASSED=$((PASSED + 1)); echo "ok   $1"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL $1"; }
export CXLA_SRC="$(pwd)"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cxla-mpi.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# --- the command line without MPI ---
cat > "$TMP/two.hlo" <<'HLO'
HloModule two
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[2] parameter(0)
  ROOT r = f32[2] all-reduce(x), replica_groups={{0,1}}, to_apply=sum
}
HLO
"$CXLA" run "$TMP/two.hlo" --random-inputs > "$TMP/one.log" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "two.hlo:9:8: error: all-reduce 'r': its replica groups (cross-replica) name 2 replicas, but this run has 1 (1 replica x 1 partition); run it with --replicas=2 or under mpirun -np 2" "$TMP/one.log"; then
  ok "a module for 2 devices run alone: a located error saying how to run it"
else
  cat "$TMP/one.log"
  fail "a module for 2 devices run alone: a located error saying how to run it (exit $rc)"
fi
"$CXLA" run "$TMP/two.hlo" --random-inputs --replicas=0 > "$TMP/usage.log" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q -- "--replicas=N wants a count from 1 to 1024" "$TMP/usage.log"; then
  ok "--replicas=0 is a usage error"
else
  fail "--replicas=0 is a usage error (exit $rc)"
fi
"$CXLA" run "$TMP/two.hlo" --random-inputs --replicas=2 --backend=cpu --check > "$TMP/usage.log" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q -- "--check and --repeat run one device" "$TMP/usage.log"; then
  ok "--replicas with --check is a usage error"
else
  fail "--replicas with --check is a usage error (exit $rc)"
fi
"$CXLA" run "$TMP/two.hlo" --random-inputs=3 --replicas=2 > "$TMP/print.log" 2>&1
if [ "$(grep -c '^device [01]:' "$TMP/print.log")" = 2 ]; then
  ok "--replicas=2 without --out prints each device's result"
else
  cat "$TMP/print.log"
  fail "--replicas=2 without --out prints each device's result"
fi

if ! command -v mpirun >/dev/null 2>&1; then
  echo "skipped: mpirun unavailable (scripts/setup.sh installs openmpi-bin)"
  echo "$PASSED passed, $FAILED failed"
  [ $FAILED -eq 0 ]
  exit
fi
MPIRUN="mpirun --oversubscribe --mca btl self,vader"
[ "$(id -u)" = 0 ] && MPIRUN="$MPIRUN --allow-run-as-root"

# --- the corpus, one device per rank ---
for n in 2 4; do
  if timeout -k 5 300 $MPIRUN -np $n "$BUILD/cxla_tests" =collective_corpus_mpi > "$TMP/corpus$n.log" 2>&1 &&
     [ "$(grep -c '^ok   collective_corpus_mpi' "$TMP/corpus$n.log")" = $n ]; then
    ok "collective corpus under mpirun -np $n ($(grep -m1 'files run' "$TMP/corpus$n.log" | sed 's/^ *//'))"
  else
    cat "$TMP/corpus$n.log"
    fail "collective corpus under mpirun -np $n"
  fi
done

# --- the C API: an application's own communicator (pairs of ranks) ---
if timeout -k 5 120 $MPIRUN -np 4 "$BUILD/cxla_tests" =collective_communicator > "$TMP/comm.log" 2>&1 &&
   [ "$(grep -c '^ok   collective_communicator' "$TMP/comm.log")" = 4 ]; then
  ok "cxla_context_set_communicator: two runs of two ranks on MPI_Comm_split's communicators, then the world again"
else
  cat "$TMP/comm.log"
  fail "cxla_context_set_communicator: two runs of two ranks on MPI_Comm_split's communicators, then the world again"
fi

# --- the CLI: inputs per rank, outputs per rank, against --replicas ---
cat > "$TMP/gen.hlo" <<'HLO'
HloModule gen
ENTRY e {
  i = f32[96] iota(), iota_dimension=0
  r = u32[] replica-id()
  c = f32[] convert(r)
  one = f32[] constant(1)
  k = f32[] add(c, one)
  kb = f32[96] broadcast(k), dimensions={}
  a = f32[96] multiply(i, kb)
  s = f32[96] sine(a)
  ROOT t = (f32[96], s32[]) tuple(s, r2)
  r2 = s32[] convert(r)
}
HLO
cat > "$TMP/coll.hlo" <<'HLO'
HloModule coll
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
mx {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(a, b)
}
ENTRY e {
  x = f32[96] parameter(0)
  n = s32[] parameter(1)
  a = f32[96] all-reduce(x), replica_groups={}, to_apply=sum
  rs = f32[24] reduce-scatter(x), replica_groups={}, dimensions={0}, to_apply=sum
  g = f32[96] all-gather(rs), replica_groups={}, dimensions={0}
  p = f32[96] collective-permute(x), source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  t = f32[96] all-to-all(x), replica_groups={}, dimensions={0}
  m = s32[] all-reduce(n), replica_groups={}, to_apply=mx
  ROOT out = (f32[96], f32[24], f32[96], f32[96], f32[96], s32[]) tuple(a, rs, g, p, t, m)
}
HLO
if "$CXLA" run "$TMP/gen.hlo" --replicas=4 --out "$TMP/gen" > /dev/null 2>&1; then
  for r in 0 1 2 3; do
    mkdir -p "$TMP/in/rank$r" && mv "$TMP/gen/rank$r/0.npy" "$TMP/in/rank$r/in0.npy" && mv "$TMP/gen/rank$r/1.npy" "$TMP/in/rank$r/in1.npy"
  done
  ok "cxla run --replicas=4 --out writes DIR/rank<r>/"
else
  fail "cxla run --replicas=4 --out writes DIR/rank<r>/"
fi
"$CXLA" run "$TMP/coll.hlo" --replicas=4 --inputs-per-replica="$TMP/in" --out "$TMP/ref" > /dev/null 2>&1
"$CXLA" run "$TMP/coll.hlo" --replicas=4 --inputs-per-replica="$TMP/in" --backend=cpu --out "$TMP/thr" > /dev/null 2>&1
timeout -k 5 120 $MPIRUN -np 4 "$CXLA" run "$TMP/coll.hlo" --backend=cpu --inputs-per-replica="$TMP/in" --out "$TMP/mpi" \
  > "$TMP/mpi.log" 2>&1
same() { # same DIR DIR: every rank's every result file, byte for byte
  for r in 0 1 2 3; do for i in 0 1 2 3 4 5; do
    cmp -s "$1/rank$r/$i.npy" "$2/rank$r/$i.npy" || return 1
  done; done
}
if [ -f "$TMP/ref/rank3/5.npy" ] && same "$TMP/ref" "$TMP/thr"; then
  ok "--replicas=4: the cpu's threads write the interpreter's results bit for bit"
else
  fail "--replicas=4: the cpu's threads write the interpreter's results bit for bit"
fi
if [ -f "$TMP/ref/rank3/5.npy" ] && same "$TMP/ref" "$TMP/mpi"; then
  ok "mpirun -np 4 cxla run --backend=cpu --inputs-per-replica: each rank writes the interpreter's results bit for bit"
else
  cat "$TMP/mpi.log"
  fail "mpirun -np 4 cxla run --backend=cpu --inputs-per-replica: each rank writes the interpreter's results bit for bit"
fi

# --- a rank that never comes, a rank that fails ---
cat > "$TMP/hang.hlo" <<'HLO'
HloModule hang
sum {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
cond {
  st = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(st), index=0
  one = s32[] constant(1)
  ROOT lt = pred[] compare(i, one), direction=LT
}
body {
  st = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(st), index=0
  step = s32[] get-tuple-element(st), index=1
  j = s32[] add(i, step)
  ROOT t = (s32[], s32[]) tuple(j, step)
}
ENTRY e {
  r = u32[] replica-id()
  ri = s32[] convert(r)
  one = s32[] constant(1)
  step = s32[] subtract(one, ri)
  zero = s32[] constant(0)
  init = (s32[], s32[]) tuple(zero, step)
  w = (s32[], s32[]) while(init), condition=cond, body=body
  i = s32[] get-tuple-element(w), index=0
  ROOT a = s32[] all-reduce(i), replica_groups={}, to_apply=sum
}
HLO
# rank 1's step is 0: its loop never ends, and rank 0 waits at the all-reduce
start=$(date +%s)
timeout -k 5 120 $MPIRUN -np 2 "$CXLA" run "$TMP/hang.hlo" --backend=cpu --collective-timeout=2 > "$TMP/hang.log" 2>&1
rc=$?
secs=$(( $(date +%s) - start ))
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "all-reduce 'a': timed out after 2 s (--collective-timeout) waiting for rank 1" "$TMP/hang.log" && [ $secs -lt 60 ]; then
  ok "a rank that never comes: the other fails with a timeout error naming it (${secs}s)"
else
  cat "$TMP/hang.log"
  fail "a rank that never comes: the other fails with a timeout error naming it (exit $rc, ${secs}s)"
fi
# rank 1 stops at --max-loop-iterations: it fails, and the job ends
start=$(date +%s)
timeout -k 5 120 $MPIRUN -np 2 "$CXLA" run "$TMP/hang.hlo" --backend=cpu --max-loop-iterations=1000 > "$TMP/fail.log" 2>&1
rc=$?
secs=$(( $(date +%s) - start ))
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "max-loop-iterations" "$TMP/fail.log" && [ $secs -lt 60 ]; then
  ok "a rank that fails ends the job (${secs}s)"
else
  cat "$TMP/fail.log"
  fail "a rank that fails ends the job (exit $rc, ${secs}s)"
fi
# and on threads: device 1 fails, device 0 is told at its all-reduce
if ! "$CXLA" run "$TMP/hang.hlo" --replicas=2 --backend=cpu --max-loop-iterations=1000 > "$TMP/thr_fail.log" 2>&1 &&
   grep -q "device 1" "$TMP/thr_fail.log" && grep -q "max-loop-iterations" "$TMP/thr_fail.log"; then
  ok "--replicas=2: a device that fails fails the run, naming it"
else
  cat "$TMP/thr_fail.log"
  fail "--replicas=2: a device that fails fails the run, naming it"
fi
echo "$PASSED passed, $FAILED failed"
[ $FAILED -eq 0 ]
