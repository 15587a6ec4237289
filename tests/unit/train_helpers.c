/* train_helpers.c — see train_helpers.h. */
#include <stdint.h>
#include "train_helpers.h"

const char *th_quad_text(char *buf, size_t n, const char *t) {
  snprintf(buf, n,
           "HloModule quad\n\n"
           "add {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT r = %s[] add(a, b)\n}\n\n"
           "ENTRY main {\n  x = %s[4] parameter(0)\n  w = %s[4] parameter(1)\n  b = %s[] parameter(2)\n"
           "  bb = %s[4] broadcast(b), dimensions={}\n  s = %s[4] add(w, bb)\n  d = %s[4] subtract(s, x)\n"
           "  dd = %s[4] multiply(d, d)\n  z = %s[] constant(0)\n"
           "  ROOT l = %s[] reduce(dd, z), dimensions={0}, to_apply=add\n}\n",
           t, t, t, t, t, t, t, t, t, t, t, t);
  return buf;
}

/* relu(x w1 + b1) w2 + b2, softmax cross-entropy with one-hot labels, mean over the batch */
const char th_mlp_text[] =
    "HloModule mlp\n\n"
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] add(a, b)\n}\n\n"
    "max {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] maximum(a, b)\n}\n\n"
    "ENTRY loss {\n"
    "  w1 = f32[16,8] parameter(0)\n  b1 = f32[8] parameter(1)\n  w2 = f32[8,4] parameter(2)\n  b2 = f32[4] parameter(3)\n"
    "  x = f32[6,16] parameter(4)\n  y = f32[6,4] parameter(5)\n"
    "  d1 = f32[6,8] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  bb1 = f32[6,8] broadcast(b1), dimensions={1}\n  a1 = f32[6,8] add(d1, bb1)\n"
    "  z = f32[] constant(0)\n  zb = f32[6,8] broadcast(z), dimensions={}\n  h = f32[6,8] maximum(a1, zb)\n"
    "  d2 = f32[6,4] dot(h, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  bb2 = f32[6,4] broadcast(b2), dimensions={1}\n  lg = f32[6,4] add(d2, bb2)\n"
    "  ninf = f32[] constant(-inf)\n  mx = f32[6] reduce(lg, ninf), dimensions={1}, to_apply=max\n"
    "  mxb = f32[6,4] broadcast(mx), dimensions={0}\n  sh = f32[6,4] subtract(lg, mxb)\n  ex = f32[6,4] exponential(sh)\n"
    "  se = f32[6] reduce(ex, z), dimensions={1}, to_apply=add\n  ls = f32[6] log(se)\n"
    "  lsb = f32[6,4] broadcast(ls), dimensions={0}\n  lp = f32[6,4] subtract(sh, lsb)\n  yl = f32[6,4] multiply(y, lp)\n"
    "  t = f32[] reduce(yl, z), dimensions={0,1}, to_apply=add\n  k = f32[] constant(-0.16666667)\n"
    "  ROOT l = f32[] multiply(t, k)\n}\n";

cxla_module *th_parse(const char *text) {
  cxla_module *m = NULL;
  CHECK_OK(cxla_module_parse(test_ctx(), text, strlen(text), "train.hlo", &m));
  return m;
}

cxla_module *th_step(const char *text, const int *wrt, int nwrt, const cxla_optimizer *o) {
  cxla_module *m = th_parse(text), *s = NULL;
  if (m) CHECK_OK(cxla_module_train_step(m, wrt, nwrt, o, &s));
  cxla_module_destroy(m);
  return s;
}

cxla_literal *th_lit(cxla_type t, int n, const double *v) {
  int64_t d = n;
  cxla_literal *l = cxla_literal_create(test_ctx(), t, n < 0 ? 0 : 1, &d);
  for (int i = 0; l && i < (n < 0 ? 1 : n); i++) cxla_literal_set_f64(l, i, v[i]);
  return l;
}

cxla_literal *th_param_lit(cxla_module *m, int i, uint64_t seed, int zeros) {
  cxla_shape s;
  if (cxla_module_parameter_shape(m, i, &s) != CXLA_OK) return NULL;
  cxla_literal *l = cxla_literal_create(test_ctx(), s.type, s.rank, s.dims);
  int64_t n = 1;
  for (int d = 0; d < s.rank; d++) n *= s.dims[d];
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t k = 0; l && k < n; k++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    cxla_literal_set_f64(l, k, zeros ? 0 : (double)(x >> 11) / (double)(1ull << 53) * 2 - 1);
  }
  return l;
}

cxla_literal *th_run(cxla_module *m, const char *backend, int nargs, cxla_literal *const *args) {
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = backend;
  cxla_literal *r = NULL;
  CHECK_OK(cxla_module_run(m, &o, nargs, args, &r));
  return r;
}

double th_quad_grad(th_ref *r, const double *x) {
  double loss = 0;
  r->g[4] = 0;
  for (int i = 0; i < 4; i++) {
    double d = r->w[i] + r->w[4] - x[i];
    loss += d * d;
    r->g[i] = 2 * d;
    r->g[4] += 2 * d;
  }
  return loss;
}

void th_ref_update(th_ref *r) {
  const cxla_optimizer *o = &r->o;
  r->count++;
  for (int i = 0; i < r->n; i++) {
    double g = r->g[i], step = g;
    if (o->kind == CXLA_OPTIMIZER_ADAM) {
      r->s0[i] = (1 - o->beta1) * g + o->beta1 * r->s0[i];
      r->s1[i] = (1 - o->beta2) * g * g + o->beta2 * r->s1[i];
      double mhat = r->s0[i] / (1 - pow(o->beta1, r->count)), vhat = r->s1[i] / (1 - pow(o->beta2, r->count));
      step = mhat / (sqrt(vhat) + o->epsilon);
    } else if (o->momentum > 0) {
      r->s0[i] = g + o->momentum * r->s0[i];
      step = o->nesterov ? g + o->momentum * r->s0[i] : r->s0[i];
    }
    r->w[i] -= o->learning_rate * step;
  }
}

void th_near(const char *what, int i, double got, double want, double tol) {
  double scale = fabs(want) > 1 ? fabs(want) : 1;
  if (!(fabs(got - want) <= tol * scale))
    test_fail(__FILE__, __LINE__, "%s[%d]: got %.17g, want %.17g (tolerance %g)", what, i, got, want, tol * scale);
}
