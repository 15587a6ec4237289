/* test_passes_dot_orient.c — transpose(dot(a, b)) whose GEMM would read both a and b
 * transposed becomes transpose'(dot(b, a)), where the transpose is the dot's one user and each
 * side has one free and one contracting dim; results bit for bit the same on the interpreter
 * (each element sums the same products in the same order). */
#include "passes_helpers.h"

#define ORIENT(text, expect) TP_PASS((text), cx_pass_dot_orient, (expect))

TEST(passes_dot_orient_swaps_attention_p_times_v) {
  /* JAX's einsum("bhts,bshd->bthd", p, v): dot(v, p) contracting v's s (before its d) with p's
   * s (after its t), then [b, t, h, d] */
  cx_module *m = ORIENT("HloModule m\nENTRY e {\n  v = f32[2,5,3,4] parameter(0)\n  p = f32[2,3,6,5] parameter(1)\n"
                        "  d = f32[2,3,4,6] dot(v, p), lhs_batch_dims={0,2}, lhs_contracting_dims={1}, "
                        "rhs_batch_dims={0,1}, rhs_contracting_dims={3}\n"
                        "  ROOT t = f32[2,6,3,4] transpose(d), dimensions={0,3,1,2}\n}\n", 1);
  cx_instr *t = m ? m->entry->root : NULL;
  CHECK(t && t->op == CX_OP_TRANSPOSE && tp_count(m, CX_OP_DOT) == 1 && tp_count(m, CX_OP_TRANSPOSE) == 1);
  const cx_instr *d = t ? t->ops[0] : NULL;
  /* p first, read [t, s] (contracting dim last); v second, read [s, d] (contracting dim first) */
  CHECK(d && d->op == CX_OP_DOT && d->ops[0]->op == CX_OP_PARAMETER && d->ops[0]->a.index == 1);
  CHECK(d && d->a.dot.lhs_contract.v[0] == 3 && d->a.dot.rhs_contract.v[0] == 1);
  CHECK(d && d->shape.dims[2] == 6 && d->shape.dims[3] == 4);
  CHECK(t && t->a.dims.n == 4 && t->a.dims.v[0] == 0 && t->a.dims.v[1] == 2 && t->a.dims.v[2] == 1 &&
        t->a.dims.v[3] == 3);
  cx_module_free(m);
}

TEST(passes_dot_orient_batch_moved_last) {
  /* a [b, K, M], b [b, N, K]: both transposed; the transpose moves the batch dim last */
  cx_module *m = ORIENT("HloModule m\nENTRY e {\n  a = f32[2,7,3] parameter(0)\n  b = f32[2,5,7] parameter(1)\n"
                        "  d = f32[2,3,5] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={1}, "
                        "rhs_contracting_dims={2}\n"
                        "  ROOT t = f32[3,5,2] transpose(d), dimensions={1,2,0}\n}\n", 1);
  cx_instr *t = m ? m->entry->root : NULL;
  CHECK(t && t->op == CX_OP_TRANSPOSE && t->ops[0]->op == CX_OP_DOT && t->ops[0]->ops[0]->a.index == 1);
  CHECK(t && t->a.dims.v[0] == 2 && t->a.dims.v[1] == 1 && t->a.dims.v[2] == 0);
  cx_module_free(m);
}

TEST(passes_dot_orient_leaves_what_it_must) {
  /* a GEMM that already reads both sides straight (or one side transposed: OpenBLAS's fast
   * forms) */
  cx_module *m = ORIENT("HloModule m\nENTRY e {\n  a = f32[3,7] parameter(0)\n  b = f32[7,5] parameter(1)\n"
                        "  d = f32[3,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                        "  ROOT t = f32[5,3] transpose(d), dimensions={1,0}\n}\n", 0);
  cx_module_free(m);
  m = ORIENT("HloModule m\nENTRY e {\n  a = f32[7,3] parameter(0)\n  b = f32[7,5] parameter(1)\n"
             "  d = f32[3,5] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
             "  ROOT t = f32[5,3] transpose(d), dimensions={1,0}\n}\n", 0);
  cx_module_free(m);
  /* the dot has another user (it would be computed twice), or no transpose follows it */
  m = ORIENT("HloModule m\nENTRY e {\n  a = f32[7,3] parameter(0)\n  b = f32[5,7] parameter(1)\n"
             "  d = f32[3,5] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}\n"
             "  t = f32[5,3] transpose(d), dimensions={1,0}\n"
             "  ROOT r = (f32[3,5], f32[5,3]) tuple(d, t)\n}\n", 0);
  cx_module_free(m);
  m = ORIENT("HloModule m\nENTRY e {\n  a = f32[7,3] parameter(0)\n  b = f32[5,7] parameter(1)\n"
             "  ROOT d = f32[3,5] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}\n}\n", 0);
  cx_module_free(m);
  /* two free dims on a side, per-operand precision, integers */
  m = ORIENT("HloModule m\nENTRY e {\n  a = f32[7,3,2] parameter(0)\n  b = f32[5,7] parameter(1)\n"
             "  d = f32[3,2,5] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}\n"
             "  ROOT t = f32[5,3,2] transpose(d), dimensions={2,0,1}\n}\n", 0);
  cx_module_free(m);
  m = ORIENT("HloModule m\nENTRY e {\n  a = f32[7,3] parameter(0)\n  b = f32[5,7] parameter(1)\n"
             "  d = f32[3,5] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}, "
             "operand_precision={highest,default}\n"
             "  ROOT t = f32[5,3] transpose(d), dimensions={1,0}\n}\n", 0);
  cx_module_free(m);
  m = ORIENT("HloModule m\nENTRY e {\n  a = s32[7,3] parameter(0)\n  b = s32[5,7] parameter(1)\n"
             "  d = s32[3,5] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}\n"
             "  ROOT t = s32[5,3] transpose(d), dimensions={1,0}\n}\n", 0);
  cx_module_free(m);
}
