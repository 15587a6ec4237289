/* test_passes_fold.c — constant folding: what folds (through the interpreter, so with its
 * rounding and wrap-around), what deliberately does not (broadcast, iota, side effects, big
 * results, ops the interpreter refuses), and that declining leaves no error behind. */
#include "core/context.h"
#include "passes_helpers.h"

#define FOLD(text, expect) TP_PASS((text), cx_pass_fold_constants, (expect))

static int64_t elem_i(const cx_instr *c, int64_t i) { return cx_load_i64(c->a.literal->shape.type, c->a.literal->data, i); }
static double elem_f(const cx_instr *c, int64_t i) { return cx_load_f64(c->a.literal->shape.type, c->a.literal->data, i); }

TEST(passes_fold_integer_chain_wraps) {
  /* 127 + 1 wraps to -128 in s8; then negate(-128) wraps to -128 again; folded in one sweep */
  cx_module *m = FOLD("HloModule m\nENTRY e {\n  a = s8[2] constant({127, 5})\n  b = s8[2] constant({1, -7})\n"
                      "  c = s8[2] add(a, b)\n  ROOT d = s8[2] negate(c)\n}\n", 1);
  cx_instr *r = m ? m->entry->root : NULL;
  CHECK(r && r->op == CX_OP_CONSTANT);
  if (r && r->op == CX_OP_CONSTANT) {
    CHECK_EQ_INT(elem_i(r, 0), -128);
    CHECK_EQ_INT(elem_i(r, 1), 2);
  }
  cx_module_free(m);
}

TEST(passes_fold_float_rounds_like_the_interpreter) {
  cx_module *m = FOLD("HloModule m\nENTRY e {\n  a = f32[3] constant({1, -0, 0})\n  b = f32[3] constant({3, 1, -0})\n"
                      "  c = f32[3] divide(a, b)\n  ROOT d = f32[3] add(c, a)\n}\n", 1);
  cx_instr *r = m ? m->entry->root : NULL;
  CHECK(r && r->op == CX_OP_CONSTANT);
  if (r && r->op == CX_OP_CONSTANT) {
    float third = 1.0f / 3.0f;
    CHECK(elem_f(r, 0) == (double)(third + 1.0f));
    CHECK(elem_f(r, 1) == 0 && signbit(elem_f(r, 1))); /* -0/1 + -0 = -0 */
    CHECK(isnan(elem_f(r, 2)));                        /* 0/-0 is NaN */
  }
  cx_module_free(m);
}

TEST(passes_fold_skips_broadcast_iota_and_side_effects) {
  cx_module *m = FOLD("HloModule m\nENTRY e {\n  a = f32[] constant(2)\n  b = f32[64,64] broadcast(a), dimensions={}\n"
                      "  i = s32[8] iota(), iota_dimension=0\n  ROOT t = (f32[64,64], s32[8]) tuple(b, i)\n}\n", 0);
  CHECK(m && tp_count(m, CX_OP_BROADCAST) == 1 && tp_count(m, CX_OP_IOTA) == 1);
  cx_module_free(m);
  m = TP_PARSE("HloModule m\nENTRY e {\n  a = f32[] constant(0)\n  b = f32[] constant(1)\n"
               "  ROOT r = f32[4] rng(a, b), distribution=rng_uniform\n}\n");
  if (m) {
    TP_RUN(m, cx_pass_fold_constants, 0);
    CHECK(m->entry->root->op == CX_OP_RNG);
  }
  cx_module_free(m);
}

TEST(passes_fold_reduce_and_inside_reducers) {
  cx_module *m = FOLD("HloModule m\nadd {\n  x = s32[] parameter(0)\n  y = s32[] parameter(1)\n"
                      "  k = s32[] constant(1)\n  k2 = s32[] add(k, k)\n  s = s32[] add(x, y)\n  ROOT t = s32[] multiply(s, k2)\n}\n"
                      "ENTRY e {\n  a = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})\n  z = s32[] constant(0)\n"
                      "  ROOT r = s32[2] reduce(a, z), dimensions={1}, to_apply=add\n}\n", 1);
  /* the reducer's k2 folded to 2; the reduce folded: ((0+1)*2+2)*2+3)*2 = 22, ((0+4)*2+5)*2+6)*2 = 64 */
  cx_instr *r = m ? m->entry->root : NULL;
  CHECK(r && r->op == CX_OP_CONSTANT);
  if (r && r->op == CX_OP_CONSTANT) {
    CHECK_EQ_INT(elem_i(r, 0), 22);
    CHECK_EQ_INT(elem_i(r, 1), 64);
  }
  cx_comp *add = m ? cx_module_find_comp(m, "add") : NULL;
  CHECK(add && add->root->ops[1]->op == CX_OP_CONSTANT);
  cx_module_free(m);
}

TEST(passes_fold_declines_quietly) {
  /* a reduce-window with rhs_reversal is something the interpreter refuses: no fold, no error,
   * and the context's previous message survives */
  cx_module *m = TP_PARSE("HloModule m\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"
                          "ENTRY e {\n  a = f32[4] constant({1, 2, 3, 4})\n  z = f32[] constant(0)\n"
                          "  ROOT r = f32[3] reduce-window(a, z), window={size=2 rhs_reversal=1}, to_apply=add\n}\n");
  if (!m) return;
  cx_error(test_ctx(), CXLA_ERR_IO, "the earlier message");
  int changed = 1;
  CHECK_OK(cx_pass_fold_constants(m, &changed));
  CHECK_EQ_INT(changed, 0);
  CHECK(m->entry->root->op == CX_OP_REDUCE_WINDOW);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "the earlier message");
  cx_module_free(m);
}

TEST(passes_fold_skips_huge_results) {
  /* 2^21 elements: over the folding limit (built with the IR API: such literals are long) */
  cx_module *m = cx_module_new(test_ctx(), "m");
  cx_comp *c = cx_comp_new(m, "e");
  int64_t dims[1] = {INT64_C(1) << 21};
  cx_shape s = cx_shape_array(CXLA_S8, 1, dims);
  cxla_literal *l = cx_literal_new(&s);
  CHECK(l && cx_module_own_literal(m, l));
  cx_instr *k = cx_instr_new(c, CX_OP_CONSTANT, &s, 0, NULL);
  k->a.literal = l;
  cx_instr *ops[2] = {k, k};
  c->root = cx_instr_new(c, CX_OP_ADD, &s, 2, ops);
  c->is_entry = 1;
  cx_comp_index_params(c);
  cx_module_add_comp(m, c);
  TP_RUN(m, cx_pass_fold_constants, 0);
  CHECK(c->root->op == CX_OP_ADD);
  cx_module_free(m);
}

TEST(passes_fold_gte_of_constant_tuple_and_shape_ops) {
  cx_module *m = FOLD("HloModule m\nENTRY e {\n  t = (s32[2], f32[]) constant(({1, 2}, 3))\n"
                      "  g = s32[2] get-tuple-element(t), index=0\n  r = s32[2,1] reshape(g)\n"
                      "  ROOT x = s32[1,2] transpose(r), dimensions={1,0}\n}\n", 1);
  cx_instr *r = m ? m->entry->root : NULL;
  CHECK(r && r->op == CX_OP_CONSTANT && r->shape.rank == 2);
  if (r && r->op == CX_OP_CONSTANT) {
    CHECK_EQ_INT(elem_i(r, 0), 1);
    CHECK_EQ_INT(elem_i(r, 1), 2);
  }
  cx_module_free(m);
}
