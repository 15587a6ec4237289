/* test_cpu_control.c — while, conditional and call on the cpu backend against the
 * interpreter, with parameters everywhere so that constant folding cannot remove the control
 * flow: nested loops, zero trips, state that passes through, swaps, loops whose result is the
 * output, conditionals in both forms (index out of range included), computations shared by
 * several call sites, and the --max-loop-iterations guard. */
#include <stdlib.h>
#include "test_cpu_helpers.h"

static const char nested_text[] =
    "HloModule nested\n"
    "icond {\n"
    "  s = (s32[], s32[], f32[8], s32[]) parameter(0)\n"
    "  j = s32[] get-tuple-element(s), index=1\n"
    "  n = s32[] get-tuple-element(s), index=3\n"
    "  ROOT lt = pred[] compare(j, n), direction=LT\n"
    "}\n"
    "ibody {\n"
    "  s = (s32[], s32[], f32[8], s32[]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  j = s32[] get-tuple-element(s), index=1\n"
    "  v = f32[8] get-tuple-element(s), index=2\n"
    "  n = s32[] get-tuple-element(s), index=3\n"
    "  ij = s32[] multiply(i, j)\n"
    "  f = f32[] convert(ij)\n"
    "  fb = f32[8] broadcast(f), dimensions={}\n"
    "  v2 = f32[8] add(v, fb)\n"
    "  one = s32[] constant(1)\n"
    "  j2 = s32[] add(j, one)\n"
    "  ROOT r = (s32[], s32[], f32[8], s32[]) tuple(i, j2, v2, n)\n"
    "}\n"
    "ocond {\n"
    "  s = (s32[], f32[8], s32[], s32[]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  m = s32[] get-tuple-element(s), index=2\n"
    "  ROOT lt = pred[] compare(i, m), direction=LT\n"
    "}\n"
    "obody {\n"
    "  s = (s32[], f32[8], s32[], s32[]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  v = f32[8] get-tuple-element(s), index=1\n"
    "  m = s32[] get-tuple-element(s), index=2\n"
    "  n = s32[] get-tuple-element(s), index=3\n"
    "  zero = s32[] constant(0)\n"
    "  init = (s32[], s32[], f32[8], s32[]) tuple(i, zero, v, n)\n"
    "  w = (s32[], s32[], f32[8], s32[]) while(init), condition=icond, body=ibody\n"
    "  v2 = f32[8] get-tuple-element(w), index=2\n"
    "  one = s32[] constant(1)\n"
    "  i2 = s32[] add(i, one)\n"
    "  ROOT r = (s32[], f32[8], s32[], s32[]) tuple(i2, v2, m, n)\n"
    "}\n"
    "ENTRY main {\n"
    "  v = f32[8] parameter(0)\n"
    "  m = s32[] parameter(1)\n"
    "  n = s32[] parameter(2)\n"
    "  zero = s32[] constant(0)\n"
    "  init = (s32[], f32[8], s32[], s32[]) tuple(zero, v, m, n)\n"
    "  ROOT w = (s32[], f32[8], s32[], s32[]) while(init), condition=ocond, body=obody\n"
    "}\n";

TEST(cpu_control_nested_while) {
  const char *in[3] = {"f32[8] {1, 2, 3, 4, 5, 6, 7, 8}", "s32[] 3", "s32[] 4"};
  CHECK(cpu_check(nested_text, 3, in, NULL, 0, 0, NULL, NULL));
  CHECK(cpu_check(nested_text, 3, in, "--fusion=off", 0, 0, NULL, NULL));
  const char *zero[3] = {"f32[8] {1, 2, 3, 4, 5, 6, 7, 8}", "s32[] 0", "s32[] 4"}; /* no trips */
  cxla_literal *got = NULL;
  CHECK(cpu_check(nested_text, 3, zero, NULL, 0, 0, NULL, &got));
  if (got) CHECK_NEAR(cxla_literal_get_f64(cxla_literal_tuple_get(got, 1), 7), 8, 0);
  cxla_literal_destroy(got);
  const char *inner0[3] = {"f32[8] {1, 2, 3, 4, 5, 6, 7, 8}", "s32[] 5", "s32[] 0"};
  CHECK(cpu_check(nested_text, 3, inner0, NULL, 0, 0, NULL, NULL));
}

TEST(cpu_control_loop_limit) {
  const char *in[3] = {"f32[8] {1, 2, 3, 4, 5, 6, 7, 8}", "s32[] 3", "s32[] 4"};
  cxla_context *ctx = test_ctx();
  CHECK_OK(cxla_context_set_flags(ctx, "--max-loop-iterations=3"));
  cxla_module *m = NULL;
  CHECK_OK(cxla_module_parse(ctx, nested_text, sizeof nested_text - 1, "t.hlo", &m));
  cxla_literal *args[3] = {cpu_lit(in[0]), cpu_lit(in[1]), cpu_lit(in[2])}, *out = NULL;
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = "cpu";
  /* the inner loop runs 4 times: one more than allowed */
  CHECK_EQ_INT(cxla_module_run(m, &o, 3, args, &out), CXLA_ERR_RUNTIME);
  CHECK_STR_CONTAINS(cxla_context_errmsg(ctx), "max-loop-iterations=3");
  CHECK_OK(cxla_context_set_flags(ctx, "--max-loop-iterations=4"));
  CHECK_OK(cxla_module_run(m, &o, 3, args, &out));
  cxla_literal_destroy(out);
  CHECK_OK(cxla_context_set_flags(ctx, "--max-loop-iterations=0"));
  for (int i = 0; i < 3; i++) cxla_literal_destroy(args[i]);
  cxla_module_destroy(m);
}

/* One body and one condition for two loops, one branch computation for several branches:
 * every call site gets its own copy, so each has its own buffers. */
static const char shared_text[] =
    "HloModule shared\n"
    "cond {\n"
    "  s = (s32[], f32[4]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  n = s32[] constant(3)\n"
    "  ROOT lt = pred[] compare(i, n), direction=LT\n"
    "}\n"
    "body {\n"
    "  s = (s32[], f32[4]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=0\n"
    "  v = f32[4] get-tuple-element(s), index=1\n"
    "  one = s32[] constant(1)\n"
    "  i2 = s32[] add(i, one)\n"
    "  v2 = f32[4] multiply(v, v)\n"
    "  ROOT r = (s32[], f32[4]) tuple(i2, v2)\n"
    "}\n"
    "neg {\n"
    "  x = f32[4] parameter(0)\n"
    "  ROOT n = f32[4] negate(x)\n"
    "}\n"
    "dbl {\n"
    "  x = f32[4] parameter(0)\n"
    "  ROOT n = f32[4] add(x, x)\n"
    "}\n"
    "ENTRY main {\n"
    "  a = f32[4] parameter(0)\n"
    "  k = s32[] parameter(1)\n"
    "  p = pred[] parameter(2)\n"
    "  z = s32[] constant(0)\n"
    "  i1 = (s32[], f32[4]) tuple(z, a)\n"
    "  w1 = (s32[], f32[4]) while(i1), condition=cond, body=body\n"
    "  b = f32[4] get-tuple-element(w1), index=1\n"
    "  i2 = (s32[], f32[4]) tuple(k, b)\n"
    "  w2 = (s32[], f32[4]) while(i2), condition=cond, body=body\n"
    "  c = f32[4] get-tuple-element(w2), index=1\n"
    "  c1 = f32[4] conditional(k, a, c, a), branch_computations={neg, dbl, neg}\n"
    "  c2 = f32[4] conditional(p, c1, a), true_computation=dbl, false_computation=neg\n"
    "  ROOT t = (f32[4], f32[4], f32[4], (s32[], f32[4])) tuple(c1, c2, b, w2)\n"
    "}\n";

TEST(cpu_control_shared_computations_and_conditionals) {
  const char *ks[] = {"s32[] -1", "s32[] 0", "s32[] 1", "s32[] 2", "s32[] 3", "s32[] 9"};
  const char *ps[] = {"pred[] true", "pred[] false"};
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 2; j++) {
      const char *in[3] = {"f32[4] {1, -0.5, 1.25, 2}", ks[i], ps[j]};
      CHECK_MSG(cpu_check(shared_text, 3, in, NULL, 0, 0, NULL, NULL), "k=%s p=%s", ks[i], ps[j]);
    }
  const char *in[3] = {"f32[4] {1, -0.5, 1.25, 2}", "s32[] 1", "pred[] false"};
  CHECK(cpu_check(shared_text, 3, in, "--fusion=off", 0, 0, NULL, NULL));
}

/* A call (normally inlined by the passes) and a while whose whole state is the output. */
static const char call_text[] =
    "HloModule calls\n"
    "f {\n"
    "  x = f32[5] parameter(0)\n"
    "  y = f32[5] parameter(1)\n"
    "  ROOT t = (f32[5], f32[5]) tuple(y, x)\n"
    "}\n"
    "cond {\n"
    "  s = (f32[5], f32[5], s32[]) parameter(0)\n"
    "  i = s32[] get-tuple-element(s), index=2\n"
    "  n = s32[] constant(4)\n"
    "  ROOT lt = pred[] compare(i, n), direction=LT\n"
    "}\n"
    "body {\n"
    "  s = (f32[5], f32[5], s32[]) parameter(0)\n"
    "  a = f32[5] get-tuple-element(s), index=0\n"
    "  b = f32[5] get-tuple-element(s), index=1\n"
    "  i = s32[] get-tuple-element(s), index=2\n"
    "  c = (f32[5], f32[5]) call(a, b), to_apply=f\n"
    "  a2 = f32[5] get-tuple-element(c), index=0\n"
    "  b2 = f32[5] get-tuple-element(c), index=1\n"
    "  s2 = f32[5] add(a2, b2)\n"
    "  one = s32[] constant(1)\n"
    "  i2 = s32[] add(i, one)\n"
    "  ROOT r = (f32[5], f32[5], s32[]) tuple(s2, b2, i2)\n"
    "}\n"
    "ENTRY main {\n"
    "  x = f32[5] parameter(0)\n"
    "  y = f32[5] parameter(1)\n"
    "  z = s32[] constant(0)\n"
    "  init = (f32[5], f32[5], s32[]) tuple(x, y, z)\n"
    "  ROOT w = (f32[5], f32[5], s32[]) while(init), condition=cond, body=body\n"
    "}\n";

TEST(cpu_control_call_and_loop_output) {
  const char *in[2] = {"f32[5] {1, 2, 3, 4, 5}", "f32[5] {0.5, 0.25, -1, 2, 8}"};
  CHECK(cpu_check(call_text, 2, in, NULL, 0, 0, NULL, NULL));
  CHECK(cpu_check(call_text, 2, in, "--fusion=off --opt-level=0", 0, 0, NULL, NULL));
}
