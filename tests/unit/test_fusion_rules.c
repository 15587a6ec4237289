/* test_fusion_rules.c — the individual fusion rules: --fusion=off wrapping, no duplication of
 * expensive producers, duplication of cheap ones, no cycles, limits, sibling and
 * producer-consumer multi-output fusion, dot epilogues, control flow, explanations. Every
 * module is also run on the interpreter before and after and must give the same results. */
#include <string.h>
#include <time.h>
#include "fusion_helpers.h"

#define ADD_F32(name) name " {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"
#define MAX_F32(name) name " {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] maximum(a, b)\n}\n\n"

/* ---- --fusion=off ---- */

static const char *SOFTMAX_OFF =
    "HloModule softmax\n\n" MAX_F32("max") ADD_F32("add")
    "ENTRY main {\n"
    "  x = f32[4,8]{1,0} parameter(0)\n"
    "  ninf = f32[] constant(-inf)\n"
    "  mx = f32[4]{0} reduce(x, ninf), dimensions={1}, to_apply=max\n"
    "  bmx = f32[4,8]{1,0} broadcast(mx), dimensions={0}\n"
    "  sh = f32[4,8]{1,0} subtract(x, bmx)\n"
    "  e = f32[4,8]{1,0} exponential(sh)\n"
    "  zero = f32[] constant(0)\n"
    "  s = f32[4]{0} reduce(e, zero), dimensions={1}, to_apply=add\n"
    "  bs = f32[4,8]{1,0} broadcast(s), dimensions={0}\n"
    "  ROOT d = f32[4,8]{1,0} divide(e, bs)\n"
    "}\n";

/* Every op that computes memory is its own kernel: 2 reduces, 2 broadcasts, subtract, exp,
 * divide = 7; the constants stay outside as operands. */
TEST(fusion_off_one_kernel_per_op) {
  cx_module *m = PASS_ONLY(SOFTMAX_OFF, cx_pass_wrap_singletons);
  if (!m) return;
  CHECK_EQ_INT(cx_count_kernels(m), 7);
  CHECK_EQ_INT(fh_count_fusions(m, CX_FUSION_INPUT, 0), 2);
  CHECK_EQ_INT(fh_count_fusions(m, CX_FUSION_LOOP, 0), 5);
  CHECK_EQ_INT(fh_max_fused_size(m), 1);
  CHECK_EQ_INT(tp_count(m, CX_OP_CONSTANT), 2);
  CHECK_COMP_ORDER(m);
  cx_module_free(m);
}

/* Dots, tuples, constants, parameters and while loops are not wrapped; the loop body's ops
 * are (the body is a control-flow computation), the condition's compare too. */
static const char *WRAP_MIXED =
    "HloModule mixed\n\n"
    "cond {\n  p = (s32[], f32[4]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
    "  n = s32[] constant(3)\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n\n"
    "body {\n  p = (s32[], f32[4]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
    "  one = s32[] constant(1)\n  j = s32[] add(i, one)\n  v = f32[4] get-tuple-element(p), index=1\n"
    "  w = f32[4] multiply(v, v)\n  ROOT t = (s32[], f32[4]) tuple(j, w)\n}\n\n"
    "ENTRY main {\n"
    "  a = f32[4,4] parameter(0)\n"
    "  v = f32[4] parameter(1)\n"
    "  d = f32[4,4] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  t = f32[4,4] transpose(d), dimensions={1,0}\n"
    "  z = s32[] constant(0)\n"
    "  init = (s32[], f32[4]) tuple(z, v)\n"
    "  w = (s32[], f32[4]) while(init), condition=cond, body=body\n"
    "  r = f32[4] get-tuple-element(w), index=1\n"
    "  ROOT out = (f32[4,4], f32[4]) tuple(t, r)\n"
    "}\n";

TEST(fusion_off_wraps_control_flow_bodies_not_dots) {
  cx_module *m = PASS_ONLY(WRAP_MIXED, cx_pass_wrap_singletons);
  if (!m) return;
  /* ENTRY: dot + transpose; body: add + multiply; condition: compare. */
  CHECK_EQ_INT(cx_count_kernels(m), 5);
  CHECK_EQ_INT(tp_count(m, CX_OP_DOT), 1);
  CHECK_EQ_INT(tp_count(m, CX_OP_WHILE), 1);
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_TRANSPOSE), 1);
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_MULTIPLY), 1);
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_COMPARE), 1);
  CHECK_COMP_ORDER(m);
  cx_module_free(m);
  /* With fusion on, the same ops fuse as far as they can inside each computation. */
  m = FUSE(WRAP_MIXED);
  if (!m) return;
  CHECK_EQ_INT(cx_count_kernels(m), 5);
  cx_module_free(m);
}

/* ---- duplication ---- */

/* exp(x) has two users in different kernels; it is computed once (multi-output fusion hands
 * its value to the second user), never duplicated. */
static const char *EXP_TWO_USERS =
    "HloModule exp2\n\n" ADD_F32("add")
    "ENTRY main {\n"
    "  x = f32[4,8] parameter(0)\n"
    "  e = f32[4,8] exponential(x)\n"
    "  zero = f32[] constant(0)\n"
    "  s = f32[4] reduce(e, zero), dimensions={1}, to_apply=add\n"
    "  t = f32[8,4] transpose(e), dimensions={1,0}\n"
    "  ROOT out = (f32[4], f32[8,4]) tuple(s, t)\n"
    "}\n";

TEST(fusion_never_duplicates_expensive) {
  cx_module *m = PASS_ONLY(EXP_TWO_USERS, cx_pass_fusion);
  if (!m) return;
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_EXP), 1);
  CHECK_EQ_INT(cx_count_kernels(m), 3); /* exp, sum, transpose */
  cx_sb sb;
  cx_sb_init(&sb);
  CHECK_OK(cx_fusion_explain(m, &sb));
  CHECK_STR_CONTAINS(sb.buf, "expensive producer (exponential) with 2 users is not duplicated");
  cx_sb_free(&sb);
  cx_module_free(m);
  m = FUSE(EXP_TWO_USERS);
  if (!m) return;
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_EXP), 1);
  CHECK_EQ_INT(cx_count_kernels(m), 2); /* {exp, sum}, transpose */
  CHECK_EQ_INT(fh_count_fusions(m, CX_FUSION_INPUT, 1), 1);
  cx_module_free(m);
}

/* x + 1 feeds two kernels that cannot merge (a transpose and a reduce of different shape):
 * the cheap add is duplicated into both, so it needs no kernel of its own. */
static const char *CHEAP_TWO_USERS =
    "HloModule cheap2\n\n" ADD_F32("add")
    "ENTRY main {\n"
    "  x = f32[4,8] parameter(0)\n"
    "  one = f32[] constant(1)\n"
    "  b1 = f32[4,8] broadcast(one), dimensions={}\n"
    "  a = f32[4,8] add(x, b1)\n"
    "  t = f32[8,4] transpose(a), dimensions={1,0}\n"
    "  n = f32[8,4] negate(t)\n"
    "  zero = f32[] constant(0)\n"
    "  s = f32[4] reduce(a, zero), dimensions={1}, to_apply=add\n"
    "  ROOT out = (f32[8,4], f32[4]) tuple(n, s)\n"
    "}\n";

TEST(fusion_duplicates_cheap_producers) {
  cx_module *m = FUSE(CHEAP_TWO_USERS);
  if (!m) return;
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_ADD), 2);
  CHECK_EQ_INT(tp_count(m, CX_OP_ADD) + tp_count(m, CX_OP_BROADCAST), 0);
  CHECK_EQ_INT(cx_count_kernels(m), 2);
  cx_module_free(m);
}

/* A gradient read by a dot and by an elementwise consumer: the dot needs it in a buffer in any
 * case, so the consumer reads that buffer instead of recomputing g = a*b + c (and re-reading
 * a, b and c) in its own kernel. g's kernel, the dot, the consumer: one multiply and one add
 * fused in all (duplicated, each was fused twice). */
static const char *SHARED_WITH_DOT =
    "HloModule shared\n\n"
    "ENTRY main {\n"
    "  a = f32[4,8] parameter(0)\n"
    "  b = f32[4,8] parameter(1)\n"
    "  c = f32[4,8] parameter(2)\n"
    "  w = f32[8,8] parameter(3)\n"
    "  ab = f32[4,8] multiply(a, b)\n"
    "  g = f32[4,8] add(ab, c)\n"
    "  d = f32[4,8] dot(g, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  y = f32[4,8] subtract(c, g)\n"
    "  ROOT t = (f32[4,8], f32[4,8]) tuple(d, y)\n"
    "}\n";

TEST(fusion_reads_shared_buffer_not_recomputes) {
  cx_module *m = FUSE(SHARED_WITH_DOT);
  if (!m) return;
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_MULTIPLY), 1);
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_ADD), 1);
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_SUBTRACT), 1);
  CHECK_EQ_INT(cx_count_kernels(m), 2);
  cx_module_free(m);
}

/* ---- cycles ---- */

/* Two-pass variance: var = mean((x - mean(x))^2). The two reductions read the same x over the
 * same dimensions, but the second depends on the first: merging them as siblings would make
 * a cycle. They stay separate: mean, variance (+rsqrt epilogue), normalisation = 3 kernels. */
static const char *TWO_PASS_VARIANCE =
    "HloModule var2\n\n" ADD_F32("add")
    "ENTRY main {\n"
    "  x = f32[4,8] parameter(0)\n"
    "  zero = f32[] constant(0)\n"
    "  n = f32[] constant(8)\n"
    "  bn = f32[4] broadcast(n), dimensions={}\n"
    "  s1 = f32[4] reduce(x, zero), dimensions={1}, to_apply=add\n"
    "  mean = f32[4] divide(s1, bn)\n"
    "  bm = f32[4,8] broadcast(mean), dimensions={0}\n"
    "  xc = f32[4,8] subtract(x, bm)\n"
    "  sq = f32[4,8] multiply(xc, xc)\n"
    "  s2 = f32[4] reduce(sq, zero), dimensions={1}, to_apply=add\n"
    "  var = f32[4] divide(s2, bn)\n"
    "  inv = f32[4] rsqrt(var)\n"
    "  bi = f32[4,8] broadcast(inv), dimensions={0}\n"
    "  ROOT y = f32[4,8] multiply(xc, bi)\n"
    "}\n";

TEST(fusion_no_cycle_dependent_siblings) {
  cx_module *m = FUSE(TWO_PASS_VARIANCE);
  if (!m) return;
  CHECK_EQ_INT(cx_count_kernels(m), 3);
  CHECK_EQ_INT(fh_max_fused_reduces(m), 1);
  CHECK_EQ_INT(fh_count_fusions(m, CX_FUSION_INPUT, 1), 0);
  cx_module_free(m);
}

/* exp(x) feeds a reduce both directly and through a dot. Computing exp inside the reduce's
 * kernel and handing it to the dot would make reduce -> dot -> reduce a cycle. */
static const char *CYCLE_THROUGH_DOT =
    "HloModule cyc\n\n" ADD_F32("add")
    "ENTRY main {\n"
    "  x = f32[4,4] parameter(0)\n"
    "  w = f32[4,4] parameter(1)\n"
    "  e = f32[4,4] exponential(x)\n"
    "  d = f32[4,4] dot(e, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  t = f32[4,4] transpose(d), dimensions={1,0}\n"
    "  a = f32[4,4] add(e, t)\n"
    "  zero = f32[] constant(0)\n"
    "  ROOT s = f32[4] reduce(a, zero), dimensions={1}, to_apply=add\n"
    "}\n";

TEST(fusion_no_cycle_producer_consumer) {
  cx_module *m = FUSE(CYCLE_THROUGH_DOT);
  if (!m) return;
  /* exp; dot (its transpose is no epilogue); sum(e + transpose(d)) */
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_EXP), 1);
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_TRANSPOSE), 1);
  CHECK_EQ_INT(fh_count_fusions(m, CX_FUSION_INPUT, 1), 0);
  CHECK_EQ_INT(tp_count(m, CX_OP_DOT), 1);
  CHECK_EQ_INT(cx_count_kernels(m), 3);
  cx_module_free(m);
}

/* ---- limits ---- */

/* A concatenate of 9 operands stays a plain copy (nothing fuses into it and it fuses into
 * nothing); one of 3 fuses into its consumer, duplicating the cheap negate. */
static const char *CONCATS =
    "HloModule cat\n\n"
    "ENTRY main {\n"
    "  x = f32[2] parameter(0)\n"
    "  y = f32[2] parameter(1)\n"
    "  n = f32[2] negate(x)\n"
    "  c9 = f32[18] concatenate(n, y, x, y, x, y, x, y, x), dimensions={0}\n"
    "  e9 = f32[18] exponential(c9)\n"
    "  c3 = f32[6] concatenate(n, y, x), dimensions={0}\n"
    "  e3 = f32[6] exponential(c3)\n"
    "  ROOT out = (f32[18], f32[6]) tuple(e9, e3)\n"
    "}\n";

TEST(fusion_concatenate_operand_limit) {
  cx_module *m = FUSE(CONCATS);
  if (!m) return;
  /* {negate}, {concatenate of 9}, {exp}, {exp(concatenate(negate, y, x))} */
  CHECK_EQ_INT(cx_count_kernels(m), 4);
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_NEGATE), 2);
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_CONCATENATE), 2);
  cx_module_free(m);
}

/* Seven reductions of x combined elementwise: at most 5 reduces per fusion. */
static const char *MANY_REDUCES =
    "HloModule many\n\n" ADD_F32("add") MAX_F32("max")
    "ENTRY main {\n"
    "  x = f32[4,8] parameter(0)\n"
    "  zero = f32[] constant(0)\n"
    "  r1 = f32[4] reduce(x, zero), dimensions={1}, to_apply=add\n"
    "  r2 = f32[4] reduce(x, zero), dimensions={1}, to_apply=max\n"
    "  r3 = f32[4] reduce(x, zero), dimensions={1}, to_apply=add\n"
    "  r4 = f32[4] reduce(x, zero), dimensions={1}, to_apply=max\n"
    "  r5 = f32[4] reduce(x, zero), dimensions={1}, to_apply=add\n"
    "  r6 = f32[4] reduce(x, zero), dimensions={1}, to_apply=max\n"
    "  r7 = f32[4] reduce(x, zero), dimensions={1}, to_apply=add\n"
    "  a1 = f32[4] add(r1, r2)\n  a2 = f32[4] add(a1, r3)\n  a3 = f32[4] add(a2, r4)\n"
    "  a4 = f32[4] add(a3, r5)\n  a5 = f32[4] add(a4, r6)\n"
    "  ROOT a6 = f32[4] add(a5, r7)\n"
    "}\n";

TEST(fusion_reduce_limit) {
  cx_module *m = FUSE(MANY_REDUCES);
  if (!m) return;
  CHECK(fh_max_fused_reduces(m) <= FU_MAX_REDUCES);
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_REDUCE), 7);
  CHECK_EQ_INT(cx_count_kernels(m), 2);
  cx_module_free(m);
}

/* A chain of 100 cheap ops is split into fusions of at most FU_MAX_INSTRS instructions. */
TEST(fusion_size_limit) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_puts(&sb, "HloModule long\n\nENTRY main {\n  v0 = f32[8] parameter(0)\n");
  for (int i = 1; i <= 100; i++) cx_sb_printf(&sb, "  v%d = f32[8] %s(v%d)\n", i, i % 2 ? "negate" : "abs", i - 1);
  cx_sb_puts(&sb, "  ROOT r = f32[8] negate(v100)\n}\n");
  char *text = cx_sb_take(&sb);
  cx_module *m = text ? FUSE(text) : NULL;
  free(text);
  if (!m) return;
  CHECK(fh_max_fused_size(m) <= FU_MAX_INSTRS);
  CHECK_EQ_INT(cx_count_kernels(m), 2); /* 101 ops: 64 + 37 */
  cx_module_free(m);
}

/* A chain of 40 scaled sines (x * broadcast(constant), then sine): a fusion that reached the size
 * limit still takes the broadcasts of its scalars (they cost it nothing), up to twice the
 * limit; left outside, each was a kernel of its own (32 kernels, now 2). */
TEST(fusion_size_limit_takes_free_operands) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_puts(&sb, "HloModule scaled\n\nENTRY main {\n  s0 = f32[8] parameter(0)\n");
  for (int i = 1; i <= 40; i++)
    cx_sb_printf(&sb, "  c%d = f32[] constant(%d.5)\n  b%d = f32[8] broadcast(c%d), dimensions={}\n"
                      "  m%d = f32[8] multiply(s%d, b%d)\n  s%d = f32[8] sine(m%d)\n", i, i, i, i, i, i - 1, i, i, i);
  cx_sb_puts(&sb, "  ROOT r = f32[8] negate(s40)\n}\n");
  char *text = cx_sb_take(&sb);
  cx_module *m = text ? FUSE(text) : NULL;
  free(text);
  if (!m) return;
  CHECK_EQ_INT(cx_count_kernels(m), 2);
  CHECK(fh_max_fused_size(m) <= 2 * FU_MAX_INSTRS);
  cx_module_free(m);
}

/* A consumer grows one producer at a time in its own fused computation (fu_absorb), instead of
 * a new body per step: fusing a chain of 60 ops takes a few ids per op (the clone, a parameter
 * and its name; 181 in all), where building a new body per step took 2124. */
TEST(fusion_grows_in_place) {
  enum { N = 60 };
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_puts(&sb, "HloModule chain\n\nENTRY main {\n  v0 = f32[8] parameter(0)\n");
  for (int i = 1; i < N; i++) cx_sb_printf(&sb, "  v%d = f32[8] %s(v%d)\n", i, i % 2 ? "negate" : "abs", i - 1);
  cx_sb_printf(&sb, "  ROOT r = f32[8] negate(v%d)\n}\n", N - 1);
  char *text = cx_sb_take(&sb);
  cx_module *m = text ? TP_PARSE(text) : NULL;
  free(text);
  if (!m) return;
  int before = m->next_id, ch;
  CHECK_OK(cx_pass_fusion(m, &ch));
  CHECK_EQ_INT(cx_count_kernels(m), 1);
  CHECK_MSG(m->next_id - before < 5 * N, "%d instructions made to fuse %d", m->next_id - before, N);
  CHECK_OK(cx_verify_module(m));
  cx_module_free(m);
}

/* A fusion written by hand brings its body's names into the consumer's computation, which may
 * have them already: "r" is an abs of ENTRY (fused first) and the root of fused_neg. */
static const char *NAME_CLASH =
    "HloModule clash\n\n"
    "fused_neg {\n  p0 = f32[4] parameter(0)\n  ROOT r = f32[4] negate(p0)\n}\n\n"
    "ENTRY main {\n"
    "  x = f32[4] parameter(0)\n"
    "  f = f32[4] fusion(x), kind=kLoop, calls=fused_neg\n"
    "  r = f32[4] abs(f)\n"
    "  ROOT e = f32[4] exponential(r)\n"
    "}\n";

TEST(fusion_in_place_keeps_names_unique) {
  cx_module *m = FUSE(NAME_CLASH);
  if (!m) return;
  CHECK_EQ_INT(cx_count_kernels(m), 1);
  for (int k = 0; k < m->ncomps; k++) {
    const cx_comp *c = m->comps[k];
    for (int i = 0; i < c->ninstrs; i++)
      for (int j = 0; j < i; j++)
        CHECK_MSG(strcmp(c->instrs[i]->name, c->instrs[j]->name), "%s: two instructions named %s", c->name, c->instrs[i]->name);
  }
  cx_module_free(m);
}

/* An expensive producer is not fused where its elements would be re-read (a broadcast
 * expands exp(x[4]) over 8 columns: fusing would compute each exp 8 times). */
static const char *EXP_BROADCAST =
    "HloModule reuse\n\n"
    "ENTRY main {\n"
    "  x = f32[4] parameter(0)\n"
    "  y = f32[4,8] parameter(1)\n"
    "  e = f32[4] exponential(x)\n"
    "  b = f32[4,8] broadcast(e), dimensions={0}\n"
    "  ROOT a = f32[4,8] add(y, b)\n"
    "}\n";

TEST(fusion_expensive_not_reread) {
  cx_module *m = FUSE(EXP_BROADCAST);
  if (!m) return;
  CHECK_EQ_INT(cx_count_kernels(m), 2);
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_BROADCAST), 1);
  cx_module_free(m);
}

/* A max-pool's gradient (select-and-scatter) fuses into its one consumer where its windows
 * are disjoint (stride = size), so its result is never written; with overlapping windows
 * (3 wide, stride 2), or a second user, it stays a routine of its own. */
static const char *POOL_GRAD =
    "HloModule pool_grad\n\n" ADD_F32("add")
    "ge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = pred[] compare(a, b), direction=GE\n}\n\n"
    "ENTRY main {\n"
    "  x = f32[2,8,8,3] parameter(0)\n"
    "  s = f32[2,4,4,3] parameter(1)\n"
    "  zero = f32[] constant(0)\n"
    "  g = f32[2,8,8,3] select-and-scatter(x, s, zero), window={size=1xWxWx1 stride=1x2x2x1 PAD}, select=ge, scatter=add\n"
    "  zb = f32[2,8,8,3] broadcast(zero), dimensions={}\n"
    "  pos = pred[2,8,8,3] compare(x, zb), direction=GT\n"
    "  ROOT r = f32[2,8,8,3] select(pos, g, zb)\n"
    "}\n";

static cx_module *pool_grad(int w, int second_user) {
  char *b = fh_subst(POOL_GRAD, "xWxWx", w == 2 ? "x2x2x" : "x3x3x");
  char *c = fh_subst(b, " PAD", w == 2 ? "" : " pad=0_0x1_0x1_0x0_0");
  char *d = second_user ? fh_subst(c, "  ROOT r = f32[2,8,8,3] select(pos, g, zb)",
                                   "  r = f32[2,8,8,3] select(pos, g, zb)\n  ROOT t = (f32[2,8,8,3], f32[2,8,8,3]) tuple(r, g)")
                        : NULL;
  cx_module *m = FUSE(d ? d : c);
  free(b), free(c), free(d);
  return m;
}

TEST(fusion_select_and_scatter_into_consumer) {
  /* window width, a second user, whether it fuses */
  static const int cases[3][3] = {{2, 0, 1}, {3, 0, 0}, {2, 1, 0}};
  for (int i = 0; i < 3; i++) {
    cx_module *m = pool_grad(cases[i][0], cases[i][1]);
    if (!m) continue;
    CHECK_MSG(fh_count_fused(m, CX_OP_SELECT_AND_SCATTER) == cases[i][2], "case %d", i);
    CHECK_MSG(tp_count(m, CX_OP_SELECT_AND_SCATTER) == !cases[i][2], "case %d", i);
    if (cases[i][2]) CHECK_EQ_INT(cx_count_kernels(m), 1);
    cx_module_free(m);
  }
}

/* A max-pool whose windows are disjoint reads each element once, so it absorbs the bias and
 * ReLU before it (one kernel); an overlapping one (3 wide, stride 2) would compute them again
 * for every window, and stays a kernel apart from them. */
static const char *POOL_FWD =
    "HloModule pool_fwd\n\n" MAX_F32("max")
    "ENTRY main {\n"
    "  x = f32[2,8,8,3] parameter(0)\n"
    "  b = f32[3] parameter(1)\n"
    "  bb = f32[2,8,8,3] broadcast(b), dimensions={3}\n"
    "  y = f32[2,8,8,3] add(x, bb)\n"
    "  zero = f32[] constant(0)\n"
    "  zb = f32[2,8,8,3] broadcast(zero), dimensions={}\n"
    "  r = f32[2,8,8,3] maximum(y, zb)\n"
    "  ninf = f32[] constant(-inf)\n"
    "  ROOT p = f32[2,4,4,3] reduce-window(r, ninf), window={size=1xWxWx1 stride=1x2x2x1 PAD}, to_apply=max\n"
    "}\n";

TEST(fusion_pooling_absorbs_producers) {
  for (int w = 2; w <= 3; w++) {
    char *a = fh_subst(POOL_FWD, "xWxWx", w == 2 ? "x2x2x" : "x3x3x");
    char *b = fh_subst(a, " PAD", w == 2 ? "" : " pad=0_0x1_0x1_0x0_0");
    cx_module *m = FUSE(b);
    free(a), free(b);
    if (!m) continue;
    CHECK_EQ_INT(cx_count_kernels(m), w == 2 ? 1 : 2);
    CHECK_EQ_INT(fh_count_fused(m, CX_OP_REDUCE_WINDOW), 1);
    CHECK_EQ_INT(fh_count_fused(m, CX_OP_MAXIMUM), 1);
    cx_module_free(m);
  }
}

/* A dynamic-update-slice takes its update's producers (a scan step's tanh of the new carry,
 * whose carry also leaves the body), so the update is computed straight into the stacked
 * output; the operand it writes (a broadcast of zeros here) is never fused into it. */
TEST(fusion_dynamic_update_slice_absorbs_its_update) {
  static const char text[] =
      "HloModule dus\n\n"
      "ENTRY main {\n"
      "  stack = f32[8,16] parameter(0)\n"
      "  carry = f32[16] parameter(1)\n"
      "  x = f32[16] parameter(2)\n"
      "  i = s32[] parameter(3)\n"
      "  half = f32[] constant(0.5)\n"
      "  hb = f32[16] broadcast(half), dimensions={}\n"
      "  m = f32[16] multiply(carry, hb)\n"
      "  next = f32[16] add(m, x)\n"
      "  t = f32[16] tanh(next)\n"
      "  u = f32[1,16] reshape(t)\n"
      "  zero = s32[] constant(0)\n"
      "  zf = f32[] constant(0)\n"
      "  zs = f32[8,16] broadcast(zf), dimensions={}\n"
      "  base = f32[8,16] add(stack, zs)\n"
      "  d = f32[8,16] dynamic-update-slice(base, u, i, zero)\n"
      "  ROOT r = (f32[16], f32[8,16]) tuple(next, d)\n"
      "}\n";
  cx_module *m = FUSE(text);
  if (!m) return;
  const cx_instr *root = m->entry->root, *d = root->ops[1];
  CHECK(d->op == CX_OP_FUSION && d->ncalled == 1 && d->called[0]->root->op == CX_OP_DYNAMIC_UPDATE_SLICE);
  if (d->op == CX_OP_FUSION && d->ncalled == 1) {
    const cx_comp *fc = d->called[0];
    int tanh = 0, add = 0;
    for (int k = 0; k < fc->ninstrs; k++) tanh += fc->instrs[k]->op == CX_OP_TANH, add += fc->instrs[k]->op == CX_OP_ADD;
    CHECK_MSG(tanh == 1, "the update's tanh is not in the dynamic-update-slice fusion");
    /* next's add is duplicated into it (next also leaves); base's add is not */
    CHECK_MSG(add == 1, "%d adds in the dynamic-update-slice fusion (the carry's only)", add);
    CHECK_MSG(fc->root->ops[0]->op == CX_OP_PARAMETER, "the operand written in place was fused");
  }
  cx_module_free(m);
}

/* Fusions written by hand or by XLA reuse short names across fused computations ("r",
 * "p0"); merging their bodies must keep names unique. */
static const char *HAND_FUSIONS =
    "HloModule hand\n\n"
    "fused_relu {\n  p0 = f32[4] parameter(0)\n  p1 = f32[4] parameter(1)\n  m = f32[4] multiply(p0, p1)\n"
    "  zero = f32[] constant(0)\n  zb = f32[4] broadcast(zero), dimensions={}\n"
    "  ROOT r = f32[4] maximum(m, zb)\n}\n\n" ADD_F32("add")
    "fused_sum {\n  p0 = f32[4] parameter(0)\n  sq = f32[4] multiply(p0, p0)\n  zero = f32[] constant(0)\n"
    "  ROOT r = f32[] reduce(sq, zero), dimensions={0}, to_apply=add\n}\n\n"
    "ENTRY main {\n"
    "  x = f32[4] parameter(0)\n"
    "  y = f32[4] parameter(1)\n"
    "  f = f32[4] fusion(x, y), kind=kLoop, calls=fused_relu\n"
    "  s = f32[] fusion(f), kind=kInput, calls=fused_sum\n"
    "  ROOT t = (f32[4], f32[]) tuple(f, s)\n"
    "}\n";

TEST(fusion_merges_existing_fusions) {
  cx_module *m = FUSE(HAND_FUSIONS);
  if (!m) return;
  CHECK_EQ_INT(cx_count_kernels(m), 1); /* {sum, relu}: the relu is computed in the sum's loop */
  CHECK_EQ_INT(fh_count_fusions(m, CX_FUSION_INPUT, 1), 1);
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_CONSTANT), 1); /* the two zeros became one immediate */
  cx_module_free(m);
}

/* argmax as JAX writes it: a variadic reduce over (value, index) pairs. It stays whole (a
 * single-op kInput fusion with a tuple result) and nothing fuses into it or merges with it. */
static const char *ARGMAX =
    "HloModule argmax\n\n"
    "amax {\n  av = f32[] parameter(0)\n  ai = s32[] parameter(1)\n  bv = f32[] parameter(2)\n"
    "  bi = s32[] parameter(3)\n  gt = pred[] compare(av, bv), direction=GT\n"
    "  eq = pred[] compare(av, bv), direction=EQ\n  lt = pred[] compare(ai, bi), direction=LT\n"
    "  tie = pred[] and(eq, lt)\n  take = pred[] or(gt, tie)\n  v = f32[] select(take, av, bv)\n"
    "  i = s32[] select(take, ai, bi)\n  ROOT r = (f32[], s32[]) tuple(v, i)\n}\n\n" ADD_F32("add")
    "ENTRY main {\n"
    "  x = f32[4,8] parameter(0)\n"
    "  io = s32[4,8] iota(), iota_dimension=1\n"
    "  ninf = f32[] constant(-inf)\n"
    "  z = s32[] constant(0)\n"
    "  r = (f32[4], s32[4]) reduce(x, io, ninf, z), dimensions={1}, to_apply=amax\n"
    "  idx = s32[4] get-tuple-element(r), index=1\n"
    "  three = s32[] constant(3)\n"
    "  b3 = s32[4] broadcast(three), dimensions={}\n"
    "  hit = pred[4] compare(idx, b3), direction=EQ\n"
    "  zero = f32[] constant(0)\n"
    "  s = f32[4] reduce(x, zero), dimensions={1}, to_apply=add\n"
    "  ROOT out = (pred[4], f32[4]) tuple(hit, s)\n"
    "}\n";

TEST(fusion_variadic_reduce_stays_whole) {
  cx_module *m = FUSE(ARGMAX);
  if (!m) return;
  CHECK_EQ_INT(cx_count_kernels(m), 4); /* iota, argmax, compare, sum */
  CHECK_EQ_INT(fh_count_fusions(m, CX_FUSION_INPUT, 1), 0);
  CHECK_EQ_INT(fh_max_fused_reduces(m), 1);
  cx_module_free(m);
  m = PASS_ONLY(ARGMAX, cx_pass_wrap_singletons);
  if (!m) return;
  CHECK_EQ_INT(cx_count_kernels(m), 5); /* iota, argmax, broadcast, compare, sum */
  cx_module_free(m);
}

/* Sort, custom-call and rng stay what they are; fusion works around them. */
static const char *OPAQUE_OPS =
    "HloModule opaque\n\n"
    "lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT l = pred[] compare(a, b), direction=LT\n}\n\n"
    "ENTRY main {\n"
    "  x = f32[8] parameter(0)\n"
    "  e = f32[8] exponential(x)\n"
    "  s = f32[8] sort(e), dimensions={0}, to_apply=lt\n"
    "  n = f32[8] negate(s)\n"
    "  ROOT a = f32[8] abs(n)\n"
    "}\n";

TEST(fusion_around_opaque_ops) {
  cx_module *m = FUSE(OPAQUE_OPS);
  if (!m) return;
  CHECK_EQ_INT(tp_count(m, CX_OP_SORT), 1);
  CHECK_EQ_INT(cx_count_kernels(m), 3); /* exp, sort, abs(negate) */
  cx_comp *lt = cx_module_find_comp(m, "lt");
  CHECK(lt && lt->ninstrs == 3);
  cx_module_free(m);
}

/* A deep model (300 layers of normalise, exp/tanh, row sums: 3300 instructions) fuses to two
 * kernels per layer ({exp, row sum of exp} and {mean of the next layer's input}) plus the
 * output; the passes stay fast (linear in the module: a fraction of a second here). */
TEST(fusion_large_module) {
  enum { L = 300 };
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_puts(&sb, "HloModule deep\n\n" ADD_F32("add") "ENTRY main {\n  x0 = f32[8,16] parameter(0)\n"
                  "  zero = f32[] constant(0)\n  n = f32[] constant(16)\n");
  for (int i = 0; i < L; i++) {
    cx_sb_printf(&sb, "  s%d = f32[8] reduce(x%d, zero), dimensions={1}, to_apply=add\n", i, i);
    cx_sb_printf(&sb, "  bn%d = f32[8] broadcast(n), dimensions={}\n", i);
    cx_sb_printf(&sb, "  m%d = f32[8] divide(s%d, bn%d)\n", i, i, i);
    cx_sb_printf(&sb, "  bm%d = f32[8,16] broadcast(m%d), dimensions={0}\n", i, i);
    cx_sb_printf(&sb, "  c%d = f32[8,16] subtract(x%d, bm%d)\n", i, i, i);
    cx_sb_printf(&sb, "  e%d = f32[8,16] exponential(c%d)\n", i, i);
    cx_sb_printf(&sb, "  t%d = f32[8,16] tanh(c%d)\n", i, i);
    cx_sb_printf(&sb, "  q%d = f32[8,16] multiply(e%d, t%d)\n", i, i, i);
    cx_sb_printf(&sb, "  r%d = f32[8] reduce(e%d, zero), dimensions={1}, to_apply=add\n", i, i);
    cx_sb_printf(&sb, "  br%d = f32[8,16] broadcast(r%d), dimensions={0}\n", i, i);
    cx_sb_printf(&sb, "  x%d = f32[8,16] add(q%d, br%d)\n", i + 1, i, i);
  }
  cx_sb_printf(&sb, "  ROOT out = f32[8,16] negate(x%d)\n}\n", L);
  char *text = cx_sb_take(&sb);
  cx_module *m = text ? TP_PARSE(text) : NULL;
  free(text);
  if (!m) return;
  cx_module *orig = cx_module_clone(m);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  fh_run_fusion(m, __FILE__, __LINE__);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
  printf("    fusion of %d instructions: %.0f ms\n", 3 + 11 * L + 1, ms);
  CHECK_EQ_INT(cx_count_kernels(m), 2 * L + 1);
  if (orig) TP_EQUIV(orig, m, 2);
  cx_module_free(orig);
  cx_module_free(m);
}
