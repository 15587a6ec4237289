/* test_grad_index.c — gradients of dynamic-slice, dynamic-update-slice, gather, scatter-add
 * sort (one operand; several, sorted by float or tied integer keys, only some of them
 * differentiated) and top-k against finite differences. Start indices are random and sometimes out of bounds, so the
 * clamping of dynamic slices and gather, and the windows scatter skips, are part of what the
 * finite differences check. */
#include "grad_helpers.h"

/* start index parameters, one per dim, in [-1, dim - size + 1] */
static void starts(gh_case *c, const int64_t *xd, const int64_t *sz, int r, char *names, size_t n) {
  int k = 0;
  for (int i = 0; i < r; i++) {
    char nm[16];
    snprintf(nm, sizeof nm, "i%d", i);
    gh_param(c, nm, "s32[]", 0);
    c->lo[c->nparams - 1] = -1, c->hi[c->nparams - 1] = (double)(xd[i] - sz[i] + 1);
    k += snprintf(names + k, n - (size_t)k, ", %s", nm);
  }
}

static void dynamic_slice(gh_case *c) {
  int r = (int)gh_int(c, 1, 3);
  int64_t xd[4], sz[4];
  gh_dims(c, xd, r, 5);
  for (int i = 0; i < r; i++) sz[i] = gh_int(c, 1, xd[i]);
  char names[64];
  gh_begin(c);
  gh_param(c, "x", gh_shape(c, "f64", xd, r), 1);
  starts(c, xd, sz, r, names, sizeof names);
  gh_add(c, "  y = %s dynamic-slice(x%s), dynamic_slice_sizes=%s\n", gh_shape(c, "f64", sz, r), names, gh_list(c, sz, r));
  gh_end_loss(c, "y", sz, r);
}

static void dynamic_update_slice(gh_case *c) {
  int r = (int)gh_int(c, 1, 3);
  int64_t xd[4], sz[4];
  gh_dims(c, xd, r, 5);
  for (int i = 0; i < r; i++) sz[i] = gh_int(c, 1, xd[i]);
  char names[64];
  gh_begin(c);
  gh_param(c, "x", gh_shape(c, "f64", xd, r), 1);
  gh_param(c, "u", gh_shape(c, "f64", sz, r), 1);
  starts(c, xd, sz, r, names, sizeof names);
  gh_add(c, "  y = %s dynamic-update-slice(x, u%s)\n", gh_shape(c, "f64", xd, r), names);
  gh_end_loss(c, "y", xd, r);
}

/* an embedding lookup: rows of table[V, D] at indices in [-1, V] (clamped) */
static void gather_rows(gh_case *c) {
  int64_t V = gh_int(c, 2, 5), D = gh_int(c, 1, 3), N = gh_int(c, 1, 6), td[2] = {V, D}, yd[2] = {N, D};
  gh_begin(c);
  gh_param(c, "t", gh_shape(c, "f64", td, 2), 1);
  gh_param(c, "i", gh_shape(c, "s32", &N, 1), 0);
  c->lo[1] = -1, c->hi[1] = (double)V;
  gh_add(c, "  y = %s gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
            "index_vector_dim=1, slice_sizes={1,%lld}\n",
         gh_shape(c, "f64", yd, 2), (long long)D);
  gh_end_loss(c, "y", yd, 2);
}

/* operand [A,B,C], index vectors in the middle of indices [N,2,M] starting dims {2,0}, windows
 * 1 x sb x sc with the offset dims at result positions 1 and 3 */
static void gather_windows(gh_case *c) {
  int64_t A = gh_int(c, 1, 3), B = gh_int(c, 1, 3), C = gh_int(c, 2, 4), N = gh_int(c, 1, 2), M = gh_int(c, 1, 3);
  int64_t sb = gh_int(c, 1, B), sc = gh_int(c, 1, C);
  int64_t xd[3] = {A, B, C}, id[3] = {N, 2, M}, yd[4] = {N, sb, M, sc};
  gh_begin(c);
  gh_param(c, "x", gh_shape(c, "f64", xd, 3), 1);
  gh_param(c, "i", gh_shape(c, "s32", id, 3), 0);
  c->lo[1] = -1, c->hi[1] = 3;
  gh_add(c, "  y = %s gather(x, i), offset_dims={1,3}, collapsed_slice_dims={0}, start_index_map={2,0}, "
            "index_vector_dim=1, slice_sizes={1,%lld,%lld}\n",
         gh_shape(c, "f64", yd, 4), (long long)sb, (long long)sc);
  gh_end_loss(c, "y", yd, 4);
}

/* batching dims: row b of x[Bt, K] read at its own index */
static void gather_batched(gh_case *c) {
  int64_t Bt = gh_int(c, 1, 4), K = gh_int(c, 2, 5), xd[2] = {Bt, K}, id[2] = {Bt, 1};
  gh_begin(c);
  gh_param(c, "x", gh_shape(c, "f64", xd, 2), 1);
  gh_param(c, "i", gh_shape(c, "s32", id, 2), 0);
  c->hi[1] = (double)(K - 1);
  gh_add(c, "  y = %s gather(x, i), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, "
            "operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=1, slice_sizes={1,1}\n",
         gh_shape(c, "f64", &Bt, 1));
  gh_end_loss(c, "y", &Bt, 1);
}

/* rows of updates[N, D] added into x[V, D] at indices in [-1, V] (out-of-bounds rows skipped,
 * repeated rows summed) */
static void scatter_rows(gh_case *c) {
  int64_t V = gh_int(c, 2, 5), D = gh_int(c, 1, 3), N = gh_int(c, 1, 6), xd[2] = {V, D}, ud[2] = {N, D};
  gh_begin(c);
  gh_param(c, "x", gh_shape(c, "f64", xd, 2), 1);
  gh_param(c, "i", gh_shape(c, "s32", &N, 1), 0);
  gh_param(c, "u", gh_shape(c, "f64", ud, 2), 1);
  c->lo[1] = -1, c->hi[1] = (double)V;
  gh_add(c, "  y = %s scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, "
            "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n",
         gh_shape(c, "f64", xd, 2));
  gh_add(c, "  y2 = %s multiply(y, y)\n", gh_shape(c, "f64", xd, 2)); /* so the operand's cotangent varies */
  gh_end_loss(c, "y2", xd, 2);
}

/* index vectors [N, 2] into x[A, B], windows of wb along B: a window reaching past B is
 * skipped */
static void scatter_windows(gh_case *c) {
  int64_t A = gh_int(c, 1, 4), B = gh_int(c, 2, 5), N = gh_int(c, 1, 4), wb = gh_int(c, 1, B);
  int64_t xd[2] = {A, B}, id[2] = {N, 2}, ud[2] = {N, wb};
  gh_begin(c);
  gh_param(c, "x", gh_shape(c, "f64", xd, 2), 1);
  gh_param(c, "i", gh_shape(c, "s32", id, 2), 0);
  gh_param(c, "u", gh_shape(c, "f64", ud, 2), 1);
  c->lo[1] = -1, c->hi[1] = (double)(B - wb + 1);
  gh_add(c, "  y = %s scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, "
            "scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=add\n",
         gh_shape(c, "f64", xd, 2));
  gh_end_loss(c, "y", xd, 2);
}

/* sort along a random dim of a rank 1..3 array: one f64 operand (ascending or descending), or
 * float keys with two payloads, or integer keys in 0..3 (ties: a stable sort) with payloads;
 * the second payload is not differentiated */
static void sort_case(gh_case *c, int form) {
  int r = (int)gh_int(c, 1, 3);
  int64_t xd[4], d = gh_int(c, 0, r - 1);
  gh_dims(c, xd, r, 5);
  const char *s = gh_shape(c, "f64", xd, r), *si = gh_shape(c, "s32", xd, r);
  const char *kt = form == 2 ? "s32" : "f64", *dir = gh_int(c, 0, 1) ? "LT" : "GT";
  gh_add(c, "HloModule grad_case\n\nadd {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT r = f64[] add(a, b)\n}\n\n");
  gh_add(c, "cmp {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n", kt, kt);
  for (int i = 2; form && i < 6; i++) gh_add(c, "  p%d = f64[] parameter(%d)\n", i, i);
  gh_add(c, "  ROOT r = pred[] compare(a, b), direction=%s\n}\n\nENTRY e {\n", dir);
  gh_param(c, "x", form == 2 ? si : s, form != 2);
  if (!form) {
    gh_add(c, "  y = %s sort(x), dimensions={%lld}, to_apply=cmp\n", s, (long long)d);
    gh_end_loss(c, "y", xd, r);
    return;
  }
  gh_param(c, "u", s, 1);
  gh_param(c, "v", s, 0);
  gh_add(c, "  t = (%s, %s, %s) sort(x, u, v), dimensions={%lld}, is_stable=true, to_apply=cmp\n", form == 2 ? si : s, s, s,
         (long long)d);
  gh_add(c, "  t1 = %s get-tuple-element(t), index=1\n  t2 = %s get-tuple-element(t), index=2\n", s, s);
  gh_add(c, "  m = %s multiply(t1, t2)\n", s);
  if (form == 1) gh_add(c, "  t0 = %s get-tuple-element(t), index=0\n  k = %s sine(t0)\n  m2 = %s add(m, k)\n", s, s, s);
  gh_end_loss(c, form == 1 ? "m2" : "m", xd, r);
}
static void sort_one(gh_case *c) { sort_case(c, 0); }
static void sort_float_keys(gh_case *c) { sort_case(c, 1); }
static void sort_int_keys(gh_case *c) { sort_case(c, 2); }

/* top-k of the last dim (largest or smallest k), the values times the indices' parity */
static void topk(gh_case *c) {
  int r = (int)gh_int(c, 1, 3);
  int64_t xd[4], yd[4];
  gh_dims(c, xd, r, 5);
  for (int i = 0; i < r; i++) yd[i] = xd[i];
  yd[r - 1] = gh_int(c, 1, xd[r - 1]);
  const char *ys = gh_shape(c, "f64", yd, r), *is = gh_shape(c, "s32", yd, r);
  gh_begin(c);
  gh_param(c, "x", gh_shape(c, "f64", xd, r), 1);
  gh_add(c, "  t = (%s, %s) topk(x), k=%lld, largest=%s\n", ys, is, (long long)yd[r - 1], gh_int(c, 0, 1) ? "true" : "false");
  gh_add(c, "  v = %s get-tuple-element(t), index=0\n  i = %s get-tuple-element(t), index=1\n", ys, is);
  gh_add(c, "  f = %s convert(i)\n  m = %s multiply(v, f)\n  a = %s add(m, v)\n", ys, ys, ys);
  gh_end_loss(c, "a", yd, r);
}

const gh_entry gh_index_cases[] = {
  {"dynamic-slice", dynamic_slice}, {"dynamic-update-slice", dynamic_update_slice},
  {"gather rows", gather_rows}, {"gather windows", gather_windows}, {"gather batched", gather_batched},
  {"scatter rows", scatter_rows}, {"scatter windows", scatter_windows},
  {"sort", sort_one}, {"sort float keys and payloads", sort_float_keys}, {"sort tied integer keys", sort_int_keys},
  {"top-k", topk},
};
const int gh_index_ncases = GH_LEN(gh_index_cases);

TEST(grad_index) { gh_run_table(gh_index_cases, gh_index_ncases, 6); }
