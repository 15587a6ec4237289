/* test_passes_dot_transpose.c — transpose(dot(a, b)) becomes dot(b, a) where the permutation
 * swaps the free dimensions and the transpose is the dot's one user, and dot(transpose(y), b)
 * reads y with its dims renumbered where the free dims keep their order; results bit for bit
 * the same on the interpreter (each element sums the same products in the same order). */
#include "passes_helpers.h"

#define FOLD(text, expect) TP_PASS((text), cx_pass_dot_transpose, (expect))

TEST(passes_dot_transpose_swaps_a_kernel_gradient) {
  /* a dense layer's kernel gradient as JAX writes it: dot over the batch, then [in, out] */
  cx_module *m = FOLD("HloModule m\nENTRY e {\n  g = f32[4,3] parameter(0)\n  x = f32[4,5] parameter(1)\n"
                      "  d = f32[3,5] dot(g, x), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
                      "  ROOT t = f32[5,3] transpose(d), dimensions={1,0}\n}\n", 1);
  CHECK(m && tp_count(m, CX_OP_TRANSPOSE) == 0);
  cx_instr *t = m ? tp_find(m, "t") : NULL;
  CHECK(t && t->op == CX_OP_DOT && t->ops[0]->op == CX_OP_PARAMETER && t->ops[0]->a.index == 1);
  cx_module_free(m);
}

TEST(passes_dot_transpose_keeps_batch_dims_and_several_free_dims) {
  /* [b, l1, l2, r] -> [b, r, l1, l2] */
  cx_module *m = FOLD("HloModule m\nENTRY e {\n  a = f32[2,3,4,6] parameter(0)\n  b = f32[2,6,5] parameter(1)\n"
                      "  d = f32[2,3,4,5] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={3}, "
                      "rhs_contracting_dims={1}\n"
                      "  ROOT t = f32[2,5,3,4] transpose(d), dimensions={0,3,1,2}\n}\n", 1);
  CHECK(m && tp_count(m, CX_OP_TRANSPOSE) == 0 && m->entry->root->op == CX_OP_DOT);
  cx_module_free(m);
}

TEST(passes_dot_transpose_leaves_what_it_must) {
  /* the dot has another user: swapping would compute it twice */
  cx_module *m = FOLD("HloModule m\nENTRY e {\n  a = f32[3,4] parameter(0)\n  b = f32[4,5] parameter(1)\n"
                      "  d = f32[3,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                      "  t = f32[5,3] transpose(d), dimensions={1,0}\n"
                      "  ROOT r = (f32[3,5], f32[5,3]) tuple(d, t)\n}\n", 0);
  cx_module_free(m);
  /* a permutation that mixes the batch dim in, and one that splits a free group */
  m = FOLD("HloModule m\nENTRY e {\n  a = f32[2,3,4] parameter(0)\n  b = f32[2,4,5] parameter(1)\n"
           "  d = f32[2,3,5] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, "
           "rhs_contracting_dims={1}\n"
           "  ROOT t = f32[3,2,5] transpose(d), dimensions={1,0,2}\n}\n", 0);
  cx_module_free(m);
  m = FOLD("HloModule m\nENTRY e {\n  a = f32[3,4,6] parameter(0)\n  b = f32[6,5] parameter(1)\n"
           "  d = f32[3,4,5] dot(a, b), lhs_contracting_dims={2}, rhs_contracting_dims={0}\n"
           "  ROOT t = f32[4,5,3] transpose(d), dimensions={1,2,0}\n}\n", 0);
  cx_module_free(m);
  /* per-operand precision stays with its operand: not swapped */
  m = FOLD("HloModule m\nENTRY e {\n  a = f32[3,4] parameter(0)\n  b = f32[4,5] parameter(1)\n"
           "  d = f32[3,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
           "operand_precision={highest,default}\n"
           "  ROOT t = f32[5,3] transpose(d), dimensions={1,0}\n}\n", 0);
  cx_module_free(m);
}

TEST(passes_dot_transpose_reads_a_transposed_operand_in_place) {
  /* attention's gradient: dO [b, t, h, dh] transposed to [b, h, dh, t] for two dots */
  cx_module *m = FOLD("HloModule m\nENTRY e {\n  g = f32[2,5,3,4] parameter(0)\n  p = f32[2,3,5,5] parameter(1)\n"
                      "  v = f32[2,3,5,4] parameter(2)\n"
                      "  t = f32[2,3,4,5] transpose(g), dimensions={0,2,3,1}\n"
                      "  dv = f32[2,3,4,5] dot(t, p), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, "
                      "rhs_batch_dims={0,1}, rhs_contracting_dims={2}\n"
                      "  dp = f32[2,3,5,5] dot(t, v), lhs_batch_dims={0,1}, lhs_contracting_dims={2}, "
                      "rhs_batch_dims={0,1}, rhs_contracting_dims={3}\n"
                      "  ROOT r = (f32[2,3,4,5], f32[2,3,5,5]) tuple(dv, dp)\n}\n", 1);
  cx_instr *dv = m ? tp_find(m, "dv") : NULL, *dp = m ? tp_find(m, "dp") : NULL;
  CHECK(dv && dv->ops[0]->op == CX_OP_PARAMETER && dv->a.dot.lhs_batch.v[1] == 2 && dv->a.dot.lhs_contract.v[0] == 1);
  CHECK(dp && dp->ops[0]->op == CX_OP_PARAMETER && dp->a.dot.lhs_batch.v[1] == 2 && dp->a.dot.lhs_contract.v[0] == 3);
  cx_module_free(m);
  /* two free dims that the transpose swaps would come out swapped: left alone */
  m = FOLD("HloModule m\nENTRY e {\n  a = f32[3,4,6] parameter(0)\n  b = f32[6,5] parameter(1)\n"
           "  t = f32[4,3,6] transpose(a), dimensions={1,0,2}\n"
           "  ROOT d = f32[4,3,5] dot(t, b), lhs_contracting_dims={2}, rhs_contracting_dims={0}\n}\n", 0);
  cx_module_free(m);
}
