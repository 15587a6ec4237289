/* test_verify.c — the verifier: module structure, elementwise and data ops. Expected shapes
 * and messages are worked out by hand from the op semantics. */
#include "verify_helpers.h"

/* ENTRY e { a = f32[3] parameter(0); b = f32[3] parameter(1); ROOT r = add(a, b) } */
static cx_instr *simple_entry(const char *root_shape) {
  vt_comp("e");
  cx_instr *a = vt_param(0, "a", "f32[3]"), *b = vt_param(1, "b", "f32[3]");
  cx_instr *r = vt_op(CX_OP_ADD, "r", root_shape, 2, a, b);
  vt_at(r, 4, 3);
  vt_finish(r, 1);
  return r;
}

TEST(verify_module_ok) {
  vt_begin();
  simple_entry("f32[3]");
  CHECK_STR_EQ(vt_verify(), "ok");
  vt_end();
}

TEST(verify_declared_shape_mismatch) {
  vt_begin();
  simple_entry("f32[4]");
  CHECK_STR_EQ(vt_verify(), "t.hlo:4:3: error: add r: declared shape f32[4] does not match inferred shape f32[3]");
  vt_end();
}

TEST(verify_entry_rules) {
  vt_begin();
  vt_comp("c");
  vt_finish(vt_param(0, "p", "f32[]"), 0);
  CHECK_STR_CONTAINS(vt_verify(), "module m: no ENTRY computation (expected exactly one)");
  vt_end();

  vt_begin();
  vt_comp("e1");
  vt_finish(vt_param(0, "p", "f32[]"), 1);
  vt_comp("e2");
  vt_finish(vt_param(0, "p", "f32[]"), 1);
  CHECK_STR_CONTAINS(vt_verify(), "2 ENTRY computations (e1 and e2); expected exactly one");
  vt_end();

  vt_begin();
  CHECK_STR_CONTAINS(vt_verify(), "module m: no computations");
  vt_end();
}

TEST(verify_empty_and_rootless) {
  vt_begin();
  cx_comp *c = vt_comp("e");
  c->loc = (cx_loc){2, 1};
  vt_finish(NULL, 1);
  CHECK_STR_EQ(vt_verify(), "t.hlo:2:1: error: computation e: is empty (expected at least a ROOT instruction)");
  vt_end();

  vt_begin();
  vt_comp("e");
  vt_param(0, "p", "f32[]");
  vt_finish(NULL, 1);
  CHECK_STR_CONTAINS(vt_verify(), "computation e: has no ROOT instruction");
  vt_end();
}

TEST(verify_parameter_numbers) {
  vt_begin();
  vt_comp("e");
  cx_instr *a = vt_param(0, "a", "f32[]"), *b = vt_param(2, "b", "f32[]");
  vt_at(b, 3, 7);
  vt_finish(vt_op(CX_OP_ADD, "r", "f32[]", 2, a, b), 1);
  CHECK_STR_EQ(vt_verify(), "t.hlo:3:7: error: parameter b: parameter number 2 is out of range: computation e has 2 "
                            "parameters (expected 0..1)");
  vt_end();

  vt_begin();
  vt_comp("e");
  a = vt_param(0, "a", "f32[]");
  b = vt_param(0, "b", "f32[]");
  vt_at(b, 5, 2);
  vt_finish(vt_op(CX_OP_ADD, "r", "f32[]", 2, a, b), 1);
  CHECK_STR_EQ(vt_verify(), "t.hlo:5:2: error: parameter b: parameter number 0 is also used by a (each number 0..1 "
                            "must appear once)");
  vt_end();
}

TEST(verify_operand_from_other_computation_or_later) {
  vt_begin();
  vt_comp("other");
  cx_instr *q = vt_param(0, "q", "f32[]");
  vt_finish(q, 0);
  vt_comp("e");
  cx_instr *a = vt_param(0, "a", "f32[]");
  cx_instr *r = vt_op(CX_OP_ADD, "r", "f32[]", 2, a, q);
  vt_at(r, 9, 4);
  vt_finish(r, 1);
  CHECK_STR_EQ(vt_verify(), "t.hlo:9:4: error: add r: operand 1 (q) belongs to computation other, not e");
  vt_end();

  /* r uses n, which comes after it */
  vt_begin();
  cx_comp *c = vt_comp("e");
  a = vt_param(0, "a", "f32[]");
  cx_instr *n = vt_op(CX_OP_NEGATE, "n", "f32[]", 1, a);
  r = vt_op(CX_OP_ADD, "r", "f32[]", 2, a, n);
  c->instrs[1] = r;
  c->instrs[2] = n;
  vt_finish(r, 1);
  CHECK_STR_CONTAINS(vt_verify(), "add r: operand 1 (n) is used before it is defined");
  vt_end();

  /* an instruction that is its own operand */
  vt_begin();
  vt_comp("e");
  a = vt_param(0, "a", "f32[]");
  r = vt_op(CX_OP_ADD, "r", "f32[]", 2, a, a);
  r->ops[1] = r;
  vt_finish(r, 1);
  CHECK_STR_CONTAINS(vt_verify(), "add r: operand 1 (r) is used before it is defined");
  vt_end();
}

TEST(verify_call_graph) {
  /* f calls g and g calls f */
  vt_begin();
  cx_comp *f = vt_comp("f");
  cx_instr *fc = vt_op(CX_OP_CALL, "fc", "f32[]", 1, vt_param(0, "x", "f32[]"));
  vt_finish(fc, 0);
  cx_comp *g = vt_comp("g");
  cx_instr *gc = vt_op(CX_OP_CALL, "gc", "f32[]", 1, vt_param(0, "y", "f32[]"));
  vt_called(gc, 1, f);
  vt_at(gc, 7, 9);
  vt_finish(gc, 0);
  vt_called(fc, 1, g);
  vt_comp("e");
  cx_instr *ec = vt_op(CX_OP_CALL, "ec", "f32[]", 1, vt_param(0, "z", "f32[]"));
  vt_called(ec, 1, f);
  vt_finish(ec, 1);
  CHECK_STR_EQ(vt_verify(), "t.hlo:7:9: error: call gc: calls f, which leads back to g (recursion is not allowed)");
  vt_end();

  /* a computation calling itself */
  vt_begin();
  f = vt_comp("e");
  fc = vt_op(CX_OP_CALL, "fc", "f32[]", 1, vt_param(0, "x", "f32[]"));
  vt_called(fc, 1, f);
  vt_finish(fc, 1);
  CHECK_STR_CONTAINS(vt_verify(), "call fc: calls its own computation e (recursion is not allowed)");
  vt_end();

  /* a callee that was never added to the module */
  vt_begin();
  cx_comp *lost = vt_comp("lost");
  lost->root = vt_param(0, "x", "f32[]");
  vt_comp("e");
  fc = vt_op(CX_OP_CALL, "fc", "f32[]", 1, vt_param(0, "y", "f32[]"));
  vt_called(fc, 1, lost);
  vt_finish(fc, 1);
  CHECK_STR_CONTAINS(vt_verify(), "call fc: calls computation lost, which is not in the module");
  CHECK(cx_verify_comp(vt_m->entry) != CXLA_OK);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "which is not in the module");
  vt_end();
}

TEST(verify_declared_shapes_well_formed) {
  static const struct { const char *shape, *msg; } cases[] = {
      {"f32[2,3]{0,0}", "declared shape has a layout that is not a permutation of 0..1"},
      {"f32[2,-1]", "declared shape has a negative dimension (-1) in f32[2,-1]"},
      {"f32[4294967296,4294967296]", "declared shape has too many elements in f32[4294967296,4294967296]"},
  };
  for (int i = 0; i < CX_ARRAY_LEN(cases); i++) {
    vt_begin();
    vt_comp("e");
    cx_instr *p = vt_param(0, "p", cases[i].shape);
    vt_at(p, 2, 5);
    vt_finish(p, 1);
    CHECK_STR_CONTAINS(vt_verify(), "t.hlo:2:5: error: parameter p: ");
    CHECK_STR_CONTAINS(vt_verify(), cases[i].msg);
    vt_end();
  }
  /* a valid non-default layout and a 16-dimensional shape pass */
  vt_begin();
  vt_comp("e");
  vt_param(1, "q", "f32[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,2]");
  vt_finish(vt_param(0, "p", "f32[2,3]{0,1}"), 1);
  CHECK_STR_EQ(vt_verify(), "ok");
  vt_end();
}

TEST(verify_operand_and_called_counts) {
  vt_begin();
  vt_comp("e");
  cx_instr *a = vt_param(0, "a", "f32[]");
  cx_instr *r = vt_op(CX_OP_ADD, "r", "f32[]", 3, a, a, a);
  vt_at(r, 3, 1);
  CHECK_STR_EQ(vt_infer(r), "ERROR: t.hlo:3:1: error: add r: expected 2 operands, got 3");
  cx_instr *w = vt_op(CX_OP_WHILE, "w", "f32[]", 1, a);
  vt_called(w, 1, vt_binary_comp("c", CX_OP_ADD, "f32"));
  CHECK_INFER_ERR(w, "while w: expected 2 called computations (condition, body), got 1");
  cx_instr *n = vt_op(CX_OP_NEGATE, "n", "f32[]", 1, a);
  vt_called(n, 1, vt_m->comps[0]);
  CHECK_INFER_ERR(n, "negate n: takes no called computations, got 1");
  cx_comp *sum = vt_binary_comp("s", CX_OP_ADD, "f32");
  cx_instr *red = vt_op(CX_OP_REDUCE, "red", "f32[]", 3, a, a, a);
  vt_called(red, 1, sum);
  CHECK_INFER_ERR(red, "expected N inputs followed by N init values (an even number >= 2), got 3 operands");
  cx_instr *sc = vt_op(CX_OP_SCATTER, "sc", "f32[]", 2, a, a);
  vt_called(sc, 1, sum);
  CHECK_INFER_ERR(sc, "expected N operands, the indices and N updates (an odd number >= 3), got 2 operands");
  cx_instr *red0 = vt_op(CX_OP_REDUCE, "red0", "f32[]", 2, a, a);
  CHECK_INFER_ERR(red0, "reduce red0: expected 1 called computation (to_apply), got 0");
  cx_instr *cat = vt_op(CX_OP_CONCATENATE, "cat", "f32[]", 0);
  CHECK_INFER_ERR(cat, "concatenate cat: expected at least 1 operand, got 0");
  vt_end();
}

TEST(verify_builder_style_errors_without_location) {
  vt_begin();
  vt_m->filename = "<builder>";
  vt_comp("e");
  cx_instr *a = vt_param(0, "a", "f32[3]"), *b = vt_param(1, "b", "f32[4]");
  cx_instr *r = vt_op(CX_OP_MULTIPLY, NULL, NULL, 2, a, b);
  CHECK_STR_EQ(vt_infer(r), "ERROR: <builder>: error: multiply: operands must have the same dimensions (broadcast "
                            "explicitly), got f32[3] and f32[4]");
  vt_end();
}

TEST(verify_fills_compare_type) {
  vt_begin();
  vt_comp("e");
  cx_instr *a = vt_param(0, "a", "f32[2]"), *i = vt_param(1, "i", "s32[2]"), *u = vt_param(2, "u", "pred[2]");
  cx_instr *c1 = vt_op(CX_OP_COMPARE, "c1", "pred[2]", 2, a, a);
  cx_instr *c2 = vt_op(CX_OP_COMPARE, "c2", "pred[2]", 2, i, i);
  cx_instr *c3 = vt_op(CX_OP_COMPARE, "c3", "pred[2]", 2, u, u);
  vt_finish(vt_op(CX_OP_TUPLE, "t", "(pred[2], pred[2], pred[2])", 3, c1, c2, c3), 1);
  CHECK_STR_EQ(vt_verify(), "ok");
  CHECK_EQ_INT(c1->a.cmp_type, CX_CMP_FLOAT);
  CHECK_EQ_INT(c2->a.cmp_type, CX_CMP_SIGNED);
  CHECK_EQ_INT(c3->a.cmp_type, CX_CMP_UNSIGNED);
  vt_end();
}

TEST(verify_unary_types) {
  vt_begin();
  vt_comp("e");
  cx_instr *f = vt_param(0, "f", "f32[2,3]"), *s = vt_param(1, "s", "s32[4]"), *u = vt_param(2, "u", "u8[4]");
  cx_instr *p = vt_param(3, "p", "pred[4]"), *t = vt_param(4, "t", "(f32[], s32[])");
  CHECK_INFER(vt_op(CX_OP_EXP, "e1", NULL, 1, f), "f32[2,3]");
  CHECK_INFER(vt_op(CX_OP_IS_FINITE, "e2", NULL, 1, f), "pred[2,3]");
  CHECK_INFER(vt_op(CX_OP_ABS, "e3", NULL, 1, s), "s32[4]");
  CHECK_INFER(vt_op(CX_OP_NEGATE, "e4", NULL, 1, u), "u8[4]");
  CHECK_INFER(vt_op(CX_OP_NOT, "e5", NULL, 1, p), "pred[4]");
  CHECK_INFER(vt_op(CX_OP_POPCNT, "e6", NULL, 1, u), "u8[4]");
  CHECK_INFER(vt_op(CX_OP_COPY, "e7", NULL, 1, t), "(f32[], s32[])");
  CHECK_INFER(vt_op(CX_OP_ROUND_EVEN, "e8", NULL, 1, f), "f32[2,3]");
  cx_instr *bad = vt_op(CX_OP_ABS, "b1", NULL, 1, u);
  vt_at(bad, 6, 8);
  CHECK_STR_EQ(vt_infer(bad), "ERROR: t.hlo:6:8: error: abs b1: operand 0 has element type u8 but abs needs a signed "
                              "integer, floating-point or complex type");
  CHECK_INFER_ERR(vt_op(CX_OP_SIGN, "b2", NULL, 1, u), "sign b2: operand 0 has element type u8 but sign needs a signed");
  CHECK_INFER_ERR(vt_op(CX_OP_EXP, "b3", NULL, 1, s),
                  "operand 0 has element type s32 but exponential needs a floating-point or complex type");
  CHECK_INFER_ERR(vt_op(CX_OP_NOT, "b4", NULL, 1, f), "not needs pred or an integer type");
  CHECK_INFER_ERR(vt_op(CX_OP_CLZ, "b5", NULL, 1, p), "count-leading-zeros needs an integer type");
  CHECK_INFER_ERR(vt_op(CX_OP_NEGATE, "b6", NULL, 1, p), "negate needs an integer, floating-point or complex type");
  CHECK_INFER_ERR(vt_op(CX_OP_LOG, "b7", NULL, 1, t), "log b7: operand (operand 0) must be an array, got (f32[], s32[])");
  vt_end();
}

TEST(verify_binary_types_and_shapes) {
  vt_begin();
  vt_comp("e");
  cx_instr *f = vt_param(0, "f", "f32[3]"), *g = vt_param(1, "g", "f32[4]"), *s = vt_param(2, "s", "s32[3]");
  cx_instr *p = vt_param(3, "p", "pred[3]");
  CHECK_INFER(vt_op(CX_OP_ADD, "a1", NULL, 2, f, f), "f32[3]");
  CHECK_INFER(vt_op(CX_OP_MAXIMUM, "a2", NULL, 2, p, p), "pred[3]");
  CHECK_INFER(vt_op(CX_OP_POWER, "a3", NULL, 2, s, s), "s32[3]");
  CHECK_INFER(vt_op(CX_OP_AND, "a4", NULL, 2, s, s), "s32[3]");
  CHECK_INFER(vt_op(CX_OP_SHIFT_LEFT, "a5", NULL, 2, s, s), "s32[3]");
  CHECK_INFER(vt_op(CX_OP_ATAN2, "a6", NULL, 2, f, f), "f32[3]");
  CHECK_INFER(vt_op(CX_OP_COMPARE, "a7", NULL, 2, s, s), "pred[3]");
  CHECK_INFER_ERR(vt_op(CX_OP_SUBTRACT, "b1", NULL, 2, p, p), "subtract needs an integer, floating-point or complex type");
  CHECK_INFER_ERR(vt_op(CX_OP_AND, "b2", NULL, 2, f, f), "and needs pred or an integer type");
  CHECK_INFER_ERR(vt_op(CX_OP_SHIFT_RIGHT_LOGICAL, "b3", NULL, 2, f, f), "needs an integer type");
  CHECK_INFER_ERR(vt_op(CX_OP_ATAN2, "b4", NULL, 2, s, s), "atan2 needs a floating-point or complex type");
  CHECK_INFER_ERR(vt_op(CX_OP_ADD, "b5", NULL, 2, f, g), "add b5: operands must have the same dimensions (broadcast "
                                                          "explicitly), got f32[3] and f32[4]");
  CHECK_INFER_ERR(vt_op(CX_OP_ADD, "b6", NULL, 2, f, s), "operands must have the same element type, got f32[3] and s32[3]");
  cx_instr *c = vt_op(CX_OP_COMPARE, "c1", NULL, 2, f, f);
  c->a.cmp_type = CX_CMP_SIGNED;
  CHECK_INFER_ERR(c, "compare c1: type=SIGNED does not fit f32 operands (expected FLOAT or TOTALORDER)");
  c->a.cmp_type = CX_CMP_TOTALORDER;
  CHECK_INFER(c, "pred[3]");
  c = vt_op(CX_OP_COMPARE, "c2", NULL, 2, p, p);
  c->a.cmp_type = CX_CMP_UNSIGNED;
  CHECK_INFER(c, "pred[3]");
  c->a.cmp_type = CX_CMP_FLOAT;
  CHECK_INFER_ERR(c, "type=FLOAT does not fit pred operands (expected UNSIGNED)");
  c->a.cmp_type = CX_CMP_DEFAULT;
  c->a.dir = (cxla_compare_dir)9;
  CHECK_INFER_ERR(c, "invalid comparison direction 9");
  vt_end();
}

TEST(verify_select_and_clamp) {
  vt_begin();
  vt_comp("e");
  cx_instr *p = vt_param(0, "p", "pred[2,3]"), *ps = vt_param(1, "ps", "pred[]"), *f = vt_param(2, "f", "f32[2,3]");
  cx_instr *t = vt_param(3, "t", "(f32[], s32[])"), *lo = vt_param(4, "lo", "f32[]"), *i = vt_param(5, "i", "s32[2,3]");
  cx_instr *p3 = vt_param(6, "p3", "pred[3,2]");
  CHECK_INFER(vt_op(CX_OP_SELECT, "s1", NULL, 3, p, f, f), "f32[2,3]");
  CHECK_INFER(vt_op(CX_OP_SELECT, "s2", NULL, 3, ps, f, f), "f32[2,3]");
  CHECK_INFER(vt_op(CX_OP_SELECT, "s3", NULL, 3, ps, t, t), "(f32[], s32[])");
  CHECK_INFER_ERR(vt_op(CX_OP_SELECT, "b1", NULL, 3, p, t, t), "selecting between tuples needs a scalar predicate");
  CHECK_INFER_ERR(vt_op(CX_OP_SELECT, "b2", NULL, 3, p3, f, f),
                  "predicate pred[3,2] must have the dimensions of on_true f32[2,3] (or be a scalar)");
  CHECK_INFER_ERR(vt_op(CX_OP_SELECT, "b3", NULL, 3, f, f, f), "predicate (operand 0) must be a pred array, got f32[2,3]");
  CHECK_INFER_ERR(vt_op(CX_OP_SELECT, "b4", NULL, 3, p, f, i), "on_true and on_false must have the same shape");
  CHECK_INFER(vt_op(CX_OP_CLAMP, "c1", NULL, 3, lo, f, lo), "f32[2,3]");
  CHECK_INFER(vt_op(CX_OP_CLAMP, "c2", NULL, 3, f, f, f), "f32[2,3]");
  CHECK_INFER_ERR(vt_op(CX_OP_CLAMP, "b5", NULL, 3, lo, f, p3), "max pred[3,2] must have the element type of the operand");
  cx_instr *lo2 = vt_param(7, "lo2", "f32[3]");
  CHECK_INFER_ERR(vt_op(CX_OP_CLAMP, "b6", NULL, 3, lo2, f, lo),
                  "min f32[3] must be a scalar or have the dimensions of the operand f32[2,3]");
  vt_end();
}

TEST(verify_convert_family) {
  vt_begin();
  vt_comp("e");
  cx_instr *f = vt_param(0, "f", "f32[2]"), *u = vt_param(1, "u", "u8[2,4]"), *v = vt_param(2, "v", "u8[2,3]");
  cx_instr *t = vt_param(3, "t", "(f32[])");
  CHECK_INFER(vt_op(CX_OP_CONVERT, "c1", "s32[2]", 1, f), "s32[2]");
  CHECK_INFER(vt_op(CX_OP_CONVERT, "c2", "pred[7]", 1, f), "pred[2]"); /* dims come from the operand */
  CHECK_INFER_ERR(vt_op(CX_OP_CONVERT, "c3", "s32[2]", 1, t), "operand (operand 0) must be an array");
  CHECK_INFER_ERR(vt_op(CX_OP_CONVERT, "c4", "(s32[2])", 1, f), "declared shape must be an array, got (s32[2])");
  CHECK_INFER(vt_op(CX_OP_BITCAST_CONVERT, "b1", "s32[2]", 1, f), "s32[2]");
  CHECK_INFER(vt_op(CX_OP_BITCAST_CONVERT, "b2", "u8[2,4]", 1, f), "u8[2,4]");
  CHECK_INFER(vt_op(CX_OP_BITCAST_CONVERT, "b3", "f32[2]", 1, u), "f32[2]");
  CHECK_INFER(vt_op(CX_OP_BITCAST_CONVERT, "b4", "u16[2,2]", 1, f), "u16[2,2]");
  CHECK_INFER_ERR(vt_op(CX_OP_BITCAST_CONVERT, "b5", "f32[2]", 1, v),
                  "bitcast-convert from u8[2,3] to f32 needs a last dimension of 4 (the width ratio)");
  CHECK_INFER_ERR(vt_op(CX_OP_BITCAST_CONVERT, "b6", "pred[2]", 1, f), "bitcast-convert does not support pred");
  cx_instr *r = vt_op(CX_OP_REDUCE_PRECISION, "r1", NULL, 1, f);
  r->a.exponent_bits = 5;
  r->a.mantissa_bits = 10;
  CHECK_INFER(r, "f32[2]");
  r->a.exponent_bits = 0;
  CHECK_INFER_ERR(r, "needs exponent_bits >= 1 and mantissa_bits >= 0, got exponent_bits=0 mantissa_bits=10");
  r = vt_op(CX_OP_REDUCE_PRECISION, "r2", NULL, 1, u);
  r->a.exponent_bits = 5;
  CHECK_INFER_ERR(r, "reduce-precision needs a floating-point type");
  vt_end();
}

TEST(verify_data_ops) {
  vt_begin();
  vt_comp("e");
  cx_instr *f = vt_param(0, "f", "f32[2]"), *s = vt_param(1, "s", "s32[]"), *tk = vt_param(2, "tk", "token[]");
  cx_instr *tup = vt_op(CX_OP_TUPLE, "tup", NULL, 2, f, s);
  CHECK_INFER(tup, "(f32[2], s32[])");
  CHECK_INFER(vt_op(CX_OP_TUPLE, "empty", NULL, 0), "()");
  cx_instr *g = vt_op(CX_OP_GET_TUPLE_ELEMENT, "g", NULL, 1, tup);
  g->a.index = 1;
  CHECK_INFER(g, "s32[]");
  g->a.index = 2;
  vt_at(g, 8, 2);
  CHECK_STR_EQ(vt_infer(g), "ERROR: t.hlo:8:2: error: get-tuple-element g: index 2 is out of range for a tuple of 2 "
                            "elements (f32[2], s32[])");
  cx_instr *g2 = vt_op(CX_OP_GET_TUPLE_ELEMENT, "g2", NULL, 1, f);
  CHECK_INFER_ERR(g2, "operand must be a tuple, got f32[2]");
  cx_instr *c = vt_const("c", "f32[2,2]");
  CHECK_INFER(c, "f32[2,2]");
  c->shape = vt_shape("f32[4]");
  CHECK_INFER_ERR(c, "constant c: literal has shape f32[2,2] but the declared shape is f32[4]");
  cx_instr *io = vt_op(CX_OP_IOTA, "io", "s32[4,3]", 0);
  io->a.index = 1;
  CHECK_INFER(io, "s32[4,3]");
  io->a.index = 2;
  CHECK_INFER_ERR(io, "iota_dimension=2 is out of range for s32[4,3] (expected 0..1)");
  CHECK_INFER_ERR(vt_op(CX_OP_IOTA, "io2", "s32[]", 0), "iota needs a shape of rank >= 1, got s32[]");
  CHECK_INFER(vt_op(CX_OP_AFTER_ALL, "aa", "token[]", 2, tk, tk), "token[]");
  CHECK_INFER(vt_op(CX_OP_AFTER_ALL, "aa0", "token[]", 0), "token[]");
  CHECK_INFER_ERR(vt_op(CX_OP_AFTER_ALL, "aa2", "token[]", 1, f), "operand 0 must be a token, got f32[2]");
  CHECK_INFER(vt_op(CX_OP_PARTITION_ID, "pid", NULL, 0), "u32[]");
  CHECK_INFER(vt_op(CX_OP_REPLICA_ID, "rid", NULL, 0), "u32[]");
  CHECK_INFER(vt_op(CX_OP_ADD_DEPENDENCY, "ad", NULL, 2, f, tk), "f32[2]");
  CHECK_INFER_ERR(vt_op(CX_OP_ADD_DEPENDENCY, "ad2", NULL, 2, f, s), "operand 1 must be a token, got s32[]");
  CHECK_INFER(vt_op(CX_OP_OPT_BARRIER, "ob", NULL, 1, tup), "(f32[2], s32[])");
  /* custom-call and other unmodelled ops keep their declared shape */
  CHECK_INFER(vt_op(CX_OP_CUSTOM_CALL, "cc", "(f32[7], u8[0])", 2, f, s), "(f32[7], u8[0])");
  CHECK_INFER(vt_op(CX_OP_RNG_GET_AND_UPDATE_STATE, "rgs", "u64[2]", 0), "u64[2]");
  CHECK_INFER(vt_op(CX_OP_RNG, "rng", "s32[3,3]", 2, s, s), "s32[3,3]"); /* rng_uniform */
  CHECK_INFER_ERR(vt_op(CX_OP_RNG, "rng2", "f32[3,3]", 2, s, s), "operand 0 s32[] must have the result's element type f32");
  CHECK_INFER_ERR(vt_op(CX_OP_CUSTOM_CALL, "cc2", "f32[-3]", 0), "declared shape has a negative dimension (-3)");
  cx_instr *p = vt_param(-1, "neg", "f32[]");
  CHECK_INFER_ERR(p, "parameter neg: parameter number -1 must be >= 0");
  vt_end();
}

TEST(verify_never_reads_missing_operands) {
  vt_begin();
  vt_comp("e");
  cx_instr *f = vt_param(0, "f", "f32[2]");
  cx_instr *a = vt_op(CX_OP_ADD, "a", NULL, 2, f, f);
  a->ops[1] = NULL;
  CHECK_INFER_ERR(a, "add a: operand 1 is missing");
  a->nops = 5; /* more operands claimed than exist: the count check happens before any access */
  a->ops[1] = f;
  a->ops = NULL;
  CHECK_INFER_ERR(a, "add a: operands are missing");
  cx_instr *w = vt_op(CX_OP_WHILE, "w", NULL, 1, f);
  w->ncalled = 2;
  CHECK_INFER_ERR(w, "while w: called computations are missing");
  vt_end();
}

/* Error paths that need hand-made broken IR or extreme sizes. */
TEST(verify_rare_errors) {
  vt_begin();
  cx_comp *add = vt_binary_comp("add", CX_OP_ADD, "f32");
  cx_comp *lt = vt_binary_comp("lt", CX_OP_COMPARE, "f32");
  cx_comp *ilt = vt_binary_comp("ilt", CX_OP_COMPARE, "s32");
  vt_comp("pair3"); /* (f32, f32) -> (f32, f32): a tuple of the wrong size for one input */
  cx_instr *x = vt_param(0, "x", "f32[]"), *y = vt_param(1, "y", "f32[]");
  cx_comp *pair = vt_finish(vt_op(CX_OP_TUPLE, "t", NULL, 2, x, y), 0);
  vt_comp("mixed"); /* (f32, s32, f32, s32) -> (f32, f32) */
  x = vt_param(0, "x", "f32[]");
  vt_param(1, "i", "s32[]");
  y = vt_param(2, "y", "f32[]");
  vt_param(3, "j", "s32[]");
  cx_comp *mixed = vt_finish(vt_op(CX_OP_TUPLE, "t", NULL, 2, x, y), 0);
  vt_comp("vec"); /* (f32, f32) -> f32[2] */
  x = vt_param(0, "x", "f32[]");
  y = vt_param(1, "y", "f32[]");
  cx_instr *bx = vt_op(CX_OP_BROADCAST, "b", "f32[2]", 1, x);
  cx_comp *vec = vt_finish(bx, 0);
  vt_comp("e");
  cx_instr *v = vt_param(0, "v", "f32[4]"), *z = vt_param(1, "z", "f32[]"), *k = vt_param(2, "k", "s32[4]");
  cx_instr *zi = vt_param(3, "zi", "s32[]");
  cx_instr *r = vt_op(CX_OP_REDUCE, "r", NULL, 2, v, z);
  VT_INTS(r->a.dims, 0);
  vt_called(r, 1, pair);
  CHECK_INFER_ERR(r, "reduce r: to_apply pair3 must return 1 value, returns (f32[], f32[])");
  cx_instr *r2 = vt_op(CX_OP_REDUCE, "r2", NULL, 4, v, k, z, zi);
  VT_INTS(r2->a.dims, 0);
  vt_called(r2, 1, mixed);
  CHECK_INFER_ERR(r2, "to_apply mixed: result element 1 must be s32[], got f32[]");
  cx_instr *m = vt_op(CX_OP_MAP, "m", NULL, 2, v, v);
  vt_called(m, 1, vec);
  CHECK_INFER_ERR(m, "to_apply vec must return a scalar, returns f32[2]");
  cx_instr *w = vt_param(4, "w", "s32[4,6]"), *src = vt_param(5, "src", "s32[2,2]");
  cx_instr *ss = vt_op(CX_OP_SELECT_AND_SCATTER, "ss", NULL, 3, w, src, zi);
  vt_window(ss, "size=2x3 stride=2x3");
  vt_called(ss, 2, lt, add);
  CHECK_INFER_ERR(ss, "select lt: parameter 0 must be s32[], got f32[]");
  cx_instr *wf = vt_param(6, "wf", "f32[4,6]"), *sf = vt_param(7, "sf", "f32[2,2]");
  cx_instr *ss2 = vt_op(CX_OP_SELECT_AND_SCATTER, "ss2", NULL, 3, wf, sf, zi);
  vt_window(ss2, "size=2x3 stride=2x3");
  vt_called(ss2, 2, lt, add);
  CHECK_INFER_ERR(ss2, "scatter add: parameter 0 must be s32[] (an accumulator), got f32[]");
  (void)ilt;
  /* convolution batch groups that do not divide the batch */
  cx_instr *img = vt_param(8, "img", "f32[3,5,5,2]"), *ker = vt_param(9, "ker", "f32[3,3,2,6]");
  cx_instr *cv = vt_op(CX_OP_CONVOLUTION, "cv", NULL, 2, img, ker);
  vt_labels(cv, "b01f_01io->b01f");
  vt_window(cv, "size=3x3");
  cv->a.batch_group_count = 2;
  CHECK_INFER_ERR(cv, "input batch size 3 must be divisible by batch_group_count=2");
  /* sizes at the edge of int64 */
  cx_instr *big = vt_param(10, "big", "f32[0,4611686018427387904]");
  cx_instr *cat = vt_op(CX_OP_CONCATENATE, "cat", NULL, 2, big, big);
  VT_INTS(cat->a.dims, 1);
  CHECK_INFER_ERR(cat, "concatenated dimension overflows");
  cx_instr *wide = vt_param(11, "wide", "f32[1099511627776,0]");
  cx_instr *pd = vt_op(CX_OP_PAD, "pd", NULL, 2, wide, z);
  VT_INTS(pd->a.pad_lo, 0, 1073741824);
  VT_INTS(pd->a.pad_hi, 0, 0);
  CHECK_INFER_ERR(pd, "result shape f32[1099511627776,1073741824] has too many elements (at most 2^62)");
  cx_instr *r16 = vt_param(12, "r16", "f32[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,2]");
  CHECK_INFER_ERR(vt_op(CX_OP_BITCAST_CONVERT, "bc", "u8[1]", 1, r16),
                  "bitcast-convert from f32[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,2] to u8 would need rank 17 (at most 16)");
  cx_instr *cmp = vt_op(CX_OP_COMPARE, "cmp", NULL, 2, v, v);
  cmp->a.cmp_type = (cx_cmp_type)7;
  CHECK_INFER_ERR(cmp, "invalid comparison type 7");
  /* an operand whose shape claims rank 17 */
  cx_instr *bad = vt_param(13, "bad", "f32[]");
  bad->shape.rank = 17;
  CHECK_INFER_ERR(vt_op(CX_OP_NEGATE, "n", "f32[]", 1, bad), "negate n: operand 0 (bad) has an invalid shape");
  cx_instr *d = vt_param(14, "d", "f32[]");
  d->shape.rank = 17;
  CHECK_INFER_ERR(d, "parameter d: declared shape has rank 17 (at most 16 is supported)");
  vt_end();
}

TEST(verify_broken_links) {
  /* the ROOT belongs to another computation */
  vt_begin();
  vt_comp("other");
  cx_instr *q = vt_param(0, "q", "f32[]");
  vt_finish(q, 0);
  vt_comp("e");
  vt_param(0, "p", "f32[]");
  vt_finish(q, 1);
  CHECK_STR_CONTAINS(vt_verify(), "computation e: ROOT is not an instruction of this computation");
  vt_end();

  /* m->entry points at a computation not marked ENTRY */
  vt_begin();
  vt_comp("a");
  cx_comp *a = vt_finish(vt_param(0, "p", "f32[]"), 0);
  vt_comp("e");
  vt_finish(vt_param(0, "p", "f32[]"), 1);
  vt_m->entry = a;
  CHECK_STR_CONTAINS(vt_verify(), "module m: the ENTRY computation is not e, the one marked ENTRY");
  vt_end();

  /* the same computation listed twice */
  vt_begin();
  vt_comp("a");
  a = vt_finish(vt_param(0, "p", "f32[]"), 0);
  vt_comp("e");
  vt_finish(vt_param(0, "p", "f32[]"), 1);
  cx_module_add_comp(vt_m, a);
  CHECK_STR_CONTAINS(vt_verify(), "computation a: appears twice in the module");
  CHECK(a->aux == NULL); /* the verifier's scratch pointers are gone again */
  vt_end();

  /* a computation of another module */
  vt_begin();
  cx_module *keep = vt_m;
  vt_begin();
  vt_comp("foreign");
  cx_comp *f = vt_finish(vt_param(0, "p", "f32[]"), 0);
  cx_module *foreign = vt_m;
  vt_m = keep;
  vt_comp("e");
  vt_finish(vt_param(0, "p", "f32[]"), 1);
  cx_module_add_comp(vt_m, f);
  CHECK_STR_CONTAINS(vt_verify(), "module m: computation 1 does not belong to it");
  vt_end();
  cx_module_free(foreign);

  /* an unknown opcode */
  vt_begin();
  vt_comp("e");
  cx_instr *p = vt_param(0, "p", "f32[]");
  cx_instr *n = vt_op(CX_OP_NEGATE, "n", "f32[]", 1, p);
  n->op = (cx_op)CX_OP_COUNT;
  vt_at(n, 2, 2);
  vt_finish(n, 1);
  char want[128];
  snprintf(want, sizeof want, "t.hlo:2:2: error: instruction n has an unknown opcode %d", (int)CX_OP_COUNT);
  CHECK_STR_EQ(vt_verify(), want);
  vt_end();
}
