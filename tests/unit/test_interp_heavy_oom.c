/* test_interp_heavy_oom.c — every allocation failure inside the heavy ops (reduce, windows,
 * sort, map, dot, convolution, gather) comes back as CXLA_ERR_OUT_OF_MEMORY with no result
 * and no leak (the sanitizer build checks leaks), and the op succeeds once allocations do. */
#include "heavy_helpers.h"

/* Fails the k-th allocation for k = 0, 1, ... until the op succeeds; returns the result. */
static cxla_literal *oom_loop(hh *h, cx_interp_fn fn, cx_instr *in, cxla_literal *const *ops) {
  if (!in) return NULL;
  for (int k = 0; k < 200; k++) {
    cxla_literal *out = NULL;
    cx_alloc_fail_after(k);
    cxla_status s = fn(&h->st, in, ops, &out);
    cx_alloc_fail_after(-1);
    if (s == CXLA_OK) return out;
    CHECK_MSG(s == CXLA_ERR_OUT_OF_MEMORY, "%s: status %s after %d allocations: %s",
              cx_op_name(in->op), cxla_status_str(s), k, cxla_context_errmsg(test_ctx()));
    CHECK(out == NULL);
    if (s != CXLA_ERR_OUT_OF_MEMORY) return NULL;
  }
  test_fail(__FILE__, __LINE__, "%s never succeeded", cx_op_name(in->op));
  return NULL;
}

TEST(interp_heavy_oom_reduce_window_sort_map) {
  hh h;
  if (!hh_init(&h)) return;
  cxla_literal *x = hh_lit(CXLA_F32, 2, HH_DIMS(2, 3), HH_VALS(3, 1, 2, 6, 5, 4));
  cxla_literal *y = hh_lit(CXLA_S32, 2, HH_DIMS(2, 3), HH_VALS(0, 1, 2, 3, 4, 5));
  cxla_literal *z = hh_scalar(CXLA_F32, 0), *zi = hh_scalar(CXLA_S32, 0);
  cx_comp *add = hh_binary(&h, CX_OP_ADD, CXLA_F32);
  /* variadic reduce: two sums, through the general call path */
  cx_comp *c = hh_comp(&h, "sum2");
  cx_instr *a0 = hh_param(c, 0, CXLA_F32), *a1 = hh_param(c, 1, CXLA_S32);
  cx_instr *x0 = hh_param(c, 2, CXLA_F32), *x1 = hh_param(c, 3, CXLA_S32);
  cx_instr *el[2] = {hh_op2(c, CX_OP_ADD, a0, x0), hh_op2(c, CX_OP_ADD, a1, x1)};
  cx_comp *sum2 = hh_end(&h, c, hh_tuple(c, 2, el));
  cxla_literal *rops[4] = {x, y, z, zi};
  cx_shape rs[2] = {cx_shape_array(CXLA_F32, 1, HH_DIMS(2)), cx_shape_array(CXLA_S32, 1, HH_DIMS(2))};
  cx_instr *red = hh_instr(&h, CX_OP_REDUCE, 2, rs, 4, rops);
  cxla_literal *r1 = NULL, *r2 = NULL, *r3 = NULL, *r4 = NULL;
  if (red && sum2) {
    hh_ints(&h, &red->a.dims, 1, HH_DIMS(1));
    cx_instr_set_called(red, 1, &sum2);
    r1 = oom_loop(&h, cx_interp_reduce, red, rops);
    if (r1) HH_EXPECT(cxla_literal_tuple_get(r1, 1), CXLA_S32, 1, HH_DIMS(2), HH_VALS(3, 12), 0);
  }
  cxla_literal *wops[2] = {x, z};
  cx_instr *rw = hh_instr1(&h, CX_OP_REDUCE_WINDOW, CXLA_F32, 2, HH_DIMS(1, 2), 2, wops);
  if (rw && add) {
    hh_window(&h, rw, 2, (const int64_t[][7]){{2, 1, 0, 0, 1, 1, 0}, {2, 1, 0, 0, 1, 1, 0}});
    cx_instr_set_called(rw, 1, &add);
    r2 = oom_loop(&h, cx_interp_reduce_window, rw, wops);
    HH_EXPECT(r2, CXLA_F32, 2, HH_DIMS(1, 2), HH_VALS(15, 12), 0);
  }
  cx_comp *lt = hh_comparator(&h, 2, (cxla_type[]){CXLA_F32, CXLA_S32}, 0, 1, CXLA_LT, CX_CMP_FLOAT);
  cxla_literal *sops[2] = {x, y};
  cx_shape ss[2] = {x ? x->shape : rs[0], y ? y->shape : rs[1]};
  cx_instr *so = hh_instr(&h, CX_OP_SORT, 2, ss, 2, sops);
  if (so && lt) {
    hh_ints(&h, &so->a.dims, 1, HH_DIMS(1));
    cx_instr_set_called(so, 1, &lt);
    r3 = oom_loop(&h, cx_interp_sort, so, sops);
    if (r3) HH_EXPECT(cxla_literal_tuple_get(r3, 1), CXLA_S32, 2, HH_DIMS(2, 3), HH_VALS(1, 2, 0, 5, 4, 3), 0);
  }
  cxla_literal *mops[2] = {x, x};
  cx_instr *mp = hh_instr1(&h, CX_OP_MAP, CXLA_F32, 2, HH_DIMS(2, 3), 2, mops);
  if (mp && add) {
    cx_instr_set_called(mp, 1, &add);
    r4 = oom_loop(&h, cx_interp_map, mp, mops);
    HH_EXPECT(r4, CXLA_F32, 2, HH_DIMS(2, 3), HH_VALS(6, 2, 4, 12, 10, 8), 0);
  }
  cxla_literal *all[] = {x, y, z, zi, r1, r2, r3, r4};
  hh_free_lits(8, all);
  hh_free(&h);
}

TEST(interp_heavy_oom_dot_conv_gather_sas) {
  hh h;
  if (!hh_init(&h)) return;
  cxla_literal *a = hh_lit(CXLA_F32, 2, HH_DIMS(2, 2), HH_VALS(1, 2, 3, 4));
  cxla_literal *ops[2] = {a, a};
  cxla_literal *r1 = NULL, *r2 = NULL, *r3 = NULL, *r4 = NULL;
  cx_instr *d = hh_instr1(&h, CX_OP_DOT, CXLA_F32, 2, HH_DIMS(2, 2), 2, ops);
  if (d) {
    hh_ints(&h, &d->a.dot.lhs_contract, 1, HH_DIMS(1));
    hh_ints(&h, &d->a.dot.rhs_contract, 1, HH_DIMS(0));
    r1 = oom_loop(&h, cx_interp_dot, d, ops);
    HH_EXPECT(r1, CXLA_F32, 2, HH_DIMS(2, 2), HH_VALS(7, 10, 15, 22), 0);
  }
  /* a 1x1 "image" with 2 features convolved by a 2x2 matrix: the same product */
  cx_instr *cv = hh_instr1(&h, CX_OP_CONVOLUTION, CXLA_F32, 2, HH_DIMS(2, 2), 2, ops);
  if (cv) {
    static cx_conv_dims cd = {.nspatial = 0, .in_batch = 0, .in_feature = 1, .k_in = 0,
                              .k_out = 1, .out_batch = 0, .out_feature = 1};
    cv->a.conv = &cd;
    r2 = oom_loop(&h, cx_interp_convolution, cv, ops);
    HH_EXPECT(r2, CXLA_F32, 2, HH_DIMS(2, 2), HH_VALS(7, 10, 15, 22), 0);
  }
  cxla_literal *ix = hh_lit(CXLA_S32, 1, HH_DIMS(1), HH_VALS(1));
  cxla_literal *gops[2] = {a, ix};
  cx_instr *g = hh_instr1(&h, CX_OP_GATHER, CXLA_F32, 2, HH_DIMS(1, 2), 2, gops);
  if (g) {
    hh_ints(&h, &g->a.gather.offset_dims, 1, HH_DIMS(1));
    hh_ints(&h, &g->a.gather.collapsed_slice_dims, 1, HH_DIMS(0));
    hh_ints(&h, &g->a.gather.start_index_map, 1, HH_DIMS(0));
    hh_ints(&h, &g->a.gather.slice_sizes, 2, HH_DIMS(1, 2));
    g->a.gather.index_vector_dim = 1;
    r3 = oom_loop(&h, cx_interp_gather, g, gops);
    HH_EXPECT(r3, CXLA_F32, 2, HH_DIMS(1, 2), HH_VALS(3, 4), 0);
  }
  cxla_literal *src = hh_lit(CXLA_F32, 2, HH_DIMS(1, 1), HH_VALS(5)), *z = hh_scalar(CXLA_F32, 0);
  cxla_literal *sops[3] = {a, src, z};
  cx_comp *ge = hh_comparator(&h, 1, (cxla_type[]){CXLA_F32}, 0, 1, CXLA_GE, CX_CMP_FLOAT);
  cx_comp *add = hh_binary(&h, CX_OP_ADD, CXLA_F32);
  cx_instr *sas = hh_instr1(&h, CX_OP_SELECT_AND_SCATTER, CXLA_F32, 2, HH_DIMS(2, 2), 3, sops);
  if (sas && ge && add) {
    hh_window(&h, sas, 2, (const int64_t[][7]){{2, 1, 0, 0, 1, 1, 0}, {2, 1, 0, 0, 1, 1, 0}});
    cx_comp *called[2] = {ge, add};
    cx_instr_set_called(sas, 2, called);
    r4 = oom_loop(&h, cx_interp_select_and_scatter, sas, sops);
    HH_EXPECT(r4, CXLA_F32, 2, HH_DIMS(2, 2), HH_VALS(0, 0, 0, 5), 0);
  }
  cxla_literal *all[] = {a, ix, src, z, r1, r2, r3, r4};
  hh_free_lits(8, all);
  hh_free(&h);
}
