/* test_fusion_multi.c — multi-output fusion (siblings, producer-consumer), dot epilogues,
 * fusion inside control flow, explanations, kernel counting, and allocation failures. Every
 * module is also run on the interpreter before and after and must give the same results. */
#include "fusion_helpers.h"

#define ADD_F32(name) name " {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"
#define MAX_F32(name) name " {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] maximum(a, b)\n}\n\n"

/* ---- siblings ---- */

/* mean and mean of squares of the same rows: one loop over x computes both sums. */
static const char *TWO_SUMS =
    "HloModule sums\n\n" ADD_F32("add")
    "ENTRY main {\n"
    "  x = f32[4,8] parameter(0)\n"
    "  zero = f32[] constant(0)\n"
    "  s1 = f32[4] reduce(x, zero), dimensions={1}, to_apply=add\n"
    "  sq = f32[4,8] multiply(x, x)\n"
    "  s2 = f32[4] reduce(sq, zero), dimensions={1}, to_apply=add\n"
    "  ROOT out = (f32[4], f32[4]) tuple(s1, s2)\n"
    "}\n";

TEST(fusion_siblings_two_reductions) {
  cx_module *m = FUSE(TWO_SUMS);
  if (!m) return;
  CHECK_EQ_INT(cx_count_kernels(m), 1);
  CHECK_EQ_INT(fh_count_fusions(m, CX_FUSION_INPUT, 1), 1);
  CHECK_EQ_INT(fh_max_fused_reduces(m), 2);
  cx_module_free(m);
}

/* Reductions over different dimensions need different loops: no merge. */
static const char *ROW_AND_COLUMN =
    "HloModule rc\n\n" ADD_F32("add")
    "ENTRY main {\n"
    "  x = f32[4,8] parameter(0)\n"
    "  zero = f32[] constant(0)\n"
    "  s1 = f32[4] reduce(x, zero), dimensions={1}, to_apply=add\n"
    "  s2 = f32[8] reduce(x, zero), dimensions={0}, to_apply=add\n"
    "  ROOT out = (f32[4], f32[8]) tuple(s1, s2)\n"
    "}\n";

TEST(fusion_siblings_need_same_loop) {
  cx_module *m = FUSE(ROW_AND_COLUMN);
  if (!m) return;
  CHECK_EQ_INT(cx_count_kernels(m), 2);
  CHECK_EQ_INT(fh_count_fusions(m, CX_FUSION_INPUT, 1), 0);
  cx_module_free(m);
}

/* Two elementwise loops over the same x with the same shape: one loop, two outputs. */
static const char *TWO_LOOPS =
    "HloModule loops\n\n"
    "ENTRY main {\n"
    "  x = f32[4,8] parameter(0)\n"
    "  e = f32[4,8] exponential(x)\n"
    "  l = f32[4,8] log(x)\n"
    "  t = f32[8,4] transpose(x), dimensions={1,0}\n"
    "  ROOT out = (f32[4,8], f32[4,8], f32[8,4]) tuple(e, l, t)\n"
    "}\n";

TEST(fusion_siblings_loops) {
  cx_module *m = FUSE(TWO_LOOPS);
  if (!m) return;
  CHECK_EQ_INT(cx_count_kernels(m), 2); /* {exp, log}, transpose (another iteration space) */
  CHECK_EQ_INT(fh_count_fusions(m, CX_FUSION_LOOP, 1), 1);
  cx_module_free(m);
}

/* x read by a chain of `links` row-reduction fusions (each depends on the one before), and by
 * two column sums, the only pair that can merge: placed `gap` chain links apart. */
static char *chain_with_column_sums(int links, int gap) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_puts(&sb, "HloModule wide\n\n" ADD_F32("add") "ENTRY main {\n  x = f32[4,8] parameter(0)\n"
                  "  zero = f32[] constant(0)\n");
  const char *prev = "x";
  char name[32];
  for (int i = 0; i < links; i++) {
    if (i == links - gap) cx_sb_puts(&sb, "  ea = f32[4,8] exponential(x)\n  ca = f32[8] reduce(ea, zero), dimensions={0}, to_apply=add\n");
    cx_sb_printf(&sb, "  m%d = f32[4,8] multiply(%s, x)\n", i, prev);
    cx_sb_printf(&sb, "  r%d = f32[4] reduce(m%d, zero), dimensions={1}, to_apply=add\n", i, i);
    cx_sb_printf(&sb, "  b%d = f32[4,8] broadcast(r%d), dimensions={0}\n", i, i);
    cx_sb_printf(&sb, "  c%d = f32[4,8] subtract(m%d, b%d)\n", i, i, i);
    snprintf(name, sizeof name, "c%d", i);
    prev = name;
  }
  if (gap == 0) cx_sb_puts(&sb, "  ea = f32[4,8] exponential(x)\n  ca = f32[8] reduce(ea, zero), dimensions={0}, to_apply=add\n");
  cx_sb_printf(&sb, "  lb = f32[4,8] log(x)\n  cb = f32[8] reduce(lb, zero), dimensions={0}, to_apply=add\n"
                    "  ROOT out = (f32[4,8], f32[8], f32[8]) tuple(%s, ca, cb)\n}\n", prev);
  return cx_sb_take(&sb);
}

/* ENTRY fusions that compute a column sum (a reduce over dimension 0). */
static int column_sum_kernels(const cx_module *m) {
  int n = 0;
  for (int i = 0; i < m->entry->ninstrs; i++) {
    const cx_instr *f = m->entry->instrs[i];
    if (f->op != CX_OP_FUSION || f->ncalled != 1) continue;
    int has = 0;
    for (int k = 0; k < f->called[0]->ninstrs; k++) {
      const cx_instr *r = f->called[0]->instrs[k];
      has |= r->op == CX_OP_REDUCE && r->a.dims.n == 1 && r->a.dims.v[0] == 0;
    }
    n += has;
  }
  return n;
}

/* An operand with many readers: siblings next to each other in program order still merge, and
 * siblings further apart than the window among x's readers are not paired (the price of not
 * searching every pair of a widely read operand's readers; fusion_multi.c). */
TEST(fusion_siblings_among_many_readers) {
  static const struct { int gap, kernels; } cases[] = {{0, 1}, {20, 2}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    char *text = chain_with_column_sums(24, cases[c].gap);
    CHECK(text != NULL);
    cx_module *m = text ? FUSE(text) : NULL;
    free(text);
    if (!m) continue;
    CHECK_MSG(column_sum_kernels(m) == cases[c].kernels, "gap %d: %d column-sum kernels, want %d", cases[c].gap,
              column_sum_kernels(m), cases[c].kernels);
    cx_module_free(m);
  }
}

/* ---- XLA's softmax numerics guard ---- */

/* z = 2x feeds the max-reduce and the shift: it is not duplicated into the shift's kernel, so
 * max and subtract see the very same values; multi-output fusion then computes it in the
 * max-reduce's loop. */
static const char *SCALED_SOFTMAX_SHIFT =
    "HloModule guard\n\n" MAX_F32("max")
    "ENTRY main {\n"
    "  x = f32[4,8] parameter(0)\n"
    "  two = f32[] constant(2)\n"
    "  b2 = f32[4,8] broadcast(two), dimensions={}\n"
    "  z = f32[4,8] multiply(x, b2)\n"
    "  ninf = f32[] constant(-inf)\n"
    "  mx = f32[4] reduce(z, ninf), dimensions={1}, to_apply=max\n"
    "  bm = f32[4,8] broadcast(mx), dimensions={0}\n"
    "  sh = f32[4,8] subtract(z, bm)\n"
    "  ROOT e = f32[4,8] exponential(sh)\n"
    "}\n";

TEST(fusion_max_reduce_producer_not_duplicated) {
  cx_module *m = FUSE(SCALED_SOFTMAX_SHIFT);
  if (!m) return;
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_MULTIPLY), 1);
  CHECK_EQ_INT(cx_count_kernels(m), 2);
  CHECK_EQ_INT(fh_count_fusions(m, CX_FUSION_INPUT, 1), 1);
  cx_module_free(m);
}

/* ---- dot epilogues ---- */

static const char *DOT_BIAS_RELU_TANH =
    "HloModule dense\n\n"
    "ENTRY main {\n"
    "  x = f32[4,8] parameter(0)\n"
    "  w = f32[8,16] parameter(1)\n"
    "  b = f32[16] parameter(2)\n"
    "  d = f32[4,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  bb = f32[4,16] broadcast(b), dimensions={1}\n"
    "  a = f32[4,16] add(d, bb)\n"
    "  zero = f32[] constant(0)\n"
    "  bz = f32[4,16] broadcast(zero), dimensions={}\n"
    "  r = f32[4,16] maximum(a, bz)\n"
    "  ROOT t = f32[4,16] tanh(r)\n"
    "}\n";

TEST(fusion_dot_epilogue_pass_alone) {
  cx_module *m = PASS_ONLY(DOT_BIAS_RELU_TANH, cx_pass_dot_epilogue_fusion);
  if (!m) return;
  CHECK_EQ_INT(cx_count_kernels(m), 1);
  CHECK_EQ_INT(fh_count_fusions(m, CX_FUSION_OUTPUT, 0), 1);
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_DOT), 1);
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_TANH), 1);
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_BROADCAST), 2);
  CHECK_EQ_INT(m->entry->ninstrs, 4); /* x, w, b, the fusion: the 0 became an immediate */
  cx_module_free(m);
}

/* relu written as select(d > 0, d, 0): the dot has two users, both in the epilogue. */
static const char *DOT_SELECT_RELU =
    "HloModule relu2\n\n"
    "ENTRY main {\n"
    "  x = f32[4,8] parameter(0)\n"
    "  w = f32[8,16] parameter(1)\n"
    "  d = f32[4,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  zero = f32[] constant(0)\n"
    "  bz = f32[4,16] broadcast(zero), dimensions={}\n"
    "  gt = pred[4,16] compare(d, bz), direction=GT\n"
    "  ROOT r = f32[4,16] select(gt, d, bz)\n"
    "}\n";

TEST(fusion_dot_epilogue_dag) {
  cx_module *m = FUSE(DOT_SELECT_RELU);
  if (!m) return;
  CHECK_EQ_INT(cx_count_kernels(m), 1);
  CHECK_EQ_INT(fh_count_fusions(m, CX_FUSION_OUTPUT, 0), 1);
  cx_module_free(m);
}

/* Not epilogues: the dot is also read elsewhere (a transpose); an s32 dot; a convert to
 * another type stays outside (the GEMM output buffer holds f32). */
static const char *DOT_NOT_EPILOGUE =
    "HloModule notepi\n\n"
    "ENTRY main {\n"
    "  x = f32[4,8] parameter(0)\n"
    "  w = f32[8,4] parameter(1)\n"
    "  i = s32[4,4] parameter(2)\n"
    "  d = f32[4,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  n = f32[4,4] negate(d)\n"
    "  t = f32[4,4] transpose(d), dimensions={1,0}\n"
    "  di = s32[4,4] dot(i, i), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  ni = s32[4,4] negate(di)\n"
    "  d2 = f32[4,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  a2 = f32[4,4] abs(d2)\n"
    "  h2 = f16[4,4] convert(a2)\n"
    "  ROOT out = (f32[4,4], f32[4,4], s32[4,4], f16[4,4]) tuple(n, t, ni, h2)\n"
    "}\n";

TEST(fusion_dot_epilogue_rejections) {
  cx_module *m = PASS_ONLY(DOT_NOT_EPILOGUE, cx_pass_dot_epilogue_fusion);
  if (!m) return;
  CHECK_EQ_INT(tp_count(m, CX_OP_DOT), 2);            /* d (two users) and the s32 dot */
  CHECK_EQ_INT(fh_count_fusions(m, CX_FUSION_OUTPUT, 0), 1); /* abs(d2); the convert stays out */
  CHECK_EQ_INT(tp_count(m, CX_OP_CONVERT), 1);
  cx_module_free(m);
}

/* After loop fusion the epilogue is a kLoop fusion: the dot joins it (kOutput). */
static const char *DOT_THEN_LOOP_FUSION =
    "HloModule after\n\n"
    "fused_computation {\n"
    "  p0 = f32[4,16] parameter(0)\n"
    "  p1 = f32[16] parameter(1)\n"
    "  bb = f32[4,16] broadcast(p1), dimensions={1}\n"
    "  ROOT a = f32[4,16] add(p0, bb)\n"
    "}\n\n"
    "ENTRY main {\n"
    "  x = f32[4,8] parameter(0)\n"
    "  w = f32[8,16] parameter(1)\n"
    "  b = f32[16] parameter(2)\n"
    "  d = f32[4,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  ROOT f = f32[4,16] fusion(d, b), kind=kLoop, calls=fused_computation\n"
    "}\n";

TEST(fusion_dot_epilogue_joins_loop_fusion) {
  cx_module *m = PASS_ONLY(DOT_THEN_LOOP_FUSION, cx_pass_dot_epilogue_fusion);
  if (!m) return;
  CHECK_EQ_INT(cx_count_kernels(m), 1);
  CHECK_EQ_INT(fh_count_fusions(m, CX_FUSION_OUTPUT, 0), 1);
  CHECK_EQ_INT(tp_count(m, CX_OP_DOT), 0);
  CHECK_COMP_ORDER(m);
  cx_module_free(m);
}

/* ---- control flow ---- */

/* Fusion runs in the while body and condition; the reducer is left alone. */
static const char *WHILE_BODY =
    "HloModule loop\n\n" ADD_F32("add")
    "cond {\n  p = (s32[], f32[4,8]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
    "  n = s32[] constant(3)\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n\n"
    "body {\n  p = (s32[], f32[4,8]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
    "  one = s32[] constant(1)\n  j = s32[] add(i, one)\n  v = f32[4,8] get-tuple-element(p), index=1\n"
    "  h = f32[] constant(0.5)\n  bh = f32[4,8] broadcast(h), dimensions={}\n"
    "  e = f32[4,8] tanh(v)\n  w = f32[4,8] multiply(e, bh)\n"
    "  zero = f32[] constant(0)\n  s = f32[4] reduce(w, zero), dimensions={1}, to_apply=add\n"
    "  bs = f32[4,8] broadcast(s), dimensions={0}\n  u = f32[4,8] subtract(w, bs)\n"
    "  ROOT t = (s32[], f32[4,8]) tuple(j, u)\n}\n\n"
    "ENTRY main {\n"
    "  v = f32[4,8] parameter(0)\n"
    "  z = s32[] constant(0)\n"
    "  init = (s32[], f32[4,8]) tuple(z, v)\n"
    "  w = (s32[], f32[4,8]) while(init), condition=cond, body=body\n"
    "  ROOT r = f32[4,8] get-tuple-element(w), index=1\n"
    "}\n";

TEST(fusion_inside_while) {
  cx_module *m = FUSE(WHILE_BODY);
  if (!m) return;
  /* cond: compare; body: counter add, {tanh, sum(tanh * 0.5)} (multi-output), the subtract
   * (which recomputes the cheap * 0.5) */
  CHECK_EQ_INT(cx_count_kernels(m), 4);
  cx_comp *add = cx_module_find_comp(m, "add");
  CHECK(add && add->ninstrs == 3 && add->root->op == CX_OP_ADD);
  CHECK_EQ_INT(fh_count_fused(m, CX_OP_TANH), 1);
  CHECK_COMP_ORDER(m);
  cx_module_free(m);
}

/* ---- explanations and counting ---- */

static const char *SOFTMAX_SMALL =
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

TEST(fusion_explain_names_reasons) {
  cx_module *m = PASS_ONLY(SOFTMAX_SMALL, cx_pass_fusion);
  if (!m) return;
  cx_sb sb;
  cx_sb_init(&sb);
  CHECK_OK(cx_fusion_explain(m, &sb));
  CHECK_STR_CONTAINS(sb.buf, "// main\n");
  CHECK_STR_CONTAINS(sb.buf, "expensive producer (exponential) with 2 users is not duplicated");
  CHECK_STR_CONTAINS(sb.buf, "reduce result is re-indexed by the consumer");
  cx_sb_free(&sb);
  cx_module_free(m);
}

static const char *PLUMBING =
    "HloModule plumbing\n\n"
    "ENTRY main {\n"
    "  x = f32[4,8] parameter(0)\n"
    "  c = f32[2] constant({1, 2})\n"
    "  b = f32[8,4] bitcast(x)\n"
    "  t = (f32[8,4], f32[2]) tuple(b, c)\n"
    "  g = f32[2] get-tuple-element(t), index=1\n"
    "  ROOT r = (f32[2], f32[4,8]) tuple(g, x)\n"
    "}\n";

TEST(fusion_count_kernels_plumbing) {
  CHECK_EQ_INT(cx_count_kernels(NULL), -1);
  cx_module *m = TP_PARSE(PLUMBING);
  if (!m) return;
  CHECK_EQ_INT(cx_count_kernels(m), 0);
  TP_RUN(m, cx_pass_fusion, 0);
  TP_RUN(m, cx_pass_wrap_singletons, 0);
  CHECK_EQ_INT(cx_count_kernels(m), 0);
  cx_module_free(m);
  m = TP_PARSE(SOFTMAX_SMALL);
  if (!m) return;
  CHECK_EQ_INT(cx_count_kernels(m), 7); /* unfused: every op that computes memory */
  cx_module_free(m);
}

/* Every allocation of the passes may fail: the pass then returns CXLA_ERR_OUT_OF_MEMORY
 * (never crashes or leaks; the ASan build checks), and once no failure is injected it
 * succeeds with the usual result. */
static void oom_sweep(const char *text, int kernels) {
  cx_module *src = TP_PARSE(text);
  if (!src) return;
  int done = 0;
  for (int64_t n = 0; n < 100000 && !done; n++) {
    cx_module *m = cx_module_clone(src);
    if (!m) { CHECK(m != NULL); break; }
    int64_t before = cx_alloc_failures();
    cx_alloc_fail_after(n);
    int ch;
    cxla_status st = cx_pass_fusion(m, &ch);
    if (st == CXLA_OK) st = cx_pass_multi_output_fusion(m, &ch);
    if (st == CXLA_OK) st = cx_pass_dot_epilogue_fusion(m, &ch);
    cx_alloc_fail_after(-1);
    int injected = cx_alloc_failures() != before;
    CHECK_MSG(st == CXLA_OK || st == CXLA_ERR_OUT_OF_MEMORY, "n=%lld: %s: %s", (long long)n, cxla_status_str(st), cxla_context_errmsg(test_ctx()));
    if (st == CXLA_OK && !injected) {
      done = 1;
      CHECK_OK(cx_verify_module(m));
      CHECK_EQ_INT(cx_count_kernels(m), kernels);
    }
    cx_module_free(m);
  }
  CHECK(done);
  cx_module_free(src);
}

TEST(fusion_out_of_memory) {
  oom_sweep(SOFTMAX_SMALL, 3);
  oom_sweep(TWO_SUMS, 1);
  oom_sweep(DOT_SELECT_RELU, 1);
  oom_sweep(WHILE_BODY, 4);
}
