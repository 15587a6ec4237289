/* test_grad_models.c — gradients of whole models against finite differences: an MLP with
 * softmax cross-entropy (XLA.jl's model, smaller), a LeNet-style CNN (two conv + relu +
 * max-pool layers, two dense layers, softmax cross-entropy), and second and third derivatives
 * (the gradient module differentiated again). */
#include <string.h>
#include "grad_helpers.h"
#include "ir/clone.h"

/* logits[B, K] and labels s32[B] -> loss = -mean(log_softmax(logits)[label]) as "loss" */
static void softmax_xent(gh_case *c, const char *logits, int64_t B, int64_t K) {
  int64_t d[2] = {B, K};
  const char *s = gh_shape(c, "f64", d, 2), *v = gh_shape(c, "f64", &B, 1), *ps = gh_shape(c, "pred", d, 2);
  gh_add(c, "  ninf = f64[] constant(-inf)\n  mx = %s reduce(%s, ninf), dimensions={1}, to_apply=max\n", v, logits);
  gh_add(c, "  mxb = %s broadcast(mx), dimensions={0}\n  zl = %s subtract(%s, mxb)\n  ez = %s exponential(zl)\n", s, s,
         logits, s);
  gh_add(c, "  zero = f64[] constant(0)\n  se = %s reduce(ez, zero), dimensions={1}, to_apply=add\n  lse = %s log(se)\n", v,
         v);
  gh_add(c, "  lseb = %s broadcast(lse), dimensions={0}\n  logp = %s subtract(zl, lseb)\n", s, s);
  gh_add(c, "  cls = %s iota(), iota_dimension=1\n  lab = %s broadcast(labels), dimensions={0}\n",
         gh_shape(c, "s32", d, 2), gh_shape(c, "s32", d, 2));
  gh_add(c, "  hot = %s compare(cls, lab), direction=EQ\n  zs = %s broadcast(zero), dimensions={}\n", ps, s);
  gh_add(c, "  picked = %s select(hot, logp, zs)\n  tot = f64[] reduce(picked, zero), dimensions={0,1}, to_apply=add\n", s);
  gh_add(c, "  nb = f64[] constant(%lld)\n  mean = f64[] divide(tot, nb)\n  xent = f64[] negate(mean)\n", (long long)B);
}

/* a dense layer: out = in @ w + b (relu when asked) */
static void dense(gh_case *c, const char *out, const char *in, const char *w, const char *b, int64_t B, int64_t N,
                  int relu) {
  int64_t d[2] = {B, N};
  const char *s = gh_shape(c, "f64", d, 2);
  gh_add(c, "  %s_mm = %s dot(%s, %s), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n", out, s, in, w);
  gh_add(c, "  %s_bb = %s broadcast(%s), dimensions={1}\n  %s%s = %s add(%s_mm, %s_bb)\n", out, s, b, out, relu ? "_pre" : "",
         s, out, out);
  if (relu) gh_add(c, "  %s_z = f64[] constant(0)\n  %s_zb = %s broadcast(%s_z), dimensions={}\n  %s = %s maximum(%s_pre, %s_zb)\n",
                   out, out, s, out, out, s, out, out);
}

static void mlp(gh_case *c) {
  int64_t B = 4, I = 6, H = 5, K = 3;
  gh_begin(c);
  gh_param(c, "x", gh_shape(c, "f64", (int64_t[]){B, I}, 2), 0);
  gh_param(c, "labels", gh_shape(c, "s32", &B, 1), 0);
  c->hi[1] = (double)(K - 1);
  gh_param(c, "w1", gh_shape(c, "f64", (int64_t[]){I, H}, 2), 1);
  gh_param(c, "b1", gh_shape(c, "f64", &H, 1), 1);
  gh_param(c, "w2", gh_shape(c, "f64", (int64_t[]){H, K}, 2), 1);
  gh_param(c, "b2", gh_shape(c, "f64", &K, 1), 1);
  dense(c, "h", "x", "w1", "b1", B, H, 1);
  dense(c, "logits", "h", "w2", "b2", B, K, 0);
  softmax_xent(c, "logits", B, K);
  gh_end_scalar(c, "xent");
}

/* conv (SAME padding) + relu + 2x2 max-pool, NHWC */
static void conv_block(gh_case *c, const char *out, const char *in, const char *k, int64_t B, int64_t S, int64_t Ci,
                       int64_t Co) {
  int64_t cd[4] = {B, S, S, Co}, pd[4] = {B, S / 2, S / 2, Co};
  const char *cs = gh_shape(c, "f64", cd, 4);
  (void)Ci;
  gh_add(c, "  %s_c = %s convolution(%s, %s), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n", out, cs, in, k);
  gh_add(c, "  %s_z = f64[] constant(0)\n  %s_zb = %s broadcast(%s_z), dimensions={}\n  %s_r = %s maximum(%s_c, %s_zb)\n",
         out, out, cs, out, out, cs, out, out);
  gh_add(c, "  %s_ninf = f64[] constant(-inf)\n  %s = %s reduce-window(%s_r, %s_ninf), "
            "window={size=1x2x2x1 stride=1x2x2x1}, to_apply=max\n",
         out, out, gh_shape(c, "f64", pd, 4), out, out);
}

static void lenet(gh_case *c) {
  int64_t B = 2, S = 8, C1 = 3, C2 = 4, F = (S / 4) * (S / 4) * C2, H = 6, K = 3;
  gh_begin(c);
  gh_param(c, "x", gh_shape(c, "f64", (int64_t[]){B, S, S, 1}, 4), 0);
  gh_param(c, "labels", gh_shape(c, "s32", &B, 1), 0);
  c->hi[1] = (double)(K - 1);
  gh_param(c, "k1", gh_shape(c, "f64", (int64_t[]){3, 3, 1, C1}, 4), 1);
  gh_param(c, "k2", gh_shape(c, "f64", (int64_t[]){3, 3, C1, C2}, 4), 1);
  gh_param(c, "w3", gh_shape(c, "f64", (int64_t[]){F, H}, 2), 1);
  gh_param(c, "b3", gh_shape(c, "f64", &H, 1), 1);
  gh_param(c, "w4", gh_shape(c, "f64", (int64_t[]){H, K}, 2), 1);
  gh_param(c, "b4", gh_shape(c, "f64", &K, 1), 1);
  conv_block(c, "l1", "x", "k1", B, S, 1, C1);
  conv_block(c, "l2", "l1", "k2", B, S / 2, C1, C2);
  gh_add(c, "  flat = %s reshape(l2)\n", gh_shape(c, "f64", (int64_t[]){B, F}, 2));
  dense(c, "h", "flat", "w3", "b3", B, H, 1);
  dense(c, "logits", "h", "w4", "b4", B, K, 0);
  softmax_xent(c, "logits", B, K);
  gh_end_scalar(c, "xent");
}

const gh_entry gh_model_cases[] = {{"mlp softmax cross-entropy", mlp}, {"lenet cnn", lenet}};
const int gh_model_ncases = GH_LEN(gh_model_cases);

TEST(grad_models) { gh_run_table(gh_model_cases, gh_model_ncases, 2); }

/* ---- higher derivatives ---- */

/* f(x, y) = sum(sin(x y) e^x + log(1 + x^2 y^2) + tanh(y) / (1 + x^2)) for scalar x, y[n] */
static void smooth(gh_case *c) {
  int64_t n = 3;
  const char *s = gh_shape(c, "f64", &n, 1);
  gh_begin(c);
  gh_param(c, "x", "f64[]", 1);
  gh_param(c, "y", s, 1);
  gh_add(c, "  xb = %s broadcast(x), dimensions={}\n  p = %s multiply(xb, y)\n  sp = %s sine(p)\n  ex = %s exponential(xb)\n",
         s, s, s, s);
  gh_add(c, "  t1 = %s multiply(sp, ex)\n  one = f64[] constant(1)\n  ob = %s broadcast(one), dimensions={}\n", s, s);
  gh_add(c, "  pp = %s multiply(p, p)\n  l = %s add(ob, pp)\n  t2 = %s log(l)\n  ty = %s tanh(y)\n", s, s, s, s);
  gh_add(c, "  xx = %s multiply(xb, xb)\n  d = %s add(ob, xx)\n  t3 = %s divide(ty, d)\n", s, s, s);
  gh_add(c, "  a = %s add(t1, t2)\n  b = %s add(a, t3)\n  z = f64[] constant(0)\n", s, s);
  gh_add(c, "  f = f64[] reduce(b, z), dimensions={0}, to_apply=add\n");
  gh_end_scalar(c, "f");
}

/* The gradient module of `text` with respect to x (parameter 0), rooted at d/dx: a scalar
 * function again, printed. */
static char *d_dx(const char *text) {
  cxla_context *ctx = test_ctx();
  cxla_module *m = NULL, *g = NULL, *r = NULL;
  char *out = NULL;
  int wrt = 0;
  if (cxla_module_parse(ctx, text, strlen(text), "f.hlo", &m) == CXLA_OK && cxla_module_grad(m, &wrt, 1, &g) == CXLA_OK) {
    int id = g->entry->root->ops[1]->id;
    if ((r = cx_module_clone_rooted(g, &id, 1))) out = cxla_module_to_string(r);
  }
  CHECK_MSG(out, "d/dx: %s", cxla_context_errmsg(ctx));
  cxla_module_destroy(m);
  cxla_module_destroy(g);
  cxla_module_destroy(r);
  return out;
}

TEST(grad_of_grad) {
  static gh_case c, c2;
  gh_init(&c, 5);
  smooth(&c);
  gh_check(&c, "f", 1);
  for (int order = 2; order <= 3; order++) {
    /* differentiate the previous derivative again, by x and by y */
    char *t = d_dx(c.text);
    if (!t) return;
    c2 = c;
    c2.len = snprintf(c2.text, sizeof c2.text, "%s", t);
    free(t);
    char what[64];
    snprintf(what, sizeof what, "derivative of order %d", order);
    gh_check(&c2, what, 1);
    c = c2;
  }
}
