/* test_grad_reduce.c — gradients of reduce (sum, maximum, minimum over random dims; exact ties
 * share the gradient) and reduce-window (sum and average pooling with strides, padding and
 * both dilations; maximum and minimum pooling through select-and-scatter, also with a finite
 * init value) against finite differences. */
#include "grad_helpers.h"

static void reduce(gh_case *c, const char *to_apply, double zero_share) {
  int r = (int)gh_int(c, 1, 4);
  int64_t xd[4], red[4], yd[4];
  int nr = 0, ny = 0;
  gh_dims(c, xd, r, 4);
  for (int i = 0; i < r; i++) {
    if (gh_int(c, 0, 1)) red[nr++] = i;
    else yd[ny++] = xd[i];
  }
  gh_begin(c);
  gh_param(c, "x", gh_shape(c, "f64", xd, r), 1);
  c->zero_share[0] = zero_share;
  const char *init = !strcmp(to_apply, "add") ? "0" : !strcmp(to_apply, "mul") ? "1" : !strcmp(to_apply, "max") ? "-inf" : "inf";
  gh_add(c, "  z = f64[] constant(%s)\n  y = %s reduce(x, z), dimensions=%s, to_apply=%s\n", init,
         gh_shape(c, "f64", yd, ny), gh_list(c, red, nr), to_apply);
  gh_end_loss(c, "y", yd, ny);
}
static void reduce_sum(gh_case *c) { reduce(c, "add", 0); }
static void reduce_max(gh_case *c) { reduce(c, "max", 0); }
static void reduce_min(gh_case *c) { reduce(c, "min", 0); }
static void reduce_mul(gh_case *c) { reduce(c, "mul", 0); }
/* a third of the elements exactly 0: products with one zero (its element gets the product of
 * the others) and with several (nothing), where y/x is no gradient */
static void reduce_mul_zeros(gh_case *c) { reduce(c, "mul", 0.3); }

/* x repeated along a new dim and reduced back: every maximum is tied k ways */
static void reduce_max_ties(gh_case *c) {
  int64_t n = gh_int(c, 1, 5), k = gh_int(c, 2, 3), bd[2] = {n, k};
  gh_begin(c);
  gh_param(c, "x", gh_shape(c, "f64", &n, 1), 1);
  gh_add(c, "  b = %s broadcast(x), dimensions={0}\n  z = f64[] constant(-inf)\n", gh_shape(c, "f64", bd, 2));
  gh_add(c, "  y = %s reduce(b, z), dimensions={1}, to_apply=max\n", gh_shape(c, "f64", &n, 1));
  gh_end_loss(c, "y", &n, 1);
}

/* a random window over x of rank 1..3 (dilations only when `dilate`); the result dims */
static void window(gh_case *c, int r, const int64_t *xd, int dilate, int pad_neg, char *spec, size_t n, int64_t *yd) {
  char size[32] = "", stride[32] = "", pad[64] = "", ld[32] = "", rd[32] = "";
  for (int i = 0; i < r; i++) {
    int64_t sz, st, lo, hi, l, w, padded, win;
    do {
      /* sums may pad by -1..1; extremes at most size-1, so no window lies in padding only */
      sz = gh_int(c, 1, 3), st = gh_int(c, 1, 2);
      lo = gh_int(c, pad_neg ? -1 : 0, pad_neg ? 1 : sz - 1), hi = gh_int(c, pad_neg ? -1 : 0, pad_neg ? 1 : sz - 1);
      l = dilate ? gh_int(c, 1, 2) : 1, w = dilate ? gh_int(c, 1, 2) : 1;
      padded = (xd[i] - 1) * l + 1 + lo + hi, win = (sz - 1) * w + 1;
    } while (padded < win);
    yd[i] = (padded - win) / st + 1;
    const char *x = i ? "x" : "";
    snprintf(size + strlen(size), sizeof size - strlen(size), "%s%lld", x, (long long)sz);
    snprintf(stride + strlen(stride), sizeof stride - strlen(stride), "%s%lld", x, (long long)st);
    snprintf(pad + strlen(pad), sizeof pad - strlen(pad), "%s%lld_%lld", x, (long long)lo, (long long)hi);
    snprintf(ld + strlen(ld), sizeof ld - strlen(ld), "%s%lld", x, (long long)l);
    snprintf(rd + strlen(rd), sizeof rd - strlen(rd), "%s%lld", x, (long long)w);
  }
  snprintf(spec, n, "{size=%s stride=%s pad=%s lhs_dilate=%s rhs_dilate=%s}", size, stride, pad, ld, rd);
}

static void reduce_window(gh_case *c, const char *to_apply, const char *init, int dilate, int avg, double zero_share) {
  int r = (int)gh_int(c, 1, 3);
  int64_t xd[4], yd[4];
  char spec[256];
  gh_dims(c, xd, r, 5);
  window(c, r, xd, dilate, !strcmp(to_apply, "add"), spec, sizeof spec, yd);
  const char *ys = gh_shape(c, "f64", yd, r);
  gh_begin(c);
  gh_param(c, "x", gh_shape(c, "f64", xd, r), 1);
  c->zero_share[0] = zero_share;
  gh_add(c, "  z = f64[] constant(%s)\n  y = %s reduce-window(x, z), window=%s, to_apply=%s\n", init, ys, spec, to_apply);
  if (avg) gh_add(c, "  k = f64[] constant(3)\n  kb = %s broadcast(k), dimensions={}\n  a = %s divide(y, kb)\n", ys, ys);
  gh_end_loss(c, avg ? "a" : "y", yd, r);
}
static void window_sum(gh_case *c) { reduce_window(c, "add", "0", 1, 0, 0); }
static void window_avg(gh_case *c) { reduce_window(c, "add", "0", 0, 1, 0); }
static void window_max(gh_case *c) { reduce_window(c, "max", "-inf", 0, 0, 0); }
static void window_min(gh_case *c) { reduce_window(c, "min", "inf", 0, 0, 0); }
/* init 0: windows whose elements are all negative give 0, and x gets nothing there */
static void window_max_init0(gh_case *c) { reduce_window(c, "max", "0", 0, 0, 0); }
/* products over windows with strides, padding and dilations; an init of 2 pads with 2s */
static void window_mul(gh_case *c) { reduce_window(c, "mul", gh_int(c, 0, 1) ? "1" : "2", 1, 0, 0.3); }

/* jnp.cumprod as jax lowers it: a window of the whole dim padded by n-1 in front, with zeros */
static void window_cumprod(gh_case *c) {
  int r = (int)gh_int(c, 1, 3), d = (int)gh_int(c, 0, r - 1);
  int64_t xd[4], sz[4], lo[4];
  gh_dims(c, xd, r, 5);
  for (int i = 0; i < r; i++) sz[i] = i == d ? xd[i] : 1, lo[i] = i == d ? xd[i] - 1 : 0;
  char size[32] = "", pad[64] = "";
  for (int i = 0; i < r; i++) {
    snprintf(size + strlen(size), sizeof size - strlen(size), "%s%lld", i ? "x" : "", (long long)sz[i]);
    snprintf(pad + strlen(pad), sizeof pad - strlen(pad), "%s%lld_0", i ? "x" : "", (long long)lo[i]);
  }
  const char *xs = gh_shape(c, "f64", xd, r);
  gh_begin(c);
  gh_param(c, "x", xs, 1);
  c->zero_share[0] = 0.2;
  gh_add(c, "  z = f64[] constant(1)\n  y = %s reduce-window(x, z), window={size=%s pad=%s}, to_apply=mul\n", xs, size, pad);
  gh_end_loss(c, "y", xd, r);
}

const gh_entry gh_reduce_cases[] = {
  {"reduce sum", reduce_sum}, {"reduce max", reduce_max}, {"reduce min", reduce_min},
  {"reduce max ties", reduce_max_ties}, {"reduce product", reduce_mul}, {"reduce product zeros", reduce_mul_zeros},
  {"reduce-window product", window_mul}, {"reduce-window cumprod", window_cumprod}, {"reduce-window sum", window_sum}, {"reduce-window avg", window_avg},
  {"reduce-window max", window_max}, {"reduce-window min", window_min}, {"reduce-window max init 0", window_max_init0},
};
const int gh_reduce_ncases = GH_LEN(gh_reduce_cases);

TEST(grad_reduce) { gh_run_table(gh_reduce_cases, gh_reduce_ncases, 6); }
