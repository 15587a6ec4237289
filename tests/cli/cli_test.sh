#!/bin/sh
# cli_test.sh — end-to-end tests of the `cxla` tool: run with .npy inputs (written here byte by
# byte from the .npy format description) and --out, the summary, --random-inputs determinism,
# fmt, help, and every error path (exit 1 and one clear line on stderr; exit 2 for a bad
# command line). Usage: tests/cli/cli_test.sh [path/to/cxla]   (default build/cxla)
# Prints one line per check and "N passed, N failed"; exits non-zero if any check failed.
set -u
CXLA=${1:-build/cxla}
case $CXLA in /*) ;; *) CXLA=$(pwd)/$CXLA ;; esac
# the source tree (for the StableHLO artifacts scripts/stablehlo_pairs.py wrote)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
[ -x "$CXLA" ] || { echo "cli_test: no executable at $CXLA" >&2; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/cxla_cli.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT INT TERM
cd "$T" || exit 2
unset CXLA_FLAGS
passed=0 failed=0

ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1: $2"; }

# run_cxla ARGS...: runs cxla, leaving stdout in out.txt, stderr in err.txt, status in $rc.
run_cxla() { "$CXLA" "$@" >out.txt 2>err.txt; rc=$?; }

# expect NAME RC STREAM TEXT: last run exited RC and STREAM (out|err) contains TEXT.
expect() {
  if [ "$rc" != "$2" ]; then bad "$1" "exit $rc, expected $2 (stderr: $(head -c 300 err.txt))"; return; fi
  if ! grep -qF -- "$4" "$3.txt"; then bad "$1" "$3 lacks '$4': $(head -c 300 "$3.txt")"; return; fi
  ok "$1"
}

# expect_error NAME TEXT: exit 1, nothing on stdout, exactly one line on stderr containing TEXT.
expect_error() {
  n=$(wc -l <err.txt)
  if [ "$rc" != 1 ]; then bad "$1" "exit $rc, expected 1 (stderr: $(head -c 300 err.txt))"
  elif [ "$n" != 1 ]; then bad "$1" "stderr has $n lines: $(head -c 300 err.txt)"
  elif [ -s out.txt ]; then bad "$1" "stdout not empty: $(head -c 200 out.txt)"
  elif ! grep -qF -- "$2" err.txt; then bad "$1" "stderr lacks '$2': $(cat err.txt)"
  else ok "$1"; fi
}

# write_npy FILE DESCR SHAPE DATA: a version 1.0 .npy as numpy writes it (header padded with
# spaces and '\n' to a multiple of 64 bytes); DATA is a printf format of octal byte escapes.
write_npy() {
  dict="{'descr': '$2', 'fortran_order': False, 'shape': $3, }"
  hlen=$(( (10 + ${#dict} + 1 + 63) / 64 * 64 - 10 ))
  {
    printf '\223NUMPY\001\000'
    printf "\\$(printf %03o $((hlen % 256)))\\$(printf %03o $((hlen / 256)))"
    printf '%s' "$dict"
    printf "%$((hlen - ${#dict} - 1))s\n" ''
    printf "$4"
  } >"$1"
}

# little-endian f32 bytes
F1='\000\000\200\077' F2='\000\000\000\100' F3='\000\000\100\100' F4='\000\000\200\100'
F5='\000\000\240\100' F6='\000\000\300\100' FH='\000\000\000\077' FM1='\000\000\200\277'

cat >addmul.hlo <<'EOF'
HloModule addmul

ENTRY main {
  x = f32[2,3]{1,0} parameter(0)
  y = f32[2,3]{1,0} parameter(1)
  s = f32[2,3]{1,0} add(x, y)
  p = f32[2,3]{1,0} multiply(x, y)
  ROOT t = (f32[2,3]{1,0}, f32[2,3]{1,0}) tuple(s, p)
}
EOF
write_npy x.npy '<f4' '(2, 3)' "$F1$F2$F3$F4$F5$F6"
write_npy y.npy '<f4' '(2, 3)' "$FH$FH$FH$FM1$FM1$FM1"
write_npy y32.npy '<f4' '(3, 2)' "$FH$FH$FH$FM1$FM1$FM1"
write_npy s.npy '<i4' '(2, 3)' '\001\000\000\000\002\000\000\000\003\000\000\000\004\000\000\000\005\000\000\000\006\000\000\000'
head -c 140 x.npy >trunc.npy

# ---- help and usage ----
run_cxla --help;            expect help_overview 0 out "usage: cxla <command>"
run_cxla --help;            expect help_lists_flags 0 out "--threads=N"
run_cxla help;              expect help_command 0 out "fmt"
run_cxla run --help;        expect help_run 0 out "--random-inputs[=SEED]"
run_cxla help run;          expect help_run_via_help 0 out "--out DIR"
run_cxla run --help;        expect help_run_flags 0 out "--max-loop-iterations=N"
run_cxla fmt --help;        expect help_fmt 0 out "--check"
run_cxla;                   expect usage_no_command 2 err "missing command"
run_cxla frobnicate;        expect usage_unknown_command 2 err "unknown command 'frobnicate'"
run_cxla dump addmul.hlo;   expect usage_dump_not_built 2 err "command 'dump' is not built into this cxla yet"
run_cxla run --frob addmul.hlo; expect usage_unknown_option 2 err "unknown option '--frob'"
run_cxla run;               expect usage_missing_module 2 err "missing MODULE.hlo"
run_cxla run addmul.hlo --threads=lots x.npy y.npy; expect usage_bad_flag_value 2 err "flag --threads wants an integer"
run_cxla run addmul.hlo --random-inputs x.npy; expect usage_random_and_files 2 err "do not also give .npy files"
run_cxla help frob;         expect usage_help_unknown 2 err "no help for unknown command 'frob'"

# ---- run: summary, --out, flags ----
run_cxla run addmul.hlo x.npy y.npy
expect run_summary_leaf0 0 out "[0] f32[2,3] {{1.5, 2.5, 3.5}, {3, 4, 5}}"
expect run_summary_leaf1 0 out "[1] f32[2,3] {{0.5, 1, 1.5}, {-4, -5, -6}}"
run_cxla run addmul.hlo x.npy y.npy --threads=2 --backend=interp; expect run_with_flags 0 out "[0] f32[2,3]"
run_cxla run addmul.hlo x.npy y.npy --out outdir/nested
expect run_out_reports 0 out "outdir/nested/1.npy f32[2,3]"
if [ -f outdir/nested/0.npy ] && [ -f outdir/nested/1.npy ] && [ ! -e outdir/nested/2.npy ]; then
  # 0.npy must be exactly what numpy would write for the sum.
  write_npy want0.npy '<f4' '(2, 3)' '\000\000\300\077\000\000\040\100\000\000\140\100\000\000\100\100\000\000\200\100\000\000\240\100'
  if cmp -s want0.npy outdir/nested/0.npy; then ok run_out_bytes; else bad run_out_bytes "0.npy differs from the expected bytes"; fi
else
  bad run_out_files "expected outdir/nested/0.npy and 1.npy only: $(ls -R outdir 2>&1)"
fi
run_cxla run addmul.hlo outdir/nested/0.npy y.npy  # outputs feed back in: (x+y)+y
expect run_out_roundtrip 0 out "[0] f32[2,3] {{2, 3, 4}, {2, 3, 4}}"
echo 'HloModule one
ENTRY main {
  x = f32[3]{0} parameter(0)
  ROOT n = f32[3]{0} negate(x)
}' >one.hlo
run_cxla run one.hlo --random-inputs=1 --out single; expect run_out_single_leaf 0 out "single/0.npy f32[3]"
[ -f single/0.npy ] && [ ! -e single/1.npy ] && ok run_out_single_file || bad run_out_single_file "$(ls single 2>&1)"

# bf16 has no numpy dtype: a bf16 parameter takes an f4 file, and bf16 results are written as f4.
printf 'HloModule h\nENTRY main {\n  x = bf16[3]{0} parameter(0)\n  ROOT y = bf16[3]{0} add(x, x)\n}\n' >bf.hlo
write_npy v3.npy '<f4' '(3,)' "$F1$F2$FH"
run_cxla run bf.hlo v3.npy; expect run_bf16_from_f4 0 out "[0] bf16[3] {2, 4, 1}"
run_cxla run bf.hlo v3.npy --out bfout
write_npy want_bf.npy '<f4' '(3,)' "$F2$F4$F1"
[ "$rc" = 0 ] && cmp -s want_bf.npy bfout/0.npy && ok run_bf16_written_as_f4 || bad run_bf16_written_as_f4 "exit $rc"

# s64/u64 print from their integer storage (a double holds neither 2^53 + 1 nor 2^64 - 1),
# element by element and in a large leaf's min and max; both backends.
cat >wide.hlo <<'EOF'
HloModule wide

ENTRY main {
  a = s64[3] constant({9007199254740993, -9223372036854775808, 9223372036854775807})
  b = u64[2] constant({18446744073709551615, 9007199254740993})
  i = u64[200] iota(), iota_dimension=0
  base = u64[] constant(18446744073709551416)
  bb = u64[200] broadcast(base), dimensions={}
  top = u64[200] add(i, bb)
  j = s64[200] iota(), iota_dimension=0
  low = s64[] constant(-9223372036854775808)
  lb = s64[200] broadcast(low), dimensions={}
  bottom = s64[200] add(j, lb)
  ROOT t = (s64[3], u64[2], u64[200], s64[200]) tuple(a, b, top, bottom)
}
EOF
for be in interp cpu; do
  run_cxla run wide.hlo --backend=$be
  expect run_${be}_s64_exact 0 out "[0] s64[3] {9007199254740993, -9223372036854775808, 9223372036854775807}"
  expect run_${be}_u64_exact 0 out "[1] u64[2] {18446744073709551615, 9007199254740993}"
  expect run_${be}_u64_large_leaf 0 out "[2] u64[200] (200 values) first 10: 18446744073709551416, 18446744073709551417, "
  expect run_${be}_u64_min_max 0 out "; min 18446744073709551416, max 18446744073709551615, mean "
  expect run_${be}_s64_min_max 0 out "; min -9223372036854775808, max -9223372036854775609, mean "
done

# ---- random inputs ----
echo 'HloModule big
ENTRY main {
  x = f32[40,50]{1,0} parameter(0)
  i = s32[7]{0} parameter(1)
  b = pred[3]{0} parameter(2)
  t = f32[40,50]{1,0} tanh(x)
  ROOT r = (f32[40,50]{1,0}, s32[7]{0}, pred[3]{0}) tuple(t, i, b)
}' >big.hlo
run_cxla run big.hlo --random-inputs=7; cp out.txt r7a.txt; rc7=$rc
run_cxla run big.hlo --random-inputs=7; cp out.txt r7b.txt
run_cxla run big.hlo --random-inputs=8; cp out.txt r8.txt
if [ "$rc7" = 0 ] && cmp -s r7a.txt r7b.txt; then ok random_same_seed_same_output; else bad random_same_seed_same_output "$(head -c 300 r7a.txt)"; fi
if ! cmp -s r7a.txt r8.txt; then ok random_other_seed_differs; else bad random_other_seed_differs "seeds 7 and 8 agree"; fi
grep -qF "[0] f32[40,50] (2000 values) first 10: " r7a.txt && grep -q "min -0\.[0-9]*, max 0\.[0-9]*, mean" r7a.txt \
  && ok random_large_summary || bad random_large_summary "$(head -c 300 r7a.txt)"
grep -q '^\[1\] s32\[7\] {-*[0-8], ' r7a.txt && grep -q '^\[2\] pred\[3\] {\(true\|false\)' r7a.txt \
  && ok random_small_ints_and_pred || bad random_small_ints_and_pred "$(cat r7a.txt)"
run_cxla run big.hlo --random-inputs; cp out.txt r0a.txt
run_cxla run big.hlo --random-inputs=0; cmp -s r0a.txt out.txt && ok random_default_seed_is_0 || bad random_default_seed_is_0 "differs"
run_cxla run big.hlo --random-inputs=-3; expect usage_bad_seed 2 err "--random-inputs=SEED wants a non-negative integer"

# ---- compile, --repeat, --trace (the interp backend until cpu is registered) ----
run_cxla help;                       expect help_lists_compile 0 out "compile a module without running it"
run_cxla compile --help;             expect help_compile 0 out "usage: cxla compile MODULE.hlo"
run_cxla compile addmul.hlo;         expect compile_reports 0 out "compiled addmul.hlo for interp in "
grep -q '^  verify  *[0-9.]* \(us\|ms\)$' out.txt && grep -q '^  cache  *miss$' out.txt \
  && ok compile_phase_lines || bad compile_phase_lines "$(cat out.txt)"
# the cost: an add and a multiply of 6 elements; 3 x 24 bytes each, and the tuple's 2 pointers
grep -q '^  flops  *12$' out.txt && grep -q '^  transcendentals  *0$' out.txt && grep -q '^  bytes_accessed  *160$' out.txt \
  && ok compile_cost_lines || bad compile_cost_lines "$(cat out.txt)"
# the memory: two f32[2,3] in and out; the interpreter plans no temporaries and makes no code
grep -q '^  arguments  *48$' out.txt && grep -q '^  outputs  *48$' out.txt && grep -q '^  aliased  *0$' out.txt \
  && grep -q '^  temporaries  *0$' out.txt && grep -q '^  code  *0$' out.txt \
  && ok compile_memory_lines || bad compile_memory_lines "$(cat out.txt)"
run_cxla compile addmul.hlo --backend interp --fusion=off; expect compile_with_flags 0 out "compiled addmul.hlo"
run_cxla compile;                    expect usage_compile_missing 2 err "missing MODULE.hlo"
run_cxla compile addmul.hlo one.hlo; expect usage_compile_two 2 err "expected one MODULE.hlo, got 'one.hlo' as well"
run_cxla compile addmul.hlo --frob;  expect usage_compile_option 2 err "unknown option '--frob'"
run_cxla compile addmul.hlo --backend=tpu; expect_error err_compile_backend "unknown backend 'tpu'"

run_cxla run addmul.hlo x.npy y.npy --repeat=5
expect run_repeat_result 0 out "[0] f32[2,3] {{1.5, 2.5, 3.5}, {3, 4, 5}}"
grep -q '^execute: min [0-9.]* \(us\|ms\|s\), median [0-9.]* \(us\|ms\|s\), max [0-9.]* \(us\|ms\|s\) (5 runs)$' err.txt \
  && grep -q '^compile: [0-9.]* \(us\|ms\|s\)$' err.txt && ok run_repeat_timings || bad run_repeat_timings "$(cat err.txt)"
run_cxla run addmul.hlo x.npy y.npy --repeat=1; grep -qF "(1 run)" err.txt && ok run_repeat_one || bad run_repeat_one "$(cat err.txt)"
# the rate: addmul's 12 flops and 160 bytes a run
grep -q '^rate: [0-9.]* GFLOP/s, [0-9.]* GB/s accessed at the median (12 flops, 160 bytes a run)$' err.txt \
  && ok run_repeat_rate || bad run_repeat_rate "$(cat err.txt)"
run_cxla run addmul.hlo x.npy y.npy; [ ! -s err.txt ] && ok run_no_repeat_no_timings || bad run_no_repeat_no_timings "$(cat err.txt)"
run_cxla run addmul.hlo x.npy y.npy --repeat=0;   expect usage_repeat_zero 2 err "--repeat=N wants a count from 1"
run_cxla run addmul.hlo x.npy y.npy --repeat=abc; expect usage_repeat_text 2 err "--repeat=N wants a count from 1"
run_cxla run addmul.hlo x.npy y.npy --repeat;     expect usage_repeat_empty 2 err "--repeat=N wants a count from 1"

# the cpu backend through the same commands
run_cxla run addmul.hlo x.npy y.npy --backend=cpu
expect cpu_run_leaf0 0 out "[0] f32[2,3] {{1.5, 2.5, 3.5}, {3, 4, 5}}"
expect cpu_run_leaf1 0 out "[1] f32[2,3] {{0.5, 1, 1.5}, {-4, -5, -6}}"
run_cxla compile addmul.hlo --backend=cpu
grep -q '^  arguments  *48$' out.txt && grep -q '^  temporaries  *0$' out.txt && grep -q '^  code  *[1-9][0-9]*$' out.txt \
  && ok cpu_compile_memory_lines || bad cpu_compile_memory_lines "$(cat out.txt)"
cat >dot.hlo <<'EOF2'
HloModule dot

ENTRY main {
  x = f32[2,3]{1,0} parameter(0)
  w = f32[3,2]{1,0} parameter(1)
  ROOT d = f32[2,2]{1,0} dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
EOF2
run_cxla run dot.hlo x.npy y32.npy --backend=cpu --repeat=3 --threads=2 --trace=cpu.trace.json
expect cpu_dot_result 0 out "[0] f32[2,2] {{-1.5, -4.5}, {-1.5, -9}}"
grep -qF "(3 runs)" err.txt && ok cpu_dot_repeat || bad cpu_dot_repeat "$(cat err.txt)"
run_cxla compile dot.hlo --backend=cpu; expect cpu_compile 0 out "compiled dot.hlo for cpu in "

# A trace must be JSON that Perfetto loads: parse it back (python3 if present, else a shape check).
json_ok() {
  if command -v python3 >/dev/null 2>&1; then python3 -m json.tool "$1" >/dev/null 2>&1
  else head -c 16 "$1" | grep -qF '{"traceEvents":[' && tail -c 3 "$1" | grep -q '}'; fi
}
run_cxla run addmul.hlo x.npy y.npy --repeat=3 --trace=run.trace.json
if [ "$rc" = 0 ] && json_ok run.trace.json; then ok trace_run_valid_json; else bad trace_run_valid_json "exit $rc: $(head -c 300 run.trace.json 2>&1)"; fi
[ "$(grep -c '"cat":"execute"' run.trace.json)" = 3 ] && grep -qF '"name":"verify","cat":"compile","ph":"X"' run.trace.json \
  && ok trace_run_events || bad trace_run_events "$(head -c 600 run.trace.json)"
if json_ok cpu.trace.json && [ "$(grep -c '"cat":"execute"' cpu.trace.json)" = 3 ] && grep -qF '"cat":"library"' cpu.trace.json; then
  ok trace_cpu_gemm_events; else bad trace_cpu_gemm_events "$(head -c 600 cpu.trace.json 2>&1)"; fi
CXLA_FLAGS=--trace=env.trace.json "$CXLA" compile addmul.hlo >out.txt 2>err.txt; rc=$?
if [ "$rc" = 0 ] && json_ok env.trace.json && grep -qF '"name":"compile addmul"' env.trace.json; then ok trace_compile_from_env
else bad trace_compile_from_env "exit $rc: $(head -c 300 env.trace.json 2>&1)"; fi
run_cxla run addmul.hlo x.npy y.npy --trace=nodir/t.json
if [ "$rc" = 1 ] && grep -qF "cannot write trace nodir/t.json" err.txt && grep -qF "[0] f32[2,3]" out.txt; then ok err_trace_unwritable
else bad err_trace_unwritable "exit $rc: $(cat err.txt)"; fi

# ---- fmt ----
run_cxla fmt addmul.hlo; expect fmt_prints_module 0 out "ENTRY main"
cp out.txt canon.hlo
run_cxla fmt canon.hlo
cmp -s out.txt canon.hlo && ok fmt_is_idempotent || bad fmt_is_idempotent "second fmt differs"
run_cxla fmt --check canon.hlo
[ "$rc" = 0 ] && [ ! -s out.txt ] && ok fmt_check_canonical || bad fmt_check_canonical "exit $rc: $(cat err.txt)"
printf '// a comment\n' | cat - canon.hlo >noncanon.hlo
run_cxla fmt --check noncanon.hlo; expect_error fmt_check_noncanonical "noncanon.hlo is not in canonical form"
run_cxla fmt;                   expect usage_fmt_missing 2 err "missing MODULE.hlo"

# ---- errors: exit 1, one line ----
run_cxla run addmul.hlo x.npy;             expect_error err_input_count "expected 2 inputs (one .npy per ENTRY parameter), got 1"
run_cxla run addmul.hlo x.npy y.npy x.npy; expect_error err_input_count_many "expected 2 inputs (one .npy per ENTRY parameter), got 3"
run_cxla run addmul.hlo x.npy y32.npy;     expect_error err_input_shape "parameter 1 'y' (y32.npy): expected f32[2,3], got f32[3,2]"
run_cxla run addmul.hlo x.npy s.npy;       expect_error err_input_type "expected f32[2,3], got s32[2,3]"
run_cxla run addmul.hlo x.npy trunc.npy;   expect_error err_input_truncated "trunc.npy: .npy data is 12 bytes, but f32[2,3] needs 24 bytes (file truncated)"
run_cxla run addmul.hlo x.npy nope.npy;    expect_error err_input_missing "cannot open nope.npy: No such file or directory"
run_cxla run nope.hlo;                     expect_error err_module_missing "cannot open nope.hlo: No such file or directory"
printf 'HloModule bad\n\nENTRY main {\n  ROOT x = f32[2] parameter(0\n}\n' >bad.hlo
run_cxla run bad.hlo;                      expect_error err_parse_location "bad.hlo:5:1: error: "
# files that are not HLO text: one line saying what they are and how to get HLO text
printf '\n\005jit_f\022\004main' >model.hlo.pb
run_cxla run model.hlo.pb;                 expect_error err_hlo_pb "model.hlo.pb:1:1: error: this looks like a binary HloModuleProto (an .hlo.pb file), not HLO text; dump text instead with XLA_FLAGS="
printf 'module @jit_f {\n  func.func public @main() {\n  }\n}\n' >f.mlir
run_cxla compile f.mlir;                   expect_error err_stablehlo "f.mlir:1:1: error: this is MLIR (StableHLO) text, not HLO text; in jax print HLO text with jax.jit(f).lower(*args).as_text(dialect=\"hlo\")"
printf 'BufferAssignment:\nallocation 0: size 4, parameter 0, shape |f32[]| at ShapeIndex {}:\n' >m-buffer-assignment.txt
run_cxla fmt m-buffer-assignment.txt;      expect_error err_buffer_assignment "m-buffer-assignment.txt:1:1: error: this is a buffer-assignment dump"
printf 'HloModule ill\n\nENTRY main {\n  x = f32[2] parameter(0)\n  y = f32[3] parameter(1)\n  ROOT a = f32[2] add(x, y)\n}\n' >ill.hlo
run_cxla run ill.hlo --random-inputs;      expect_error err_verify_location "ill.hlo:6:"
run_cxla fmt bad.hlo;                      expect_error err_fmt_parse "bad.hlo:5:1: error: "
run_cxla compile bad.hlo;                  expect_error err_compile_parse "bad.hlo:5:1: error: "
run_cxla compile ill.hlo;                  expect_error err_compile_verify "ill.hlo:6:"
printf 'HloModule two\n\nENTRY main {\n  x = f32[2] parameter(0)\n  a = f32[2] custom-call(x), custom_call_target="foo"\n  ROOT b = f32[2] custom-call(a), custom_call_target="bar"\n}\n' >two.hlo
run_cxla compile two.hlo;                  expect_error err_compile_unsupported_all "two.hlo:5:3: error: not supported: 2 instructions: two.hlo:5:3 custom-call 'a' (target foo: "
run_cxla run two.hlo --random-inputs --backend=cpu; expect_error err_run_unsupported_all "two.hlo:6:8 custom-call 'b' (target bar: "
# --backend=gpu-emu: the gpu backend's kernels and runtime on an emulated grid, as the interpreter
run_cxla run addmul.hlo x.npy y.npy --backend=gpu-emu
expect gpu_emu_run_leaf0 0 out "[0] f32[2,3] {{1.5, 2.5, 3.5}, {3, 4, 5}}"
expect gpu_emu_run_leaf1 0 out "[1] f32[2,3] {{0.5, 1, 1.5}, {-4, -5, -6}}"
# a dot is a cuBLASLt call (emulated here) with its kernel time in the trace; a sort is refused
run_cxla run dot.hlo x.npy y32.npy --backend=gpu-emu --trace=gpu.trace.json
expect gpu_emu_dot 0 out "[0] f32[2,2] {{-1.5, -4.5}, {-1.5, -9}}"
grep -qF '"cat":"library"' gpu.trace.json && ok gpu_emu_trace_gemm || bad gpu_emu_trace_gemm "$(head -c 300 gpu.trace.json)"
# jax.scipy.linalg.schur: no NVIDIA library has gees, so it is a host step, named in the trace with its reason
run_cxla run "$SRC/tests/hlo/jax_ops/linalg_schur_f32.hlo" --random-inputs --backend=gpu-emu --trace=gees.trace.json
expect gpu_emu_gees 0 out "[2] f32[2,4,4]"
grep -qF '"cat":"host"' gees.trace.json && grep -qF 'no NVIDIA library has a Schur decomposition' gees.trace.json &&
  ok gpu_emu_trace_host_step || bad gpu_emu_trace_host_step "$(head -c 300 gees.trace.json)"
printf 'HloModule s\nENTRY e {\n x = f32[4] parameter(0)\n r = u32[] replica-id()\n ROOT t = (f32[4], u32[]) tuple(x, r)\n}\n' >refused.hlo
run_cxla run refused.hlo --random-inputs --backend=gpu-emu; expect_error err_gpu_emu_refuses "gpu backend: r (replica-id) cannot run on the GPU yet"
# PTX without a GPU: a valid module even of library calls alone, checked by ptxas when installed
run_cxla compile addmul.hlo --backend=gpu --gpu-arch=sm_80 --emit-ptx=addmul.ptx
expect gpu_emit_ptx 0 out "wrote addmul.ptx: PTX ISA 8.5 for sm_80"
grep -q '^.target sm_80' addmul.ptx && grep -q '^.visible .entry' addmul.ptx && ok gpu_emit_ptx_text || bad gpu_emit_ptx_text "$(head -c 300 addmul.ptx)"
run_cxla compile dot.hlo --backend=gpu --emit-ptx=dot.ptx; expect gpu_emit_ptx_library 0 out "0 kernels, 1 cuBLASLt GEMMs"
if [ -x /usr/local/cuda/bin/ptxas ]; then
  /usr/local/cuda/bin/ptxas -arch=sm_75 dot.ptx -o /dev/null && /usr/local/cuda/bin/ptxas -arch=sm_80 addmul.ptx -o /dev/null &&
    ok gpu_emit_ptx_ptxas || bad gpu_emit_ptx_ptxas "ptxas refused the emitted PTX"
fi
run_cxla compile dot.hlo --backend=gpu --gpu-arch=sm_52 --emit-ptx=x.ptx; expect bad_gpu_arch 2 err "--gpu-arch=sm_52 is not a PTX target cxla knows"
run_cxla compile dot.hlo --emit-ptx=x.ptx; expect emit_ptx_needs_gpu 2 err "--emit-ptx and --gpu-arch are for --backend=gpu"
run_cxla compile refused.hlo --backend=gpu --emit-ptx=x.ptx; expect_error err_emit_ptx_refuses "(replica-id) cannot run on the GPU yet"
# --backend=gpu without a CUDA driver (CI): one clear line and exit 1, never a crash
CXLA_CUDA_DRIVER=/nonexistent/libcuda.so.1 "$CXLA" run addmul.hlo x.npy y.npy --backend=gpu >out.txt 2>err.txt; rc=$?
expect_error err_backend_gpu_driver "gpu backend: no CUDA driver (/nonexistent/libcuda.so.1 not found)"
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
  run_cxla run addmul.hlo x.npy y.npy --backend=gpu; expect_error err_backend_gpu "gpu backend: no CUDA driver (libcuda.so.1 not found)"
fi
run_cxla run addmul.hlo x.npy y.npy --backend=tpu; expect_error err_backend_unknown "unknown backend 'tpu'"
touch afile
run_cxla run addmul.hlo x.npy y.npy --out afile; expect_error err_out_not_dir "cannot create directory afile"
CXLA_FLAGS=--bogus "$CXLA" run addmul.hlo x.npy y.npy >out.txt 2>err.txt; rc=$?
expect_error err_env_flags "CXLA_FLAGS: unknown flag '--bogus'"
echo 'HloModule loop
cond {
  c = s32[] parameter(0)
  ten = s32[] constant(1000000)
  ROOT lt = pred[] compare(c, ten), direction=LT
}
body {
  b = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT n = s32[] add(b, one)
}
ENTRY main {
  z = s32[] constant(0)
  ROOT w = s32[] while(z), condition=cond, body=body
}' >loop.hlo
run_cxla run loop.hlo --max-loop-iterations=5; expect_error err_runtime_loop_limit "loop.hlo:14:8: error: while loop exceeded --max-loop-iterations=5"
run_cxla run one.hlo --random-inputs --threads=3 --stats
[ "$rc" = 0 ] && grep -q "^compile: .*verify=" err.txt && ok run_stats || bad run_stats "exit $rc: $(cat err.txt)"
# --stats' memory line: inputs, outputs and the cpu backend's temporaries (e, a GEMM's operand
# between two GEMMs, must be materialised: at least one f32[64,64]) add up to the data size,
# the peak cannot be below the data the run touched, and the ratio is the one of the two
cat >mem.hlo <<'EOF'
HloModule mem
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[64,64] parameter(0)
  y = f32[64,64] parameter(1)
  d = f32[64,64] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e = f32[64,64] exponential(d)
  f = f32[64,64] dot(e, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f32[] constant(0)
  r = f32[64] reduce(f, z), dimensions={1}, to_apply=add
  ROOT t = (f32[64,64], f32[64]) tuple(f, r)
}
EOF
# mem_field NAME: the value after NAME= on the memory line of err.txt
mem_field() { sed -n "s/^memory: \(.* \)*$1=\([^ ]*\).*/\2/p" err.txt; }
mem_check() { # NAME BACKEND: the line's numbers agree with each other and with the module
  pk=$(mem_field peak_rss_bytes) da=$(mem_field data_bytes) in=$(mem_field inputs_bytes)
  ou=$(mem_field outputs_bytes) te=$(mem_field temp_bytes) ra=$(mem_field ratio)
  why=""
  [ "$in" = 32768 ] || why="; inputs_bytes '$in', not 2 x 64 x 64 x 4"
  [ "$ou" = 16640 ] || why="$why; outputs_bytes '$ou', not (64 x 64 + 64) x 4"
  if [ "$2" = cpu ]; then
    [ -n "$te" ] && [ "$te" -ge 16384 ] 2>/dev/null || why="$why; temp_bytes '$te' < 16384"
    [ "$da" = $((in + ou + ${te:-0})) ] 2>/dev/null || why="$why; data_bytes '$da' != inputs + outputs + temps"
  else
    [ "$te" = n/a ] || why="$why; interp temp_bytes '$te', not n/a"
    [ "$da" = $((in + ou)) ] 2>/dev/null || why="$why; data_bytes '$da' != inputs + outputs"
  fi
  [ -n "$pk" ] && [ "$pk" -ge "$da" ] 2>/dev/null || why="$why; peak_rss_bytes '$pk' below the data"
  [ "$(awk -v p="$pk" -v d="$da" 'BEGIN { printf "%.3f", p / d }')" = "$ra" ] || why="$why; ratio '$ra' != peak / data"
  [ "$rc" = 0 ] && [ -z "$why" ] && ok "$1" || bad "$1" "exit $rc$why: $(grep '^memory:' err.txt)"
}
run_cxla run mem.hlo --random-inputs --backend=cpu --stats; mem_check run_stats_memory_cpu cpu
run_cxla run mem.hlo --random-inputs --backend=interp --stats; mem_check run_stats_memory_interp interp
# no copies of arguments or results: 56 MiB more data raise the peak by about that, not twice
# as much (the process's fixed part, LLVM's pages, cancels out between the two runs)
for n in 512 4096; do
  printf 'HloModule neg\nENTRY main {\n  x = f32[%s,4096] parameter(0)\n  ROOT y = f32[%s,4096] negate(x)\n}\n' $n $n >neg$n.hlo
  run_cxla run neg$n.hlo --random-inputs --backend=cpu --stats
  eval "pk$n=\$(mem_field peak_rss_bytes) da$n=\$(mem_field data_bytes)"
done
awk -v p1="$pk512" -v p2="$pk4096" -v d1="$da512" -v d2="$da4096" 'BEGIN { exit !(d2 > d1 && p2 - p1 < 1.5 * (d2 - d1)) }' &&
  ok run_stats_no_copies || bad run_stats_no_copies "peak $pk512 -> $pk4096 bytes for data $da512 -> $da4096"

# ---- --check, --check-each, --disable-pass, --list-passes ----
run_cxla run --help;        expect help_run_check 0 out "--check-each"
run_cxla run --help;        expect help_run_tolerance 0 out "--rtol=X, --atol=X"
run_cxla compile --help;    expect help_compile_list_passes 0 out "--list-passes"
run_cxla --help;            expect help_flag_disable_pass 0 out "--disable-pass=NAME[,NAME]"
run_cxla run addmul.hlo x.npy y.npy --backend=cpu --check
expect check_ok_leaf0 0 out "[0] f32[2,3] ok: max abs err 0, max rel err 0 (rtol 1e-05, atol 1e-06)"
expect check_ok_leaf1 0 out "[1] f32[2,3] ok: "
expect check_ok_summary 0 out "check: ok: all 2 result leaves match interp within tolerance"
if grep -qF "{{1.5" out.txt || [ -s err.txt ]; then bad check_ok_no_summary "$(cat out.txt err.txt)"; else ok check_ok_no_summary; fi
run_cxla run addmul.hlo x.npy y.npy --check; expect usage_check_needs_backend 2 err "--check compares a backend with the interpreter"
run_cxla run addmul.hlo x.npy y.npy --backend=cpu --rtol=-1 --check; expect usage_check_bad_rtol 2 err "--rtol wants a number >= 0, not '-1'"
run_cxla run addmul.hlo x.npy y.npy --backend=cpu --atol; expect usage_check_empty_atol 2 err "--atol wants a number >= 0"
run_cxla run addmul.hlo x.npy y.npy --backend=cpu --rtol=0; expect usage_tol_without_check 2 err "--rtol and --atol are tolerances of --check"
run_cxla run addmul.hlo x.npy y.npy --backend=cpu --check --out checked
expect check_with_out 0 out "wrote checked/1.npy f32[2,3]"
expect check_with_out_lines 0 out "check: ok: all 2 result leaves"

# Rows of 8192 squares summed: the cpu backend sums a row in f32 partial sums (XLA allows
# reassociation), the interpreter in double, rounded once (docs/numerics.md), so the sums
# differ in their last bits: within the default tolerance, beyond rtol=0 atol=0 (about half
# of the 64 sums differ, so that none does is out of the question). The squares themselves
# are exact on both.
cat >rowsum.hlo <<'EOF3'
HloModule rowsum

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[4,16,8192]{2,1,0} parameter(0)
  sq = f32[4,16,8192]{2,1,0} multiply(x, x)
  zero = f32[] constant(0)
  sums = f32[4,16]{1,0} reduce(sq, zero), dimensions={2}, to_apply=add
  ROOT n = f32[4,16]{1,0} negate(sums)
}
EOF3
run_cxla run rowsum.hlo --random-inputs=5 --backend=cpu --check
expect check_rounding_within_default 0 out "check: ok: the 1 result leaf matches interp within tolerance"
grep -q '^\[0\] f32\[4,16\] ok: max abs err [0-9.e-]*, max rel err [0-9.e-]* (rtol 1e-05, atol 1e-06); [1-9][0-9]* of 64 elements differ, first at \[[0-3],[0-9]*\]: cpu -[0-9.]*, interp -[0-9.]*$' out.txt \
  && ok check_rounding_reports_difference || bad check_rounding_reports_difference "$(cat out.txt)"
run_cxla run rowsum.hlo --random-inputs=5 --backend=cpu --check --rtol=0 --atol=0
expect check_mismatch_summary 1 out "check: MISMATCH: 1 of 1 result leaf differs from interp beyond tolerance"
grep -q '^\[0\] f32\[4,16\] MISMATCH: max abs err [0-9.e-]*, max rel err [0-9.e-]* (rtol 0, atol 0); [1-9][0-9]* of 64 elements beyond tolerance, first at \[[0-3],[0-9]*\]: cpu -[0-9.]*, interp -[0-9.]*$' out.txt \
  && ok check_mismatch_leaf_line || bad check_mismatch_leaf_line "$(cat out.txt)"
[ "$(wc -l <err.txt)" = 1 ] && grep -qF "cxla: error: cpu differs from interp beyond tolerance in 1 of 1 result leaf" err.txt \
  && ok check_mismatch_one_error_line || bad check_mismatch_one_error_line "$(cat err.txt)"
# The same sums judged by the error bound of docs/numerics.md on top of rtol=0 atol=0: each
# is allowed its accumulation error (a sum of 8192 squares: about 8192 * 2^-24 of its value).
run_cxla run rowsum.hlo --random-inputs=5 --backend=cpu --check --rtol=0 --atol=0 --error-bound=on
expect check_error_bound_on 0 out "check: ok: the 1 result leaf matches interp within tolerance and the error bounds of docs/numerics.md"
grep -q '^\[0\] f32\[4,16\] ok: .*(rtol 0, atol 0, plus an error bound of up to [0-9.e-]* per element); [1-9][0-9]* of 64 elements differ' out.txt \
  && ok check_error_bound_leaf_line || bad check_error_bound_leaf_line "$(cat out.txt)"
run_cxla run rowsum.hlo --random-inputs=5 --backend=cpu --check --error-bound=maybe
expect usage_error_bound_value 2 err "--error-bound wants on or off, not 'maybe'"
run_cxla run rowsum.hlo --random-inputs=5 --backend=cpu --error-bound=off
expect usage_error_bound_without_check 2 err "--error-bound is part of --check"
run_cxla run rowsum.hlo --random-inputs=5 --backend=cpu --check-each --rtol=0 --atol=0
expect check_each_names_first 1 out "check-each: first instruction beyond tolerance (2 of 2): sums = f32[4,16] reduce(sq, zero), rowsum.hlo:13"
expect check_each_counts 1 out "check-each: comparing 2 instructions of ENTRY with interp, each compiled for cpu as the ROOT"
grep -q '^  \[0\] f32\[4,16\] MISMATCH: .*first at \[[0-3],[0-9]*\]: cpu ' out.txt && ok check_each_leaf_line || bad check_each_leaf_line "$(cat out.txt)"
expect check_each_error_names_instruction 1 err "(first differing instruction: sums)"
run_cxla run rowsum.hlo --random-inputs=5 --backend=cpu --check-each
expect check_each_all_match 0 out "check-each: all 2 instructions match interp within tolerance"

# The JAX MLP's Adam step (bench/mem/jax_mlp_step.hlo) against the interpreter, on inputs
# mlp_inputs.hlo makes from random ones: weights at their usual scale (uniform in +-1/sqrt(fan
# in)), x >= 0, labels in [0, 8], a valid optimizer state (count 5, second moments >= 0). Every
# leaf is within the fixed tolerance, and --check-each judges each instruction as --check
# judges the result, with its error bound: it once named the update m/(sqrt(v)+eps) (div.59,
# 5 elements beyond rtol, within their bound) while the whole step matched.
cat >mlp_inputs.hlo <<'EOF'
HloModule mlp_inputs

ENTRY e {
  m = f32[] constant(0.001)
  count = s32[] constant(5)
  b0 = f32[512] parameter(0)
  b0.s = f32[512] broadcast(f32[] constant(0.01)), dimensions={}
  b0.m = f32[512] broadcast(m), dimensions={}
  b0.w = f32[512] multiply(b0, b0.s)
  b0.mu = f32[512] multiply(b0, b0.m)
  b0.nu = f32[512] multiply(b0.mu, b0.mu)
  w0 = f32[784,512] parameter(1)
  w0.s = f32[784,512] broadcast(f32[] constant(0.0357142857)), dimensions={}
  w0.m = f32[784,512] broadcast(m), dimensions={}
  w0.w = f32[784,512] multiply(w0, w0.s)
  w0.mu = f32[784,512] multiply(w0, w0.m)
  w0.nu = f32[784,512] multiply(w0.mu, w0.mu)
  b1 = f32[512] parameter(2)
  b1.s = f32[512] broadcast(f32[] constant(0.01)), dimensions={}
  b1.m = f32[512] broadcast(m), dimensions={}
  b1.w = f32[512] multiply(b1, b1.s)
  b1.mu = f32[512] multiply(b1, b1.m)
  b1.nu = f32[512] multiply(b1.mu, b1.mu)
  w1 = f32[512,512] parameter(3)
  w1.s = f32[512,512] broadcast(f32[] constant(0.0441941738)), dimensions={}
  w1.m = f32[512,512] broadcast(m), dimensions={}
  w1.w = f32[512,512] multiply(w1, w1.s)
  w1.mu = f32[512,512] multiply(w1, w1.m)
  w1.nu = f32[512,512] multiply(w1.mu, w1.mu)
  b2 = f32[10] parameter(4)
  b2.s = f32[10] broadcast(f32[] constant(0.01)), dimensions={}
  b2.m = f32[10] broadcast(m), dimensions={}
  b2.w = f32[10] multiply(b2, b2.s)
  b2.mu = f32[10] multiply(b2, b2.m)
  b2.nu = f32[10] multiply(b2.mu, b2.mu)
  w2 = f32[512,10] parameter(5)
  w2.s = f32[512,10] broadcast(f32[] constant(0.0441941738)), dimensions={}
  w2.m = f32[512,10] broadcast(m), dimensions={}
  w2.w = f32[512,10] multiply(w2, w2.s)
  w2.mu = f32[512,10] multiply(w2, w2.m)
  w2.nu = f32[512,10] multiply(w2.mu, w2.mu)
  x = f32[128,784] parameter(6)
  ax = f32[128,784] abs(x)
  y = s32[128] parameter(7)
  ay = s32[128] abs(y)
  ROOT t = (f32[512], f32[784,512], f32[512], f32[512,512], f32[10], f32[512,10], s32[], f32[512], f32[784,512], f32[512], f32[512,512], f32[10], f32[512,10], f32[512], f32[784,512], f32[512], f32[512,512], f32[10], f32[512,10], f32[128,784], s32[128]) tuple(b0.w, w0.w, b1.w, w1.w, b2.w, w2.w, count, b0.mu, w0.mu, b1.mu, w1.mu, b2.mu, w2.mu, b0.nu, w0.nu, b1.nu, w1.nu, b2.nu, w2.nu, ax, ay)
}
EOF
run_cxla run mlp_inputs.hlo --random-inputs=1 --out mlp_in; expect mlp_inputs_made 0 out "mlp_in/20.npy s32[128]"
MLP_IN=$(i=0; while [ $i -le 20 ]; do printf 'mlp_in/%d.npy ' $i; i=$((i + 1)); done)
# shellcheck disable=SC2086 # MLP_IN is a list of files
run_cxla run "$SRC/bench/mem/jax_mlp_step.hlo" $MLP_IN --backend=cpu --check-each
expect check_adam_step_matches 0 out "check: ok: all 20 result leaves match interp within tolerance"
expect check_each_adam_step_within_bounds 0 out "check-each: all 206 instructions match interp within tolerance"
# With --random-inputs the same step is ill-conditioned (weights of 1 make logits of ~2e3,
# whose f32 dots may be off by more than exp's range; second moments < 0 cancel in v): its
# bounds are not finite past the softmax, which allows nothing (docs/numerics.md), and the
# leaf lines say so instead of "an error bound of up to 0".
run_cxla run "$SRC/bench/mem/jax_mlp_step.hlo" --random-inputs --backend=cpu --check
grep -q '^\[3\] f32\[512,512\] .*, no error bound for 262144 elements whose bound is not finite)' out.txt \
  && ok check_bound_not_finite_said || bad check_bound_not_finite_said "$(cat out.txt)"

run_cxla compile --list-passes
expect list_passes_layout_first 0 out "layout"
head -1 out.txt | grep -q '^layout  *once, required  *[a-z]' && ok list_passes_first_line || bad list_passes_first_line "$(head -3 out.txt)"
grep -q '^wrap-singletons  *once, required ' out.txt && grep -q '^simplify  *fixpoint  *[a-z]' out.txt \
  && grep -q '^fusion  *fusion=on  *[a-z]' out.txt && [ "$(grep -c '^dce ' out.txt)" = 2 ] \
  && ok list_passes_lines || bad list_passes_lines "$(cat out.txt)"
run_cxla compile --list-passes addmul.hlo; expect usage_list_passes_module 2 err "--list-passes takes no MODULE.hlo"
run_cxla run addmul.hlo x.npy y.npy --backend=cpu --disable-pass=simplify,frob
expect usage_disable_unknown 2 err "flag --disable-pass: unknown pass 'frob'; passes that may be disabled: remove-annotations, batchnorm-expand, scan-expand, inline, simplify, fold, cse, dot-transpose, dce,"
run_cxla run addmul.hlo x.npy y.npy --backend=cpu --disable-pass=layout
expect usage_disable_required 2 err "pass 'layout' is required"
CXLA_FLAGS=--disable-pass=wrap-singletons "$CXLA" run addmul.hlo x.npy y.npy --backend=cpu >out.txt 2>err.txt; rc=$?
expect_error err_env_disable_required "CXLA_FLAGS: flag --disable-pass: pass 'wrap-singletons' is required"
# Shape ops the simplifier would remove: with simplification (or everything that may be) off,
# the cpu backend still compiles them and gets x + y.
cat >noops.hlo <<'EOF3'
HloModule noops

ENTRY main {
  x = f32[2,3]{1,0} parameter(0)
  y = f32[2,3]{1,0} parameter(1)
  r = f32[3,2]{1,0} reshape(x)
  r2 = f32[2,3]{1,0} reshape(r)
  t = f32[3,2]{1,0} transpose(r2), dimensions={1,0}
  t2 = f32[2,3]{1,0} transpose(t), dimensions={1,0}
  one = f32[] constant(1)
  ones = f32[2,3]{1,0} broadcast(one), dimensions={}
  m = f32[2,3]{1,0} multiply(t2, ones)
  ROOT a = f32[2,3]{1,0} add(m, y)
}
EOF3
run_cxla run noops.hlo x.npy y.npy --backend=cpu --disable-pass=simplify
expect disable_simplify_result 0 out "[0] f32[2,3] {{1.5, 2.5, 3.5}, {3, 4, 5}}"
ALL_OPTIONAL=$("$CXLA" compile --list-passes | grep -v required | awk '{print $1}' | sort -u | paste -sd, -)
case ",$ALL_OPTIONAL," in *,layout,*|*,wrap-singletons,*|*,,*) bad list_passes_optional "$ALL_OPTIONAL" ;;
  *,simplify,*) case ",$ALL_OPTIONAL," in *,fusion,*) ok list_passes_optional ;; *) bad list_passes_optional "$ALL_OPTIONAL" ;; esac ;;
  *) bad list_passes_optional "$ALL_OPTIONAL" ;; esac
run_cxla run noops.hlo x.npy y.npy --backend=cpu --disable-pass=$ALL_OPTIONAL
expect disable_all_optional_result 0 out "[0] f32[2,3] {{1.5, 2.5, 3.5}, {3, 4, 5}}"
CXLA_FLAGS="--disable-pass=$ALL_OPTIONAL" "$CXLA" run rowsum.hlo --random-inputs=5 --backend=cpu --check >out.txt 2>err.txt; rc=$?
expect disable_all_optional_check 0 out "check: ok: the 1 result leaf matches interp within tolerance"
# Disabling fusion leaves each op its own kernel (wrap-singletons runs instead), as --fusion=off
# does; with fusion on, wrap-singletons finds nothing left and writes no dump.
run_cxla compile noops.hlo --backend=cpu --disable-pass=fusion --dump-to=dis_fusion
if [ "$rc" = 0 ] && ls dis_fusion | grep -q '\.wrap-singletons\.hlo$' && ! ls dis_fusion | grep -q '\.fusion\.hlo$'; then
  ok disable_fusion_wraps_singletons; else bad disable_fusion_wraps_singletons "exit $rc: $(ls dis_fusion 2>&1)"; fi
run_cxla compile noops.hlo --backend=cpu --dump-to=with_fusion
if [ "$rc" = 0 ] && ls with_fusion | grep -q '\.fusion\.hlo$' && ! ls with_fusion | grep -q 'wrap-singletons'; then
  ok fusion_leaves_nothing_to_wrap; else bad fusion_leaves_nothing_to_wrap "exit $rc: $(ls with_fusion 2>&1)"; fi

# ---- --timeout: a loop that never ends is named as one, on both backends; a bad value is a usage error ----
cat >endless.hlo <<'EOF'
HloModule endless
cond {
  p = s32[] parameter(0)
  z = s32[] constant(0)
  ROOT c = pred[] compare(p, z), direction=GE
}
body {
  p = s32[] parameter(0)
  one = s32[] constant(1)
  a = s32[] add(p, one)
  m = s32[] constant(1000)
  ROOT r = s32[] remainder(a, m)
}
ENTRY e {
  x = s32[] constant(0)
  ROOT w = s32[] while(x), condition=cond, body=body
}
EOF
for b in interp cpu; do
  run_cxla run endless.hlo --backend=$b --timeout=1
  expect_error "timeout_endless_loop_$b" "timed out after 1 s in a while loop that keeps iterating"
done
# A reference run that is slow is named as the interpreter's, not as a slow kernel: under
# --check it is often the interpreter (one element at a time) that takes long.
cat >bigdot.hlo <<'EOF'
HloModule bigdot
ENTRY e {
  a = f32[2048,2048] parameter(0)
  b = f32[2048,2048] parameter(1)
  ROOT d = f32[2048,2048] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
EOF
run_cxla run bigdot.hlo --random-inputs --backend=interp --timeout=1
expect_error timeout_slow_reference_run "timed out after 1 s running bigdot on interp: a slow reference run"
run_cxla run endless.hlo --backend=cpu --max-loop-iterations=100 --timeout=30
expect_error timeout_not_needed_with_loop_limit "exceeded --max-loop-iterations=100"
run_cxla run addmul.hlo x.npy y.npy --timeout=30; expect timeout_fast_run_finishes 0 out "[0] f32[2,3]"
run_cxla run addmul.hlo x.npy y.npy --timeout=0; expect usage_timeout_zero 2 err "--timeout=SECONDS wants a number of seconds > 0, not '0'"

# ---- grad ----
cat >sq.hlo <<'EOF'
HloModule sq

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}

ENTRY main {
  x = f32[2,3] parameter(0)
  w = f32[2,3] parameter(1)
  xx = f32[2,3] multiply(x, x)
  m = f32[2,3] multiply(xx, w)
  z = f32[] constant(0)
  ROOT s = f32[] reduce(m, z), dimensions={0,1}, to_apply=add
}
EOF
run_cxla grad --help; expect help_grad 0 out "--wrt=N[,N...]"
run_cxla grad sq.hlo --wrt=0,1; expect grad_prints_module 0 out "ROOT"
cp out.txt sq_grad.hlo
for b in interp cpu; do
  run_cxla run sq_grad.hlo x.npy y.npy --backend=$b
  expect "grad_runs_$b" 0 out "[1] f32[2,3] {{1, 2, 3}, {-8, -10, -12}}"
  grep -qF "[0] f32[] -70" out.txt && grep -qF "[2] f32[2,3] {{1, 4, 9}, {16, 25, 36}}" out.txt \
    && ok "grad_values_$b" || bad "grad_values_$b" "$(cat out.txt)"
done
run_cxla grad sq.hlo; expect usage_grad_missing_wrt 2 err "missing --wrt=N"
run_cxla grad sq.hlo --wrt=0,x; expect usage_grad_bad_wrt 2 err "expected parameter numbers separated by commas"
run_cxla grad sq.hlo --wrt=2; expect_error err_grad_no_parameter "grad: no parameter 2 (ENTRY takes 2)"
run_cxla grad addmul.hlo --wrt=0; expect_error err_grad_not_scalar "must return a scalar float"

# ---- train-step ----
run_cxla train-step --help; expect help_train_step 0 out "--steps-per-call=K"
run_cxla help train-step; expect help_train_step_via_help 0 out "--optimizer=sgd|adam"
# w -= 0.5 * x^2 (the gradient of sum(x x w) by w); the step takes w first, then x
run_cxla train-step sq.hlo --wrt=1 --lr=0.5; expect train_step_prints_module 0 out "input_output_alias={ {1}: (0, {}, may-alias) }"
cp out.txt sq_step.hlo
for b in interp cpu; do
  run_cxla run sq_step.hlo y.npy x.npy --backend=$b
  expect "train_step_runs_$b" 0 out "[1] f32[2,3] {{0, -1.5, -4}, {-9, -13.5, -19}}"
  grep -qF "[0] f32[] -70" out.txt && ok "train_step_loss_$b" || bad "train_step_loss_$b" "$(cat out.txt)"
done
# --repeat runs a module that donates its weights again from the same inputs each time
run_cxla run sq_step.hlo y.npy x.npy --backend=cpu --repeat=3
expect train_step_repeat_refills_donated 0 out "[1] f32[2,3] {{0, -1.5, -4}, {-9, -13.5, -19}}"
grep -qF "(3 runs)" err.txt && ok train_step_repeat_timed || bad train_step_repeat_timed "$(cat err.txt)"
# the learning rate as the last parameter: given 0.5, the same step
write_npy lr.npy '<f4' '()' "$FH"
run_cxla train-step sq.hlo --wrt=1 --lr-input; expect train_step_lr_input 0 out "learning_rate"
cp out.txt sq_step_lr.hlo
run_cxla run sq_step_lr.hlo y.npy x.npy lr.npy --backend=cpu
expect train_step_lr_input_runs 0 out "[1] f32[2,3] {{0, -1.5, -4}, {-9, -13.5, -19}}"
run_cxla train-step sq.hlo --wrt=1,0 --optimizer=adam --lr=0.01 --steps-per-call=3
expect train_step_adam_loop 0 out "while("
cp out.txt sq_adam3.hlo
run_cxla run sq_adam3.hlo --random-inputs=3 --backend=cpu --check --stats
expect train_step_adam_loop_cpu_matches_interp 0 out "check: ok"
grep -qF "fallbacks=0" err.txt && ok train_step_adam_loop_native || bad train_step_adam_loop_native "$(cat err.txt)"
run_cxla train-step sq.hlo --wrt=1 --optimizer=sgd --momentum=0.9 --nesterov; expect train_step_momentum 0 out "velocity"
# data-parallel over 2 devices: both given the same batch, the mean of their gradients is the
# one-device gradient (a sum without the division would step twice as far)
run_cxla train-step sq.hlo --wrt=1 --lr=0.5 --replicas=2; expect train_step_replicas 0 out "replica_groups={{0,1}}"
cp out.txt sq_step2.hlo
run_cxla run sq_step2.hlo y.npy x.npy --replicas=2 --backend=cpu
expect train_step_replicas_runs 0 out "[1] f32[2,3] {{0, -1.5, -4}, {-9, -13.5, -19}}"
[ "$(grep -cF "{{0, -1.5, -4}, {-9, -13.5, -19}}" out.txt)" = 2 ] && ok train_step_replicas_both_devices ||
  bad train_step_replicas_both_devices "$(cat out.txt)"
run_cxla run sq_step2.hlo y.npy x.npy --backend=cpu; expect_error err_train_step_replicas_alone "name 2 replicas"
run_cxla train-step sq.hlo --wrt=1 --replicas=0; expect usage_train_step_bad_replicas 2 err "--replicas=0: expected a count from 1 to 1024"
run_cxla train-step sq.hlo; expect usage_train_step_missing_wrt 2 err "missing --wrt=N"
run_cxla train-step sq.hlo --wrt=1 --optimizer=rmsprop; expect usage_train_step_optimizer 2 err "--optimizer=rmsprop: expected sgd or adam"
run_cxla train-step sq.hlo --wrt=1 --optimizer=adam --momentum=0.9; expect usage_train_step_wrong_option 2 err "--momentum is an option of --optimizer=sgd"
run_cxla train-step sq.hlo --wrt=1 --beta1=0.8; expect usage_train_step_adam_option 2 err "--beta1 is an option of --optimizer=adam"
run_cxla train-step sq.hlo --wrt=1 --lr=fast; expect usage_train_step_bad_number 2 err "--lr=fast: expected a number"
run_cxla train-step sq.hlo --wrt=1 --steps-per-call=2.5; expect usage_train_step_bad_k 2 err "--steps-per-call=2.5: expected a whole number"
run_cxla train-step sq.hlo --wrt=1 --lr=-1; expect_error err_train_step_negative_lr "train-step: learning rate -1: expected a finite number >= 0"
run_cxla train-step sq.hlo --wrt=1 --steps-per-call=0; expect_error err_train_step_k0 "0 steps per call: expected K >= 1"
run_cxla train-step sq.hlo --wrt=1,1; expect_error err_train_step_repeated "parameter 1 is listed twice"
run_cxla train-step sq.hlo --wrt=5; expect_error err_train_step_no_parameter "train-step: no parameter 5 (ENTRY takes 2)"

# ---- infeed and outfeed: --infeed, --outfeed-out, --random-inputs, --check ----
cat >feed.hlo <<'EOF'
HloModule feed

ENTRY main {
  x = f32[2] parameter(0)
  t0 = token[] after-all()
  in = ((f32[2], f32[2]), token[]) infeed(t0)
  d = (f32[2], f32[2]) get-tuple-element(in), index=0
  y = f32[2] get-tuple-element(d), index=0
  t1 = token[] get-tuple-element(in), index=1
  s = f32[2] add(x, y)
  t2 = token[] outfeed(s, t1), outfeed_shape=f32[2]
  m = f32[2] multiply(x, y)
  t3 = token[] outfeed(d, t2)
  ROOT r = (f32[2], token[]) tuple(m, t3)
}
EOF
write_npy fx.npy '<f4' '(2,)' "$F1$F2"
write_npy fy.npy '<f4' '(2,)' "$F3$F4"
write_npy fz.npy '<f4' '(3,)' "$F1$F2$F3"
run_cxla run feed.hlo fx.npy --infeed=fy.npy,fx.npy
expect feed_result 0 out "[0] f32[2] {3, 8}"
grep -qF "[1] token[]" out.txt && ok feed_token_leaf || bad feed_token_leaf "$(cat out.txt)"
# outfeed 0: x + y = {4, 6}; outfeed 1: the infeed's data, ({3, 4}, {1, 2})
[ "$(sed -n '/^outfeed 0:/{n;p;}' out.txt)" = "[0] f32[2] {4, 6}" ] && ok feed_outfeed_0 || bad feed_outfeed_0 "$(cat out.txt)"
grep -A2 '^outfeed 1:' out.txt | tr '\n' ' ' | grep -qF "[0] f32[2] {3, 4} [1] f32[2] {1, 2}" && ok feed_outfeed_1_tuple ||
  bad feed_outfeed_1_tuple "$(cat out.txt)"
run_cxla run feed.hlo fx.npy --infeed fy.npy,fx.npy --backend=cpu --check
expect feed_check_cpu 0 out "outfeeds: ok: 2 values (3 leaves) match interp"
run_cxla run feed.hlo fx.npy --infeed=fy.npy,fx.npy --backend=cpu --outfeed-out=ofd
expect feed_outfeed_out 0 out "wrote ofd/1_1.npy (outfeed 1)"
[ -f ofd/0.npy ] && cmp -s ofd/1_0.npy fy.npy && cmp -s ofd/1_1.npy fx.npy && ok feed_outfeed_files ||
  bad feed_outfeed_files "$(ls ofd 2>&1)"
run_cxla run feed.hlo --random-inputs=3 --backend=cpu --check
expect feed_random_check 0 out "outfeeds: ok: 2 values"
run_cxla run feed.hlo fx.npy --infeed fy.npy,fx.npy --backend=gpu-emu --check
expect feed_check_gpu_emu 0 out "outfeeds: ok: 2 values (3 leaves) match interp"
run_cxla run feed.hlo fx.npy --infeed=fy.npy,fx.npy --backend=cpu --check-each
expect feed_check_each 0 out "outfeeds: ok: 2 values"
run_cxla run feed.hlo --random-inputs=3 --repeat=2 --backend=cpu
expect feed_random_repeat 0 out "outfeed 1:"
run_cxla run feed.hlo fx.npy; expect_error err_feed_empty "feed.hlo:6:3: error: infeed 'in': the infeed queue is empty"
run_cxla run feed.hlo fx.npy --infeed=fz.npy --backend=cpu
expect_error err_feed_wrong_shape "infeed 'in': the next infeed literal is f32[3], the infeed takes (f32[2], f32[2])"
run_cxla run feed.hlo fx.npy --infeed=missing.npy; expect err_feed_missing_file 1 err "missing.npy"
run_cxla run feed.hlo fx.npy --infeed=; expect usage_feed_empty 2 err "--infeed needs A.npy[,B.npy...]"
run_cxla run feed.hlo fx.npy --outfeed-out; expect usage_outfeed_out_dir 2 err "--outfeed-out needs a DIR"
run_cxla run feed.hlo fx.npy --infeed=fy.npy --replicas=2; expect usage_feed_replicas 2 err "--infeed and --outfeed-out run one device"
run_cxla run --help; expect help_run_infeed 0 out "--infeed=A.npy[,B.npy...]"

# StableHLO portable artifacts (MLIR bytecode as jax.export writes it) run, print and compile
# like HLO text; a cut artifact names the byte where it ends; MLIR text gets the hint
cp "$SRC/tests/stablehlo/programs/export_mlp.mlirbc" x.mlirbc
cp "$SRC/tests/stablehlo/programs/export_mlp.in0.npy" a.npy
cp "$SRC/tests/stablehlo/programs/export_mlp.in1.npy" b.npy
run_cxla run x.mlirbc --random-inputs;        expect shlo_run_random 0 out "[1] f32[] "
run_cxla run x.mlirbc a.npy b.npy --backend=cpu; expect shlo_run_inputs_cpu 0 out "[0] f32[2] "
run_cxla fmt x.mlirbc;                        expect shlo_fmt 0 out "ENTRY main"
run_cxla fmt x.mlirbc;                        expect shlo_fmt_hlo_ops 0 out "tanh("
run_cxla compile x.mlirbc --backend=cpu;      expect shlo_compile 0 out "compiled x.mlirbc for cpu"
# vhlo.dot_v1 (precision_config is its one property) and cross-replica-sum_v1, written by hand:
# the product of arange(6) as 2x3 and as 3x2, summed over one replica
cp "$SRC/tests/stablehlo/programs/handwritten_dot_v1.mlirbc" d.mlirbc
cp "$SRC/tests/stablehlo/programs/handwritten_dot_v1.in0.npy" da.npy
cp "$SRC/tests/stablehlo/programs/handwritten_dot_v1.in1.npy" db.npy
run_cxla run d.mlirbc da.npy db.npy --backend=cpu; expect shlo_dot_v1 0 out "{{10, 13}, {28, 40}}"
head -c 300 x.mlirbc >cut.mlirbc
run_cxla run cut.mlirbc --random-inputs;      expect_error err_shlo_truncated "cut.mlirbc: byte "
run_cxla fmt cut.mlirbc;                      expect_error err_shlo_fmt_truncated "cut.mlirbc: byte "
printf 'module @jit_f {\n  func.func public @main() {\n  }\n}\n' >g.mlir
run_cxla run g.mlir --random-inputs;          expect_error err_shlo_text "cxla also reads StableHLO as MLIR bytecode"

# ---- the disk cache: a second process loads the code LLVM made for the first ----
run_cxla run addmul.hlo x.npy y.npy --backend=cpu --cache-dir dc --stats; expect cache_dir_cold 0 err "disk_cache=miss"
cp out.txt cold.txt
run_cxla run addmul.hlo x.npy y.npy --backend=cpu --cache-dir dc --stats; expect cache_dir_warm 0 err "disk_cache=hit"
if cmp -s out.txt cold.txt; then ok cache_dir_warm_same_result; else bad cache_dir_warm_same_result "$(head -c 300 out.txt)"; fi
run_cxla run addmul.hlo x.npy y.npy --backend=cpu --cache-dir=dc --opt-level=1 --stats
expect cache_dir_other_flags_miss 0 err "disk_cache=miss"
# bytes overwritten in the middle of each entry: rejected, compiled again, the same result
for f in dc/*.cxc; do
  printf 'garbage' | dd of="$f" bs=1 seek=$(( $(wc -c <"$f") / 2 )) conv=notrunc 2>/dev/null
done
run_cxla run addmul.hlo x.npy y.npy --backend=cpu --cache-dir dc --stats; expect cache_dir_rejects_damage 0 err "disk_cache=rejected"
if cmp -s out.txt cold.txt; then ok cache_dir_damage_same_result; else bad cache_dir_damage_same_result "$(head -c 300 out.txt)"; fi
run_cxla run addmul.hlo x.npy y.npy --backend=cpu --cache-dir dc --stats; expect cache_dir_rewritten 0 err "disk_cache=hit"
# two processes writing the same entry at once leave one valid entry and no temporary file
"$CXLA" compile addmul.hlo --backend=cpu --cache-dir race >/dev/null 2>&1 & p1=$!
"$CXLA" compile addmul.hlo --backend=cpu --cache-dir race >/dev/null 2>&1 & p2=$!
wait $p1; r1=$?; wait $p2; r2=$?
n=$(ls race | wc -l)
if [ "$r1$r2" = 00 ] && [ "$n" = 1 ]; then ok cache_dir_race_one_entry; else bad cache_dir_race_one_entry "exits $r1 $r2, $n files: $(ls race)"; fi
run_cxla compile addmul.hlo --backend=cpu --cache-dir race
if [ "$rc" = 0 ] && grep -qE 'disk_cache +hit' out.txt; then ok cache_dir_race_valid; else bad cache_dir_race_valid "$(cat out.txt err.txt | head -c 400)"; fi
# off unless asked: nothing appears in the user's cache folder
mkdir home
HOME=$T/home XDG_CACHE_HOME='' "$CXLA" run addmul.hlo x.npy y.npy --backend=cpu >out.txt 2>err.txt; rc=$?
if [ "$rc" = 0 ] && [ -z "$(ls -A home)" ]; then ok cache_dir_off_by_default; else bad cache_dir_off_by_default "exit $rc: $(ls -A home)"; fi
HOME=$T/home XDG_CACHE_HOME='' "$CXLA" run addmul.hlo x.npy y.npy --backend=cpu --cache-dir=default >out.txt 2>err.txt; rc=$?
if [ "$rc" = 0 ] && [ "$(ls home/.cache/cxla | wc -l)" = 1 ]; then ok cache_dir_default_folder; else bad cache_dir_default_folder "exit $rc: $(ls -AR home)"; fi
run_cxla run addmul.hlo x.npy y.npy --backend=cpu --cache-dir; expect usage_cache_dir_value 2 err "--cache-dir needs a value"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
