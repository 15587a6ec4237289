/* test_grad_shape.c — gradients of the re-indexing ops against finite differences, with
 * random shapes and the dims they act on in random positions: broadcast (any order, size-1
 * expansion), reshape, bitcast, transpose, slice (strides), pad (negative and interior
 * padding, the padding value), concatenate, reverse. */
#include "grad_helpers.h"

static void broadcast(gh_case *c) {
  int R = (int)gh_int(c, 1, 4), r = (int)gh_int(c, 0, R);
  int64_t yd[4], xd[4], perm[4], map[4];
  gh_dims(c, yd, R, 4);
  gh_perm(c, perm, R);
  for (int i = 0; i < r; i++) { /* operand dim i lands on result dim perm[i]: any order */
    map[i] = perm[i];
    xd[i] = gh_int(c, 0, 3) == 0 ? 1 : yd[map[i]]; /* sometimes a size-1 dim expanded */
  }
  const char *xs = gh_shape(c, "f64", xd, r), *ys = gh_shape(c, "f64", yd, R);
  gh_begin(c);
  gh_param(c, "x", xs, 1);
  gh_add(c, "  y = %s broadcast(x), dimensions=%s\n", ys, gh_list(c, map, r));
  gh_end_loss(c, "y", yd, R);
}

/* reshape to the same elements regrouped: [a,b,c] -> e.g. [c*a... ] of a random split */
static void reshape_like(gh_case *c, const char *op) {
  int r = (int)gh_int(c, 1, 3);
  int64_t xd[4], f[12], yd[6];
  gh_dims(c, xd, r, 4);
  int nf = 0;
  for (int i = 0; i < r; i++) { /* factors of each dim, then regrouped */
    int64_t v = xd[i];
    for (int64_t p = 2; p <= v; p++)
      while (v % p == 0) f[nf++] = p, v /= p;
  }
  int R = 0;
  for (int i = 0; i < nf; i++) {
    if (R == 0 || gh_int(c, 0, 1)) yd[R++] = f[i];
    else yd[R - 1] *= f[i];
    if (R == 5) break;
  }
  if (R == 5) { /* fold what is left into the last */
    int64_t n = 1, m = 1;
    for (int i = 0; i < r; i++) n *= xd[i];
    for (int i = 0; i < R; i++) m *= yd[i];
    yd[R - 1] *= n / m;
  }
  if (gh_int(c, 0, 1)) yd[R++] = 1; /* a unit dim */
  const char *xs = gh_shape(c, "f64", xd, r), *ys = gh_shape(c, "f64", yd, R);
  gh_begin(c);
  gh_param(c, "x", xs, 1);
  gh_add(c, "  y = %s %s(x)\n", ys, op);
  gh_end_loss(c, "y", yd, R);
}
static void reshape(gh_case *c) { reshape_like(c, "reshape"); }
static void bitcast(gh_case *c) { reshape_like(c, "bitcast"); }

static void transpose(gh_case *c) {
  int r = (int)gh_int(c, 1, 4);
  int64_t xd[4], yd[4], p[4];
  gh_dims(c, xd, r, 4);
  gh_perm(c, p, r);
  for (int i = 0; i < r; i++) yd[i] = xd[p[i]];
  const char *xs = gh_shape(c, "f64", xd, r), *ys = gh_shape(c, "f64", yd, r);
  gh_begin(c);
  gh_param(c, "x", xs, 1);
  gh_add(c, "  y = %s transpose(x), dimensions=%s\n", ys, gh_list(c, p, r));
  gh_end_loss(c, "y", yd, r);
}

static void slice(gh_case *c) {
  int r = (int)gh_int(c, 1, 3);
  int64_t xd[4], yd[4];
  char spec[128];
  int k = snprintf(spec, sizeof spec, "{");
  gh_dims(c, xd, r, 6);
  for (int i = 0; i < r; i++) {
    int64_t st = gh_int(c, 0, xd[i] - 1), lim = gh_int(c, st + 1, xd[i]), stride = gh_int(c, 1, 3);
    yd[i] = (lim - st + stride - 1) / stride;
    k += snprintf(spec + k, sizeof spec - (size_t)k, "%s[%lld:%lld:%lld]", i ? ", " : "", (long long)st, (long long)lim,
                  (long long)stride);
  }
  snprintf(spec + k, sizeof spec - (size_t)k, "}");
  const char *xs = gh_shape(c, "f64", xd, r), *ys = gh_shape(c, "f64", yd, r);
  gh_begin(c);
  gh_param(c, "x", xs, 1);
  gh_add(c, "  y = %s slice(x), slice=%s\n", ys, spec);
  gh_end_loss(c, "y", yd, r);
}

/* lo/hi in [-1, 2] (negative cuts), interior in [0, 2]; the padding value is differentiated */
static void pad(gh_case *c) {
  int r = (int)gh_int(c, 1, 3);
  int64_t xd[4], yd[4];
  char spec[128];
  int k = 0;
  gh_dims(c, xd, r, 4);
  for (int i = 0; i < r; i++) {
    int64_t lo, hi, in;
    do {
      lo = gh_int(c, -1, 2), hi = gh_int(c, -1, 2), in = gh_int(c, 0, 2);
      yd[i] = lo + hi + xd[i] + (xd[i] - 1) * in;
    } while (yd[i] < 1);
    k += snprintf(spec + k, sizeof spec - (size_t)k, "%s%lld_%lld_%lld", i ? "x" : "", (long long)lo, (long long)hi,
                  (long long)in);
  }
  const char *xs = gh_shape(c, "f64", xd, r), *ys = gh_shape(c, "f64", yd, r);
  gh_begin(c);
  gh_param(c, "x", xs, 1);
  gh_param(c, "v", "f64[]", 1);
  gh_add(c, "  y = %s pad(x, v), padding=%s\n", ys, spec);
  gh_end_loss(c, "y", yd, r);
}

static void concatenate(gh_case *c) {
  int r = (int)gh_int(c, 1, 3), dim = (int)gh_int(c, 0, r - 1), n = (int)gh_int(c, 2, 3);
  int64_t d[4], yd[4];
  gh_dims(c, d, r, 3);
  for (int i = 0; i < r; i++) yd[i] = d[i];
  yd[dim] = 0;
  gh_begin(c);
  char names[64] = "";
  int k = 0;
  for (int j = 0; j < n; j++) {
    d[dim] = gh_int(c, 1, 3);
    yd[dim] += d[dim];
    char nm[16];
    snprintf(nm, sizeof nm, "x%d", j);
    gh_param(c, nm, gh_shape(c, "f64", d, r), j != 1 || n == 2); /* x1 stays constant with 3 */
    k += snprintf(names + k, sizeof names - (size_t)k, "%s%s", j ? ", " : "", nm);
  }
  gh_add(c, "  y = %s concatenate(%s), dimensions={%d}\n", gh_shape(c, "f64", yd, r), names, dim);
  gh_end_loss(c, "y", yd, r);
}

static void reverse(gh_case *c) {
  int r = (int)gh_int(c, 1, 3);
  int64_t d[4], rev[4];
  int n = 0;
  gh_dims(c, d, r, 4);
  for (int i = 0; i < r; i++)
    if (gh_int(c, 0, 1)) rev[n++] = i;
  const char *s = gh_shape(c, "f64", d, r);
  gh_begin(c);
  gh_param(c, "x", s, 1);
  gh_add(c, "  y = %s reverse(x), dimensions=%s\n", s, gh_list(c, rev, n));
  gh_end_loss(c, "y", d, r);
}

const gh_entry gh_shape_cases[] = {
  {"broadcast", broadcast}, {"reshape", reshape}, {"bitcast", bitcast}, {"transpose", transpose},
  {"slice", slice}, {"pad", pad}, {"concatenate", concatenate}, {"reverse", reverse},
};
const int gh_shape_ncases = GH_LEN(gh_shape_cases);

TEST(grad_shape) { gh_run_table(gh_shape_cases, gh_shape_ncases, 6); }
