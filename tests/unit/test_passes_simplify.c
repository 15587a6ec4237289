/* test_passes_simplify.c — the algebraic simplifier: each rule fires where it is exact and
 * stays away where it is not (floats with -0 and NaN, integer wrap-around), and every
 * rewritten module computes bit for bit what the original did (tp_pass_equiv runs both on the
 * interpreter with NaN, -0, infinities and integer extremes among the inputs). */
#include "passes/simplify.h"
#include "passes_helpers.h"

/* What the ENTRY root became, as "shape op(operands), attrs" without the name. */
#define CHECK_ROOT(m, want)                                   \
  do {                                                        \
    char *r_ = (m) ? tp_instr((m)->entry->root) : NULL;        \
    CHECK_MSG(r_ && !strcmp(r_, (want)), "root is '%s', expected '%s'", r_ ? r_ : "(null)", (want)); \
    cx_free(r_);                                              \
  } while (0)

#define SIMPLIFY(text, expect) TP_PASS((text), cx_pass_simplify, (expect))

TEST(passes_simplify_int_add_sub_mul_identities) {
  cx_module *m = SIMPLIFY("HloModule m\nENTRY e {\n  p = s32[4] parameter(0)\n  z = s32[] constant(0)\n"
                          "  zb = s32[4] broadcast(z), dimensions={}\n  a = s32[4] add(zb, p)\n"
                          "  o = s32[4] constant({1, 1, 1, 1})\n  b = s32[4] multiply(a, o)\n"
                          "  ROOT c = s32[4] subtract(b, zb)\n}\n", 1);
  CHECK_ROOT(m, "s32[4] parameter(0)");
  cx_module_free(m);
  /* x * 0 is 0 for integers (wrap-around cannot make it anything else) */
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = s32[4] parameter(0)\n  z = s32[4] constant({0, 0, 0, 0})\n"
               "  ROOT c = s32[4] multiply(p, z)\n}\n", 1);
  CHECK(m && m->entry->root->op == CX_OP_BROADCAST && m->entry->root->ops[0]->op == CX_OP_CONSTANT);
  cx_module_free(m);
}

TEST(passes_simplify_float_zero_is_signed) {
  /* x + (+0) is not x: -0 + +0 == +0. Must stay. */
  cx_module *m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
                          "  zb = f32[4] broadcast(z), dimensions={}\n  ROOT a = f32[4] add(p, zb)\n}\n", 0);
  CHECK_ROOT(m, "f32[4] add(p, zb)");
  cx_module_free(m);
  /* x + (-0) is x for every x, -0 and NaN included */
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  z = f32[] constant(-0)\n"
               "  zb = f32[4] broadcast(z), dimensions={}\n  ROOT a = f32[4] add(zb, p)\n}\n", 1);
  CHECK_ROOT(m, "f32[4] parameter(0)");
  cx_module_free(m);
  /* x - (+0) is x; x - (-0) is x + 0, which is not */
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
               "  zb = f32[4] broadcast(z), dimensions={}\n  ROOT a = f32[4] subtract(p, zb)\n}\n", 1);
  CHECK_ROOT(m, "f32[4] parameter(0)");
  cx_module_free(m);
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  z = f32[] constant(-0)\n"
               "  zb = f32[4] broadcast(z), dimensions={}\n  ROOT a = f32[4] subtract(p, zb)\n}\n", 0);
  cx_module_free(m);
  /* x * 0 for floats: NaN * 0 is NaN and -1 * 0 is -0, so it stays */
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
               "  zb = f32[4] broadcast(z), dimensions={}\n  ROOT a = f32[4] multiply(p, zb)\n}\n", 0);
  cx_module_free(m);
  /* x * 1 and x / 1 are exact for floats */
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f64[4] parameter(0)\n  o = f64[] constant(1)\n"
               "  ob = f64[4] broadcast(o), dimensions={}\n  a = f64[4] multiply(ob, p)\n"
               "  ROOT d = f64[4] divide(a, ob)\n}\n", 1);
  CHECK_ROOT(m, "f64[4] parameter(0)");
  cx_module_free(m);
}

TEST(passes_simplify_negate_not_abs) {
  cx_module *m = SIMPLIFY("HloModule m\nENTRY e {\n  p = s8[5] parameter(0)\n  a = s8[5] negate(p)\n"
                          "  ROOT b = s8[5] negate(a)\n}\n", 1);
  CHECK_ROOT(m, "s8[5] parameter(0)");
  cx_module_free(m);
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = pred[3] parameter(0)\n  a = pred[3] not(p)\n"
               "  ROOT b = pred[3] not(a)\n}\n", 1);
  CHECK_ROOT(m, "pred[3] parameter(0)");
  cx_module_free(m);
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = s32[5] parameter(0)\n  a = s32[5] negate(p)\n"
               "  ROOT b = s32[5] abs(a)\n}\n", 1);
  CHECK(m && m->entry->root->op == CX_OP_ABS && m->entry->root->ops[0]->op == CX_OP_PARAMETER);
  cx_module_free(m);
}

TEST(passes_simplify_convert_chains) {
  /* f32 -> f64 -> f32 is exact: gone */
  cx_module *m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[6] parameter(0)\n  a = f64[6] convert(p)\n"
                          "  ROOT b = f32[6] convert(a)\n}\n", 1);
  CHECK_ROOT(m, "f32[6] parameter(0)");
  cx_module_free(m);
  /* f32 -> f16 -> f32 rounds: stays */
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[6] parameter(0)\n  a = f16[6] convert(p)\n"
               "  ROOT b = f32[6] convert(a)\n}\n", 0);
  cx_module_free(m);
  /* s32 -> f32 -> s32 loses bits above 2^24: stays */
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = s32[6] parameter(0)\n  a = f32[6] convert(p)\n"
               "  ROOT b = s32[6] convert(a)\n}\n", 0);
  cx_module_free(m);
  /* s8 -> s32 exact, then to f16: one convert s8 -> f16 */
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = s8[6] parameter(0)\n  a = s32[6] convert(p)\n"
               "  ROOT b = f16[6] convert(a)\n}\n", 1);
  CHECK_ROOT(m, "f16[6] convert(p)");
  cx_module_free(m);
  /* s16 -> f32 is exact, but f32 -> s8 saturates where s16 -> s8 wraps: stays */
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = s16[6] parameter(0)\n  a = f32[6] convert(p)\n"
               "  ROOT b = s8[6] convert(a)\n}\n", 0);
  cx_module_free(m);
  /* f16 -> f64 exact, then f64 -> s32 truncates and saturates like f16 -> s32 */
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f16[6] parameter(0)\n  a = f64[6] convert(p)\n"
               "  ROOT b = s32[6] convert(a)\n}\n", 1);
  CHECK_ROOT(m, "s32[6] convert(p)");
  cx_module_free(m);
  /* u8 -> s8 wraps: stays; convert to the same type and copy go */
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = u8[6] parameter(0)\n  a = s8[6] convert(p)\n"
               "  ROOT b = u8[6] convert(a)\n}\n", 0);
  cx_module_free(m);
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = bf16[6] parameter(0)\n  a = bf16[6] convert(p)\n"
               "  ROOT b = bf16[6] copy(a)\n}\n", 1);
  CHECK_ROOT(m, "bf16[6] parameter(0)");
  cx_module_free(m);
}

TEST(passes_simplify_reshape_transpose_broadcast) {
  cx_module *m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[2,3,4] parameter(0)\n"
                          "  a = f32[6,4] reshape(p)\n  b = f32[24] reshape(a)\n  ROOT c = f32[4,6] reshape(b)\n}\n", 1);
  CHECK_ROOT(m, "f32[4,6] reshape(p)");
  cx_module_free(m);
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[2,3,4] parameter(0)\n"
               "  a = f32[3,4,2] transpose(p), dimensions={1,2,0}\n"
               "  ROOT b = f32[4,2,3] transpose(a), dimensions={1,2,0}\n}\n", 1);
  CHECK_ROOT(m, "f32[4,2,3] transpose(p), dimensions={2,0,1}");
  cx_module_free(m);
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[2,3] parameter(0)\n"
               "  a = f32[3,2] transpose(p), dimensions={1,0}\n  b = f32[2,3] transpose(a), dimensions={1,0}\n"
               "  ROOT c = f32[2,3] transpose(b), dimensions={0,1}\n}\n", 1);
  CHECK_ROOT(m, "f32[2,3] parameter(0)");
  cx_module_free(m);
  /* broadcast(broadcast(x)) composes; adding only size-1 dims is a reshape */
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[3] parameter(0)\n"
               "  a = f32[2,3] broadcast(p), dimensions={1}\n  ROOT b = f32[2,5,3] broadcast(a), dimensions={0,2}\n}\n", 1);
  CHECK_ROOT(m, "f32[2,5,3] broadcast(p), dimensions={2}");
  cx_module_free(m);
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[3] parameter(0)\n"
               "  ROOT a = f32[1,3,1] broadcast(p), dimensions={1}\n}\n", 1);
  CHECK(m && m->entry->root->op == CX_OP_RESHAPE);
  cx_module_free(m);
  /* expanding a size-1 dimension is a real broadcast; a scalar constant's broadcast stays */
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[1,3] parameter(0)\n"
               "  ROOT a = f32[4,3] broadcast(p), dimensions={0,1}\n}\n", 0);
  cx_module_free(m);
  m = SIMPLIFY("HloModule m\nENTRY e {\n  c = f32[] constant(2)\n  ROOT a = f32[1,1] broadcast(c), dimensions={}\n}\n", 0);
  cx_module_free(m);
  /* reshape / transpose / slice of a scalar broadcast stay scalar broadcasts */
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  a = f32[2,6] broadcast(p), dimensions={}\n"
               "  b = f32[6,2] transpose(a), dimensions={1,0}\n  c = f32[3,4] reshape(b)\n"
               "  ROOT d = f32[2,2] slice(c), slice={[1:3], [0:4:2]}\n}\n", 1);
  CHECK_ROOT(m, "f32[2,2] broadcast(p), dimensions={}");
  cx_module_free(m);
}

TEST(passes_simplify_slices) {
  cx_module *m = SIMPLIFY("HloModule m\nENTRY e {\n  p = s32[10,7] parameter(0)\n"
                          "  ROOT a = s32[10,7] slice(p), slice={[0:10], [0:7]}\n}\n", 1);
  CHECK_ROOT(m, "s32[10,7] parameter(0)");
  cx_module_free(m);
  /* composed with strides: x[1:10:3] = {1,4,7}, then [1:3:1] = {4,7} = x[4:8:3] */
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = s32[10,7] parameter(0)\n"
               "  a = s32[3,3] slice(p), slice={[1:10:3], [2:7:2]}\n"
               "  ROOT b = s32[2,2] slice(a), slice={[1:3], [0:3:2]}\n}\n", 1);
  CHECK_ROOT(m, "s32[2,2] slice(p), slice={[4:8:3], [2:7:4]}");
  cx_module_free(m);
  /* an empty slice of a strided slice stays valid */
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = s32[10] parameter(0)\n"
               "  a = s32[4] slice(p), slice={[0:10:3]}\n  ROOT b = s32[0] slice(a), slice={[4:4]}\n}\n", 1);
  cx_module_free(m);
}

TEST(passes_simplify_pad_concat_reverse) {
  cx_module *m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[3,2] parameter(0)\n  z = f32[] constant(0)\n"
                          "  ROOT a = f32[3,2] pad(p, z), padding=0_0x0_0\n}\n", 1);
  CHECK_ROOT(m, "f32[3,2] parameter(0)");
  cx_module_free(m);
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[3,2] parameter(0)\n"
               "  ROOT a = f32[3,2] concatenate(p), dimensions={0}\n}\n", 1);
  CHECK_ROOT(m, "f32[3,2] parameter(0)");
  cx_module_free(m);
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[3,2] parameter(0)\n  q = f32[0,2] parameter(1)\n"
               "  r = f32[2,2] parameter(2)\n  ROOT a = f32[5,2] concatenate(p, q, r), dimensions={0}\n}\n", 1);
  CHECK_ROOT(m, "f32[5,2] concatenate(p, r), dimensions={0}");
  cx_module_free(m);
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[3,1,2] parameter(0)\n"
               "  ROOT a = f32[3,1,2] reverse(p), dimensions={0,1}\n}\n", 1);
  CHECK_ROOT(m, "f32[3,1,2] reverse(p), dimensions={0}");
  cx_module_free(m);
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[1,1,2] parameter(0)\n"
               "  ROOT a = f32[1,1,2] reverse(p), dimensions={0,1}\n}\n", 1);
  CHECK_ROOT(m, "f32[1,1,2] parameter(0)");
  cx_module_free(m);
}

TEST(passes_simplify_select_and_tuples) {
  cx_module *m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  q = f32[4] parameter(1)\n"
                          "  t = pred[] constant(true)\n  tb = pred[4] broadcast(t), dimensions={}\n"
                          "  ROOT s = f32[4] select(tb, p, q)\n}\n", 1);
  CHECK_ROOT(m, "f32[4] parameter(0)");
  cx_module_free(m);
  m = SIMPLIFY("HloModule m\nENTRY e {\n  c = pred[4] parameter(0)\n  p = f32[4] parameter(1)\n"
               "  ROOT s = f32[4] select(c, p, p)\n}\n", 1);
  CHECK_ROOT(m, "f32[4] parameter(1)");
  cx_module_free(m);
  /* a mixed constant predicate stays */
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  q = f32[2] parameter(1)\n"
               "  t = pred[2] constant({true, false})\n  ROOT s = f32[2] select(t, p, q)\n}\n", 0);
  cx_module_free(m);
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  q = s32[] parameter(1)\n"
               "  t = (f32[4], s32[]) tuple(p, q)\n  ROOT g = s32[] get-tuple-element(t), index=1\n}\n", 1);
  CHECK_ROOT(m, "s32[] parameter(1)");
  cx_module_free(m);
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = (f32[4], s32[]) parameter(0)\n"
               "  a = f32[4] get-tuple-element(p), index=0\n  b = s32[] get-tuple-element(p), index=1\n"
               "  ROOT t = (f32[4], s32[]) tuple(a, b)\n}\n", 1);
  CHECK(m && m->entry->root->op == CX_OP_PARAMETER);
  cx_module_free(m);
}

TEST(passes_simplify_compare_min_max_bitwise) {
  cx_module *m = SIMPLIFY("HloModule m\nENTRY e {\n  p = s32[4] parameter(0)\n"
                          "  ROOT c = pred[4] compare(p, p), direction=GE\n}\n", 1);
  CHECK(m && m->entry->root->op == CX_OP_BROADCAST);
  cx_module_free(m);
  /* NaN != NaN: a float self-compare stays (unless TOTALORDER) */
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
               "  ROOT c = pred[4] compare(p, p), direction=EQ\n}\n", 0);
  cx_module_free(m);
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
               "  ROOT c = pred[4] compare(p, p), direction=NE, type=TOTALORDER\n}\n", 1);
  cx_module_free(m);
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  i = f32[] constant(-inf)\n"
               "  ib = f32[4] broadcast(i), dimensions={}\n  ROOT c = f32[4] maximum(ib, p)\n}\n", 1);
  CHECK_ROOT(m, "f32[4] parameter(0)");
  cx_module_free(m);
  /* max(x, 0) is a real ReLU */
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  i = f32[] constant(0)\n"
               "  ib = f32[4] broadcast(i), dimensions={}\n  ROOT c = f32[4] maximum(ib, p)\n}\n", 0);
  cx_module_free(m);
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = s16[4] parameter(0)\n  i = s16[] constant(32767)\n"
               "  ib = s16[4] broadcast(i), dimensions={}\n  a = s16[4] minimum(p, ib)\n"
               "  n = s16[] constant(-1)\n  nb = s16[4] broadcast(n), dimensions={}\n  b = s16[4] and(a, nb)\n"
               "  z = s16[] constant(0)\n  zb = s16[4] broadcast(z), dimensions={}\n  c = s16[4] or(b, zb)\n"
               "  d = s16[4] xor(c, zb)\n  ROOT e = s16[4] shift-left(d, zb)\n}\n", 1);
  CHECK_ROOT(m, "s16[4] parameter(0)");
  cx_module_free(m);
  /* x - x and x xor x are 0 for integers */
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = u32[4] parameter(0)\n  a = u32[4] subtract(p, p)\n"
               "  b = u32[4] xor(p, p)\n  ROOT c = (u32[4], u32[4]) tuple(a, b)\n}\n", 1);
  cx_module_free(m);
}

TEST(passes_simplify_dynamic_slices) {
  /* constant starts become a slice, clamped like dynamic-slice clamps: 5 -> 2 and -3 -> 0 */
  cx_module *m = SIMPLIFY("HloModule m\nENTRY e {\n  p = s32[4,6] parameter(0)\n  i = s32[] constant(5)\n"
                          "  j = s32[] constant(-3)\n  ROOT d = s32[2,3] dynamic-slice(p, i, j), dynamic_slice_sizes={2,3}\n}\n", 1);
  CHECK_ROOT(m, "s32[2,3] slice(p), slice={[2:4], [0:3]}");
  cx_module_free(m);
  /* u64 starts above 2^63 clamp high */
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = s32[4] parameter(0)\n  i = u64[] constant(18446744073709551615)\n"
               "  ROOT d = s32[3] dynamic-slice(p, i), dynamic_slice_sizes={3}\n}\n", 1);
  CHECK_ROOT(m, "s32[3] slice(p), slice={[1:4]}");
  cx_module_free(m);
  /* a full-size window starts at 0 whatever the index */
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = s32[4] parameter(0)\n  i = s32[] parameter(1)\n"
               "  ROOT d = s32[4] dynamic-slice(p, i), dynamic_slice_sizes={4}\n}\n", 1);
  CHECK_ROOT(m, "s32[4] parameter(0)");
  cx_module_free(m);
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = s32[4] parameter(0)\n  u = s32[4] parameter(1)\n  i = s32[] parameter(2)\n"
               "  ROOT d = s32[4] dynamic-update-slice(p, u, i)\n}\n", 1);
  CHECK_ROOT(m, "s32[4] parameter(1)");
  cx_module_free(m);
  /* a variable start into a bigger operand stays */
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = s32[4] parameter(0)\n  u = s32[2] parameter(1)\n  i = s32[] parameter(2)\n"
               "  ROOT d = s32[4] dynamic-update-slice(p, u, i)\n}\n", 0);
  cx_module_free(m);
}

static const char *add_f32 = "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n";

TEST(passes_simplify_reduce_of_degenerate_dims_keeps_init) {
  /* reduce over a size-1 dimension is add(init, x), not x: with init 0 and x = -0 the result
   * is +0. The equivalence check feeds -0. */
  char text[1024];
  snprintf(text, sizeof text,
           "HloModule m\n%sENTRY e {\n  p = f32[3,1] parameter(0)\n  z = f32[] constant(0)\n"
           "  ROOT r = f32[3] reduce(p, z), dimensions={1}, to_apply=add\n}\n", add_f32);
  cx_module *m = SIMPLIFY(text, 1);
  CHECK(m && m->entry->root->op == CX_OP_ADD);
  cx_module_free(m);
  /* a non-commutative reducer keeps the operand order (acc first): subtract(init, x) */
  m = SIMPLIFY("HloModule m\nsub {\n  x = s32[] parameter(0)\n  y = s32[] parameter(1)\n  ROOT s = s32[] subtract(y, x)\n}\n"
               "ENTRY e {\n  p = s32[1,4] parameter(0)\n  z = s32[] constant(7)\n"
               "  ROOT r = s32[4] reduce(p, z), dimensions={0}, to_apply=sub\n}\n", 1);
  CHECK(m && m->entry->root->op == CX_OP_SUBTRACT && m->entry->root->ops[0]->op == CX_OP_RESHAPE);
  cx_module_free(m);
  /* any other reducer becomes a map of it */
  m = SIMPLIFY("HloModule m\nf {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  a = f32[] multiply(x, y)\n"
               "  ROOT s = f32[] add(a, y)\n}\nENTRY e {\n  p = f32[2,1] parameter(0)\n  z = f32[] constant(3)\n"
               "  ROOT r = f32[2] reduce(p, z), dimensions={1}, to_apply=f\n}\n", 1);
  CHECK(m && m->entry->root->op == CX_OP_MAP);
  cx_module_free(m);
  /* an empty operand: every result element is init */
  snprintf(text, sizeof text,
           "HloModule m\n%sENTRY e {\n  p = f32[0,3] parameter(0)\n  z = f32[] constant(-0)\n"
           "  ROOT r = f32[3] reduce(p, z), dimensions={0}, to_apply=add\n}\n", add_f32);
  m = SIMPLIFY(text, 1);
  CHECK_ROOT(m, "f32[3] broadcast(z), dimensions={}");
  cx_module_free(m);
  /* a real reduction stays */
  snprintf(text, sizeof text,
           "HloModule m\n%sENTRY e {\n  p = f32[3,2] parameter(0)\n  z = f32[] constant(0)\n"
           "  ROOT r = f32[3] reduce(p, z), dimensions={1}, to_apply=add\n}\n", add_f32);
  m = SIMPLIFY(text, 0);
  cx_module_free(m);
}

TEST(passes_simplify_map_of_one_op) {
  char text[1024];
  snprintf(text, sizeof text,
           "HloModule m\n%sENTRY e {\n  p = f32[5] parameter(0)\n  q = f32[5] parameter(1)\n"
           "  ROOT r = f32[5] map(p, q), dimensions={0}, to_apply=add\n}\n", add_f32);
  cx_module *m = SIMPLIFY(text, 1);
  CHECK_ROOT(m, "f32[5] add(p, q)");
  cx_module_free(m);
  /* parameters swapped: not the op in order, left alone */
  m = SIMPLIFY("HloModule m\nsub {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] subtract(y, x)\n}\n"
               "ENTRY e {\n  p = f32[5] parameter(0)\n  q = f32[5] parameter(1)\n"
               "  ROOT r = f32[5] map(p, q), dimensions={0}, to_apply=sub\n}\n", 0);
  cx_module_free(m);
}

TEST(passes_simplify_reduce_precision_and_bitcast) {
  cx_module *m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
                          "  ROOT r = f32[4] reduce-precision(p), exponent_bits=8, mantissa_bits=23\n}\n", 1);
  CHECK_ROOT(m, "f32[4] parameter(0)");
  cx_module_free(m);
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
               "  ROOT r = f32[4] reduce-precision(p), exponent_bits=8, mantissa_bits=7\n}\n", 0);
  cx_module_free(m);
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
               "  ROOT r = f32[4] bitcast-convert(p)\n}\n", 1);
  CHECK_ROOT(m, "f32[4] parameter(0)");
  cx_module_free(m);
}

TEST(passes_simplify_leaves_side_effects_and_keeps_names_unique) {
  /* chains collapse in one sweep; new instructions get fresh names that re-parse */
  cx_module *m = SIMPLIFY("HloModule m\nENTRY e {\n  p = s32[2,3] parameter(0)\n"
                          "  a = s32[3,2] transpose(p), dimensions={1,0}\n  b = s32[2,3] transpose(a), dimensions={1,0}\n"
                          "  c = s32[6] reshape(b)\n  d = s32[6] negate(c)\n  e = s32[6] negate(d)\n"
                          "  ROOT f = s32[2,3] reshape(e)\n}\n", 1);
  CHECK_ROOT(m, "s32[2,3] parameter(0)");
  char *t = m ? tp_print(m) : NULL;
  cx_module *again = t ? TP_PARSE(t) : NULL;
  CHECK(again != NULL);
  cx_module_free(again);
  cx_free(t);
  cx_module_free(m);
}

TEST(passes_simplify_divide_by_power_of_two) {
  cx_module *m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[6] parameter(0)\n  c = f32[] constant(4)\n"
                          "  cb = f32[6] broadcast(c), dimensions={}\n  ROOT d = f32[6] divide(p, cb)\n}\n", 1);
  cx_instr *r = m ? m->entry->root : NULL;
  CHECK(r && r->op == CX_OP_MULTIPLY);
  cx_scalar v;
  CHECK(r && r->op == CX_OP_MULTIPLY && cx_simp_uniform(r->ops[1], &v) && v.f == 0.25);
  cx_module_free(m);
  /* f16: 1/2^15 is subnormal but exact */
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f16[6] parameter(0)\n  c = f16[] constant(-32768)\n"
               "  cb = f16[6] broadcast(c), dimensions={}\n  ROOT d = f16[6] divide(p, cb)\n}\n", 1);
  cx_module_free(m);
  /* not a power of two, or a reciprocal the type cannot hold (1/2^-24 = 2^24 overflows f16) */
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[6] parameter(0)\n  c = f32[] constant(3)\n"
               "  cb = f32[6] broadcast(c), dimensions={}\n  ROOT d = f32[6] divide(p, cb)\n}\n", 0);
  cx_module_free(m);
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f16[6] parameter(0)\n  c = f16[] constant(5.96046448e-08)\n"
               "  cb = f16[6] broadcast(c), dimensions={}\n  ROOT d = f16[6] divide(p, cb)\n}\n", 0);
  cx_module_free(m);
  /* integer division by a power of two truncates toward zero: not a shift, left alone */
  m = SIMPLIFY("HloModule m\nENTRY e {\n  p = s32[6] parameter(0)\n  c = s32[] constant(4)\n"
               "  cb = s32[6] broadcast(c), dimensions={}\n  ROOT d = s32[6] divide(p, cb)\n}\n", 0);
  cx_module_free(m);
}

TEST(passes_simplify_slice_of_concatenate) {
  cx_module *m = SIMPLIFY("HloModule m\nENTRY e {\n  p = f32[2,3] parameter(0)\n  q = f32[4,3] parameter(1)\n"
                          "  c = f32[6,3] concatenate(p, q), dimensions={0}\n  a = f32[2,3] slice(c), slice={[0:2], [0:3]}\n"
                          "  b = f32[2,2] slice(c), slice={[3:6:2], [1:3]}\n  x = f32[2,3] slice(c), slice={[1:3], [0:3]}\n"
                          "  ROOT t = (f32[2,3], f32[2,2], f32[2,3]) tuple(a, b, x)\n}\n", 1);
  cx_instr *t = m ? m->entry->root : NULL;
  if (t) {
    CHECK(t->ops[0]->op == CX_OP_PARAMETER);
    char *b = tp_instr(t->ops[1]);
    CHECK_MSG(b && !strcmp(b, "f32[2,2] slice(q), slice={[1:4:2], [1:3:1]}"), "got %s", b ? b : "");
    cx_free(b);
    CHECK(t->ops[2]->op == CX_OP_SLICE && t->ops[2]->ops[0]->op == CX_OP_CONCATENATE); /* straddles both */
  }
  cx_module_free(m);
}

/* A scatter-add of one value a row into a uniform array (the gradient of JAX's take_along_axis,
 * so of every integer-label cross-entropy) becomes select(iota == index, c + update, c); the
 * interpreter's runs agree on every index, out of range ones included (skipped by scatter,
 * matched by no coordinate). A scatter with several updates a position, another combiner or a
 * non-uniform operand stays. */
/* take_along_axis's gradient (batch dims 0, 1; the index vector last), a column form (the
 * scattered dim first, an implicit index vector) and a plain one (no batching) */
#define TAKE_DIMS                                                                                              \
  "update_window_dims={}, inserted_window_dims={2}, scatter_dims_to_operand_dims={2}, input_batching_dims={0,1}, " \
  "scatter_indices_batching_dims={0,1}, index_vector_dim=3"
#define COL_DIMS                                                                                               \
  "update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, input_batching_dims={1}, " \
  "scatter_indices_batching_dims={0}, index_vector_dim=1"
#define ONE_DIMS "update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1"

TEST(passes_simplify_one_hot_scatter) {
  static const char *const fmt =
      "HloModule m\n%s"
      "ENTRY e {\n  c = f32[] constant(%s)\n  z = f32[%s] broadcast(c), dimensions={}\n"
      "  i = %s parameter(0)\n  u = %s parameter(1)\n"
      "  ROOT s = f32[%s] scatter(z, i, u), %s, to_apply=%s\n}\n";
  static const char *const mul_f32 = "mul {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] multiply(x, y)\n}\n";
  static const char *const add_rev = "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(y, x)\n}\n";
  static const struct {
    const char *comb, *c, *shape, *idx, *upd, *dims;
    int rewritten;
  } cases[] = {
      /* jax's take_along_axis gradient: batch dims 0, 1, the index vector last */
      {"add", "0", "2,3,5", "s32[2,3,1,1]", "f32[2,3,1]", TAKE_DIMS, 1},
      /* any uniform value (c + update there, c elsewhere), the combiner's arguments either way */
      {"add_rev", "1.5", "2,3,5", "s32[2,3,1,1]", "f32[2,3,1]", TAKE_DIMS, 1},
      /* an implicit index vector, the scattered dim first, u32 and s64 indices */
      {"add", "-0", "5,4", "u32[4]", "f32[4]", COL_DIMS, 1},
      {"add", "0", "5,4", "s64[4,1]", "f32[4]", COL_DIMS, 1},
      /* no batching: one update in all */
      {"add", "0", "7", "s32[1,1]", "f32[1]", ONE_DIMS, 1},
      /* several updates may meet at one position: a real scatter */
      {"add", "0", "7", "s32[4,1]", "f32[4]", ONE_DIMS, 0},
      /* another combiner */
      {"mul", "1", "2,3,5", "s32[2,3,1,1]", "f32[2,3,1]", TAKE_DIMS, 0},
  };
  for (int k = 0; k < (int)(sizeof cases / sizeof cases[0]); k++) {
    char text[2048];
    const char *comp = !strcmp(cases[k].comb, "mul") ? mul_f32 : !strcmp(cases[k].comb, "add_rev") ? add_rev : add_f32;
    const char *name = !strcmp(cases[k].comb, "mul") ? "mul" : "add";
    snprintf(text, sizeof text, fmt, comp, cases[k].c, cases[k].shape, cases[k].idx, cases[k].upd, cases[k].shape,
             cases[k].dims, name);
    cx_module *m = SIMPLIFY(text, cases[k].rewritten);
    if (m) CHECK_MSG((m->entry->root->op == CX_OP_SELECT) == cases[k].rewritten, "case %d: root %s", k,
                     cx_op_name(m->entry->root->op));
    cx_module_free(m);
  }
  /* an operand that is not uniform stays a scatter */
  cx_module *m = SIMPLIFY("HloModule m\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"
                          "ENTRY e {\n  z = f32[2,5] parameter(2)\n  i = s32[2,1] parameter(0)\n  u = f32[2] parameter(1)\n"
                          "  ROOT s = f32[2,5] scatter(z, i, u), update_window_dims={}, inserted_window_dims={1}, "
                          "scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, "
                          "index_vector_dim=1, to_apply=add\n}\n", 0);
  cx_module_free(m);
}
