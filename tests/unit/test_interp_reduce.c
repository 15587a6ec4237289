/* test_interp_reduce.c — reduce, reduce-window, select-and-scatter and map in the reference
 * interpreter, on hand-built instructions. Expected values are worked out by hand in the
 * comments (several follow the examples of XLA's operation semantics). */
#include "heavy_helpers.h"

/* Runs fn on the instruction; returns the result or NULL (failing the test). */
static cxla_literal *run(hh *h, cx_interp_fn fn, cx_instr *in, cxla_literal *const *ops) {
  cxla_literal *out = NULL;
  if (!in) return NULL;
  CHECK_OK(fn(&h->st, in, ops, &out));
  return out;
}

/* reduce(x, init) over dims with a single-operand computation */
static cxla_literal *reduce1(hh *h, cx_comp *f, cxla_literal *x, cxla_literal *init, int nd,
                             const int64_t *dims, int out_rank, const int64_t *out_dims) {
  cxla_literal *ops[2] = {x, init};
  cx_instr *in = hh_instr1(h, CX_OP_REDUCE, init->shape.type, out_rank, out_dims, 2, ops);
  if (!in || !f) return NULL;
  hh_ints(h, &in->a.dims, nd, dims);
  cx_instr_set_called(in, 1, &f);
  return run(h, cx_interp_reduce, in, ops);
}

TEST(interp_reduce_sum_each_dim) {
  hh h;
  if (!hh_init(&h)) return;
  cxla_literal *x = hh_lit(CXLA_F32, 2, HH_DIMS(2, 3), HH_VALS(1, 2, 3, 4, 5, 6));
  cxla_literal *z = hh_scalar(CXLA_F32, 0), *ten = hh_scalar(CXLA_F32, 10);
  cx_comp *add = hh_binary(&h, CX_OP_ADD, CXLA_F32);
  cxla_literal *r0 = reduce1(&h, add, x, z, 1, HH_DIMS(0), 1, HH_DIMS(3));
  HH_EXPECT(r0, CXLA_F32, 1, HH_DIMS(3), HH_VALS(5, 7, 9), 0);
  cxla_literal *r1 = reduce1(&h, add, x, z, 1, HH_DIMS(1), 1, HH_DIMS(2));
  HH_EXPECT(r1, CXLA_F32, 1, HH_DIMS(2), HH_VALS(6, 15), 0);
  cxla_literal *r01 = reduce1(&h, add, x, z, 2, HH_DIMS(1, 0), 0, NULL);
  HH_EXPECT(r01, CXLA_F32, 0, NULL, HH_VALS(21), 0);
  /* the init value seeds each result element once */
  cxla_literal *ri = reduce1(&h, add, x, ten, 1, HH_DIMS(1), 1, HH_DIMS(2));
  HH_EXPECT(ri, CXLA_F32, 1, HH_DIMS(2), HH_VALS(16, 25), 0);
  cxla_literal *all[] = {x, z, ten, r0, r1, r01, ri};
  hh_free_lits(7, all);
  hh_free(&h);
}

TEST(interp_reduce_middle_dim_rank3) {
  hh h;
  if (!hh_init(&h)) return;
  /* x[i][j][k] = 6i + 2j + k; sum over j = 18i + 3k + 6 */
  double v[12];
  for (int i = 0; i < 12; i++) v[i] = i;
  cxla_literal *x = hh_lit(CXLA_S32, 3, HH_DIMS(2, 3, 2), v);
  cxla_literal *z = hh_scalar(CXLA_S32, 0);
  cx_comp *add = hh_binary(&h, CX_OP_ADD, CXLA_S32);
  cxla_literal *r = reduce1(&h, add, x, z, 1, HH_DIMS(1), 2, HH_DIMS(2, 2));
  HH_EXPECT(r, CXLA_S32, 2, HH_DIMS(2, 2), HH_VALS(6, 9, 24, 27), 0);
  /* over dims {0,2}: sum_i,k = 2*3*... per j: (0+1+6+7)+4j = 14 + 8j */
  cxla_literal *r2 = reduce1(&h, add, x, z, 2, HH_DIMS(0, 2), 1, HH_DIMS(3));
  HH_EXPECT(r2, CXLA_S32, 1, HH_DIMS(3), HH_VALS(14, 22, 30), 0);
  cxla_literal *all[] = {x, z, r, r2};
  hh_free_lits(4, all);
  hh_free(&h);
}

TEST(interp_reduce_max_min_mul) {
  hh h;
  if (!hh_init(&h)) return;
  cxla_literal *x = hh_lit(CXLA_F32, 2, HH_DIMS(2, 3), HH_VALS(1, 3, 2, 4, -5, 6));
  cxla_literal *ninf = hh_scalar(CXLA_F32, -INFINITY), *pinf = hh_scalar(CXLA_F32, INFINITY);
  cxla_literal *one = hh_scalar(CXLA_F32, 1);
  cxla_literal *mx = reduce1(&h, hh_binary(&h, CX_OP_MAXIMUM, CXLA_F32), x, ninf, 1, HH_DIMS(1), 1, HH_DIMS(2));
  HH_EXPECT(mx, CXLA_F32, 1, HH_DIMS(2), HH_VALS(3, 6), 0);
  cxla_literal *mn = reduce1(&h, hh_binary(&h, CX_OP_MINIMUM, CXLA_F32), x, pinf, 1, HH_DIMS(1), 1, HH_DIMS(2));
  HH_EXPECT(mn, CXLA_F32, 1, HH_DIMS(2), HH_VALS(1, -5), 0);
  cxla_literal *ml = reduce1(&h, hh_binary(&h, CX_OP_MULTIPLY, CXLA_F32), x, one, 1, HH_DIMS(1), 1, HH_DIMS(2));
  HH_EXPECT(ml, CXLA_F32, 1, HH_DIMS(2), HH_VALS(6, -120), 0);
  cxla_literal *all[] = {x, ninf, pinf, one, mx, mn, ml};
  hh_free_lits(7, all);
  hh_free(&h);
}

TEST(interp_reduce_pred_and_or) {
  hh h;
  if (!hh_init(&h)) return;
  cxla_literal *x = hh_lit(CXLA_PRED, 2, HH_DIMS(2, 3), HH_VALS(1, 1, 0, 0, 0, 0));
  cxla_literal *t = hh_scalar(CXLA_PRED, 1), *f = hh_scalar(CXLA_PRED, 0);
  cx_comp *and_ = hh_binary(&h, CX_OP_AND, CXLA_PRED), *or_ = hh_binary(&h, CX_OP_OR, CXLA_PRED);
  cxla_literal *a1 = reduce1(&h, and_, x, t, 1, HH_DIMS(1), 1, HH_DIMS(2));
  HH_EXPECT(a1, CXLA_PRED, 1, HH_DIMS(2), HH_VALS(0, 0), 0);
  cxla_literal *o1 = reduce1(&h, or_, x, f, 1, HH_DIMS(1), 1, HH_DIMS(2));
  HH_EXPECT(o1, CXLA_PRED, 1, HH_DIMS(2), HH_VALS(1, 0), 0);
  cxla_literal *o0 = reduce1(&h, or_, x, f, 1, HH_DIMS(0), 1, HH_DIMS(3));
  HH_EXPECT(o0, CXLA_PRED, 1, HH_DIMS(3), HH_VALS(1, 1, 0), 0);
  cxla_literal *a01 = reduce1(&h, and_, x, t, 2, HH_DIMS(0, 1), 0, NULL);
  HH_EXPECT(a01, CXLA_PRED, 0, NULL, HH_VALS(0), 0);
  cxla_literal *all[] = {x, t, f, a1, o1, o0, a01};
  hh_free_lits(7, all);
  hh_free(&h);
}

TEST(interp_reduce_empty_dim_gives_init) {
  hh h;
  if (!hh_init(&h)) return;
  cxla_literal *x = hh_lit(CXLA_F32, 2, HH_DIMS(2, 0), NULL);
  cxla_literal *y = hh_lit(CXLA_F32, 2, HH_DIMS(0, 3), NULL);
  cxla_literal *seven = hh_scalar(CXLA_F32, 7);
  cx_comp *add = hh_binary(&h, CX_OP_ADD, CXLA_F32);
  cxla_literal *r = reduce1(&h, add, x, seven, 1, HH_DIMS(1), 1, HH_DIMS(2));
  HH_EXPECT(r, CXLA_F32, 1, HH_DIMS(2), HH_VALS(7, 7), 0);
  cxla_literal *r2 = reduce1(&h, add, y, seven, 1, HH_DIMS(0), 1, HH_DIMS(3));
  HH_EXPECT(r2, CXLA_F32, 1, HH_DIMS(3), HH_VALS(7, 7, 7), 0);
  cxla_literal *r3 = reduce1(&h, add, y, seven, 1, HH_DIMS(1), 1, HH_DIMS(0));
  HH_EXPECT(r3, CXLA_F32, 1, HH_DIMS(0), NULL, 0);
  cxla_literal *all[] = {x, y, seven, r, r2, r3};
  hh_free_lits(6, all);
  hh_free(&h);
}

/* subtract is not one of the direct reducers: it runs through cx_interp_call_scalar, and its
 * result shows the order: ((((init - x0) - x1) - x2). */
TEST(interp_reduce_order_non_commutative) {
  hh h;
  if (!hh_init(&h)) return;
  cxla_literal *x = hh_lit(CXLA_S32, 2, HH_DIMS(2, 3), HH_VALS(1, 2, 3, 10, 20, 30));
  cxla_literal *init = hh_scalar(CXLA_S32, 100);
  cx_comp *sub = hh_binary(&h, CX_OP_SUBTRACT, CXLA_S32);
  cxla_literal *r = reduce1(&h, sub, x, init, 1, HH_DIMS(1), 1, HH_DIMS(2));
  HH_EXPECT(r, CXLA_S32, 1, HH_DIMS(2), HH_VALS(94, 40), 0);
  cxla_literal *all[] = {x, init, r};
  hh_free_lits(3, all);
  hh_free(&h);
}

/* (acc_v, acc_i, x_v, x_i) -> the larger value with its index; ties keep the smaller index */
static cx_comp *argmax_comp(hh *h) {
  cx_comp *c = hh_comp(h, "argmax");
  cx_instr *av = hh_param(c, 0, CXLA_F32), *ai = hh_param(c, 1, CXLA_S32);
  cx_instr *xv = hh_param(c, 2, CXLA_F32), *xi = hh_param(c, 3, CXLA_S32);
  cx_instr *gt = hh_cmp(c, CXLA_GT, CX_CMP_FLOAT, av, xv);
  cx_instr *eq = hh_cmp(c, CXLA_EQ, CX_CMP_FLOAT, av, xv);
  cx_instr *lt = hh_cmp(c, CXLA_LT, CX_CMP_SIGNED, ai, xi);
  cx_instr *keep = hh_op2(c, CX_OP_OR, gt, hh_op2(c, CX_OP_AND, eq, lt));
  cx_instr *el[2] = {hh_select(c, keep, av, xv), hh_select(c, keep, ai, xi)};
  return hh_end(h, c, hh_tuple(c, 2, el));
}

TEST(interp_reduce_variadic_argmax) {
  hh h;
  if (!hh_init(&h)) return;
  cxla_literal *v = hh_lit(CXLA_F32, 2, HH_DIMS(2, 4), HH_VALS(3, 9, 9, 1, -1, -5, -2, -1));
  cxla_literal *ix = hh_lit(CXLA_S32, 2, HH_DIMS(2, 4), HH_VALS(0, 1, 2, 3, 0, 1, 2, 3));
  cxla_literal *iv = hh_scalar(CXLA_F32, -INFINITY), *ii = hh_scalar(CXLA_S32, 0);
  cxla_literal *ops[4] = {v, ix, iv, ii};
  cx_shape rs[2] = {cx_shape_array(CXLA_F32, 1, HH_DIMS(2)), cx_shape_array(CXLA_S32, 1, HH_DIMS(2))};
  cx_instr *in = hh_instr(&h, CX_OP_REDUCE, 2, rs, 4, ops);
  cx_comp *f = argmax_comp(&h);
  cxla_literal *r = NULL;
  if (in && f) {
    hh_ints(&h, &in->a.dims, 1, HH_DIMS(1));
    cx_instr_set_called(in, 1, &f);
    r = run(&h, cx_interp_reduce, in, ops);
  }
  if (r) {
    CHECK_EQ_INT(cxla_literal_tuple_size(r), 2);
    /* row 0: max 9 first at index 1; row 1: max -1 at 0 and 3, the tie keeps 0 */
    HH_EXPECT(cxla_literal_tuple_get(r, 0), CXLA_F32, 1, HH_DIMS(2), HH_VALS(9, -1), 0);
    HH_EXPECT(cxla_literal_tuple_get(r, 1), CXLA_S32, 1, HH_DIMS(2), HH_VALS(1, 0), 0);
  }
  cxla_literal *all[] = {v, ix, iv, ii, r};
  hh_free_lits(5, all);
  hh_free(&h);
}

TEST(interp_reduce_bad_attributes_fail_cleanly) {
  hh h;
  if (!hh_init(&h)) return;
  cxla_literal *x = hh_lit(CXLA_F32, 2, HH_DIMS(2, 3), NULL), *z = hh_scalar(CXLA_F32, 0);
  cxla_literal *ops[2] = {x, z};
  cx_comp *add = hh_binary(&h, CX_OP_ADD, CXLA_F32);
  cx_instr *in = hh_instr1(&h, CX_OP_REDUCE, CXLA_F32, 1, HH_DIMS(2), 2, ops);
  cxla_literal *out = NULL;
  if (in && add) {
    cx_instr_set_called(in, 1, &add);
    hh_ints(&h, &in->a.dims, 1, HH_DIMS(5)); /* no dim 5 */
    CHECK(cx_interp_reduce(&h.st, in, ops, &out) == CXLA_ERR_VERIFY);
    CHECK(out == NULL);
    hh_ints(&h, &in->a.dims, 1, HH_DIMS(0)); /* result would be [3], declared [2] */
    CHECK(cx_interp_reduce(&h.st, in, ops, &out) == CXLA_ERR_VERIFY);
    CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "reduce:");
  }
  hh_free_lits(2, ops);
  hh_free(&h);
}

/* ---- map ---- */

TEST(interp_map_two_operands) {
  hh h;
  if (!hh_init(&h)) return;
  cxla_literal *x = hh_lit(CXLA_F32, 2, HH_DIMS(1, 3), HH_VALS(1, 2, 3));
  cxla_literal *y = hh_lit(CXLA_F32, 2, HH_DIMS(1, 3), HH_VALS(4, 5, 6));
  cxla_literal *ops[2] = {x, y};
  /* (a, b) -> a*b - b */
  cx_comp *c = hh_comp(&h, "mulsub");
  cx_instr *a = hh_param(c, 0, CXLA_F32), *b = hh_param(c, 1, CXLA_F32);
  cx_comp *f = hh_end(&h, c, hh_op2(c, CX_OP_SUBTRACT, hh_op2(c, CX_OP_MULTIPLY, a, b), b));
  cx_instr *in = hh_instr1(&h, CX_OP_MAP, CXLA_F32, 2, HH_DIMS(1, 3), 2, ops);
  cxla_literal *r = NULL, *r2 = NULL;
  if (in && f) {
    hh_ints(&h, &in->a.dims, 2, HH_DIMS(0, 1));
    cx_instr_set_called(in, 1, &f);
    r = run(&h, cx_interp_map, in, ops);
    HH_EXPECT(r, CXLA_F32, 2, HH_DIMS(1, 3), HH_VALS(0, 5, 12), 0);
  }
  /* a map whose result type differs: x > 2 */
  cxla_literal *two = hh_lit(CXLA_F32, 2, HH_DIMS(1, 3), HH_VALS(2, 2, 2));
  cxla_literal *ops2[2] = {x, two};
  cx_comp *gt = hh_comparator(&h, 1, (cxla_type[]){CXLA_F32}, 0, 1, CXLA_GT, CX_CMP_FLOAT);
  cx_instr *in2 = hh_instr1(&h, CX_OP_MAP, CXLA_PRED, 2, HH_DIMS(1, 3), 2, ops2);
  if (in2 && gt) {
    cx_instr_set_called(in2, 1, &gt);
    r2 = run(&h, cx_interp_map, in2, ops2);
    HH_EXPECT(r2, CXLA_PRED, 2, HH_DIMS(1, 3), HH_VALS(0, 0, 1), 0);
  }
  cxla_literal *all[] = {x, y, two, r, r2};
  hh_free_lits(5, all);
  hh_free(&h);
}
