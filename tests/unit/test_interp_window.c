/* test_interp_window.c — reduce-window and select-and-scatter in the reference interpreter.
 * Expected values are worked out by hand in the comments. Window rows are
 * {size, stride, pad_lo, pad_hi, lhs_dilate, rhs_dilate, reversal}. */
#include "heavy_helpers.h"

static cxla_literal *reduce_window1(hh *h, cx_comp *f, cxla_literal *x, cxla_literal *init,
                                    const int64_t (*w)[7], const int64_t *out_dims) {
  cxla_literal *ops[2] = {x, init};
  int rank = x ? x->shape.rank : 0;
  cx_instr *in = hh_instr1(h, CX_OP_REDUCE_WINDOW, init ? init->shape.type : CXLA_F32, rank,
                           out_dims, 2, ops);
  if (!in || !f) return NULL;
  hh_window(h, in, rank, w);
  cx_instr_set_called(in, 1, &f);
  cxla_literal *out = NULL;
  CHECK_OK(cx_interp_reduce_window(&h->st, in, ops, &out));
  return out;
}

TEST(interp_reduce_window_maxpool_2x2_stride2) {
  hh h;
  if (!hh_init(&h)) return;
  double v[16];
  for (int i = 0; i < 16; i++) v[i] = i + 1;
  cxla_literal *x = hh_lit(CXLA_F32, 2, HH_DIMS(4, 4), v);
  cxla_literal *ninf = hh_scalar(CXLA_F32, -INFINITY);
  cx_comp *mx = hh_binary(&h, CX_OP_MAXIMUM, CXLA_F32);
  /* {{1,2,3,4},{5,6,7,8},{9,10,11,12},{13,14,15,16}} -> {{6,8},{14,16}} */
  cxla_literal *r = reduce_window1(&h, mx, x, ninf,
                                   (const int64_t[][7]){{2, 2, 0, 0, 1, 1, 0}, {2, 2, 0, 0, 1, 1, 0}},
                                   HH_DIMS(2, 2));
  HH_EXPECT(r, CXLA_F32, 2, HH_DIMS(2, 2), HH_VALS(6, 8, 14, 16), 0);
  cxla_literal *all[] = {x, ninf, r};
  hh_free_lits(3, all);
  hh_free(&h);
}

TEST(interp_reduce_window_padding_is_skipped) {
  hh h;
  if (!hh_init(&h)) return;
  cx_comp *add = hh_binary(&h, CX_OP_ADD, CXLA_F32), *mx = hh_binary(&h, CX_OP_MAXIMUM, CXLA_F32);
  /* 1-D sum, size 3, pad 1/1: {1,2,3,4} -> {1+2, 1+2+3, 2+3+4, 3+4} */
  cxla_literal *x = hh_lit(CXLA_F32, 1, HH_DIMS(4), HH_VALS(1, 2, 3, 4));
  cxla_literal *z = hh_scalar(CXLA_F32, 0), *ninf = hh_scalar(CXLA_F32, -INFINITY);
  cxla_literal *r1 = reduce_window1(&h, add, x, z, (const int64_t[][7]){{3, 1, 1, 1, 1, 1, 0}},
                                    HH_DIMS(4));
  HH_EXPECT(r1, CXLA_F32, 1, HH_DIMS(4), HH_VALS(3, 6, 9, 7), 0);
  /* max over all-negative values with padding: a padded 0 would win if padding counted.
   * {{-1,-2},{-3,-4}}, window 2x2 stride 1 pad 1/1 -> 3x3 */
  cxla_literal *y = hh_lit(CXLA_F32, 2, HH_DIMS(2, 2), HH_VALS(-1, -2, -3, -4));
  cxla_literal *r2 = reduce_window1(&h, mx, y, ninf,
                                    (const int64_t[][7]){{2, 1, 1, 1, 1, 1, 0}, {2, 1, 1, 1, 1, 1, 0}},
                                    HH_DIMS(3, 3));
  HH_EXPECT(r2, CXLA_F32, 2, HH_DIMS(3, 3), HH_VALS(-1, -1, -2, -1, -1, -2, -3, -3, -4), 0);
  /* windows lying entirely in padding give the init value: size 1, pad_lo 2 */
  cxla_literal *r3 = reduce_window1(&h, add, x, z, (const int64_t[][7]){{1, 1, 2, 0, 1, 1, 0}},
                                    HH_DIMS(6));
  HH_EXPECT(r3, CXLA_F32, 1, HH_DIMS(6), HH_VALS(0, 0, 1, 2, 3, 4), 0);
  cxla_literal *all[] = {x, z, ninf, y, r1, r2, r3};
  hh_free_lits(7, all);
  hh_free(&h);
}

TEST(interp_reduce_window_dilations) {
  hh h;
  if (!hh_init(&h)) return;
  cx_comp *add = hh_binary(&h, CX_OP_ADD, CXLA_F32);
  cxla_literal *ten = hh_scalar(CXLA_F32, 10), *z = hh_scalar(CXLA_F32, 0);
  /* base dilation 2: {1,2,3} -> {1,_,2,_,3}; size 2 windows: {1}, {2}, {2}, {3} (+10) */
  cxla_literal *x = hh_lit(CXLA_F32, 1, HH_DIMS(3), HH_VALS(1, 2, 3));
  cxla_literal *r1 = reduce_window1(&h, add, x, ten, (const int64_t[][7]){{2, 1, 0, 0, 2, 1, 0}},
                                    HH_DIMS(4));
  HH_EXPECT(r1, CXLA_F32, 1, HH_DIMS(4), HH_VALS(11, 12, 12, 13), 0);
  /* window dilation 2, size 2: x[i] + x[i+2] over {1..6} -> 4 windows */
  cxla_literal *y = hh_lit(CXLA_F32, 1, HH_DIMS(6), HH_VALS(1, 2, 3, 4, 5, 6));
  cxla_literal *r2 = reduce_window1(&h, add, y, z, (const int64_t[][7]){{2, 1, 0, 0, 1, 2, 0}},
                                    HH_DIMS(4));
  HH_EXPECT(r2, CXLA_F32, 1, HH_DIMS(4), HH_VALS(4, 6, 8, 10), 0);
  /* both with padding and stride: {1,2,3} dilated 2 -> {1,_,2,_,3}, pad 1/1 ->
   * {p,1,_,2,_,3,p} (7); size 2 dilation 2 (extent 3) stride 2: windows at 0,2,4 cover
   * {p,_}, {_,_}... positions {0,2}->p,_ ; {2,4}->_,_ ; {4,6}->_,p: holes are at 2 and 4 */
  cxla_literal *r3 = reduce_window1(&h, add, x, ten, (const int64_t[][7]){{2, 2, 1, 1, 2, 2, 0}},
                                    HH_DIMS(3));
  HH_EXPECT(r3, CXLA_F32, 1, HH_DIMS(3), HH_VALS(10, 10, 10), 0);
  /* same but stride 1 from position 1: positions {1,3}->1,2 ; {2,4} holes ; {3,5}->2,3 */
  cxla_literal *r4 = reduce_window1(&h, add, x, z, (const int64_t[][7]){{2, 1, 1, 1, 2, 2, 0}},
                                    HH_DIMS(5));
  HH_EXPECT(r4, CXLA_F32, 1, HH_DIMS(5), HH_VALS(0, 3, 0, 5, 0), 0);
  cxla_literal *all[] = {ten, z, x, y, r1, r2, r3, r4};
  hh_free_lits(8, all);
  hh_free(&h);
}

TEST(interp_reduce_window_variadic) {
  hh h;
  if (!hh_init(&h)) return;
  /* (sum of x, max of y) over windows of 2 with stride 1 */
  cx_comp *c = hh_comp(&h, "summax");
  cx_instr *a0 = hh_param(c, 0, CXLA_F32), *a1 = hh_param(c, 1, CXLA_S32);
  cx_instr *x0 = hh_param(c, 2, CXLA_F32), *x1 = hh_param(c, 3, CXLA_S32);
  cx_instr *el[2] = {hh_op2(c, CX_OP_ADD, a0, x0), hh_op2(c, CX_OP_MAXIMUM, a1, x1)};
  cx_comp *f = hh_end(&h, c, hh_tuple(c, 2, el));
  cxla_literal *x = hh_lit(CXLA_F32, 1, HH_DIMS(4), HH_VALS(1, 2, 3, 4));
  cxla_literal *y = hh_lit(CXLA_S32, 1, HH_DIMS(4), HH_VALS(5, -1, 7, 0));
  cxla_literal *ix = hh_scalar(CXLA_F32, 0), *iy = hh_scalar(CXLA_S32, -100);
  cxla_literal *ops[4] = {x, y, ix, iy};
  cx_shape rs[2] = {cx_shape_array(CXLA_F32, 1, HH_DIMS(3)), cx_shape_array(CXLA_S32, 1, HH_DIMS(3))};
  cx_instr *in = hh_instr(&h, CX_OP_REDUCE_WINDOW, 2, rs, 4, ops);
  cxla_literal *r = NULL;
  if (in && f) {
    hh_window(&h, in, 1, (const int64_t[][7]){{2, 1, 0, 0, 1, 1, 0}});
    cx_instr_set_called(in, 1, &f);
    CHECK_OK(cx_interp_reduce_window(&h.st, in, ops, &r));
  }
  if (r) {
    HH_EXPECT(cxla_literal_tuple_get(r, 0), CXLA_F32, 1, HH_DIMS(3), HH_VALS(3, 5, 7), 0);
    HH_EXPECT(cxla_literal_tuple_get(r, 1), CXLA_S32, 1, HH_DIMS(3), HH_VALS(5, 7, 7), 0);
  }
  cxla_literal *all[] = {x, y, ix, iy, r};
  hh_free_lits(5, all);
  hh_free(&h);
}

/* ---- select-and-scatter ---- */

static cxla_literal *sas(hh *h, cxla_literal *x, cxla_literal *src, cxla_literal *init,
                         cx_comp *sel, cx_comp *sct, const int64_t (*w)[7]) {
  cxla_literal *ops[3] = {x, src, init};
  cx_instr *in = hh_instr1(h, CX_OP_SELECT_AND_SCATTER, x->shape.type, x->shape.rank,
                           x->shape.dims, 3, ops);
  if (!in || !sel || !sct) return NULL;
  hh_window(h, in, x->shape.rank, w);
  cx_comp *called[2] = {sel, sct};
  cx_instr_set_called(in, 2, called);
  cxla_literal *out = NULL;
  CHECK_OK(cx_interp_select_and_scatter(&h->st, in, ops, &out));
  return out;
}

TEST(interp_select_and_scatter_maxpool_gradient) {
  hh h;
  if (!hh_init(&h)) return;
  /* XLA's operation-semantics example: window 2x3, stride 2x3, select GE, scatter add.
   * Windows' maxima: 9 at (1,2), 10 at (0,4), 7 at (2,2), 8 at (3,5). */
  cxla_literal *x = hh_lit(CXLA_F32, 2, HH_DIMS(4, 6),
                           HH_VALS(7, 2, 5, 3, 10, 2, 3, 8, 9, 3, 4, 2, 1, 5, 7, 5, 6, 1, 0, 6, 2, 7, 2, 8));
  cxla_literal *src = hh_lit(CXLA_F32, 2, HH_DIMS(2, 2), HH_VALS(2, 6, 3, 1));
  cxla_literal *z = hh_scalar(CXLA_F32, 0);
  cx_comp *ge = hh_comparator(&h, 1, (cxla_type[]){CXLA_F32}, 0, 1, CXLA_GE, CX_CMP_FLOAT);
  cx_comp *add = hh_binary(&h, CX_OP_ADD, CXLA_F32);
  cxla_literal *r = sas(&h, x, src, z, ge, add,
                        (const int64_t[][7]){{2, 2, 0, 0, 1, 1, 0}, {3, 3, 0, 0, 1, 1, 0}});
  HH_EXPECT(r, CXLA_F32, 2, HH_DIMS(4, 6),
            HH_VALS(0, 0, 0, 0, 6, 0, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 1), 0);
  cxla_literal *all[] = {x, src, z, r};
  hh_free_lits(4, all);
  hh_free(&h);
}

TEST(interp_select_and_scatter_ties_and_overlap) {
  hh h;
  if (!hh_init(&h)) return;
  cxla_literal *x = hh_lit(CXLA_F32, 1, HH_DIMS(5), HH_VALS(1, 9, 3, 9, 2));
  cxla_literal *src = hh_lit(CXLA_F32, 1, HH_DIMS(3), HH_VALS(10, 20, 30));
  cxla_literal *z = hh_scalar(CXLA_F32, 0);
  cx_comp *ge = hh_comparator(&h, 1, (cxla_type[]){CXLA_F32}, 0, 1, CXLA_GE, CX_CMP_FLOAT);
  cx_comp *gt = hh_comparator(&h, 1, (cxla_type[]){CXLA_F32}, 0, 1, CXLA_GT, CX_CMP_FLOAT);
  cx_comp *add = hh_binary(&h, CX_OP_ADD, CXLA_F32);
  const int64_t w[1][7] = {{3, 1, 0, 0, 1, 1, 0}};
  /* windows [1,9,3] [9,3,9] [3,9,2]. GE keeps the first 9 of the middle window (select(9,9)
   * is true): index 1 gets 10+20, index 3 gets 30. */
  cxla_literal *r1 = sas(&h, x, src, z, ge, add, w);
  HH_EXPECT(r1, CXLA_F32, 1, HH_DIMS(5), HH_VALS(0, 30, 0, 30, 0), 0);
  /* GT: select(9,9) is false, so the later 9 (index 3) takes the middle window */
  cxla_literal *r2 = sas(&h, x, src, z, gt, add, w);
  HH_EXPECT(r2, CXLA_F32, 1, HH_DIMS(5), HH_VALS(0, 10, 0, 50, 0), 0);
  cxla_literal *all[] = {x, src, z, r1, r2};
  hh_free_lits(5, all);
  hh_free(&h);
}

TEST(interp_select_and_scatter_padding_never_selected) {
  hh h;
  if (!hh_init(&h)) return;
  /* {-5,-1}, window 2 stride 1 pad 1/1 -> windows [p,-5] [-5,-1] [-1,p]: a padded 0 would
   * win every window if padding could be selected. Selected: 0, 1, 1. */
  cxla_literal *x = hh_lit(CXLA_F32, 1, HH_DIMS(2), HH_VALS(-5, -1));
  cxla_literal *src = hh_lit(CXLA_F32, 1, HH_DIMS(3), HH_VALS(1, 2, 4));
  cxla_literal *init = hh_scalar(CXLA_F32, 0.5);
  cx_comp *ge = hh_comparator(&h, 1, (cxla_type[]){CXLA_F32}, 0, 1, CXLA_GE, CX_CMP_FLOAT);
  cx_comp *add = hh_binary(&h, CX_OP_ADD, CXLA_F32);
  cxla_literal *r = sas(&h, x, src, init, ge, add, (const int64_t[][7]){{2, 1, 1, 1, 1, 1, 0}});
  HH_EXPECT(r, CXLA_F32, 1, HH_DIMS(2), HH_VALS(1.5, 6.5), 0);
  cxla_literal *all[] = {x, src, init, r};
  hh_free_lits(4, all);
  hh_free(&h);
}

/* A scatter computation that is not commutative shows the argument order:
 * scatter(current, source) = current * 10 + source. */
TEST(interp_select_and_scatter_scatter_argument_order) {
  hh h;
  if (!hh_init(&h)) return;
  cxla_literal *x = hh_lit(CXLA_S32, 1, HH_DIMS(3), HH_VALS(1, 5, 2));
  cxla_literal *src = hh_lit(CXLA_S32, 1, HH_DIMS(2), HH_VALS(3, 4));
  cxla_literal *init = hh_scalar(CXLA_S32, 1);
  cx_comp *ge = hh_comparator(&h, 1, (cxla_type[]){CXLA_S32}, 0, 1, CXLA_GE, CX_CMP_SIGNED);
  cx_comp *c = hh_comp(&h, "shift_add");
  cx_instr *cur = hh_param(c, 0, CXLA_S32), *s = hh_param(c, 1, CXLA_S32);
  cxla_literal *tenl = hh_scalar(CXLA_S32, 10);
  cx_shape sc = cx_shape_scalar(CXLA_S32);
  cx_instr *ten = c ? cx_instr_new(c, CX_OP_CONSTANT, &sc, 0, NULL) : NULL;
  cx_comp *f = NULL;
  if (ten && tenl && cx_module_own_literal(h.m, tenl)) {
    ten->a.literal = tenl;
    f = hh_end(&h, c, hh_op2(c, CX_OP_ADD, hh_op2(c, CX_OP_MULTIPLY, cur, ten), s));
  }
  /* both windows select index 1 (value 5): ((1*10+3)*10+4) = 134 */
  cxla_literal *r = sas(&h, x, src, init, ge, f, (const int64_t[][7]){{2, 1, 0, 0, 1, 1, 0}});
  HH_EXPECT(r, CXLA_S32, 1, HH_DIMS(3), HH_VALS(1, 134, 1), 0);
  cxla_literal *all[] = {x, src, init, r};
  hh_free_lits(4, all);
  hh_free(&h);
}
