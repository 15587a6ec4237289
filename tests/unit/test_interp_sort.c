/* test_interp_sort.c — sort in the reference interpreter: ascending/descending, along either
 * dimension, NaN and signed zeros under TOTALORDER, variadic key+payload, stability, and a
 * comparator that is not a single compare. Expected values are sorted by hand. */
#include "heavy_helpers.h"

/* sort of n operands along dim with comparator f; a tuple result when n > 1 */
static cxla_literal *sort_n(hh *h, int n, cxla_literal *const *ops, int64_t dim, int stable,
                            cx_comp *f) {
  cx_shape rs[8];
  for (int i = 0; i < n; i++) {
    if (!ops[i]) return NULL;
    rs[i] = ops[i]->shape;
  }
  cx_instr *in = hh_instr(h, CX_OP_SORT, n, rs, n, ops);
  if (!in || !f) return NULL;
  hh_ints(h, &in->a.dims, 1, &dim);
  in->a.is_stable = stable;
  cx_instr_set_called(in, 1, &f);
  cxla_literal *out = NULL;
  CHECK_OK(cx_interp_sort(&h->st, in, ops, &out));
  return out;
}

TEST(interp_sort_ascending_descending) {
  hh h;
  if (!hh_init(&h)) return;
  cxla_literal *x = hh_lit(CXLA_F32, 1, HH_DIMS(6), HH_VALS(3, 1, 2, -7, 10, 0.5));
  cx_comp *lt = hh_comparator(&h, 1, (cxla_type[]){CXLA_F32}, 0, 1, CXLA_LT, CX_CMP_FLOAT);
  cx_comp *gt = hh_comparator(&h, 1, (cxla_type[]){CXLA_F32}, 0, 1, CXLA_GT, CX_CMP_FLOAT);
  cxla_literal *a = sort_n(&h, 1, &x, 0, 0, lt), *d = sort_n(&h, 1, &x, 0, 0, gt);
  HH_EXPECT(a, CXLA_F32, 1, HH_DIMS(6), HH_VALS(-7, 0.5, 1, 2, 3, 10), 0);
  HH_EXPECT(d, CXLA_F32, 1, HH_DIMS(6), HH_VALS(10, 3, 2, 1, 0.5, -7), 0);
  /* compare(p1, p0, LT) is "rhs < lhs": descending too */
  cx_comp *rev = hh_comparator(&h, 1, (cxla_type[]){CXLA_F32}, 1, 0, CXLA_LT, CX_CMP_FLOAT);
  cxla_literal *d2 = sort_n(&h, 1, &x, 0, 0, rev);
  HH_EXPECT(d2, CXLA_F32, 1, HH_DIMS(6), HH_VALS(10, 3, 2, 1, 0.5, -7), 0);
  cxla_literal *all[] = {x, a, d, d2};
  hh_free_lits(4, all);
  hh_free(&h);
}

TEST(interp_sort_2d_each_dim) {
  hh h;
  if (!hh_init(&h)) return;
  cxla_literal *x = hh_lit(CXLA_S32, 2, HH_DIMS(2, 3), HH_VALS(5, -1, 3, 0, 8, -2));
  cx_comp *lt = hh_comparator(&h, 1, (cxla_type[]){CXLA_S32}, 0, 1, CXLA_LT, CX_CMP_SIGNED);
  cxla_literal *r1 = sort_n(&h, 1, &x, 1, 1, lt);
  HH_EXPECT(r1, CXLA_S32, 2, HH_DIMS(2, 3), HH_VALS(-1, 3, 5, -2, 0, 8), 0);
  cxla_literal *r0 = sort_n(&h, 1, &x, 0, 1, lt);
  HH_EXPECT(r0, CXLA_S32, 2, HH_DIMS(2, 3), HH_VALS(0, -1, -2, 5, 8, 3), 0);
  /* unsigned comparison of the same bits puts negatives last */
  cxla_literal *u = hh_lit(CXLA_U8, 1, HH_DIMS(4), HH_VALS(200, 3, 255, 0));
  cx_comp *ltu = hh_comparator(&h, 1, (cxla_type[]){CXLA_U8}, 0, 1, CXLA_LT, CX_CMP_UNSIGNED);
  cxla_literal *ru = sort_n(&h, 1, &u, 0, 1, ltu);
  HH_EXPECT(ru, CXLA_U8, 1, HH_DIMS(4), HH_VALS(0, 3, 200, 255), 0);
  cxla_literal *all[] = {x, r1, r0, u, ru};
  hh_free_lits(5, all);
  hh_free(&h);
}

TEST(interp_sort_totalorder_nan_and_zeros) {
  hh h;
  if (!hh_init(&h)) return;
  /* TOTALORDER: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN */
  cxla_literal *x = hh_lit(CXLA_F32, 1, HH_DIMS(8), HH_VALS(2, NAN, -INFINITY, 0.0, -0.0, -1, INFINITY, -NAN));
  cx_comp *lt = hh_comparator(&h, 1, (cxla_type[]){CXLA_F32}, 0, 1, CXLA_LT, CX_CMP_TOTALORDER);
  cxla_literal *r = sort_n(&h, 1, &x, 0, 1, lt);
  HH_EXPECT(r, CXLA_F32, 1, HH_DIMS(8), HH_VALS(-NAN, -INFINITY, -1, -0.0, 0.0, 2, INFINITY, NAN), 0);
  if (r) {
    CHECK(signbit(cxla_literal_get_f64(r, 0)));  /* the negative NaN first */
    CHECK(!signbit(cxla_literal_get_f64(r, 7)));
  }
  cxla_literal *all[] = {x, r};
  hh_free_lits(2, all);
  hh_free(&h);
}

TEST(interp_sort_key_payload_stable) {
  hh h;
  if (!hh_init(&h)) return;
  cxla_literal *k = hh_lit(CXLA_S32, 1, HH_DIMS(6), HH_VALS(3, 1, 2, 1, 3, 1));
  cxla_literal *p = hh_lit(CXLA_F32, 1, HH_DIMS(6), HH_VALS(30, 10, 20, 11, 31, 12));
  cxla_literal *ops[2] = {k, p};
  cxla_type types[2] = {CXLA_S32, CXLA_F32};
  /* keys only: equal keys keep their original order */
  cx_comp *by_key = hh_comparator(&h, 2, types, 0, 1, CXLA_LT, CX_CMP_SIGNED);
  cxla_literal *r = sort_n(&h, 2, ops, 0, 1, by_key);
  if (r) {
    HH_EXPECT(cxla_literal_tuple_get(r, 0), CXLA_S32, 1, HH_DIMS(6), HH_VALS(1, 1, 1, 2, 3, 3), 0);
    HH_EXPECT(cxla_literal_tuple_get(r, 1), CXLA_F32, 1, HH_DIMS(6), HH_VALS(10, 11, 12, 20, 30, 31), 0);
  }
  /* by payload, descending (parameters 2 and 3 are the payload's lhs and rhs) */
  cx_comp *by_payload = hh_comparator(&h, 2, types, 2, 3, CXLA_GT, CX_CMP_FLOAT);
  cxla_literal *r2 = sort_n(&h, 2, ops, 0, 0, by_payload);
  if (r2) {
    HH_EXPECT(cxla_literal_tuple_get(r2, 0), CXLA_S32, 1, HH_DIMS(6), HH_VALS(3, 3, 2, 1, 1, 1), 0);
    HH_EXPECT(cxla_literal_tuple_get(r2, 1), CXLA_F32, 1, HH_DIMS(6), HH_VALS(31, 30, 20, 12, 11, 10), 0);
  }
  cxla_literal *all[] = {k, p, r, r2};
  hh_free_lits(4, all);
  hh_free(&h);
}

/* A comparator that is not one compare runs through cx_interp_call_scalar: sort by key
 * descending, then by payload ascending: lk > rk or (lk == rk and lp < rp). */
TEST(interp_sort_lexicographic_comparator) {
  hh h;
  if (!hh_init(&h)) return;
  cx_comp *c = hh_comp(&h, "lex");
  cx_instr *lk = hh_param(c, 0, CXLA_S32), *rk = hh_param(c, 1, CXLA_S32);
  cx_instr *lp = hh_param(c, 2, CXLA_S32), *rp = hh_param(c, 3, CXLA_S32);
  cx_instr *gt = hh_cmp(c, CXLA_GT, CX_CMP_SIGNED, lk, rk);
  cx_instr *eq = hh_cmp(c, CXLA_EQ, CX_CMP_SIGNED, lk, rk);
  cx_instr *plt = hh_cmp(c, CXLA_LT, CX_CMP_SIGNED, lp, rp);
  cx_comp *f = hh_end(&h, c, hh_op2(c, CX_OP_OR, gt, hh_op2(c, CX_OP_AND, eq, plt)));
  cxla_literal *k = hh_lit(CXLA_S32, 2, HH_DIMS(1, 7), HH_VALS(1, 2, 1, 2, 0, 2, 1));
  cxla_literal *p = hh_lit(CXLA_S32, 2, HH_DIMS(1, 7), HH_VALS(9, 8, 7, 6, 5, 7, 8));
  cxla_literal *ops[2] = {k, p};
  cxla_literal *r = sort_n(&h, 2, ops, 1, 0, f);
  if (r) {
    HH_EXPECT(cxla_literal_tuple_get(r, 0), CXLA_S32, 2, HH_DIMS(1, 7), HH_VALS(2, 2, 2, 1, 1, 1, 0), 0);
    HH_EXPECT(cxla_literal_tuple_get(r, 1), CXLA_S32, 2, HH_DIMS(1, 7), HH_VALS(6, 7, 8, 7, 8, 9, 5), 0);
  }
  cxla_literal *all[] = {k, p, r};
  hh_free_lits(3, all);
  hh_free(&h);
}

TEST(interp_sort_long_and_empty) {
  hh h;
  if (!hh_init(&h)) return;
  /* 1000 values 999..0 interleaved; sorted must be 0..999 (exercises every merge width) */
  double v[1000], want[1000];
  for (int i = 0; i < 1000; i++) { v[i] = (i * 617) % 1000; want[i] = i; }
  cxla_literal *x = hh_lit(CXLA_S32, 1, HH_DIMS(1000), v);
  cx_comp *lt = hh_comparator(&h, 1, (cxla_type[]){CXLA_S32}, 0, 1, CXLA_LT, CX_CMP_SIGNED);
  cxla_literal *r = sort_n(&h, 1, &x, 0, 1, lt);
  HH_EXPECT(r, CXLA_S32, 1, HH_DIMS(1000), want, 0);
  cxla_literal *e = hh_lit(CXLA_S32, 2, HH_DIMS(3, 0), NULL);
  cxla_literal *re = sort_n(&h, 1, &e, 1, 1, lt);
  HH_EXPECT(re, CXLA_S32, 2, HH_DIMS(3, 0), NULL, 0);
  cxla_literal *all[] = {x, r, e, re};
  hh_free_lits(4, all);
  hh_free(&h);
}
