/* test_error_bound.c — the error analysis `cxla run --check` adds to its fixed tolerance
 * (passes/error_bound.h): the allowance of each element, worked out by hand from the rules of
 * docs/numerics.md, and that an error beyond it is still caught. */
#include <math.h>
#include <string.h>
#include "ir/literal_diff.h"
#include "passes/error_bound.h"
#include "test.h"

static const double U = 0x1p-24; /* f32's unit roundoff, also the accumulation's */

static double gamma_n(double n) { return n * U / (1 - n * U); }

static cxla_literal *vec(cxla_type t, int n, const double *v) {
  int64_t d = n;
  cxla_literal *l = cxla_literal_create(test_ctx(), t, 1, &d);
  for (int i = 0; l && i < n; i++) cxla_literal_set_f64(l, i, v[i]);
  return l;
}

/* Runs the analysis of `text` on the interpreter (*pair: its (result, allowance) tuple);
 * returns the allowance, or NULL. */
static cxla_literal *bound_of(const char *text, int nargs, cxla_literal **args, cxla_literal **pair) {
  cxla_module *m = NULL;
  *pair = NULL;
  CHECK_OK(cxla_module_parse(test_ctx(), text, strlen(text), "bound.hlo", &m));
  if (!m) return NULL;
  cxla_module *bm = cx_module_error_bound(m);
  CHECK_MSG(bm != NULL, "no analysis: %s", cxla_context_errmsg(test_ctx()));
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = "interp";
  if (bm) CHECK_OK(cxla_module_run(bm, &o, nargs, args, pair));
  cxla_module_destroy(bm);
  cxla_module_destroy(m);
  return *pair && cxla_literal_tuple_size(*pair) == 2 ? cxla_literal_tuple_get(*pair, 1) : NULL;
}

/* A dot of depth 3 that cancels: a.b = 3 - 3 + 1 = 1, sum |a_k b_k| = 7. The allowance is
 * (gamma_3 + 2u) * 7; adding p (exact, |p| = 0.5) adds its magnitude and one rounding:
 * E = (gamma_3 + 2u) * 7 + 2u * (7 + 0.5). */
TEST(error_bound_dot_then_add) {
  const char *text = "HloModule d\nENTRY e {\n  a = f32[2,3] parameter(0)\n  b = f32[3] parameter(1)\n"
                     "  p = f32[2] parameter(2)\n"
                     "  d = f32[2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                     "  ROOT s = f32[2] add(d, p)\n}\n";
  int64_t ad[2] = {2, 3};
  cxla_literal *a = cxla_literal_create(test_ctx(), CXLA_F32, 2, ad);
  const double av[] = {1, -1, 2, 0, 0, 4}, bv[] = {3, 3, 0.5}, pv[] = {0.5, -2};
  for (int i = 0; a && i < 6; i++) cxla_literal_set_f64(a, i, av[i]);
  cxla_literal *args[3] = {a, vec(CXLA_F32, 3, bv), vec(CXLA_F32, 2, pv)}, *pair;
  cxla_literal *e = bound_of(text, 3, args, &pair);
  CHECK(e != NULL);
  if (e) {
    double dot0 = (gamma_n(3) + 2 * U) * 7, dot1 = (gamma_n(3) + 2 * U) * 2;
    CHECK_NEAR(cxla_literal_get_f64(e, 0), dot0 + 2 * U * 7.5, 1e-20);
    CHECK_NEAR(cxla_literal_get_f64(e, 1), dot1 + 2 * U * 4, 1e-20);
    /* the first element may be off by its allowance, not by twice it */
    cxla_literal *want = cxla_literal_tuple_get(pair, 0);
    double w = cxla_literal_get_f64(want, 0), allow = cxla_literal_get_f64(e, 0);
    CHECK_NEAR(w, 1.5, 0);
    const double near_v[] = {w + 0.9 * allow, cxla_literal_get_f64(want, 1)};
    const double far_v[] = {w + 2 * allow, cxla_literal_get_f64(want, 1)};
    cxla_literal *near = vec(CXLA_F32, 2, near_v), *far = vec(CXLA_F32, 2, far_v);
    cx_diff d;
    CHECK_OK(cx_literal_diff_allow(test_ctx(), near, want, 0, 0, e, &d));
    CHECK_EQ_INT(d.nbad, 0);
    CHECK_OK(cx_literal_diff_allow(test_ctx(), far, want, 0, 0, e, &d));
    CHECK_EQ_INT(d.nbad, 1);
    CHECK_OK(cx_literal_diff(test_ctx(), near, want, 0, 0, &d)); /* without it: beyond */
    CHECK_EQ_INT(d.nbad, 1);
    cxla_literal_destroy(near);
    cxla_literal_destroy(far);
  }
  for (int i = 0; i < 3; i++) cxla_literal_destroy(args[i]);
  cxla_literal_destroy(pair);
}

/* A sum of n = 4 terms through a reshape, then a multiply by an exact value: E(sum) =
 * (gamma_4 + 2u) * sum|x|; E(y * 3) = 3 E(sum) + 2u * 3 * sum|x|. Max reduces and transposes
 * carry E unchanged. */
TEST(error_bound_reduce_multiply) {
  const char *text = "HloModule r\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                     "  ROOT s = f32[] add(x, y)\n}\n"
                     "ENTRY e {\n  v = f32[4] parameter(0)\n  r = f32[2,2] reshape(v)\n"
                     "  t = f32[2,2] transpose(r), dimensions={1,0}\n  z = f32[] constant(0)\n"
                     "  s = f32[] reduce(t, z), dimensions={0,1}, to_apply=add\n  k = f32[] constant(3)\n"
                     "  ROOT m = f32[] multiply(s, k)\n}\n";
  const double v[] = {1, -2, 4, -8};
  cxla_literal *x = vec(CXLA_F32, 4, v), *pair;
  cxla_literal *e = bound_of(text, 1, &x, &pair);
  CHECK(e != NULL);
  if (e) {
    double es = (gamma_n(4) + 2 * U) * 15;
    CHECK_NEAR(cxla_literal_get_f64(e, 0), 3 * es + 2 * U * 45, 1e-20);
  }
  cxla_literal_destroy(x);
  cxla_literal_destroy(pair);
}

/* exp of an inexact sum: its error through exp's slope, plus 16 ulps of f32 on each backend
 * and a rounding; a select whose predicate compares inexact values allows, where the compare
 * may go the other way, the gap to the other operand; what the analysis cannot follow
 * (power) allows nothing.
 *   s = a + b = {1 + 2^-30 -> 1, -2}, E(s) = 2u (|a| + |b|) = {2u (1 + 2^-30), 12u};
 *   y = select(s > a, a, b): element 0 compares 1 > 1 with a gap of 0 <= E(s), so it may
 *   flip: E = 0 + |a - b| = 1 - 2^-30; element 1 (gap 4) may not: E = 0. */
TEST(error_bound_functions_and_selects) {
  const char *text = "HloModule s\nENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n"
                     "  s = f32[2] add(a, b)\n  x = f32[2] exponential(s)\n"
                     "  c = pred[2] compare(s, a), direction=GT\n  y = f32[2] select(c, a, b)\n"
                     "  z = f32[2] power(s, a)\n"
                     "  ROOT t = (f32[2], f32[2], f32[2], f32[2]) tuple(x, y, s, z)\n}\n";
  const double av[] = {1, 2}, bv[] = {0x1p-30, -4};
  cxla_literal *args[2] = {vec(CXLA_F32, 2, av), vec(CXLA_F32, 2, bv)}, *pair = NULL;
  cxla_literal *e = bound_of(text, 2, args, &pair), *r = pair ? cxla_literal_tuple_get(pair, 0) : NULL;
  CHECK(e && cxla_literal_tuple_size(e) == 4);
  if (e && cxla_literal_tuple_size(e) == 4) {
    double x1 = cxla_literal_get_f64(cxla_literal_tuple_get(r, 0), 1);
    double want_x1 = exp(-2 + 12 * U) - exp(-2) + 66 * U * x1;
    CHECK_NEAR(cxla_literal_get_f64(cxla_literal_tuple_get(e, 0), 1), want_x1, 1e-12 * want_x1);
    CHECK_NEAR(cxla_literal_get_f64(cxla_literal_tuple_get(e, 1), 0), 1 - 0x1p-30, 1e-15);
    CHECK_NEAR(cxla_literal_get_f64(cxla_literal_tuple_get(e, 1), 1), 0, 0);
    CHECK_NEAR(cxla_literal_get_f64(cxla_literal_tuple_get(e, 2), 1), 2 * U * 6, 1e-20);
    for (int i = 0; i < 2; i++) CHECK_NEAR(cxla_literal_get_f64(cxla_literal_tuple_get(e, 3), i), 0, 0);
  }
  for (int i = 0; i < 2; i++) cxla_literal_destroy(args[i]);
  cxla_literal_destroy(pair);
}

/* A quotient: (Ea + |a/b| Eb) / (|b| - Eb) plus one rounding, with a = p + q inexact:
 * a = 3 + 5 = 8, Ea = 16u; b = 4 exact: E = 16u / 4 + 2u * 2 = 8u. A log of an exact value
 * allows only its own approximation: 66u |log 5|. */
TEST(error_bound_divide_log) {
  const char *text = "HloModule q\nENTRY e {\n  p = f32[1] parameter(0)\n  q = f32[1] parameter(1)\n"
                     "  d = f32[1] parameter(2)\n  a = f32[1] add(p, q)\n  x = f32[1] divide(a, d)\n"
                     "  l = f32[1] log(q)\n  ROOT t = (f32[1], f32[1]) tuple(x, l)\n}\n";
  const double pv[] = {3}, qv[] = {5}, dv[] = {4};
  cxla_literal *args[3] = {vec(CXLA_F32, 1, pv), vec(CXLA_F32, 1, qv), vec(CXLA_F32, 1, dv)}, *pair = NULL;
  cxla_literal *e = bound_of(text, 3, args, &pair), *r = pair ? cxla_literal_tuple_get(pair, 0) : NULL;
  CHECK(e && cxla_literal_tuple_size(e) == 2);
  if (e && cxla_literal_tuple_size(e) == 2) {
    CHECK_NEAR(cxla_literal_get_f64(cxla_literal_tuple_get(e, 0), 0), 8 * U, 1e-20);
    double l = cxla_literal_get_f64(cxla_literal_tuple_get(r, 1), 0);
    CHECK_NEAR(cxla_literal_get_f64(cxla_literal_tuple_get(e, 1), 0), 66 * U * l, 1e-20);
  }
  for (int i = 0; i < 3; i++) cxla_literal_destroy(args[i]);
  cxla_literal_destroy(pair);
}

/* A NaN allowance (the analysis met 0 * inf or inf - inf, as it did on the transformer's Adam
 * step) bounds nothing: an element within the fixed tolerance still matches, and one beyond it
 * is still caught. Before, `err <= atol + NaN` failed every element that differed at all. */
TEST(error_bound_nan_allowance_adds_nothing) {
  const double wv[] = {1, 1}, gv[] = {1 + 0x1p-20, 1.5}, av[] = {NAN, NAN};
  cxla_literal *want = vec(CXLA_F32, 2, wv), *got = vec(CXLA_F32, 2, gv), *allow = vec(CXLA_F64, 2, av);
  cx_diff d;
  CHECK_OK(cx_literal_diff_allow(test_ctx(), got, want, 1e-5, 1e-6, allow, &d));
  CHECK_EQ_INT(d.ndiff, 2);
  CHECK_EQ_INT(d.nbad, 1);
  CHECK_EQ_INT(d.first_bad, 1);
  cxla_literal_destroy(want);
  cxla_literal_destroy(got);
  cxla_literal_destroy(allow);
}

/* Nor does an infinite one (an error no finite allowance covers): it would pass any value, so
 * the fixed tolerance alone decides there, as for NaN. Before, 1.5 for 1 passed. */
TEST(error_bound_infinite_allowance_adds_nothing) {
  const double wv[] = {1, 1, 1}, gv[] = {1 + 0x1p-20, 1.5, 1.5}, av[] = {INFINITY, INFINITY, 1};
  cxla_literal *want = vec(CXLA_F32, 3, wv), *got = vec(CXLA_F32, 3, gv), *allow = vec(CXLA_F64, 3, av);
  cx_diff d;
  CHECK_OK(cx_literal_diff_allow(test_ctx(), got, want, 1e-5, 1e-6, allow, &d));
  CHECK_EQ_INT(d.ndiff, 3);
  CHECK_EQ_INT(d.nbad, 1);
  CHECK_EQ_INT(d.first_bad, 1);
  cxla_literal_destroy(want);
  cxla_literal_destroy(got);
  cxla_literal_destroy(allow);
}

/* exp of a value whose f32 exp underflows to 0 while the value may be off by E: the slope is
 * taken over [y - E, y + E] from y in f64, not from the rounded result. s = (a + b) + c = -112
 * exactly, a = -b, E(s) = 2u |2a| + 2u (|2a| + 112); exp(-112) is 0 in f32, but a backend's s
 * may be as high as -112 + E(s), whose exp is representable: element 0 (a = 2^26, E(s) = 32
 * + ...) allows e^(-112 + E) - e^-112, about 2e-35, where the rule |exp(x)| expm1(E) allowed
 * 0; element 1 (a = 2^40, E(s) near 2^19, past exp's range) allows infinity, where that rule
 * gave 0 * inf = NaN. */
TEST(error_bound_exp_of_underflowing_value) {
  const char *text = "HloModule x\nENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n"
                     "  c = f32[2] parameter(2)\n  p = f32[2] add(a, b)\n  s = f32[2] add(p, c)\n"
                     "  ROOT x = f32[2] exponential(s)\n}\n";
  const double av[] = {0x1p26, 0x1p40}, bv[] = {-0x1p26, -0x1p40}, cv[] = {-112, -112};
  cxla_literal *args[3] = {vec(CXLA_F32, 2, av), vec(CXLA_F32, 2, bv), vec(CXLA_F32, 2, cv)}, *pair = NULL;
  cxla_literal *e = bound_of(text, 3, args, &pair);
  CHECK(e != NULL);
  if (e) {
    CHECK_NEAR(cxla_literal_get_f64(cxla_literal_tuple_get(pair, 0), 0), 0, 0);
    double es = 2 * U * 0x1p27 + 2 * U * (0x1p27 + 112), want = exp(-112 + es) - exp(-112);
    CHECK(want > 1e-36);
    CHECK_NEAR(cxla_literal_get_f64(e, 0), want, 1e-9 * want);
    CHECK(isinf(cxla_literal_get_f64(e, 1)));
  }
  for (int i = 0; i < 3; i++) cxla_literal_destroy(args[i]);
  cxla_literal_destroy(pair);
}
