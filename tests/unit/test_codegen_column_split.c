/* test_codegen_column_split.c — column reductions split over blocks of rows on the cpu
 * (cx_red_plan_split, reduce_emit.c): each block's partial results, then their combine with the
 * fused consumer, against the interpreter. The harness runs both phases in uneven chunks in
 * reverse order, as threads may; the split sums in another order than the sequential one
 * (docs/numerics.md), so float sums compare within a tolerance. Also through the backend on one
 * and two threads, whose results must be the same bits (the split depends on the shape only). */
#include <string.h>
#include "codegen_harness.h"
#include "test_cpu_helpers.h"

#define REDUCERS                                                                                 \
  "HloModule r\n"                                                                                \
  "add {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\n"     \
  "addd {\n a = f64[] parameter(0)\n b = f64[] parameter(1)\n ROOT s = f64[] add(a, b)\n}\n"    \
  "mx {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] maximum(a, b)\n}\n"   \
  "iadd {\n a = s32[] parameter(0)\n b = s32[] parameter(1)\n ROOT s = s32[] add(b, a)\n}\n"

/* Checks body with two seeds; at least `split` fusions split (0: none). */
static void run(const char *body, cgt_opts o, int split, const char *file, int line) {
  static char text[16384];
  snprintf(text, sizeof text, "%s%s", REDUCERS, body);
  for (int s = 1; s <= 2; s++) {
    o.seed = (uint64_t)s;
    if (cgt_check(text, &o, file, line)) test_fail(file, line, "seed %d failed", s);
    if (o.nfusions < 1 || o.nsplit < split || (!split && o.nsplit))
      test_fail(file, line, "%d of %d fusions split, expected %s", o.nsplit, o.nfusions, split ? "some" : "none");
  }
}
#define RUN(body, o, split) run((body), (o), (split), __FILE__, __LINE__)

/* the fusion passes, which fuse the init constants (an init value from an operand could be
 * anything: the split needs to know it) */
static const cgt_opts SUM = {.fusion_pass = 2, .no_specials = 1, .atol = 2e-3, .rtol = 1e-5};
static const cgt_opts EXACT = {.fusion_pass = 2};

TEST(codegen_column_split_shapes) {
  /* rows not a multiple of the block (4 blocks of 251, the last 250) */
  RUN("ENTRY e {\n x = f32[1003,67] parameter(0)\n z = f32[] constant(0)\n"
      " ROOT r = f32[67] reduce(x, z), dimensions={0}, to_apply=add\n}\n", SUM, 1);
  /* more outputs than a chunk of lanes; blocks of 4 rows */
  RUN("ENTRY e {\n x = f32[61,4096] parameter(0)\n z = f32[] constant(0)\n"
      " ROOT r = f32[4096] reduce(x, z), dimensions={0}, to_apply=add\n}\n", SUM, 1);
  /* the reduced dims leading, and in the middle (outer output rows) */
  RUN("ENTRY e {\n x = f32[8,128,512] parameter(0)\n z = f32[] constant(0)\n"
      " ROOT r = f32[512] reduce(x, z), dimensions={0,1}, to_apply=add\n}\n", SUM, 1);
  RUN("ENTRY e {\n x = f32[4,3001,40] parameter(0)\n z = f32[] constant(-0)\n"
      " ROOT r = f32[4,40] reduce(x, z), dimensions={1}, to_apply=add\n}\n", SUM, 1);
  /* blocks of whole runs of the innermost reduced dim (a conv bias's gradient, NHWC: 10 blocks
   * of 3 rows of 28, the last of one; three reduced dims, 16 blocks of 38 runs of 12) */
  RUN("ENTRY e {\n x = f32[16,28,28,16] parameter(0)\n z = f32[] constant(0)\n"
      " ROOT r = f32[16,16] reduce(x, z), dimensions={1,2}, to_apply=add\n}\n", SUM, 1);
  RUN("ENTRY e {\n x = f32[20,30,12,64] parameter(0)\n z = f32[] constant(0)\n"
      " ROOT r = f32[64] reduce(x, z), dimensions={0,1,2}, to_apply=add\n}\n", SUM, 1);
  /* huge rows: 16 blocks of 6250 */
  cgt_opts big = SUM;
  big.atol = 2e-2;
  RUN("ENTRY e {\n x = f32[100000,3] parameter(0)\n z = f32[] constant(0)\n"
      " ROOT r = f32[3] reduce(x, z), dimensions={0}, to_apply=add\n}\n", big, 1);
  /* ... and as the whole pipeline makes it: chains of 32768 (reduce_accumulate.c), split */
  big.fusion_pass = 3;
  RUN("ENTRY e {\n x = f32[100000,3] parameter(0)\n z = f32[] constant(0)\n"
      " ROOT r = f32[3] reduce(x, z), dimensions={0}, to_apply=add\n}\n", big, 1);
  /* max, integers (exact in any order), two reduces of one input */
  RUN("ENTRY e {\n x = f32[2000,100] parameter(0)\n z = f32[] constant(-inf)\n"
      " ROOT r = f32[100] reduce(x, z), dimensions={0}, to_apply=mx\n}\n", EXACT, 1);
  RUN("ENTRY e {\n x = s32[3000,50] parameter(0)\n z = s32[] constant(0)\n"
      " ROOT r = s32[50] reduce(x, z), dimensions={0}, to_apply=iadd\n}\n", EXACT, 1);
  RUN("ENTRY e {\n x = f32[2000,100] parameter(0)\n z = f32[] constant(0)\n ninf = f32[] constant(-inf)\n"
      " s = f32[100] reduce(x, z), dimensions={0}, to_apply=add\n"
      " m = f32[100] reduce(x, ninf), dimensions={0}, to_apply=mx\n"
      " ROOT t = (f32[100], f32[100]) tuple(s, m)\n}\n", SUM, 1);
}

/* What stays whole: one row, too little input, too many outputs, an init value a block could
 * not start from (a sum from 7 would add it once per block). */
TEST(codegen_column_split_not) {
  RUN("ENTRY e {\n x = f32[1,512] parameter(0)\n z = f32[] constant(0)\n"
      " ROOT r = f32[512] reduce(x, z), dimensions={0}, to_apply=add\n}\n", SUM, 0);
  RUN("ENTRY e {\n x = f32[100,128] parameter(0)\n z = f32[] constant(0)\n"
      " ROOT r = f32[128] reduce(x, z), dimensions={0}, to_apply=add\n}\n", SUM, 0);
  RUN("ENTRY e {\n x = f32[64,8192] parameter(0)\n z = f32[] constant(0)\n"
      " ROOT r = f32[8192] reduce(x, z), dimensions={0}, to_apply=add\n}\n", SUM, 0);
  RUN("ENTRY e {\n x = s32[3000,50] parameter(0)\n z = s32[] constant(7)\n"
      " ROOT r = s32[50] reduce(x, z), dimensions={0}, to_apply=iadd\n}\n", EXACT, 0);
}

/* A bias gradient and Adam's update in one kInput fusion (as bench/hlo/jax_transformer_step.hlo
 * fuses them), T f32 or f64: the column sum of g, the moments m and v and the weight w, and an
 * input-shaped output (g doubled) stored while the blocks read g. */
static void adam_text(char *buf, size_t n, const char *T, const char *R) {
  static const char tmpl[] =
      "fc {\n g = @[8,128,512] parameter(0)\n m = @[512] parameter(1)\n v = @[512] parameter(2)\n"
      " w = @[512] parameter(3)\n z = @[] constant(0)\n s = @[512] reduce(g, z), dimensions={0,1}, to_apply=#\n"
      " a = @[] constant(0.9)\n ab = @[512] broadcast(a), dimensions={}\n"
      " c = @[] constant(0.1)\n cb = @[512] broadcast(c), dimensions={}\n"
      " m0 = @[512] multiply(m, ab)\n m1 = @[512] multiply(s, cb)\n mn = @[512] add(m0, m1)\n"
      " s2 = @[512] multiply(s, s)\n v0 = @[512] multiply(v, ab)\n v1 = @[512] multiply(s2, cb)\n"
      " vn = @[512] add(v0, v1)\n q = @[512] sqrt(vn)\n e = @[] constant(1e-8)\n"
      " eb = @[512] broadcast(e), dimensions={}\n d = @[512] add(q, eb)\n u = @[512] divide(mn, d)\n"
      " l = @[] constant(0.01)\n lb = @[512] broadcast(l), dimensions={}\n lu = @[512] multiply(u, lb)\n"
      " wn = @[512] subtract(w, lu)\n two = @[] constant(2)\n tb = @[8,128,512] broadcast(two), dimensions={}\n"
      " g2 = @[8,128,512] multiply(g, tb)\n ROOT t = (@[512], @[512], @[512], @[8,128,512]) tuple(mn, vn, wn, g2)\n}\n"
      "ENTRY e {\n g = @[8,128,512] parameter(0)\n m = @[512] parameter(1)\n v = @[512] parameter(2)\n"
      " w = @[512] parameter(3)\n"
      " ROOT f = (@[512], @[512], @[512], @[8,128,512]) fusion(g, m, v, w), kind=kInput, calls=fc\n}\n";
  size_t at = 0;
  for (const char *c = tmpl; *c && at + 8 < n; c++) {
    const char *put = *c == '@' ? T : *c == '#' ? R : NULL;
    if (put) at += (size_t)snprintf(buf + at, n - at, "%s", put);
    else buf[at++] = *c;
  }
  buf[at] = 0;
}

TEST(codegen_column_split_adam_consumer) {
  char body[4096];
  cgt_opts o = SUM;
  o.fusion_pass = 0;
  o.lo = 0.5;
  o.hi = 4;
  o.atol = 0;
  o.rtol = 2e-5; /* 1024 positive terms: relative */
  adam_text(body, sizeof body, "f32", "add");
  RUN(body, o, 1);
  /* the moments and the weight updated in place, as the step donates them */
  o.alias_operand[0] = 2, o.alias_operand[1] = 3, o.alias_operand[2] = 4;
  RUN(body, o, 1);
  cgt_opts d = o;
  d.rtol = 1e-12;
  adam_text(body, sizeof body, "f64", "addd");
  RUN(body, d, 1);
  d.alias_operand[0] = d.alias_operand[1] = d.alias_operand[2] = 0;
  RUN(body, d, 1);
}

/* Through the backend (the runtime's scratch and both phases on the pool): one thread and two
 * give the same bits, within the tolerance of the interpreter. */
TEST(codegen_column_split_threads) {
  static const char text[] =
      "HloModule b\n"
      "add {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\n"
      "ENTRY e {\n x = f32[999,300] parameter(0)\n y = f32[300] parameter(1)\n z = f32[] constant(0)\n"
      " s = f32[300] reduce(x, z), dimensions={0}, to_apply=add\n"
      " ROOT r = f32[300] multiply(s, y)\n}\n";
  int64_t dims[2] = {999, 300};
  char *x = cpu_ramp_nd("f32", dims, 2, 97, 0.03125, -1.4), *y = cpu_ramp("f32", 300, 13, 0.25, -1.5);
  const char *in[2] = {x, y};
  cxla_literal *got[2] = {NULL, NULL};
  for (int t = 0; t < 2; t++)
    CHECK(cpu_check(text, 2, in, t ? "--threads=2" : "--threads=1", 1e-5, 1e-4, NULL, &got[t]));
  CHECK(got[0] && got[1] && memcmp(got[0]->data, got[1]->data, 300 * sizeof(float)) == 0);
  cxla_literal_destroy(got[0]);
  cxla_literal_destroy(got[1]);
  CHECK_OK(cxla_context_set_flags(test_ctx(), "--threads=0"));
  free(x);
  free(y);
}
