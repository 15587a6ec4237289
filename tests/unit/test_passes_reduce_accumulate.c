/* test_passes_reduce_accumulate.c — float sums as the numerics policy says (docs/numerics.md):
 * 16-bit sums accumulate in f32, sums longer than one chain become a tree of reduces (split
 * without padding where a divisor fits, padded with -0 where none does), other reductions are
 * left alone, and on inputs whose sums are exact every form gives the same bits. */
#include "passes_helpers.h"

#define SUM_F32 "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"

/* Longest chain of additions any reduce of m makes for one result element. */
static int64_t longest_chain(const cx_module *m) {
  int64_t best = 0;
  for (int i = 0; i < m->ncomps; i++)
    for (int j = 0; j < m->comps[i]->ninstrs; j++) {
      const cx_instr *r = m->comps[i]->instrs[j];
      if (r->op != CX_OP_REDUCE) continue;
      int64_t n = 1;
      for (int k = 0; k < r->a.dims.n; k++) n *= r->ops[0]->shape.dims[r->a.dims.v[k]];
      if (n > best) best = n;
    }
  return best;
}

/* Runs m before and after the pass on small-integer inputs (whose f32 sums are exact in any
 * order) and checks the pass changed it as expected and kept every bit of the result. */
static cx_module *check(const char *text, int expect_changed, const char *file, int line) {
  cx_module *before = tp_parse(text, file, line), *after = tp_parse(text, file, line);
  if (!before || !after) {
    cx_module_free(before);
    cx_module_free(after);
    return NULL;
  }
  tp_run_pass(after, cx_pass_reduce_accumulate, expect_changed, file, line);
  cx_instr *p = before->entry->params[0];
  cxla_literal *arg = cx_literal_new(&p->shape), *r1 = NULL, *r2 = NULL;
  int64_t n = cx_shape_elems(&p->shape);
  for (int64_t i = 0; arg && i < n; i++) cxla_literal_set_f64(arg, i, (double)(i % 7) - 3);
  if (arg && cx_interp_run(before, 1, &arg, &r1) == CXLA_OK && cx_interp_run(after, 1, &arg, &r2) == CXLA_OK) {
    cx_sb why;
    cx_sb_init(&why);
    if (!tp_same(r1, r2, &why)) test_fail(file, line, "results differ: %s", why.buf ? why.buf : "");
    cx_sb_free(&why);
  } else {
    test_fail(file, line, "did not run: %s", cxla_context_errmsg(test_ctx()));
  }
  cxla_literal_destroy(arg);
  cxla_literal_destroy(r1);
  cxla_literal_destroy(r2);
  cx_module_free(before);
  return after;
}
#define CHECK_SUM(text, expect) check((text), (expect), __FILE__, __LINE__)

TEST(passes_reduce_accumulate_long_row_sum_becomes_a_tree) {
  /* 100000 = 4 * 25000: split without padding */
  cx_module *m = CHECK_SUM("HloModule m\n" SUM_F32 "ENTRY e {\n  x = f32[100000] parameter(0)\n"
                           "  z = f32[] constant(0)\n  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add\n}\n",
                           1);
  if (!m) return;
  CHECK_EQ_INT(tp_count_all(m, CX_OP_REDUCE), 2);
  CHECK_EQ_INT(tp_count_all(m, CX_OP_PAD), 0);
  CHECK(longest_chain(m) <= 32768);
  cx_module_free(m);
}

TEST(passes_reduce_accumulate_prime_length_is_padded) {
  cx_module *m = CHECK_SUM("HloModule m\n" SUM_F32 "ENTRY e {\n  x = f32[2,65537] parameter(0)\n"
                           "  z = f32[] constant(5)\n  ROOT r = f32[2] reduce(x, z), dimensions={1}, to_apply=add\n}\n",
                           1);
  if (!m) return;
  CHECK_EQ_INT(tp_count_all(m, CX_OP_PAD), 1);
  CHECK(longest_chain(m) <= 32768);
  cx_module_free(m);
}

TEST(passes_reduce_accumulate_columns_and_several_dims) {
  cx_module *m = CHECK_SUM("HloModule m\n" SUM_F32 "ENTRY e {\n  x = f32[70000,3] parameter(0)\n"
                           "  z = f32[] constant(0)\n  ROOT r = f32[3] reduce(x, z), dimensions={0}, to_apply=add\n}\n",
                           1);
  if (m) CHECK(longest_chain(m) <= 32768);
  cx_module_free(m);
  /* {0, 2} of [300, 2, 300]: 90000 terms, the inner 300 first */
  m = CHECK_SUM("HloModule m\n" SUM_F32 "ENTRY e {\n  x = f32[300,2,300] parameter(0)\n"
                "  z = f32[] constant(0)\n  ROOT r = f32[2] reduce(x, z), dimensions={0,2}, to_apply=add\n}\n",
                1);
  if (m) {
    CHECK(longest_chain(m) <= 32768);
    CHECK_EQ_INT(tp_count_all(m, CX_OP_REDUCE), 2);
  }
  cx_module_free(m);
}

TEST(passes_reduce_accumulate_half_sums_in_f32) {
  cx_module *m = CHECK_SUM("HloModule m\nhadd {\n  a = bf16[] parameter(0)\n  b = bf16[] parameter(1)\n"
                           "  ROOT s = bf16[] add(a, b)\n}\nENTRY e {\n  x = bf16[8,300] parameter(0)\n"
                           "  z = bf16[] constant(0)\n  ROOT r = bf16[8] reduce(x, z), dimensions={1}, to_apply=hadd\n}\n",
                           1);
  if (!m) return;
  CHECK_EQ_INT(tp_count_all(m, CX_OP_CONVERT), 3); /* data, init, result */
  const cx_instr *r = NULL;
  for (int j = 0; j < m->entry->ninstrs; j++)
    if (m->entry->instrs[j]->op == CX_OP_REDUCE) r = m->entry->instrs[j];
  CHECK(r && r->shape.type == CXLA_F32 && r->called[0]->root->shape.type == CXLA_F32);
  CHECK(m->comps[0] == (r ? r->called[0] : NULL)); /* the new reducer comes before its callers */
  cx_module_free(m);
}

/* c64 sums accumulate in c128 (double parts) and round once; a long one becomes a tree too,
 * padded with (-0, -0); c128 sums, like f64 ones, stay one reduce. */
TEST(passes_reduce_accumulate_complex_sums) {
  cx_module *m = CHECK_SUM("HloModule m\ncadd {\n  a = c64[] parameter(0)\n  b = c64[] parameter(1)\n"
                           "  ROOT s = c64[] add(a, b)\n}\nENTRY e {\n  x = c64[2,65537] parameter(0)\n"
                           "  z = c64[] constant((5, -1))\n  ROOT r = c64[2] reduce(x, z), dimensions={1}, to_apply=cadd\n}\n",
                           1);
  if (!m) return;
  CHECK(longest_chain(m) <= 32768);
  CHECK_EQ_INT(tp_count_all(m, CX_OP_CONVERT), 3); /* data, init, result */
  const cx_instr *pad = NULL;
  for (int j = 0; j < m->entry->ninstrs; j++)
    if (m->entry->instrs[j]->op == CX_OP_PAD) pad = m->entry->instrs[j];
  const cxla_literal *pv = pad && pad->ops[1]->op == CX_OP_CONSTANT ? pad->ops[1]->a.literal : NULL;
  CHECK(pv && pv->shape.type == CXLA_C128 && ((double *)pv->data)[0] == 0 && signbit(((double *)pv->data)[0]) &&
        signbit(((double *)pv->data)[1]));
  cx_module_free(m);
  m = CHECK_SUM("HloModule m\nzadd {\n  a = c128[] parameter(0)\n  b = c128[] parameter(1)\n  ROOT s = c128[] add(a, b)\n}\n"
                "ENTRY e {\n  x = c128[70000] parameter(0)\n  z = c128[] constant((0, 0))\n"
                "  ROOT r = c128[] reduce(x, z), dimensions={0}, to_apply=zadd\n}\n",
                0);
  cx_module_free(m);
}

TEST(passes_reduce_accumulate_leaves_other_reductions) {
  /* short f32 sums, f64 sums, maximum, and integer sums are already what the policy says */
  cx_module *m = CHECK_SUM(
      "HloModule m\n" SUM_F32 "mx {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] maximum(a, b)\n}\n"
      "dadd {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT s = f64[] add(a, b)\n}\n"
      "ENTRY e {\n  x = f32[50000] parameter(0)\n  z = f32[] constant(0)\n"
      "  s = f32[] reduce(x, z), dimensions={0}, to_apply=mx\n  d = f64[50000] convert(x)\n  zd = f64[] constant(0)\n"
      "  sd = f64[] reduce(d, zd), dimensions={0}, to_apply=dadd\n  y = f32[50,1000] reshape(x)\n"
      "  sy = f32[50] reduce(y, z), dimensions={1}, to_apply=add\n"
      "  ROOT t = (f32[], f64[], f32[50]) tuple(s, sd, sy)\n}\n",
      0);
  cx_module_free(m);
}
