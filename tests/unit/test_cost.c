/* test_cost.c — cxla_module_cost against counts worked out by hand with XLA's HloCostAnalysis
 * rules (src/ir/cost.c): dot, convolution with padding, stride and dilation, reduce,
 * reduce-window, transcendentals, copies, a while loop with a known and an unknown trip count,
 * a conditional and a fusion. (test_pjrt.py checks the same numbers against JAX's CPU.) */
#include <string.h>
#include "test.h"
#include <stdio.h>

static int cost_of(const char *text, cxla_cost *c) {
  cxla_module *m = NULL;
  cxla_status s = cxla_module_parse(test_ctx(), text, strlen(text), "cost.hlo", &m);
  CHECK_MSG(s == CXLA_OK, "parse: %s", cxla_context_errmsg(test_ctx()));
  if (s != CXLA_OK) return 0;
  s = cxla_module_cost(m, c);
  CHECK_OK(s);
  cxla_module_destroy(m);
  return s == CXLA_OK;
}

#define CHECK_COST(text, f, t, b)                                                                      \
  do {                                                                                                 \
    cxla_cost c_;                                                                                      \
    if (cost_of(text, &c_))                                                                            \
      CHECK_MSG(c_.flops == (f) && c_.transcendentals == (t) && c_.bytes_accessed == (b),              \
                "flops %.0f transcendentals %.0f bytes %.0f, want %.0f %.0f %.0f", c_.flops,           \
                c_.transcendentals, c_.bytes_accessed, (double)(f), (double)(t), (double)(b));         \
  } while (0)

TEST(cost_dot_and_elementwise) {
  /* 2 * 4*6 results * 5; bytes (20 + 30 + 24) floats */
  CHECK_COST("HloModule m\nENTRY e {\n  a = f32[4,5] parameter(0)\n  b = f32[5,6] parameter(1)\n"
             "  ROOT d = f32[4,6] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
             240, 0, 296);
  /* exp: 10 transcendentals; add: 10 flops; copy: none; bytes 2*40 + 3*40 + 2*40 */
  CHECK_COST("HloModule m\nENTRY e {\n  a = f32[10] parameter(0)\n  x = f32[10] exponential(a)\n"
             "  y = f32[10] add(x, a)\n  ROOT z = f32[10] copy(y)\n}\n",
             10, 10, 280);
  /* reduce over 8x16 to 8: 120 applications of an add; reduce-window 2x2 stride 2 over 4x4:
   * 4 results * 3 adds */
  CHECK_COST("HloModule m\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"
             "ENTRY e {\n  a = f32[8,16] parameter(0)\n  z = f32[] constant(0)\n"
             "  ROOT r = f32[8] reduce(a, z), dimensions={1}, to_apply=add\n}\n",
             120, 0, 512 + 4 + 32);
  CHECK_COST("HloModule m\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"
             "ENTRY e {\n  a = f32[4,4] parameter(0)\n  z = f32[] constant(0)\n"
             "  ROOT r = f32[2,2] reduce-window(a, z), window={size=2x2 stride=2x2}, to_apply=add\n}\n",
             12, 0, 64 + 4 + 16);
}

TEST(cost_convolution_counts_valid_positions) {
  /* 5x5 input, 3x3 kernel, padding 1: per dim 2 + 3*3 + 2 = 13 (output, kernel) pairs land on
   * the input; 1 input feature, 2 output features, batch 1: 2 * 2 * 13 * 13 */
  CHECK_COST("HloModule m\nENTRY e {\n  a = f32[1,5,5,1] parameter(0)\n  k = f32[3,3,1,2] parameter(1)\n"
             "  ROOT c = f32[1,5,5,2] convolution(a, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n}\n",
             676, 0, 4 * (25 + 18 + 50));
  /* stride 2, no padding, kernel dilated by 2 (span 5) over 7: outputs 0 and 1 read input
   * 0,2,4 and 2,4,6: 3 pairs each, 6 per dim; 2 groups of 2 input features -> 4 outputs */
  CHECK_COST("HloModule m\nENTRY e {\n  a = f32[1,7,7,4] parameter(0)\n  k = f32[3,3,2,4] parameter(1)\n"
             "  ROOT c = f32[1,2,2,4] convolution(a, k), window={size=3x3 stride=2x2 rhs_dilate=2x2}, "
             "dim_labels=b01f_01io->b01f, feature_group_count=2\n}\n",
             2 * 2 * 4 * 36, 0, 4 * (196 + 72 + 16));
}

/* A counter from 0 to 10 by 1 (jax's fori_loop): the body's 4 multiplies, the counter's add and
 * the condition's compare, 10 times; with a bound the loop computes, once. */
static const char *loop(const char *bound) {
  static char text[2048];
  snprintf(text, sizeof text,
           "HloModule m\nbody {\n  p = (s32[], f32[4]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
           "  one = s32[] constant(1)\n  j = s32[] add(i, one)\n  x = f32[4] get-tuple-element(p), index=1\n"
           "  y = f32[4] multiply(x, x)\n  ROOT t = (s32[], f32[4]) tuple(j, y)\n}\n"
           "cond {\n  p = (s32[], f32[4]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
           "  n = s32[] %s\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n"
           "ENTRY e {\n  z = s32[] constant(0)\n  a = f32[4] parameter(0)\n  b = s32[] parameter(1)\n"
           "  t = (s32[], f32[4]) tuple(z, a)\n  w = (s32[], f32[4]) while(t), condition=cond, body=body\n"
           "  ROOT r = f32[4] get-tuple-element(w), index=1\n}\n",
           bound);
  return text;
}

TEST(cost_while_and_conditional) {
  cxla_cost known, once;
  if (!cost_of(loop("constant(10)"), &known) || !cost_of(loop("multiply(i, i)"), &once)) return;
  CHECK_MSG(known.flops == 10 * 6, "known trips: flops %.0f", known.flops);
  CHECK_MSG(once.flops == 7, "unknown trips (one counted): flops %.0f", once.flops);
  CHECK(known.bytes_accessed > 9 * once.bytes_accessed - 9 * 40); /* per trip, nearly all of it */
  /* each property's costlier branch (XLA's rule: the branches' costs replace the conditional's
   * own): negate's 3 flops, tanh's 3 transcendentals (not flops), 24 bytes either way */
  CHECK_COST("HloModule m\nb0 {\n  x = f32[3] parameter(0)\n  ROOT y = f32[3] tanh(x)\n}\n"
             "b1 {\n  x = f32[3] parameter(0)\n  ROOT y = f32[3] negate(x)\n}\n"
             "ENTRY e {\n  p = pred[] parameter(0)\n  a = f32[3] parameter(1)\n"
             "  ROOT c = f32[3] conditional(p, a, a), true_computation=b0, false_computation=b1\n}\n",
             3, 3, 24);
}

/* JAX's StableHLO of a fori_loop carries its bound and step as loop constants (constant
 * inits, passed on unchanged): the trip count is still known (ir/while_trips.c). */
TEST(cost_while_bound_and_step_carried) {
  static const char text[] =
      "HloModule m\nbody {\n  p = (s32[], f32[4], s32[], s32[]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
      "  x = f32[4] get-tuple-element(p), index=1\n  n = s32[] get-tuple-element(p), index=2\n"
      "  d = s32[] get-tuple-element(p), index=3\n  j = s32[] add(i, d)\n  y = f32[4] multiply(x, x)\n"
      "  ROOT t = (s32[], f32[4], s32[], s32[]) tuple(j, y, n, d)\n}\n"
      "cond {\n  p = (s32[], f32[4], s32[], s32[]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
      "  n = s32[] get-tuple-element(p), index=2\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n"
      "ENTRY e {\n  z = s32[] constant(0)\n  ten = s32[] constant(10)\n  two = s32[] constant(2)\n"
      "  a = f32[4] parameter(0)\n  t = (s32[], f32[4], s32[], s32[]) tuple(z, a, ten, two)\n"
      "  w = (s32[], f32[4], s32[], s32[]) while(t), condition=cond, body=body\n"
      "  ROOT r = f32[4] get-tuple-element(w), index=1\n}\n";
  cxla_cost c;
  if (cost_of(text, &c)) CHECK_MSG(c.flops == 5 * 6, "5 trips of 6 flops: %.0f", c.flops);
}

TEST(cost_fusion_counts_its_own_bytes) {
  /* the fusion's body: a multiply and an exp over 8 elements; bytes: its operand and result */
  CHECK_COST("HloModule m\nf {\n  x = f32[8] parameter(0)\n  y = f32[8] multiply(x, x)\n  ROOT z = f32[8] exponential(y)\n}\n"
             "ENTRY e {\n  a = f32[8] parameter(0)\n  ROOT r = f32[8] fusion(a), kind=kLoop, calls=f\n}\n",
             8, 8, 64);
  /* an operand the body does not read (an epilogue split from its product keeps the product's
   * operands) moves no bytes: 32 in, 32 out */
  CHECK_COST("HloModule m\nf {\n  x = f32[8] parameter(0)\n  w = f32[1024] parameter(1)\n  ROOT z = f32[8] exponential(x)\n}\n"
             "ENTRY e {\n  a = f32[8] parameter(0)\n  b = f32[1024] parameter(1)\n"
             "  ROOT r = f32[8] fusion(a, b), kind=kLoop, calls=f\n}\n",
             0, 8, 64);
  /* a body that returns its parameter reads it */
  CHECK_COST("HloModule m\nf {\n  x = f32[8] parameter(0)\n  ROOT w = f32[8] parameter(1)\n}\n"
             "ENTRY e {\n  a = f32[8] parameter(0)\n  b = f32[8] parameter(1)\n  ROOT r = f32[8] fusion(a, b), kind=kLoop, calls=f\n}\n",
             0, 0, 64);
}

/* cxla_executable_cost: the module's flops and transcendentals, the bytes of what the backend
 * runs. exp(x) * 2 summed over f32[64,128]: before fusion each op moves its operands and result
 * (229,388 bytes, interp's count too); the cpu runs one kernel reading x and writing the scalar
 * (32,772 bytes, JAX CPU's count). */
TEST(cost_of_an_executable_is_its_kernels_bytes) {
  static const char text[] =
      "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
      "ENTRY e {\n  x = f32[64,128] parameter(0)\n  e = f32[64,128] exponential(x)\n  c = f32[] constant(2)\n"
      "  cb = f32[64,128] broadcast(c), dimensions={}\n  m = f32[64,128] multiply(e, cb)\n  z = f32[] constant(0)\n"
      "  ROOT s = f32[] reduce(m, z), dimensions={0,1}, to_apply=add\n}\n";
  const char *backends[2] = {"interp", "cpu"};
  const double bytes[2] = {229388, 32772};
  for (int b = 0; b < 2; b++) {
    cxla_module *m = NULL;
    CHECK_OK(cxla_module_parse(test_ctx(), text, strlen(text), "cost.hlo", &m));
    if (!m) return;
    cxla_compile_options o;
    cxla_compile_options_init(&o);
    o.backend = backends[b];
    cxla_executable *e = NULL;
    CHECK_OK(cxla_compile(m, &o, &e));
    cxla_cost mc, ec;
    CHECK_OK(cxla_module_cost(m, &mc));
    if (e && cxla_executable_cost(e, &ec) == CXLA_OK)
      CHECK_MSG(ec.flops == mc.flops && ec.transcendentals == mc.transcendentals && ec.bytes_accessed == bytes[b],
                "%s: flops %.0f (module %.0f), transcendentals %.0f, bytes %.0f (want %.0f)", backends[b], ec.flops,
                mc.flops, ec.transcendentals, ec.bytes_accessed, bytes[b]);
    CHECK(cxla_executable_cost(e, NULL) == CXLA_ERR_INVALID_ARGUMENT);
    CHECK(cxla_executable_cost(NULL, &ec) == CXLA_ERR_INVALID_ARGUMENT);
    cxla_executable_destroy(e);
    cxla_module_destroy(m);
  }
}

TEST(cost_bad_arguments) {
  cxla_cost c;
  CHECK(cxla_module_cost(NULL, &c) == CXLA_ERR_INVALID_ARGUMENT);
  cxla_module *m = cxla_module_create(test_ctx(), "empty");
  CHECK(m && cxla_module_cost(m, &c) != CXLA_OK); /* no ENTRY */
  CHECK(m && cxla_module_cost(m, NULL) == CXLA_ERR_INVALID_ARGUMENT);
  cxla_module_destroy(m);
}

/* A long 1-d convolution (2^20 outputs, a 2^20-tap kernel, padded): counted per output position
 * in one step, not per (output, kernel) pair (10^12 of them) */
TEST(cost_convolution_long_window_is_fast) {
  cxla_cost c;
  if (!cost_of("HloModule m\nENTRY e {\n  a = f32[1,1048576,1] parameter(0)\n  k = f32[1048576,1,1] parameter(1)\n"
               "  ROOT c = f32[1,1048576,1] convolution(a, k), window={size=1048576 pad=524288_524287}, dim_labels=b0f_0io->b0f\n}\n",
               &c))
    return;
  double n = 1048576.0, want = 0;
  /* output o meets the input where o - 524288 + j in [0, n): n - |o - 524288| pairs, summed */
  for (double o = 0; o < n; o++) want += n - (o > 524288 ? o - 524288 : 524288 - o);
  CHECK_MSG(c.flops == 2 * want, "flops %.0f, want %.0f", c.flops, 2 * want);
}
