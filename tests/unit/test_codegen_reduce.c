/* test_codegen_reduce.c — kInput fusions: row reductions (reassociated float sums, so within a
 * tolerance), column reductions (sequential f32 sums against the interpreter's double sums,
 * docs/numerics.md: within a tolerance), all-dims and middle-dim
 * reductions, variadic argmax, several reduces in one fusion, epilogues (log(sum), sum/N,
 * keepdims reshape), the softmax {exp, sum} multi-output fusion, row fusions in stages, and
 * the fusion passes' output on whole softmax / layer-norm style modules. */
#include "codegen_harness.h"

#define REDUCERS                                                                               \
  "HloModule r\n"                                                                              \
  "add {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\n"   \
  "mx {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] maximum(a, b)\n}\n" \
  "iadd {\n a = s32[] parameter(0)\n b = s32[] parameter(1)\n ROOT s = s32[] add(a, b)\n}\n"  \
  "hadd {\n a = f16[] parameter(0)\n b = f16[] parameter(1)\n ROOT s = f16[] add(a, b)\n}\n"  \
  "hmx {\n a = f16[] parameter(0)\n b = f16[] parameter(1)\n ROOT s = f16[] maximum(a, b)\n}\n" \
  "pand {\n a = pred[] parameter(0)\n b = pred[] parameter(1)\n ROOT s = pred[] and(a, b)\n}\n" \
  "argmax {\n av = f32[] parameter(0)\n ai = s32[] parameter(1)\n bv = f32[] parameter(2)\n"   \
  " bi = s32[] parameter(3)\n gt = pred[] compare(av, bv), direction=GT\n"                     \
  " eq = pred[] compare(av, bv), direction=EQ\n lt = pred[] compare(ai, bi), direction=LT\n"   \
  " tie = pred[] and(eq, lt)\n pa = pred[] or(gt, tie)\n v = f32[] select(pa, av, bv)\n"        \
  " i = s32[] select(pa, ai, bi)\n ROOT t = (f32[], s32[]) tuple(v, i)\n}\n"

static void run(const char *body, cgt_opts o, int nfusions, const char *file, int line) {
  char text[8192];
  snprintf(text, sizeof text, "%s%s", REDUCERS, body);
  for (int s = 1; s <= 2; s++) {
    o.seed = (uint64_t)s;
    if (cgt_check(text, &o, file, line)) test_fail(file, line, "seed %d failed", s);
    if (nfusions >= 0 && o.nfusions != nfusions) test_fail(file, line, "%d fusions, expected %d", o.nfusions, nfusions);
  }
}
#define RUN(body, o, n) run((body), (o), (n), __FILE__, __LINE__)

/* reassociated f32 sums of values in [-8, 8]: the error grows with the number of terms */
static const cgt_opts SUM = {.fusion_pass = 1, .no_specials = 1, .atol = 2e-3, .rtol = 1e-5};
static const cgt_opts EXACT = {.fusion_pass = 1};

TEST(codegen_reduce_row_sum) {
  RUN("ENTRY e {\n x = f32[64,1000] parameter(0)\n z = f32[] constant(0)\n"
      " ROOT r = f32[64] reduce(x, z), dimensions={1}, to_apply=add\n}\n", SUM, 1);
  RUN("ENTRY e {\n x = f32[8,50,9] parameter(0)\n z = f32[] constant(0)\n"
      " ROOT r = f32[50] reduce(x, z), dimensions={0,2}, to_apply=add\n}\n", SUM, 1);
  RUN("ENTRY e {\n x = f32[37,53] parameter(0)\n z = f32[] constant(0)\n"
      " ROOT r = f32[] reduce(x, z), dimensions={0,1}, to_apply=add\n}\n", SUM, 1);
  /* trailing size-1 dims: the reduced 300 is still the inner loop */
  RUN("ENTRY e {\n x = f32[5,300,1] parameter(0)\n z = f32[] constant(0)\n"
      " ROOT r = f32[5,1] reduce(x, z), dimensions={1}, to_apply=add\n}\n", SUM, 1);
}

TEST(codegen_reduce_column_sum) {
  RUN("ENTRY e {\n x = f32[1000,67] parameter(0)\n z = f32[] constant(0)\n"
      " ROOT r = f32[67] reduce(x, z), dimensions={0}, to_apply=add\n}\n", SUM, 1);
  RUN("ENTRY e {\n x = f32[8,50,9] parameter(0)\n z = f32[] constant(0)\n"
      " ROOT r = f32[8,9] reduce(x, z), dimensions={1}, to_apply=add\n}\n", SUM, 1);
  /* more than one chunk of lanes per output row */
  RUN("ENTRY e {\n x = f32[3,1300] parameter(0)\n z = f32[] constant(0)\n"
      " ROOT r = f32[1300] reduce(x, z), dimensions={0}, to_apply=add\n}\n", SUM, 1);
}

TEST(codegen_reduce_max_int_pred_f16) {
  /* max is associative even with NaN and -0, so even the row form is exact */
  RUN("ENTRY e {\n x = f32[40,333] parameter(0)\n z = f32[] constant(-inf)\n"
      " ROOT r = f32[40] reduce(x, z), dimensions={1}, to_apply=mx\n}\n", EXACT, 1);
  RUN("ENTRY e {\n x = f32[333,40] parameter(0)\n z = f32[] constant(-inf)\n"
      " ROOT r = f32[40] reduce(x, z), dimensions={0}, to_apply=mx\n}\n", EXACT, 1);
  RUN("ENTRY e {\n x = s32[30,200] parameter(0)\n z = s32[] constant(7)\n"
      " r0 = s32[30] reduce(x, z), dimensions={1}, to_apply=iadd\n"
      " r1 = s32[200] reduce(x, z), dimensions={0}, to_apply=iadd\n"
      " ROOT t = (s32[30], s32[200]) tuple(r0, r1)\n}\n", EXACT, 2);
  RUN("ENTRY e {\n x = pred[30,20] parameter(0)\n z = pred[] constant(true)\n"
      " r0 = pred[30] reduce(x, z), dimensions={1}, to_apply=pand\n"
      " r1 = pred[20] reduce(x, z), dimensions={0}, to_apply=pand\n"
      " ROOT t = (pred[30], pred[20]) tuple(r0, r1)\n}\n", EXACT, 2);
  cgt_opts h = {.fusion_pass = 1, .no_specials = 1, .atol = 0.5, .lo = -1, .hi = 1};
  RUN("ENTRY e {\n x = f16[30,100] parameter(0)\n z = f16[] constant(0)\n"
      " r0 = f16[30] reduce(x, z), dimensions={1}, to_apply=hadd\n"
      " r1 = f16[100] reduce(x, z), dimensions={0}, to_apply=hadd\n"
      " ROOT t = (f16[30], f16[100]) tuple(r0, r1)\n}\n", h, 2);
}

TEST(codegen_reduce_variadic_argmax) {
  RUN("ENTRY e {\n x = f32[50,77] parameter(0)\n i = s32[50,77] iota(), iota_dimension=1\n"
      " ninf = f32[] constant(-inf)\n z = s32[] constant(0)\n"
      " ROOT r = (f32[50], s32[50]) reduce(x, i, ninf, z), dimensions={1}, to_apply=argmax\n}\n", EXACT, -1);
  RUN("ENTRY e {\n x = f32[77,50] parameter(0)\n i = s32[77,50] iota(), iota_dimension=0\n"
      " ninf = f32[] constant(-inf)\n z = s32[] constant(0)\n"
      " ROOT r = (f32[50], s32[50]) reduce(x, i, ninf, z), dimensions={0}, to_apply=argmax\n}\n", EXACT, -1);
}

TEST(codegen_reduce_empty_dims) {
  RUN("ENTRY e {\n x = f32[6,0] parameter(0)\n z = f32[] constant(1.5)\n"
      " r0 = f32[6] reduce(x, z), dimensions={1}, to_apply=add\n"
      " y = f32[0,4] parameter(1)\n r1 = f32[4] reduce(y, z), dimensions={0}, to_apply=add\n"
      " r2 = f32[0] reduce(y, z), dimensions={1}, to_apply=add\n"
      " ROOT t = (f32[6], f32[4], f32[0]) tuple(r0, r1, r2)\n}\n", EXACT, 3);
}

/* Fusions as XLA prints them: reduces with epilogues and multi-output kInput fusions. */
TEST(codegen_reduce_epilogues_and_multi_output) {
  cgt_opts o = SUM;
  o.fusion_pass = 0;
  o.lo = 0.5;
  o.hi = 4;
  /* log(sum(x)) / N and the [N] -> [N,1] keepdims reshape */
  RUN("f1 {\n p = f32[20,130] parameter(0)\n z = f32[] constant(0)\n"
      " s = f32[20] reduce(p, z), dimensions={1}, to_apply=add\n l = f32[20] log(s)\n"
      " n = f32[] constant(130)\n nb = f32[20] broadcast(n), dimensions={}\n d = f32[20] divide(l, nb)\n"
      " ROOT k = f32[20,1] reshape(d)\n}\n"
      "ENTRY e {\n x = f32[20,130] parameter(0)\n ROOT f = f32[20,1] fusion(x), kind=kInput, calls=f1\n}\n", o, 1);
  /* softmax's {exp(x - max), sum}: exp stored while it is summed, row and column forms */
  RUN("f2 {\n p = f32[16,300] parameter(0)\n m = f32[16] parameter(1)\n"
      " mb = f32[16,300] broadcast(m), dimensions={0}\n s = f32[16,300] subtract(p, mb)\n"
      " e = f32[16,300] exponential(s)\n z = f32[] constant(0)\n"
      " r = f32[16] reduce(e, z), dimensions={1}, to_apply=add\n"
      " ROOT t = (f32[16,300], f32[16]) tuple(e, r)\n}\n"
      "ENTRY e {\n x = f32[16,300] parameter(0)\n y = f32[16] parameter(1)\n"
      " ROOT f = (f32[16,300], f32[16]) fusion(x, y), kind=kInput, calls=f2\n}\n", o, 1);
  RUN("f3 {\n p = f32[300,16] parameter(0)\n e = f32[300,16] exponential(p)\n z = f32[] constant(0)\n"
      " r = f32[16] reduce(e, z), dimensions={0}, to_apply=add\n ninf = f32[] constant(-inf)\n"
      " m = f32[16] reduce(p, ninf), dimensions={0}, to_apply=mx\n d = f32[16] subtract(r, m)\n"
      " ROOT t = (f32[300,16], f32[16], f32[16]) tuple(e, d, m)\n}\n"
      "ENTRY e {\n x = f32[300,16] parameter(0)\n"
      " ROOT f = (f32[300,16], f32[16], f32[16]) fusion(x), kind=kInput, calls=f3\n}\n", o, 1);
}

/* Whole modules through the fusion passes: every resulting fusion runs compiled. */
TEST(codegen_reduce_fused_softmax_and_layernorm) {
  cgt_opts o = SUM;
  o.fusion_pass = 2;
  RUN("ENTRY e {\n x = f32[32,257] parameter(0)\n ninf = f32[] constant(-inf)\n z = f32[] constant(0)\n"
      " m = f32[32] reduce(x, ninf), dimensions={1}, to_apply=mx\n mb = f32[32,257] broadcast(m), dimensions={0}\n"
      " s = f32[32,257] subtract(x, mb)\n ex = f32[32,257] exponential(s)\n"
      " su = f32[32] reduce(ex, z), dimensions={1}, to_apply=add\n sb = f32[32,257] broadcast(su), dimensions={0}\n"
      " ROOT d = f32[32,257] divide(ex, sb)\n}\n", o, -1);
  RUN("ENTRY e {\n x = f32[24,96] parameter(0)\n g = f32[96] parameter(1)\n z = f32[] constant(0)\n"
      " n = f32[] constant(96)\n eps = f32[] constant(1e-5)\n"
      " s = f32[24] reduce(x, z), dimensions={1}, to_apply=add\n nb = f32[24] broadcast(n), dimensions={}\n"
      " mean = f32[24] divide(s, nb)\n mb = f32[24,96] broadcast(mean), dimensions={0}\n"
      " c = f32[24,96] subtract(x, mb)\n c2 = f32[24,96] multiply(c, c)\n"
      " v = f32[24] reduce(c2, z), dimensions={1}, to_apply=add\n vm = f32[24] divide(v, nb)\n"
      " eb = f32[24] broadcast(eps), dimensions={}\n ve = f32[24] add(vm, eb)\n r = f32[24] rsqrt(ve)\n"
      " rb = f32[24,96] broadcast(r), dimensions={0}\n y = f32[24,96] multiply(c, rb)\n"
      " gb = f32[24,96] broadcast(g), dimensions={1}\n ROOT o = f32[24,96] multiply(y, gb)\n}\n", o, -1);
}

/* Row fusion (passes/fusion_row.c): reduces over the trailing dims whose results are re-read
 * as per-row values (broadcast onto the leading dims) run in stages over each row; softmax
 * keeps its exp in the output between its sum and its divide. */
TEST(codegen_reduce_row_stages) {
  cgt_opts o = SUM;
  o.rtol = 1e-4;
  RUN("f1 {\n p = f32[8,9] parameter(0)\n z = f32[] constant(0)\n"
      " s = f32[8] reduce(p, z), dimensions={1}, to_apply=add\n b = f32[8,9] broadcast(s), dimensions={0}\n"
      " ROOT d = f32[8,9] subtract(p, b)\n}\n"
      "ENTRY e {\n x = f32[8,9] parameter(0)\n ROOT f = f32[8,9] fusion(x), kind=kInput, calls=f1\n}\n", o, 1);
  /* softmax over rows of 3-d input (two leading dims), f32 and f16 (stash in f16) */
  static const char *types[2] = {"f32", "f16"};
  for (int t = 0; t < 2; t++) {
    char body[2048];
    const char *T = types[t];
    snprintf(body, sizeof body,
             "sm {\n p = %s[4,6,33] parameter(0)\n ninf = %s[] constant(-inf)\n z = %s[] constant(0)\n"
             " m = %s[4,6] reduce(p, ninf), dimensions={2}, to_apply=%s\n mb = %s[4,6,33] broadcast(m), dimensions={0,1}\n"
             " s = %s[4,6,33] subtract(p, mb)\n ex = %s[4,6,33] exponential(s)\n"
             " su = %s[4,6] reduce(ex, z), dimensions={2}, to_apply=%s\n sb = %s[4,6,33] broadcast(su), dimensions={0,1}\n"
             " ROOT d = %s[4,6,33] divide(ex, sb)\n}\n"
             "ENTRY e {\n x = %s[4,6,33] parameter(0)\n ROOT f = %s[4,6,33] fusion(x), kind=kInput, calls=sm\n}\n",
             T, T, T, T, t ? "hmx" : "mx", T, T, T, T, t ? "hadd" : "add", T, T, T, T);
    cgt_opts so = o;
    if (t) so.rtol = 2e-3, so.atol = 2e-3;
    RUN(body, so, 1);
  }
  /* a third stage and an epilogue after it: -sum(labels * (x - max - log(sum(exp(x - max))))) */
  RUN("xent {\n p = f32[5,40] parameter(0)\n l = f32[5,40] parameter(1)\n ninf = f32[] constant(-inf)\n"
      " z = f32[] constant(0)\n m = f32[5] reduce(p, ninf), dimensions={1}, to_apply=mx\n"
      " mb = f32[5,40] broadcast(m), dimensions={0}\n s = f32[5,40] subtract(p, mb)\n ex = f32[5,40] exponential(s)\n"
      " su = f32[5] reduce(ex, z), dimensions={1}, to_apply=add\n r1 = f32[5,1] reshape(su)\n lg = f32[5,1] log(r1)\n"
      " r2 = f32[5] reshape(lg)\n lb = f32[5,40] broadcast(r2), dimensions={0}\n ls = f32[5,40] subtract(s, lb)\n"
      " pr = f32[5,40] multiply(l, ls)\n t = f32[5] reduce(pr, z), dimensions={1}, to_apply=add\n"
      " ROOT n = f32[5] negate(t)\n}\n"
      "ENTRY e {\n x = f32[5,40] parameter(0)\n y = f32[5,40] parameter(1)\n"
      " ROOT f = f32[5] fusion(x, y), kind=kInput, calls=xent\n}\n", o, 1);
}

/* A reduce result re-read at another index than its row (here: a column sum broadcast back
 * along the rows) cannot be emitted: the emitter must say so instead of computing
 * something else. */
TEST(codegen_reduce_reread_across_rows_is_refused) {
  cgt_opts o = {.expect_unsupported = 1};
  RUN("f1 {\n p = f32[8,9] parameter(0)\n z = f32[] constant(0)\n"
      " s = f32[9] reduce(p, z), dimensions={0}, to_apply=add\n b = f32[8,9] broadcast(s), dimensions={1}\n"
      " ROOT d = f32[8,9] subtract(p, b)\n}\n"
      "ENTRY e {\n x = f32[8,9] parameter(0)\n ROOT f = f32[8,9] fusion(x), kind=kInput, calls=f1\n}\n", o, 0);
  RUN("f2 {\n p = f32[8,9] parameter(0)\n z = f32[] constant(0)\n"
      " s = f32[8] reduce(p, z), dimensions={1}, to_apply=add\n r = f32[8] reverse(s), dimensions={0}\n"
      " b = f32[8,9] broadcast(r), dimensions={0}\n ROOT d = f32[8,9] subtract(p, b)\n}\n"
      "ENTRY e {\n x = f32[8,9] parameter(0)\n ROOT f = f32[8,9] fusion(x), kind=kInput, calls=f2\n}\n", o, 0);
}

/* Row fusions whose one input-shaped output is at least 8 MiB store it non-temporally
 * (reduce_emit.c): per row, ordinary stores up to the output row's first 64-byte boundary and
 * after its last whole block, aligned non-temporal vector stores between. Rows of 1000 f32
 * (4000 bytes) start at every alignment, so the head, the blocks and the tail all vary from row
 * to row; the softmax stash lives in a scratch row; layer norm has no stash and two inputs
 * that are not read in rows; f16 outputs use 32-element vectors. */
/* Whether the kernel's IR stores with !nontemporal (one compile, seed 1). */
static int stores_nontemporal(const char *body, cgt_opts o, const char *file, int line) {
  char text[8192], *ir = NULL;
  snprintf(text, sizeof text, "%s%s", REDUCERS, body);
  o.seed = 1;
  o.ir = &ir;
  if (cgt_check(text, &o, file, line)) test_fail(file, line, "failed");
  int nt = ir && strstr(ir, "!nontemporal") != NULL;
  cx_free(ir);
  return nt;
}
#define NT(body, o) stores_nontemporal((body), (o), __FILE__, __LINE__)

TEST(codegen_reduce_row_nontemporal) {
  cgt_opts o = SUM;
  o.rtol = 1e-4;
  static const char *types[2] = {"f32", "f16"};
  static const char *dims[2] = {"2100,1000", "4100,1030"}, *rows[2] = {"2100", "4100"};
  for (int t = 0; t < 2; t++) {
    char body[2048];
    const char *T = types[t], *D = dims[t], *R = rows[t];
    snprintf(body, sizeof body,
             "sm {\n p = %s[%s] parameter(0)\n ninf = %s[] constant(-inf)\n z = %s[] constant(0)\n"
             " m = %s[%s] reduce(p, ninf), dimensions={1}, to_apply=%s\n mb = %s[%s] broadcast(m), dimensions={0}\n"
             " s = %s[%s] subtract(p, mb)\n ex = %s[%s] exponential(s)\n"
             " su = %s[%s] reduce(ex, z), dimensions={1}, to_apply=%s\n sb = %s[%s] broadcast(su), dimensions={0}\n"
             " ROOT d = %s[%s] divide(ex, sb)\n}\n"
             "ENTRY e {\n x = %s[%s] parameter(0)\n ROOT f = %s[%s] fusion(x), kind=kInput, calls=sm\n}\n",
             T, D, T, T, T, R, t ? "hmx" : "mx", T, D, T, D, T, D, T, R, t ? "hadd" : "add", T, D, T, D, T, D, T, D);
    cgt_opts so = o;
    if (t) so.rtol = 2e-3, so.atol = 2e-3;
    RUN(body, so, 1);
    if (!NT(body, so)) test_fail(__FILE__, __LINE__, "%s softmax: no non-temporal stores", T);
  }
  const char *ln = "ln {\n p = f32[2100,1000] parameter(0)\n g = f32[1000] parameter(1)\n z = f32[] constant(0)\n"
      " n = f32[] constant(1000)\n nb = f32[2100] broadcast(n), dimensions={}\n eps = f32[] constant(1e-5)\n"
      " su = f32[2100] reduce(p, z), dimensions={1}, to_apply=add\n mu = f32[2100] divide(su, nb)\n"
      " mb = f32[2100,1000] broadcast(mu), dimensions={0}\n c = f32[2100,1000] subtract(p, mb)\n"
      " c2 = f32[2100,1000] multiply(c, c)\n v = f32[2100] reduce(c2, z), dimensions={1}, to_apply=add\n"
      " vm = f32[2100] divide(v, nb)\n eb = f32[2100] broadcast(eps), dimensions={}\n ve = f32[2100] add(vm, eb)\n"
      " r = f32[2100] rsqrt(ve)\n rb = f32[2100,1000] broadcast(r), dimensions={0}\n y = f32[2100,1000] multiply(c, rb)\n"
      " gb = f32[2100,1000] broadcast(g), dimensions={1}\n ROOT o = f32[2100,1000] multiply(y, gb)\n}\n"
      "ENTRY e {\n x = f32[2100,1000] parameter(0)\n g = f32[1000] parameter(1)\n"
      " ROOT f = f32[2100,1000] fusion(x, g), kind=kInput, calls=ln\n}\n";
  RUN(ln, o, 1);
  if (!NT(ln, o)) test_fail(__FILE__, __LINE__, "layer norm: no non-temporal stores");
  /* below the size: ordinary stores */
  const char *small = "sm {\n p = f32[64,1000] parameter(0)\n ninf = f32[] constant(-inf)\n z = f32[] constant(0)\n"
      " m = f32[64] reduce(p, ninf), dimensions={1}, to_apply=mx\n mb = f32[64,1000] broadcast(m), dimensions={0}\n"
      " s = f32[64,1000] subtract(p, mb)\n ex = f32[64,1000] exponential(s)\n"
      " su = f32[64] reduce(ex, z), dimensions={1}, to_apply=add\n sb = f32[64,1000] broadcast(su), dimensions={0}\n"
      " ROOT d = f32[64,1000] divide(ex, sb)\n}\n"
      "ENTRY e {\n x = f32[64,1000] parameter(0)\n ROOT f = f32[64,1000] fusion(x), kind=kInput, calls=sm\n}\n";
  RUN(small, o, 1);
  if (NT(small, o)) test_fail(__FILE__, __LINE__, "a small output is stored non-temporally");
}

/* JAX's log-softmax cross-entropy (tests/hlo/jax/jit_log_softmax_xent.hlo) through the fusion
 * passes: a row fusion of three stages whose input-shaped output, x - max - log(sum), needs only
 * the first two, so it is stored in the third stage's pass (reduce_emit.c); at 2100x1000 the
 * output is also stored non-temporally. Labels are small integers, some outside the row. */
TEST(codegen_reduce_row_output_in_last_stage) {
  cgt_opts o = SUM;
  o.fusion_pass = 3;
  o.rtol = 1e-4;
  static const char *rows[2] = {"6", "2100"}, *cols[2] = {"40", "1000"};
  for (int t = 0; t < 2; t++) {
    char body[3072];
    const char *R = rows[t], *C = cols[t];
    snprintf(body, sizeof body,
             "ENTRY e {\n x = f32[%s,%s] parameter(0)\n ninf = f32[] constant(-inf)\n"
             " m = f32[%s] reduce(x, ninf), dimensions={1}, to_apply=mx\n mb = f32[%s,%s] broadcast(m), dimensions={0}\n"
             " s = f32[%s,%s] subtract(x, mb)\n ex = f32[%s,%s] exponential(s)\n z = f32[] constant(0)\n"
             " su = f32[%s] reduce(ex, z), dimensions={1}, to_apply=add\n lg = f32[%s] log(su)\n"
             " lb = f32[%s,%s] broadcast(lg), dimensions={0}\n lp = f32[%s,%s] subtract(s, lb)\n"
             " l = s32[%s] parameter(1)\n l2 = s32[%s,%s] broadcast(l), dimensions={0}\n"
             " io = s32[%s,%s] iota(), iota_dimension=1\n eq = pred[%s,%s] compare(l2, io), direction=EQ\n"
             " oh = f32[%s,%s] convert(eq)\n pr = f32[%s,%s] multiply(lp, oh)\n"
             " t = f32[] reduce(pr, z), dimensions={0,1}, to_apply=add\n n = f32[] negate(t)\n"
             " ROOT r = (f32[], f32[%s,%s]) tuple(n, lp)\n}\n",
             R, C, R, R, C, R, C, R, C, R, R, R, C, R, C, R, R, C, R, C, R, C, R, C, R, C, R, C);
    RUN(body, o, -1);
    if (t == 1 && !NT(body, o)) test_fail(__FILE__, __LINE__, "cross-entropy: no non-temporal stores");
  }
}
