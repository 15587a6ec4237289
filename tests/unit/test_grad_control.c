/* test_grad_control.c — gradients through tuples, call, fusion, opt-barrier, conditional
 * (pred and index forms) and while loops with a trip count known when compiling (counting up
 * or down, by 1 or more, to a constant or to a bound carried unchanged; a scan that reads and
 * writes slices at the counter; a loop nested in a loop's body; a call in a body), against
 * finite differences. */
#include "grad_helpers.h"

static int64_t n_of(gh_case *c) { return gh_int(c, 1, 4); }

/* f(a, b, k) = (a * b * k, sin(a)) called with an integer k */
static void call(gh_case *c) {
  int64_t n = n_of(c);
  const char *s = gh_shape(c, "f64", &n, 1), *si = gh_shape(c, "s32", &n, 1);
  gh_add(c, "HloModule grad_case\n\nadd {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT r = f64[] add(a, b)\n}\n\n");
  gh_add(c, "f {\n  a = %s parameter(0)\n  b = %s parameter(1)\n  k = %s parameter(2)\n  kf = %s convert(k)\n", s, s, si, s);
  gh_add(c, "  ab = %s multiply(a, b)\n  abk = %s multiply(ab, kf)\n  sa = %s sine(a)\n", s, s, s);
  gh_add(c, "  ROOT t = (%s, %s) tuple(abk, sa)\n}\n\nENTRY e {\n", s, s);
  gh_param(c, "x", s, 1);
  gh_param(c, "y", s, 1);
  gh_param(c, "k", si, 0);
  gh_add(c, "  t = (%s, %s) call(x, y, k), to_apply=f\n  t0 = %s get-tuple-element(t), index=0\n", s, s, s);
  gh_add(c, "  t1 = %s get-tuple-element(t), index=1\n  o = %s add(t0, t1)\n  p = %s multiply(o, x)\n", s, s, s);
  gh_end_loss(c, "p", &n, 1);
}

static void fusion(gh_case *c) {
  int64_t n = n_of(c);
  const char *s = gh_shape(c, "f64", &n, 1);
  gh_add(c, "HloModule grad_case\n\nadd {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT r = f64[] add(a, b)\n}\n\n");
  gh_add(c, "fused {\n  a = %s parameter(0)\n  b = %s parameter(1)\n  e = %s exponential(a)\n  ROOT m = %s multiply(e, b)\n}\n\n", s,
         s, s, s);
  gh_add(c, "ENTRY e {\n");
  gh_param(c, "x", s, 1);
  gh_param(c, "y", s, 1);
  gh_add(c, "  f = %s fusion(x, y), kind=kLoop, calls=fused\n", s);
  gh_end_loss(c, "f", &n, 1);
}

static void opt_barrier(gh_case *c) {
  int64_t n = n_of(c);
  const char *s = gh_shape(c, "f64", &n, 1);
  gh_begin(c);
  gh_param(c, "x", s, 1);
  gh_add(c, "  sx = %s sine(x)\n  t = (%s, %s) tuple(x, sx)\n  b = (%s, %s) opt-barrier(t)\n", s, s, s, s, s);
  gh_add(c, "  b0 = %s get-tuple-element(b), index=0\n  b1 = %s get-tuple-element(b), index=1\n", s, s);
  gh_add(c, "  m = %s multiply(b0, b1)\n", s);
  gh_end_loss(c, "m", &n, 1);
}

/* branches on (x, w): true: x * w, false: exp(x) + w */
static void conditional_pred(gh_case *c) {
  int64_t n = n_of(c);
  const char *s = gh_shape(c, "f64", &n, 1);
  gh_add(c, "HloModule grad_case\n\nadd {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT r = f64[] add(a, b)\n}\n\n");
  gh_add(c, "yes {\n  p = (%s, %s) parameter(0)\n  a = %s get-tuple-element(p), index=0\n", s, s, s);
  gh_add(c, "  b = %s get-tuple-element(p), index=1\n  ROOT m = %s multiply(a, b)\n}\n\n", s, s);
  gh_add(c, "no {\n  p = (%s, %s) parameter(0)\n  a = %s get-tuple-element(p), index=0\n", s, s, s);
  gh_add(c, "  b = %s get-tuple-element(p), index=1\n  e = %s exponential(a)\n  ROOT m = %s add(e, b)\n}\n\n", s, s, s);
  gh_add(c, "ENTRY e {\n");
  gh_param(c, "x", s, 1);
  gh_param(c, "w", s, 1);
  gh_param(c, "q", "f64[]", 0);
  gh_add(c, "  z = f64[] constant(0)\n  p = pred[] compare(q, z), direction=GT\n  t = (%s, %s) tuple(x, w)\n", s, s);
  gh_add(c, "  r = %s conditional(p, t, t), true_computation=yes, false_computation=no\n", s);
  gh_end_loss(c, "r", &n, 1);
}

/* three branches on different operands; the index may be out of range (the last runs) */
static void conditional_index(gh_case *c) {
  int64_t n = n_of(c);
  const char *s = gh_shape(c, "f64", &n, 1);
  gh_add(c, "HloModule grad_case\n\nadd {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT r = f64[] add(a, b)\n}\n\n");
  gh_add(c, "b0 {\n  a = %s parameter(0)\n  ROOT s = %s sine(a)\n}\n\n", s, s);
  gh_add(c, "b1 {\n  p = (%s, f64[]) parameter(0)\n  a = %s get-tuple-element(p), index=0\n", s, s);
  gh_add(c, "  k = f64[] get-tuple-element(p), index=1\n  kb = %s broadcast(k), dimensions={}\n  ROOT m = %s multiply(a, kb)\n}\n\n",
         s, s);
  gh_add(c, "b2 {\n  a = %s parameter(0)\n  ROOT m = %s multiply(a, a)\n}\n\n", s, s);
  gh_add(c, "ENTRY e {\n");
  gh_param(c, "x", s, 1);
  gh_param(c, "k", "f64[]", 1);
  gh_param(c, "i", "s32[]", 0);
  c->lo[2] = 0, c->hi[2] = 3;
  gh_add(c, "  t = (%s, f64[]) tuple(x, k)\n  ex = %s exponential(x)\n", s, s);
  gh_add(c, "  r = %s conditional(i, x, t, ex), branch_computations={b0, b1, b2}\n", s);
  gh_end_loss(c, "r", &n, 1);
}

/* A fori loop: carry (i, v, w); body v = v * sin(w) + i_f, w unchanged; the counter goes from
 * `from` by `step` while `i DIR bound` (bound constant, or carried unchanged when carried). */
static void fori(gh_case *c, int from, int step, const char *dir, int bound, int carried) {
  int64_t n = n_of(c);
  const char *s = gh_shape(c, "f64", &n, 1);
  char carry[96];
  snprintf(carry, sizeof carry, "(s32[], %s, %s, s32[])", s, s);
  gh_add(c, "HloModule grad_case\n\nadd {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT r = f64[] add(a, b)\n}\n\n");
  gh_add(c, "body {\n  p = %s parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n", carry);
  gh_add(c, "  v = %s get-tuple-element(p), index=1\n  w = %s get-tuple-element(p), index=2\n", s, s);
  gh_add(c, "  bnd = s32[] get-tuple-element(p), index=3\n  sw = %s sine(w)\n  vs = %s multiply(v, sw)\n", s, s);
  gh_add(c, "  fi = f64[] convert(i)\n  fib = %s broadcast(fi), dimensions={}\n  nv = %s add(vs, fib)\n", s, s);
  gh_add(c, "  st = s32[] constant(%d)\n  ni = s32[] %s(i, st)\n", step < 0 ? -step : step, step < 0 ? "subtract" : "add");
  gh_add(c, "  ROOT t = %s tuple(ni, nv, w, bnd)\n}\n\n", carry);
  gh_add(c, "cond {\n  p = %s parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n", carry);
  if (carried) gh_add(c, "  b = s32[] get-tuple-element(p), index=3\n");
  else gh_add(c, "  b = s32[] constant(%d)\n", bound);
  gh_add(c, "  ROOT lt = pred[] compare(i, b), direction=%s\n}\n\nENTRY e {\n", dir);
  gh_param(c, "x", s, 1);
  gh_param(c, "y", s, 1);
  gh_add(c, "  i0 = s32[] constant(%d)\n  b0 = s32[] constant(%d)\n  t = %s tuple(i0, x, y, b0)\n", from, bound, carry);
  gh_add(c, "  w = %s while(t), condition=cond, body=body\n  v = %s get-tuple-element(w), index=1\n", carry, s);
  gh_end_loss(c, "v", &n, 1);
}
static void while_up(gh_case *c) { fori(c, 0, 1, "LT", (int)gh_int(c, 1, 5), 0); }
static void while_le_step2(gh_case *c) { fori(c, 1, 2, "LE", (int)gh_int(c, 1, 7), 0); }
static void while_down(gh_case *c) { fori(c, (int)gh_int(c, 2, 6), -1, "GT", 0, 0); }
static void while_carried_bound(gh_case *c) { fori(c, 0, 1, "LT", (int)gh_int(c, 1, 4), 1); }
static void while_zero_trips(gh_case *c) { fori(c, 3, 1, "LT", 2, 0); }

/* jax's scan: ys[i] = 0.5 * carry + xs[i] (dynamic-slice / dynamic-update-slice at i) */
static void scan(gh_case *c) {
  int64_t T = gh_int(c, 1, 5);
  const char *s = gh_shape(c, "f64", &T, 1);
  char carry[96];
  snprintf(carry, sizeof carry, "(s32[], f64[], %s, %s)", s, s);
  gh_add(c, "HloModule grad_case\n\nadd {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT r = f64[] add(a, b)\n}\n\n");
  gh_add(c, "body {\n  p = %s parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n", carry);
  gh_add(c, "  h = f64[] get-tuple-element(p), index=1\n  ys = %s get-tuple-element(p), index=2\n", s);
  gh_add(c, "  xs = %s get-tuple-element(p), index=3\n  x1 = f64[1] dynamic-slice(xs, i), dynamic_slice_sizes={1}\n", s);
  gh_add(c, "  xi = f64[] reshape(x1)\n  k = f64[] constant(0.5)\n  kh = f64[] multiply(k, h)\n  th = f64[] tanh(kh)\n");
  gh_add(c, "  nh = f64[] add(th, xi)\n  n1 = f64[1] reshape(nh)\n  nys = %s dynamic-update-slice(ys, n1, i)\n", s);
  gh_add(c, "  one = s32[] constant(1)\n  ni = s32[] add(i, one)\n  ROOT t = %s tuple(ni, nh, nys, xs)\n}\n\n", carry);
  gh_add(c, "cond {\n  p = %s parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n", carry);
  gh_add(c, "  n = s32[] constant(%lld)\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n\nENTRY e {\n", (long long)T);
  gh_param(c, "xs", s, 1);
  gh_param(c, "h0", "f64[]", 1);
  gh_add(c, "  i0 = s32[] constant(0)\n  z = f64[] constant(0)\n  zs = %s broadcast(z), dimensions={}\n", s);
  gh_add(c, "  t = %s tuple(i0, h0, zs, xs)\n  w = %s while(t), condition=cond, body=body\n", carry, carry);
  gh_add(c, "  ys = %s get-tuple-element(w), index=2\n  h = f64[] get-tuple-element(w), index=1\n", s);
  gh_add(c, "  hb = %s broadcast(h), dimensions={}\n  o = %s multiply(ys, hb)\n", s, s);
  gh_end_loss(c, "o", &T, 1);
}

/* an outer loop whose body runs an inner loop and a call */
static void nested(gh_case *c) {
  int64_t n = n_of(c), To = gh_int(c, 1, 3), Ti = gh_int(c, 1, 3);
  const char *s = gh_shape(c, "f64", &n, 1);
  char carry[64];
  snprintf(carry, sizeof carry, "(s32[], %s)", s);
  gh_add(c, "HloModule grad_case\n\nadd {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT r = f64[] add(a, b)\n}\n\n");
  gh_add(c, "step {\n  a = %s parameter(0)\n  s = %s sine(a)\n  ROOT m = %s multiply(a, s)\n}\n\n", s, s, s);
  for (int k = 0; k < 2; k++) {
    const char *nm = k ? "outer" : "inner";
    gh_add(c, "%s_cond {\n  p = %s parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n", nm, carry);
    gh_add(c, "  b = s32[] constant(%lld)\n  ROOT lt = pred[] compare(i, b), direction=LT\n}\n\n", (long long)(k ? To : Ti));
    gh_add(c, "%s_body {\n  p = %s parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n", nm, carry);
    gh_add(c, "  v = %s get-tuple-element(p), index=1\n", s);
    if (k) {
      gh_add(c, "  z = s32[] constant(0)\n  t = %s tuple(z, v)\n  w = %s while(t), condition=inner_cond, body=inner_body\n",
             carry, carry);
      gh_add(c, "  wv = %s get-tuple-element(w), index=1\n  nv = %s call(wv), to_apply=step\n", s, s);
    } else {
      gh_add(c, "  k = f64[] constant(0.9)\n  kb = %s broadcast(k), dimensions={}\n  c = %s cosine(v)\n", s, s);
      gh_add(c, "  nv = %s multiply(c, kb)\n", s);
    }
    gh_add(c, "  one = s32[] constant(1)\n  ni = s32[] add(i, one)\n  ROOT r = %s tuple(ni, nv)\n}\n\n", carry);
  }
  gh_add(c, "ENTRY e {\n");
  gh_param(c, "x", s, 1);
  gh_add(c, "  z = s32[] constant(0)\n  t = %s tuple(z, x)\n  w = %s while(t), condition=outer_cond, body=outer_body\n",
         carry, carry);
  gh_add(c, "  v = %s get-tuple-element(w), index=1\n", s);
  gh_end_loss(c, "v", &n, 1);
}

const gh_entry gh_control_cases[] = {
  {"call", call}, {"fusion", fusion}, {"opt-barrier", opt_barrier}, {"conditional pred", conditional_pred},
  {"conditional index", conditional_index}, {"while up", while_up}, {"while LE step 2", while_le_step2},
  {"while down", while_down}, {"while carried bound", while_carried_bound}, {"while 0 trips", while_zero_trips},
  {"scan", scan}, {"nested while and call", nested},
};
const int gh_control_ncases = GH_LEN(gh_control_cases);

TEST(grad_control) { gh_run_table(gh_control_cases, gh_control_ncases, 4); }
