/* test_passes_cse_dce.c — common subexpression elimination (what merges, what must not) and
 * dead code elimination (instructions, side effects, unreachable computations). */
#include "passes_helpers.h"

#define CSE(text, expect) TP_PASS((text), cx_pass_cse, (expect))
#define DCE(text, expect) TP_PASS((text), cx_pass_dce, (expect))

TEST(passes_cse_merges_identical_trees) {
  cx_module *m = CSE("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  q = f32[4] parameter(1)\n"
                     "  a1 = f32[4] add(p, q)\n  a2 = f32[4] add(p, q)\n  e1 = f32[4] exponential(a1)\n"
                     "  e2 = f32[4] exponential(a2)\n  ROOT r = f32[4] multiply(e1, e2)\n}\n", 1);
  CHECK(m && tp_count(m, CX_OP_ADD) == 1 && tp_count(m, CX_OP_EXP) == 1);
  CHECK(m && m->entry->root->ops[0] == m->entry->root->ops[1]);
  cx_module_free(m);
}

TEST(passes_cse_respects_attributes_and_literals) {
  /* different directions, operand order, constants that differ only in the sign of zero */
  cx_module *m = CSE("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  q = f32[4] parameter(1)\n"
                     "  c1 = pred[4] compare(p, q), direction=LT\n  c2 = pred[4] compare(p, q), direction=GT\n"
                     "  s1 = f32[4] subtract(p, q)\n  s2 = f32[4] subtract(q, p)\n"
                     "  z1 = f32[] constant(0)\n  z2 = f32[] constant(-0)\n"
                     "  ROOT t = (pred[4], pred[4], f32[4], f32[4], f32[], f32[]) tuple(c1, c2, s1, s2, z1, z2)\n}\n", 0);
  CHECK(m && m->entry->ninstrs == 9);
  cx_module_free(m);
  /* equal constants merge; so do identical slices, but not slices of other ranges */
  m = CSE("HloModule m\nENTRY e {\n  p = s32[8] parameter(0)\n  k1 = s32[2] constant({1, 2})\n  k2 = s32[2] constant({1, 2})\n"
          "  a = s32[2] slice(p), slice={[0:2]}\n  b = s32[2] slice(p), slice={[0:2]}\n  c = s32[2] slice(p), slice={[2:4]}\n"
          "  x = s32[2] add(a, k1)\n  y = s32[2] add(b, k2)\n  ROOT t = (s32[2], s32[2], s32[2]) tuple(x, y, c)\n}\n", 1);
  CHECK(m && tp_count(m, CX_OP_CONSTANT) == 1 && tp_count(m, CX_OP_SLICE) == 2 && tp_count(m, CX_OP_ADD) == 1);
  cx_module_free(m);
}

TEST(passes_cse_never_merges_side_effects_or_parameters) {
  cx_module *m = TP_PARSE("HloModule m\nENTRY e {\n  a = f32[] constant(0)\n  b = f32[] constant(1)\n"
                          "  r1 = f32[4] rng(a, b), distribution=rng_uniform\n  r2 = f32[4] rng(a, b), distribution=rng_uniform\n"
                          "  c1 = f32[4] custom-call(r1), custom_call_target=\"foo\"\n"
                          "  c2 = f32[4] custom-call(r1), custom_call_target=\"foo\"\n"
                          "  ROOT t = (f32[4], f32[4], f32[4], f32[4]) tuple(r1, r2, c1, c2)\n}\n");
  if (m) {
    TP_RUN(m, cx_pass_cse, 0);
    CHECK_EQ_INT(tp_count(m, CX_OP_RNG), 2);
    CHECK_EQ_INT(tp_count(m, CX_OP_CUSTOM_CALL), 2);
  }
  cx_module_free(m);
  m = CSE("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  q = f32[4] parameter(1)\n"
          "  ROOT a = f32[4] add(p, q)\n}\n", 0);
  cx_module_free(m);
}

TEST(passes_cse_called_computations_must_match) {
  const char *text =
      "HloModule m\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"
      "mx {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] maximum(x, y)\n}\n"
      "ENTRY e {\n  p = f32[4,3] parameter(0)\n  z = f32[] constant(0)\n"
      "  r1 = f32[4] reduce(p, z), dimensions={1}, to_apply=add\n  r2 = f32[4] reduce(p, z), dimensions={1}, to_apply=mx\n"
      "  r3 = f32[4] reduce(p, z), dimensions={1}, to_apply=add\n  ROOT t = (f32[4], f32[4], f32[4]) tuple(r1, r2, r3)\n}\n";
  cx_module *m = CSE(text, 1);
  CHECK(m && tp_count(m, CX_OP_REDUCE) == 2);
  cx_module_free(m);
}

TEST(passes_dce_removes_dead_code_and_computations) {
  cx_module *m = DCE("HloModule m\nunused {\n  x = f32[] parameter(0)\n  ROOT n = f32[] negate(x)\n}\n"
                     "ENTRY e {\n  p = f32[4] parameter(0)\n  q = f32[4] parameter(1)\n  dead1 = f32[4] add(p, q)\n"
                     "  dead2 = f32[4] exponential(dead1)\n  ROOT a = f32[4] multiply(p, p)\n}\n", 1);
  CHECK(m && m->entry->ninstrs == 3 && m->ncomps == 1);
  cx_module_free(m);
  /* parameters stay even when unused; a clean module is unchanged */
  m = DCE("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  q = f32[4] parameter(1)\n  ROOT a = f32[4] negate(q)\n}\n", 0);
  CHECK(m && m->entry->ninstrs == 3);
  cx_module_free(m);
}

TEST(passes_dce_keeps_side_effects) {
  /* an unused custom-call and a while whose body calls one stay, with their operands; a pure
   * unused while goes */
  cx_module *m = TP_PARSE(
      "HloModule m\n"
      "cond {\n  c = s32[] parameter(0)\n  k = s32[] constant(3)\n  ROOT lt = pred[] compare(c, k), direction=LT\n}\n"
      "body {\n  b = s32[] parameter(0)\n  one = s32[] constant(1)\n  ROOT n = s32[] add(b, one)\n}\n"
      "body_fx {\n  b = s32[] parameter(0)\n  cc = s32[] custom-call(b), custom_call_target=\"log\"\n"
      "  one = s32[] constant(1)\n  ROOT n = s32[] add(b, one)\n}\n"
      "ENTRY e {\n  p = s32[] parameter(0)\n  n = s32[] negate(p)\n  cc = s32[] custom-call(n), custom_call_target=\"f\"\n"
      "  w1 = s32[] while(p), condition=cond, body=body\n  w2 = s32[] while(p), condition=cond, body=body_fx\n"
      "  ROOT r = s32[] add(p, p)\n}\n");
  if (!m) return;
  TP_RUN(m, cx_pass_dce, 1);
  CHECK_EQ_INT(tp_count(m, CX_OP_CUSTOM_CALL), 1);
  CHECK_EQ_INT(tp_count(m, CX_OP_NEGATE), 1);
  CHECK_EQ_INT(tp_count(m, CX_OP_WHILE), 1);
  CHECK(cx_module_find_comp(m, "body_fx") != NULL);
  CHECK(cx_module_find_comp(m, "body") == NULL);
  cx_comp *fx = cx_module_find_comp(m, "body_fx");
  CHECK(fx && fx->ninstrs == 4); /* the custom-call inside the body stays too */
  cx_module_free(m);
}
