/* test_verify_ops.c — shape rules of re-indexing ops and reductions. Expected shapes are
 * computed by hand from the op semantics (comments show the arithmetic). */
#include "verify_helpers.h"

TEST(verify_broadcast_reshape_bitcast_transpose) {
  vt_begin();
  vt_comp("e");
  cx_instr *v = vt_param(0, "v", "f32[3]"), *m = vt_param(1, "m", "f32[2,3]"), *one = vt_param(2, "one", "f32[1]");
  cx_instr *b = vt_op(CX_OP_BROADCAST, "b", "f32[2,3]", 1, v);
  VT_INTS(b->a.dims, 1);
  CHECK_INFER(b, "f32[2,3]");
  b = vt_op(CX_OP_BROADCAST, "b1", "f32[2,5]", 1, one); /* a size-1 dim stretches */
  VT_INTS(b->a.dims, 1);
  CHECK_INFER(b, "f32[2,5]");
  b = vt_op(CX_OP_BROADCAST, "b2", "f32[2,4]", 1, v);
  VT_INTS(b->a.dims, 1);
  vt_at(b, 12, 4);
  CHECK_STR_EQ(vt_infer(b), "ERROR: t.hlo:12:4: error: broadcast b2: operand dimension 0 has size 3 but result "
                            "dimension 1 has size 4 (expected equal sizes or an operand size of 1)");
  b = vt_op(CX_OP_BROADCAST, "b3", "f32[3,4,2]", 1, m);
  VT_INTS(b->a.dims, 2, 0);
  CHECK_INFER(b, "f32[3,4,2]"); /* out of order: a transposing broadcast, as XLA allows */
  b = vt_op(CX_OP_BROADCAST, "b3d", "f32[4,2]", 1, m);
  VT_INTS(b->a.dims, 1, 1);
  CHECK_INFER_ERR(b, "dimensions={1,1}: result dimension 1 is used more than once");
  b = vt_op(CX_OP_BROADCAST, "b4", "f32[2,3]", 1, m);
  VT_INTS(b->a.dims, 0);
  CHECK_INFER_ERR(b, "dimensions={0} must have one entry per operand dimension (2 for f32[2,3])");
  b = vt_op(CX_OP_BROADCAST, "b5", "f32[2,3]", 1, v);
  VT_INTS(b->a.dims, 2);
  CHECK_INFER_ERR(b, "dimensions={2}: 2 is out of range for the result f32[2,3]");
  b = vt_op(CX_OP_BROADCAST, "b6", "s32[2,3]", 1, v);
  VT_INTS(b->a.dims, 1);
  CHECK_INFER_ERR(b, "declared element type s32 differs from the operand's f32");

  CHECK_INFER(vt_op(CX_OP_RESHAPE, "r1", "f32[6,1]", 1, m), "f32[6,1]");
  CHECK_INFER_ERR(vt_op(CX_OP_RESHAPE, "r2", "f32[7]", 1, m), "reshape r2: f32[7] has 7 elements but the operand f32[2,3] has 6");
  CHECK_INFER_ERR(vt_op(CX_OP_RESHAPE, "r3", "s32[6]", 1, m), "declared element type s32 differs from the operand's f32");
  CHECK_INFER(vt_op(CX_OP_BITCAST, "c1", "u8[24]", 1, m), "u8[24]"); /* 6 x 4 bytes */
  CHECK_INFER_ERR(vt_op(CX_OP_BITCAST, "c2", "f32[5]", 1, m), "f32[5] has 20 bytes but the operand f32[2,3] has 24");

  cx_instr *x = vt_param(3, "x", "f32[2,3,4]");
  cx_instr *t = vt_op(CX_OP_TRANSPOSE, "t", NULL, 1, x);
  VT_INTS(t->a.dims, 2, 0, 1); /* result dim i is operand dim dims[i] */
  CHECK_INFER(t, "f32[4,2,3]");
  VT_INTS(t->a.dims, 0, 0, 1);
  CHECK_INFER_ERR(t, "dimensions {0,0,1}: dimension 0 is used more than once");
  VT_INTS(t->a.dims, 1, 0);
  CHECK_INFER_ERR(t, "dimensions={1,0} must be a permutation of 0..2 for f32[2,3,4]");
  vt_end();
}

static cx_instr *slice_of(cx_instr *x, const char *name, int64_t s0, int64_t l0, int64_t k0, int64_t s1, int64_t l1,
                          int64_t k1) {
  cx_instr *s = vt_op(CX_OP_SLICE, name, NULL, 1, x);
  VT_INTS(s->a.slice_start, s0, s1);
  VT_INTS(s->a.slice_limit, l0, l1);
  VT_INTS(s->a.slice_stride, k0, k1);
  return s;
}

TEST(verify_slices) {
  vt_begin();
  vt_comp("e");
  cx_instr *x = vt_param(0, "x", "f32[10,5]"), *i = vt_param(1, "i", "s32[]"), *j = vt_param(2, "j", "s64[]");
  CHECK_INFER(slice_of(x, "s1", 2, 9, 3, 0, 5, 1), "f32[3,5]"); /* rows 2,5,8 */
  CHECK_INFER(slice_of(x, "s2", 1, 1, 1, 0, 5, 2), "f32[0,3]"); /* columns 0,2,4 */
  CHECK_INFER_ERR(slice_of(x, "s3", 0, 11, 1, 0, 5, 1), "dimension 0: slice [0:11] must satisfy 0 <= start <= limit <= 10");
  CHECK_INFER_ERR(slice_of(x, "s4", 3, 2, 1, 0, 5, 1), "slice [3:2] must satisfy");
  CHECK_INFER_ERR(slice_of(x, "s5", 0, 1, 1, 0, 5, 0), "dimension 1: stride 0 must be >= 1");
  cx_instr *s6 = vt_op(CX_OP_SLICE, "s6", NULL, 1, x);
  VT_INTS(s6->a.slice_start, 0);
  VT_INTS(s6->a.slice_limit, 1);
  CHECK_INFER_ERR(s6, "slice needs one [start:limit:stride] per dimension of f32[10,5], got 1 starts, 1 limits, 0 strides");

  cx_instr *ds = vt_op(CX_OP_DYNAMIC_SLICE, "ds", NULL, 3, x, i, i);
  VT_INTS(ds->a.dims, 2, 5);
  CHECK_INFER(ds, "f32[2,5]");
  cx_instr *vec = vt_param(3, "vec", "s32[2]");
  cx_instr *ds_old = vt_op(CX_OP_DYNAMIC_SLICE, "ds_old", NULL, 2, x, vec);
  VT_INTS(ds_old->a.dims, 2, 5);
  CHECK_INFER(ds_old, "f32[2,5]");
  VT_INTS(ds->a.dims, 11, 1);
  CHECK_INFER_ERR(ds, "dynamic_slice_sizes={11,1}: size 11 of dimension 0 must be in [0, 10]");
  cx_instr *ds2 = vt_op(CX_OP_DYNAMIC_SLICE, "ds2", NULL, 3, x, i, j);
  VT_INTS(ds2->a.dims, 1, 1);
  CHECK_INFER_ERR(ds2, "start indices must all have one type, got s32[] and s64[]");
  cx_instr *ds3 = vt_op(CX_OP_DYNAMIC_SLICE, "ds3", NULL, 2, x, i);
  VT_INTS(ds3->a.dims, 1, 1);
  CHECK_INFER_ERR(ds3, "expected 2 start indices (one per operand dimension), got 1");
  cx_instr *ds4 = vt_op(CX_OP_DYNAMIC_SLICE, "ds4", NULL, 3, x, i, x);
  VT_INTS(ds4->a.dims, 1, 1);
  CHECK_INFER_ERR(ds4, "start index (operand 2) must be an integer scalar, got f32[10,5]");
  cx_instr *ds5 = vt_op(CX_OP_DYNAMIC_SLICE, "ds5", NULL, 3, x, i, i);
  CHECK_INFER_ERR(ds5, "dynamic_slice_sizes={} must have one entry per dimension of f32[10,5]");

  cx_instr *u = vt_param(4, "u", "f32[2,5]"), *big = vt_param(5, "big", "f32[2,6]"), *su = vt_param(6, "su", "s32[2,5]");
  CHECK_INFER(vt_op(CX_OP_DYNAMIC_UPDATE_SLICE, "dus", NULL, 4, x, u, i, i), "f32[10,5]");
  CHECK_INFER(vt_op(CX_OP_DYNAMIC_UPDATE_SLICE, "dus_old", NULL, 3, x, u, vec), "f32[10,5]");
  CHECK_INFER_ERR(vt_op(CX_OP_DYNAMIC_UPDATE_SLICE, "dus2", NULL, 4, x, big, i, i),
                  "update f32[2,6] does not fit in the operand f32[10,5] (dimension 1)");
  CHECK_INFER_ERR(vt_op(CX_OP_DYNAMIC_UPDATE_SLICE, "dus3", NULL, 4, x, su, i, i),
                  "update s32[2,5] must have the rank and element type of the operand f32[10,5]");
  vt_end();
}

TEST(verify_concatenate_pad_reverse) {
  vt_begin();
  vt_comp("e");
  cx_instr *a = vt_param(0, "a", "f32[2,3]"), *b = vt_param(1, "b", "f32[4,3]"), *c = vt_param(2, "c", "f32[2,4]");
  cx_instr *cat = vt_op(CX_OP_CONCATENATE, "cat", NULL, 3, a, b, a);
  VT_INTS(cat->a.dims, 0);
  CHECK_INFER(cat, "f32[8,3]");
  cx_instr *cat2 = vt_op(CX_OP_CONCATENATE, "cat2", NULL, 2, a, c);
  VT_INTS(cat2->a.dims, 0);
  CHECK_INFER_ERR(cat2, "operand 1 f32[2,4] differs from operand 0 f32[2,3] in dimension 1 (only dimension 0 may differ)");
  VT_INTS(cat2->a.dims, 1);
  CHECK_INFER(cat2, "f32[2,7]");
  VT_INTS(cat2->a.dims, 2);
  CHECK_INFER_ERR(cat2, "dimensions={2} must name one dimension of f32[2,3]");

  cx_instr *x = vt_param(3, "x", "f32[3,4]"), *pv = vt_param(4, "pv", "f32[]"), *sv = vt_param(5, "sv", "s32[]");
  cx_instr *p = vt_op(CX_OP_PAD, "p", NULL, 2, x, pv);
  VT_INTS(p->a.pad_lo, 1, -1);
  VT_INTS(p->a.pad_hi, 2, 0);
  VT_INTS(p->a.pad_interior, 1, 0);
  CHECK_INFER(p, "f32[8,3]"); /* 3+1+2+(3-1)*1 = 8; 4-1+0 = 3 */
  VT_INTS(p->a.pad_lo, -5, 0);
  VT_INTS(p->a.pad_interior, 0, 0);
  CHECK_INFER(p, "f32[0,4]"); /* 3-5+2 = 0 */
  VT_INTS(p->a.pad_lo, -6, 0);
  vt_at(p, 21, 9);
  CHECK_STR_EQ(vt_infer(p), "ERROR: t.hlo:21:9: error: pad p: dimension 0: padding -6_2_0 of size 3 gives a negative "
                            "size -1");
  VT_INTS(p->a.pad_interior, 0, -1);
  VT_INTS(p->a.pad_lo, 0, 0);
  CHECK_INFER_ERR(p, "dimension 1: interior padding -1 must be >= 0");
  VT_INTS(p->a.pad_lo, 0);
  CHECK_INFER_ERR(p, "padding needs one lo_hi[_interior] entry per dimension of f32[3,4], got 1");
  cx_instr *z = vt_param(6, "z", "f32[0]");
  cx_instr *pz = vt_op(CX_OP_PAD, "pz", NULL, 2, z, pv);
  VT_INTS(pz->a.pad_lo, 2);
  VT_INTS(pz->a.pad_hi, 3);
  VT_INTS(pz->a.pad_interior, 5);
  CHECK_INFER(pz, "f32[5]"); /* no gaps between zero elements */
  CHECK_INFER_ERR(vt_op(CX_OP_PAD, "p2", NULL, 2, x, sv), "padding value s32[] must have the element type of the operand");
  CHECK_INFER_ERR(vt_op(CX_OP_PAD, "p3", NULL, 2, x, x), "padding value (operand 1) must be a scalar, got f32[3,4]");
  cx_instr *huge = vt_op(CX_OP_PAD, "huge", NULL, 2, z, pv);
  VT_INTS(huge->a.pad_lo, INT64_MAX);
  VT_INTS(huge->a.pad_hi, 1);
  VT_INTS(huge->a.pad_interior, 0);
  CHECK_INFER_ERR(huge, "dimension 0: padded size overflows");

  cx_instr *rv = vt_op(CX_OP_REVERSE, "rv", NULL, 1, x);
  VT_INTS(rv->a.dims, 1, 0);
  CHECK_INFER(rv, "f32[3,4]");
  VT_INTS(rv->a.dims, 1, 1);
  CHECK_INFER_ERR(rv, "dimensions {1,1}: dimension 1 is used more than once");
  VT_INTS(rv->a.dims, 2);
  CHECK_INFER_ERR(rv, "dimensions {2}: dimension 2 is out of range for rank 2");
  vt_end();
}

/* (x0, .., y0, ..) -> (x0 + y0, ..) over scalars of the given types */
static cx_comp *tuple_adder(const char *name, int n, const char *const *types) {
  cx_comp *saved = vt_c;
  vt_comp(name);
  cx_instr *p[8], *sum[8];
  char sh[16];
  for (int i = 0; i < 2 * n; i++) {
    snprintf(sh, sizeof sh, "%s[]", types[i % n]);
    p[i] = vt_param(i, NULL, sh);
  }
  for (int i = 0; i < n; i++) sum[i] = vt_op(CX_OP_ADD, NULL, NULL, 2, p[i], p[n + i]);
  cx_instr *t = cx_instr_new(vt_c, CX_OP_TUPLE, &(cx_shape){.type = CXLA_TUPLE}, n, sum);
  cx_shape s;
  cx_infer_shape(t, &s);
  t->shape = s;
  cx_comp *c = vt_finish(t, 0);
  vt_c = saved;
  return c;
}

TEST(verify_reduce) {
  vt_begin();
  cx_comp *add = vt_binary_comp("add", CX_OP_ADD, "f32");
  cx_comp *pair = tuple_adder("pair", 2, (const char *[]){"f32", "s32"});
  cx_comp *three = tuple_adder("region_0", 1, (const char *[]){"f32"});
  vt_comp("e");
  cx_instr *x = vt_param(0, "x", "f32[2,3,4]"), *z = vt_param(1, "z", "f32[]"), *k = vt_param(2, "k", "s32[2,3,4]");
  cx_instr *zi = vt_param(3, "zi", "s32[]");
  cx_instr *r = vt_op(CX_OP_REDUCE, "r", NULL, 2, x, z);
  VT_INTS(r->a.dims, 1);
  vt_called(r, 1, add);
  CHECK_INFER(r, "f32[2,4]");
  VT_INTS(r->a.dims, 2, 0);
  CHECK_INFER(r, "f32[3]");
  VT_INTS(r->a.dims, 1, 1);
  CHECK_INFER_ERR(r, "reduce r: dimensions {1,1}: dimension 1 is used more than once");
  VT_INTS(r->a.dims, 3);
  CHECK_INFER_ERR(r, "dimensions {3}: dimension 3 is out of range for rank 3");
  VT_INTS(r->a.dims, 0);
  vt_called(r, 1, three); /* returns a 1-tuple: XLA then gives a 1-tuple result */
  CHECK_INFER(r, "(f32[3,4])");
  vt_called(r, 1, pair);
  vt_at(r, 3, 11);
  CHECK_STR_EQ(vt_infer(r), "ERROR: t.hlo:3:11: error: reduce r: to_apply pair must take 2 parameters, has 4");
  cx_instr *v = vt_op(CX_OP_REDUCE, "v", NULL, 4, x, k, z, zi);
  VT_INTS(v->a.dims, 0, 1, 2);
  vt_called(v, 1, pair);
  CHECK_INFER(v, "(f32[], s32[])");
  cx_instr *w = vt_op(CX_OP_REDUCE, "w", NULL, 4, x, k, zi, z); /* inits swapped */
  VT_INTS(w->a.dims, 0);
  vt_called(w, 1, pair);
  CHECK_INFER_ERR(w, "to_apply pair: parameter 0 must be s32[] (an accumulator), got f32[]");
  cx_instr *nz = vt_op(CX_OP_REDUCE, "nz", NULL, 2, x, x);
  vt_called(nz, 1, add);
  CHECK_INFER_ERR(nz, "init value (operand 1) must be a scalar, got f32[2,3,4]");
  cx_instr *y = vt_param(4, "y", "f32[2,3]");
  cx_instr *mix = vt_op(CX_OP_REDUCE, "mix", NULL, 4, x, y, z, z);
  vt_called(mix, 1, pair);
  CHECK_INFER_ERR(mix, "inputs must have the same dimensions, got f32[2,3,4] (input 0) and f32[2,3] (input 1)");
  cx_comp *cmp = vt_binary_comp("cmp", CX_OP_COMPARE, "f32");
  vt_called(r, 1, cmp);
  CHECK_INFER_ERR(r, "to_apply cmp must return f32[], returns pred[]");
  vt_end();
}

TEST(verify_reduce_window_and_select_and_scatter) {
  vt_begin();
  cx_comp *add = vt_binary_comp("add", CX_OP_ADD, "f32");
  cx_comp *ge = vt_binary_comp("ge", CX_OP_COMPARE, "f32");
  vt_comp("e");
  cx_instr *x = vt_param(0, "x", "f32[4,6]"), *z = vt_param(1, "z", "f32[]"), *y = vt_param(2, "y", "f32[5]");
  cx_instr *rw = vt_op(CX_OP_REDUCE_WINDOW, "rw", NULL, 2, x, z);
  vt_called(rw, 1, add);
  vt_window(rw, "size=2x3 stride=2x3");
  CHECK_INFER(rw, "f32[2,2]");
  vt_window(rw, "size=1x1");
  CHECK_INFER(rw, "f32[4,6]");
  vt_window(rw, "size=2");
  CHECK_INFER_ERR(rw, "reduce-window rw: window has 1 dimension but the operand f32[4,6] has rank 2");
  vt_window(rw, "size=2x2 stride=0x1");
  CHECK_INFER_ERR(rw, "window dimension 0: size, stride and dilations must be >= 1, got size=2 stride=0");
  cx_instr *rw2 = vt_op(CX_OP_REDUCE_WINDOW, "rw2", NULL, 2, y, z);
  vt_called(rw2, 1, add);
  /* (5-1)*2+1 = 9 dilated, +1+1 padding = 11; window (3-1)*2+1 = 5; (11-5)/2+1 = 4 */
  vt_window(rw2, "size=3 stride=2 pad=1_1 lhs_dilate=2 rhs_dilate=2");
  CHECK_INFER(rw2, "f32[4]");
  vt_window(rw2, "size=6"); /* the window does not fit: no outputs */
  CHECK_INFER(rw2, "f32[0]");
  vt_window(rw2, "size=9223372036854775807 rhs_dilate=2");
  CHECK_INFER_ERR(rw2, "window dimension 0: sizes overflow 64-bit integers");

  cx_instr *src = vt_param(3, "src", "f32[2,2]"), *bad = vt_param(4, "bad", "f32[2,3]");
  cx_instr *ss = vt_op(CX_OP_SELECT_AND_SCATTER, "ss", NULL, 3, x, src, z);
  vt_window(ss, "size=2x3 stride=2x3");
  vt_called(ss, 2, ge, add);
  CHECK_INFER(ss, "f32[4,6]");
  cx_instr *ss2 = vt_op(CX_OP_SELECT_AND_SCATTER, "ss2", NULL, 3, x, bad, z);
  vt_window(ss2, "size=2x3 stride=2x3");
  vt_called(ss2, 2, ge, add);
  CHECK_INFER_ERR(ss2, "source f32[2,3] must have the shape of the windowed operand, f32[2,2]");
  vt_called(ss, 2, add, add);
  CHECK_INFER_ERR(ss, "select add must return pred[], returns f32[]");
  vt_called(ss, 2, ge, ge);
  CHECK_INFER_ERR(ss, "scatter ge must return f32[], returns pred[]");
  vt_end();
}

TEST(verify_map_and_sort) {
  vt_begin();
  cx_comp *add = vt_binary_comp("add", CX_OP_ADD, "f32");
  cx_comp *lt = vt_binary_comp("lt", CX_OP_COMPARE, "f32");
  cx_comp *ilt = vt_binary_comp("ilt", CX_OP_COMPARE, "s32");
  vt_comp("cmp2"); /* (f32, f32, s32, s32) -> pred: sorts by the f32 keys */
  cx_instr *a = vt_param(0, "a", "f32[]"), *b = vt_param(1, "b", "f32[]");
  vt_param(2, "c", "s32[]");
  vt_param(3, "d", "s32[]");
  cx_comp *cmp2 = vt_finish(vt_op(CX_OP_COMPARE, "r", "pred[]", 2, a, b), 0);
  vt_comp("e");
  cx_instr *x = vt_param(0, "x", "f32[5,4]"), *k = vt_param(1, "k", "s32[5,4]"), *y = vt_param(2, "y", "f32[4,5]");
  cx_instr *m = vt_op(CX_OP_MAP, "m", NULL, 2, x, x);
  vt_called(m, 1, add);
  CHECK_INFER(m, "f32[5,4]");
  vt_called(m, 1, lt);
  CHECK_INFER(m, "pred[5,4]"); /* the type comes from the computation */
  VT_INTS(m->a.dims, 1, 0);
  CHECK_INFER_ERR(m, "dimensions={1,0} must be {0..1} (map applies to every element)");
  cx_instr *m2 = vt_op(CX_OP_MAP, "m2", NULL, 2, x, k);
  vt_called(m2, 1, add);
  CHECK_INFER_ERR(m2, "to_apply add: parameter 1 must be s32[], got f32[]");
  cx_instr *m3 = vt_op(CX_OP_MAP, "m3", NULL, 2, x, y);
  vt_called(m3, 1, add);
  CHECK_INFER_ERR(m3, "operands must have the same dimensions, got f32[5,4] and f32[4,5]");
  cx_instr *m4 = vt_op(CX_OP_MAP, "m4", NULL, 1, x);
  vt_called(m4, 1, add);
  CHECK_INFER_ERR(m4, "to_apply add must take 1 parameter, has 2");

  cx_instr *s = vt_op(CX_OP_SORT, "s", NULL, 1, x);
  VT_INTS(s->a.dims, 1);
  vt_called(s, 1, lt);
  CHECK_INFER(s, "f32[5,4]");
  VT_INTS(s->a.dims, 2);
  CHECK_INFER_ERR(s, "dimensions={2} must name one dimension of f32[5,4]");
  cx_instr *s2 = vt_op(CX_OP_SORT, "s2", NULL, 2, x, k);
  VT_INTS(s2->a.dims, 0);
  vt_called(s2, 1, cmp2);
  CHECK_INFER(s2, "(f32[5,4], s32[5,4])");
  vt_called(s2, 1, lt);
  CHECK_INFER_ERR(s2, "comparator lt must take 4 parameters, has 2");
  vt_called(s, 1, ilt);
  VT_INTS(s->a.dims, 0);
  CHECK_INFER_ERR(s, "comparator ilt: parameter 0 must be f32[] (from operand 0), got s32[]");
  vt_called(s, 1, add);
  CHECK_INFER_ERR(s, "comparator add must return pred[], returns f32[]");
  vt_end();
}
