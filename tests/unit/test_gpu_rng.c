/* test_gpu_rng.c — rng on the GPU (codegen/rng_emit.c, on gpu-emu; the real GPU with
 * CXLA_TEST_GPU_BACKEND=gpu) bit for bit against the interpreter and the cpu backend, which
 * define its values (interp/rng.c): both distributions on every float type the cpu takes
 * (f16, bf16, f32, f64, an 8-bit float), uniform integers and pred, odd sizes (Philox blocks
 * and Box-Muller pairs cut short); and inside loops, where the values depend on how often the
 * instruction ran before in the execution: a loop whose trip count is data (a CUDA graph, its
 * rng's run counter in device memory), the same loop with a known trip count, a conditional
 * inside it, and one executable run several times (every execution counts from 0 again, as
 * the interpreter's and the cpu's do). */
#include <string.h>
#include "ir/literal.h"
#include "test.h"

static const char *gpu_backend(void) {
  const char *b = getenv("CXLA_TEST_GPU_BACKEND");
  return b && *b ? b : "gpu-emu";
}

static const char *const k_backends[3] = {"interp", "cpu", NULL}; /* [2]: the GPU under test */

static cxla_literal *run(cxla_executable *e, int nargs, cxla_literal *const *args, const char *backend) {
  cxla_buffer *in[4] = {0}, *res = NULL;
  cxla_literal *out = NULL;
  cxla_status s = CXLA_OK;
  for (int i = 0; i < nargs && s == CXLA_OK; i++) s = cxla_buffer_from_literal(test_ctx(), backend, args[i], &in[i]);
  if (s == CXLA_OK) s = cxla_executable_execute(e, nargs, in, &res);
  if (s == CXLA_OK) s = cxla_buffer_to_literal(res, &out);
  CHECK_MSG(s == CXLA_OK, "%s: %s", backend, cxla_context_errmsg(test_ctx()));
  for (int i = 0; i < nargs; i++) cxla_buffer_destroy(in[i]);
  cxla_buffer_destroy(res);
  return out;
}

/* text compiled on each backend and run on each argument list in turn (runs x nargs literals),
 * every result the same bits on all three */
static void same_bits(const char *text, int runs, int nargs, cxla_literal *const *args, const char *what) {
  cxla_executable *e[3] = {0};
  const char *names[3] = {k_backends[0], k_backends[1], gpu_backend()};
  for (int b = 0; b < 3; b++) e[b] = test_compile_text(text, "rng.hlo", names[b], 0);
  for (int r = 0; e[0] && e[1] && e[2] && r < runs; r++) {
    cxla_literal *got[3] = {0};
    for (int b = 0; b < 3; b++) got[b] = run(e[b], nargs, args + r * nargs, names[b]);
    for (int b = 1; b < 3; b++)
      if (got[0] && got[b]) CHECK_MSG(cx_literal_equal(got[b], got[0]), "%s, run %d: %s differs from the interpreter", what, r, names[b]);
    for (int b = 0; b < 3; b++) cxla_literal_destroy(got[b]);
  }
  for (int b = 0; b < 3; b++) cxla_executable_destroy(e[b]);
}

static cxla_literal *scalar(cxla_type t, double v) {
  cxla_literal *l = cxla_literal_create(test_ctx(), t, 0, NULL);
  if (l) cxla_literal_set_f64(l, 0, v);
  return l;
}

/* rng(a, b) of 35 elements (7 x 5: neither 4 nor 2 divides it) on each type and distribution */
TEST(gpu_rng_types_and_distributions) {
  static const struct { const char *type; cxla_type t; double a, b; int normal; } k_cases[] = {
    {"f32", CXLA_F32, -2, 3, 0},    {"f32", CXLA_F32, 0.5, 2, 1},  {"f64", CXLA_F64, -1, 1, 0},
    {"f64", CXLA_F64, 1, 0.25, 1},  {"f16", CXLA_F16, 0, 4, 0},    {"f16", CXLA_F16, -1, 3, 1},
    {"bf16", CXLA_BF16, -8, 8, 0},  {"bf16", CXLA_BF16, 2, 1, 1},  {"f8e4m3fn", CXLA_F8E4M3FN, -4, 4, 0},
    {"f8e5m2", CXLA_F8E5M2, 0, 1, 1}, {"s8", CXLA_S8, -100, 27, 0}, {"u8", CXLA_U8, 3, 250, 0},
    {"s16", CXLA_S16, -3, -3, 0},   {"u16", CXLA_U16, 9, 2, 0},    {"s32", CXLA_S32, -1000000, 7, 0},
    {"u32", CXLA_U32, 0, 4000000000.0, 0}, {"s64", CXLA_S64, -5, 1e15, 0}, {"u64", CXLA_U64, 1, 1e18, 0},
    {"pred", CXLA_PRED, 0, 1, 0},
  };
  for (size_t i = 0; i < sizeof k_cases / sizeof *k_cases; i++) {
    char text[512], what[64];
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n"
             "  ROOT r = %s[7,5] rng(a, b), distribution=%s\n}\n",
             k_cases[i].type, k_cases[i].type, k_cases[i].type, k_cases[i].normal ? "rng_normal" : "rng_uniform");
    snprintf(what, sizeof what, "%s %s", k_cases[i].type, k_cases[i].normal ? "normal" : "uniform");
    cxla_literal *args[2] = {scalar(k_cases[i].t, k_cases[i].a), scalar(k_cases[i].t, k_cases[i].b)};
    same_bits(text, 1, 2, args, what);
    cxla_literal_destroy(args[0]);
    cxla_literal_destroy(args[1]);
  }
  /* more Philox blocks than a thread block has threads: f32 normal (525 blocks), u64 uniform
   * (1501 blocks of two) */
  cxla_literal *f[2] = {scalar(CXLA_F32, -1), scalar(CXLA_F32, 3)}, *u[2] = {scalar(CXLA_U64, 5), scalar(CXLA_U64, 1e12)};
  same_bits("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
            "  ROOT r = f32[300,7] rng(a, b), distribution=rng_normal\n}\n", 1, 2, f, "f32[300,7] normal");
  same_bits("HloModule m\nENTRY e {\n  a = u64[] parameter(0)\n  b = u64[] parameter(1)\n"
            "  ROOT r = u64[3001] rng(a, b), distribution=rng_uniform\n}\n", 1, 2, u, "u64[3001] uniform");
  for (int i = 0; i < 2; i++) cxla_literal_destroy(f[i]), cxla_literal_destroy(u[i]);
}

/* A loop of n trips (n an argument: a graph on the GPU) that adds an rng_normal draw to its
 * state each trip and, on odd trips, an f64 uniform through a conditional; then a loop of 3
 * trips (known when compiling) drawing f16 uniforms; an rng outside the loops. */
static const char *k_loops =
    "HloModule loops\n"
    "cond {\n  s = (s32[], s32[], f32[9], f64[3]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
    "  n = s32[] get-tuple-element(s), index=1\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n"
    "odd {\n  x = f64[3] parameter(0)\n  lo = f64[] constant(-1)\n  hi = f64[] constant(1)\n"
    "  u = f64[3] rng(lo, hi), distribution=rng_uniform\n  ROOT y = f64[3] add(x, u)\n}\n"
    "even {\n  x = f64[3] parameter(0)\n  ROOT y = f64[3] negate(x)\n}\n"
    "body {\n  s = (s32[], s32[], f32[9], f64[3]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
    "  n = s32[] get-tuple-element(s), index=1\n  acc = f32[9] get-tuple-element(s), index=2\n"
    "  d = f64[3] get-tuple-element(s), index=3\n  m = f32[] constant(0)\n  sd = f32[] constant(1)\n"
    "  g = f32[9] rng(m, sd), distribution=rng_normal\n  acc2 = f32[9] add(acc, g)\n"
    "  two = s32[] constant(2)\n  r = s32[] remainder(i, two)\n  one = s32[] constant(1)\n"
    "  p = pred[] compare(r, one), direction=EQ\n"
    "  d2 = f64[3] conditional(p, d, d), true_computation=odd, false_computation=even\n"
    "  i2 = s32[] add(i, one)\n  ROOT o = (s32[], s32[], f32[9], f64[3]) tuple(i2, n, acc2, d2)\n}\n"
    "kcond {\n  s = (s32[], f16[6]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
    "  three = s32[] constant(3)\n  ROOT lt = pred[] compare(i, three), direction=LT\n}\n"
    "kbody {\n  s = (s32[], f16[6]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
    "  x = f16[6] get-tuple-element(s), index=1\n  lo = f16[] constant(0)\n  hi = f16[] constant(1)\n"
    "  u = f16[6] rng(lo, hi), distribution=rng_uniform\n  y = f16[6] add(x, u)\n  one = s32[] constant(1)\n"
    "  i2 = s32[] add(i, one)\n  ROOT o = (s32[], f16[6]) tuple(i2, y)\n}\n"
    "ENTRY e {\n  n = s32[] parameter(0)\n  z = s32[] constant(0)\n  zf = f32[] constant(0)\n"
    "  acc = f32[9] broadcast(zf), dimensions={}\n  lo = f64[] constant(2)\n  hi = f64[] constant(0.5)\n"
    "  d = f64[3] rng(lo, hi), distribution=rng_normal\n"
    "  w = (s32[], s32[], f32[9], f64[3]) while((s32[], s32[], f32[9], f64[3]) tuple(z, n, acc, d)), "
    "condition=cond, body=body\n"
    "  zh = f16[] constant(0)\n  h = f16[6] broadcast(zh), dimensions={}\n"
    "  k = (s32[], f16[6]) while((s32[], f16[6]) tuple(z, h)), condition=kcond, body=kbody\n"
    "  wa = f32[9] get-tuple-element(w), index=2\n  wd = f64[3] get-tuple-element(w), index=3\n"
    "  kh = f16[6] get-tuple-element(k), index=1\n  ROOT r = (f32[9], f64[3], f16[6]) tuple(wa, wd, kh)\n}\n";

TEST(gpu_rng_in_loops_across_executions) {
  static const int trips[] = {0, 1, 5, 5, 2}; /* 5 twice: an execution repeats the last one's numbers */
  enum { RUNS = sizeof trips / sizeof *trips };
  cxla_literal *args[RUNS];
  for (int r = 0; r < RUNS; r++) args[r] = scalar(CXLA_S32, trips[r]);
  same_bits(k_loops, RUNS, 1, args, "rng in loops");
  for (int r = 0; r < RUNS; r++) cxla_literal_destroy(args[r]);
}
