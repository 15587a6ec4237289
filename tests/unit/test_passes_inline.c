/* test_passes_inline.c — call inlining: callee copies replace calls (nested too), parameters
 * map to the call's operands, unused callees disappear, and results stay the same. */
#include "passes_helpers.h"

#define INLINE(text, expect) TP_PASS((text), cx_pass_inline_calls, (expect))

TEST(passes_inline_simple_and_nested) {
  cx_module *m = INLINE(
      "HloModule m\n"
      "inner {\n  a = f32[3] parameter(0)\n  b = f32[3] parameter(1)\n  ROOT d = f32[3] subtract(a, b)\n}\n"
      "outer {\n  x = f32[3] parameter(0)\n  y = f32[3] parameter(1)\n  c = f32[3] call(y, x), to_apply=inner\n"
      "  ROOT m = f32[3] multiply(c, x)\n}\n"
      "ENTRY e {\n  p = f32[3] parameter(0)\n  q = f32[3] parameter(1)\n  r = f32[3] call(p, q), to_apply=outer\n"
      "  s = f32[3] call(q, p), to_apply=outer\n  ROOT t = f32[3] add(r, s)\n}\n", 1);
  if (!m) return;
  CHECK_EQ_INT(tp_count_all(m, CX_OP_CALL), 0);
  CHECK_EQ_INT(m->ncomps, 1); /* both callees became unused */
  CHECK_EQ_INT(tp_count(m, CX_OP_SUBTRACT), 2);
  CHECK_EQ_INT(tp_count(m, CX_OP_MULTIPLY), 2);
  /* names stay unique: the text parses back */
  char *t = tp_print(m);
  cx_module *again = t ? TP_PARSE(t) : NULL;
  CHECK(again != NULL);
  cx_module_free(again);
  cx_free(t);
  cx_module_free(m);
}

TEST(passes_inline_callee_returning_a_parameter_and_tuples) {
  cx_module *m = INLINE(
      "HloModule m\nsecond {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT r = s32[] parameter(2)\n}\n"
      "pair {\n  a = s32[] parameter(0)\n  n = s32[] negate(a)\n  ROOT t = (s32[], s32[]) tuple(a, n)\n}\n"
      "ENTRY e {\n  p = s32[] parameter(0)\n  q = s32[] parameter(1)\n  c = s32[] call(p, p, q), to_apply=second\n"
      "  t = (s32[], s32[]) call(c), to_apply=pair\n  ROOT g = s32[] get-tuple-element(t), index=1\n}\n", 1);
  CHECK(m && tp_count_all(m, CX_OP_CALL) == 0 && m->ncomps == 1);
  cx_module_free(m);
}

TEST(passes_inline_inside_loops_keeps_loop_bodies) {
  cx_module *m = INLINE(
      "HloModule m\ninc {\n  a = s32[] parameter(0)\n  one = s32[] constant(1)\n  ROOT r = s32[] add(a, one)\n}\n"
      "cond {\n  c = s32[] parameter(0)\n  k = s32[] constant(5)\n  ROOT lt = pred[] compare(c, k), direction=LT\n}\n"
      "body {\n  b = s32[] parameter(0)\n  ROOT n = s32[] call(b), to_apply=inc\n}\n"
      "ENTRY e {\n  p = s32[] parameter(0)\n  z = s32[] constant(0)\n  ROOT w = s32[] while(z), condition=cond, body=body\n}\n", 1);
  CHECK(m && tp_count_all(m, CX_OP_CALL) == 0 && m->ncomps == 3 && cx_module_find_comp(m, "inc") == NULL);
  cx_module_free(m);
}

TEST(passes_inline_nothing_to_do) {
  cx_module *m = INLINE("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n}\n", 0);
  cx_module_free(m);
}
