/* test_interp_shape.c — the re-indexing ops on row-major literals, with expected results
 * written out by hand. */
#include "test_interp_util.h"

typedef struct {
  cx_module *m;
  cx_comp *c;
  cx_instr *p[4];
  int n;
  cxla_literal *args[4];
} one;

/* A module whose ENTRY takes the given arguments as parameters 0..n-1 (owned by o). */
static one one_new(int n, cxla_literal **args) {
  one o = {ti_module(), NULL, {NULL}, n, {NULL}};
  o.c = ti_comp(o.m, "main");
  for (int i = 0; i < n; i++) {
    o.args[i] = args[i];
    o.p[i] = ti_param(o.c, i, args[i]->shape);
  }
  return o;
}

static cxla_literal *one_run(one *o, cx_instr *root, const char *file, int line) {
  ti_finish(o->m, o->c, root, 1);
  cxla_literal *r = ti_run(o->m, o->n, o->args, file, line);
  for (int i = 0; i < o->n; i++) cxla_literal_destroy(o->args[i]);
  cx_module_free(o->m);
  return r;
}
#define RUN(o, root) one_run(&(o), (root), __FILE__, __LINE__)
#define ONE(...) one_new((int)(sizeof((cxla_literal *[]){__VA_ARGS__}) / sizeof(cxla_literal *)), (cxla_literal *[]){__VA_ARGS__})

static cxla_literal *f32_2d(int r, int c, const double *v) { return ti_lit_f(CXLA_F32, ti_sh(CXLA_F32, 2, r, c), v); }

TEST(interp_broadcast) {
  one o = ONE(TI_F(CXLA_F32, 1, 2, 3));
  cx_instr *b = ti_op(o.c, CX_OP_BROADCAST, ti_sh(CXLA_F32, 2, 2, 3), 1, o.p[0]);
  ti_ints(o.c, &b->a.dims, 1, 1);
  TI_CHECK_F(RUN(o, b), -1, 1, 2, 3, 1, 2, 3);

  o = ONE(TI_F(CXLA_F32, 1, 2, 3));
  b = ti_op(o.c, CX_OP_BROADCAST, ti_sh(CXLA_F32, 2, 3, 2), 1, o.p[0]);
  ti_ints(o.c, &b->a.dims, 1, 0);
  TI_CHECK_F(RUN(o, b), -1, 1, 1, 2, 2, 3, 3);

  o = ONE(ti_scalar_i(CXLA_S8, -7));
  b = ti_op(o.c, CX_OP_BROADCAST, ti_sh(CXLA_S8, 2, 2, 2), 1, o.p[0]);
  TI_CHECK_I(RUN(o, b), -7, -7, -7, -7);

  /* an operand dimension of size 1 repeats into a larger result dimension */
  o = ONE(f32_2d(1, 3, (double[]){1, 2, 3}));
  b = ti_op(o.c, CX_OP_BROADCAST, ti_sh(CXLA_F32, 3, 2, 2, 3), 1, o.p[0]);
  ti_ints(o.c, &b->a.dims, 2, 1, 2);
  TI_CHECK_F(RUN(o, b), -1, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3);
}

TEST(interp_reshape_transpose) {
  one o = ONE(f32_2d(2, 3, (double[]){1, 2, 3, 4, 5, 6}));
  cx_instr *r = ti_op(o.c, CX_OP_RESHAPE, ti_sh(CXLA_F32, 2, 3, 2), 1, o.p[0]);
  cxla_literal *l = RUN(o, r);
  CHECK(l && l->shape.dims[0] == 3 && l->shape.dims[1] == 2);
  TI_CHECK_F(l, -1, 1, 2, 3, 4, 5, 6);

  o = ONE(f32_2d(2, 3, (double[]){1, 2, 3, 4, 5, 6}));
  r = ti_op(o.c, CX_OP_TRANSPOSE, ti_sh(CXLA_F32, 2, 3, 2), 1, o.p[0]);
  ti_ints(o.c, &r->a.dims, 2, 1, 0);
  TI_CHECK_F(RUN(o, r), -1, 1, 4, 2, 5, 3, 6);

  /* rank 3: x[2,3,4] with x[i,j,k] = 100i + 10j + k; result dim d is operand dim perm[d] */
  double v[24];
  for (int i = 0; i < 24; i++) v[i] = 100 * (i / 12) + 10 * (i / 4 % 3) + i % 4;
  o = ONE(ti_lit_f(CXLA_S32, ti_sh(CXLA_S32, 3, 2, 3, 4), v));
  r = ti_op(o.c, CX_OP_TRANSPOSE, ti_sh(CXLA_S32, 3, 4, 2, 3), 1, o.p[0]);
  ti_ints(o.c, &r->a.dims, 3, 2, 0, 1);
  /* result[k,i,j] = x[i,j,k] */
  TI_CHECK_I(RUN(o, r), 0, 10, 20, 100, 110, 120, 1, 11, 21, 101, 111, 121, 2, 12, 22, 102, 112, 122, 3, 13, 23, 103,
             113, 123);
}

TEST(interp_slice) {
  one o = ONE(TI_F(CXLA_F32, 0, 1, 2, 3, 4));
  cx_instr *s = ti_op(o.c, CX_OP_SLICE, ti_sh(CXLA_F32, 1, 2), 1, o.p[0]);
  ti_ints(o.c, &s->a.slice_start, 1, 1);
  ti_ints(o.c, &s->a.slice_limit, 1, 5);
  ti_ints(o.c, &s->a.slice_stride, 1, 2);
  TI_CHECK_F(RUN(o, s), -1, 1, 3);

  /* x[3,4] = 0..11; rows 0:3:2, columns 1:4:2 */
  double v[12];
  for (int i = 0; i < 12; i++) v[i] = i;
  o = ONE(ti_lit_f(CXLA_S16, ti_sh(CXLA_S16, 2, 3, 4), v));
  s = ti_op(o.c, CX_OP_SLICE, ti_sh(CXLA_S16, 2, 2, 2), 1, o.p[0]);
  ti_ints(o.c, &s->a.slice_start, 2, 0, 1);
  ti_ints(o.c, &s->a.slice_limit, 2, 3, 4);
  ti_ints(o.c, &s->a.slice_stride, 2, 2, 2);
  TI_CHECK_I(RUN(o, s), 1, 3, 9, 11);

  /* a slice that does not fit is refused, not read out of bounds */
  o = ONE(TI_F(CXLA_F32, 0, 1, 2));
  s = ti_op(o.c, CX_OP_SLICE, ti_sh(CXLA_F32, 1, 2), 1, o.p[0]);
  ti_ints(o.c, &s->a.slice_start, 1, 2);
  ti_ints(o.c, &s->a.slice_limit, 1, 4);
  ti_finish(o.m, o.c, s, 1);
  cxla_literal *out = NULL;
  CHECK_EQ_INT(cx_interp_run(o.m, 1, o.args, &out), CXLA_ERR_VERIFY);
  cxla_literal_destroy(o.args[0]);
  cx_module_free(o.m);
}

/* dynamic-slice of [0,1,2,3,4] with size 2 at a start of type t */
static cxla_literal *dslice1(cxla_type t, int64_t start, const char *file, int line) {
  one o = ONE(TI_F(CXLA_F32, 0, 1, 2, 3, 4), ti_scalar_i(t, start));
  cx_instr *d = ti_op(o.c, CX_OP_DYNAMIC_SLICE, ti_sh(CXLA_F32, 1, 2), 2, o.p[0], o.p[1]);
  ti_ints(o.c, &d->a.dims, 1, 2);
  return one_run(&o, d, file, line);
}

TEST(interp_dynamic_slice) {
  TI_CHECK_F(dslice1(CXLA_S32, 3, __FILE__, __LINE__), -1, 3, 4);
  TI_CHECK_F(dslice1(CXLA_S32, 4, __FILE__, __LINE__), -1, 3, 4);   /* clamped to 5 - 2 */
  TI_CHECK_F(dslice1(CXLA_S32, -2, __FILE__, __LINE__), -1, 0, 1);  /* clamped to 0 */
  TI_CHECK_F(dslice1(CXLA_U8, 200, __FILE__, __LINE__), -1, 3, 4);
  TI_CHECK_F(dslice1(CXLA_S64, INT64_MIN, __FILE__, __LINE__), -1, 0, 1);
  TI_CHECK_F(dslice1(CXLA_U64, -1, __FILE__, __LINE__), -1, 3, 4);  /* 2^64-1 is large, not -1 */

  /* 2-D, starts of different integer types: x[3,3] = 0..8, size [2,2] at (s64 1, u16 5->1) */
  double v[9];
  for (int i = 0; i < 9; i++) v[i] = i;
  one o = ONE(ti_lit_f(CXLA_S32, ti_sh(CXLA_S32, 2, 3, 3), v), ti_scalar_i(CXLA_S64, 1), ti_scalar_i(CXLA_U16, 5));
  cx_instr *d = ti_op(o.c, CX_OP_DYNAMIC_SLICE, ti_sh(CXLA_S32, 2, 2, 2), 3, o.p[0], o.p[1], o.p[2]);
  TI_CHECK_I(RUN(o, d), 4, 5, 7, 8);

  /* the old form: one rank-1 start vector */
  o = ONE(ti_lit_f(CXLA_S32, ti_sh(CXLA_S32, 2, 3, 3), v), TI_I(CXLA_S32, 0, 1));
  d = ti_op(o.c, CX_OP_DYNAMIC_SLICE, ti_sh(CXLA_S32, 2, 1, 2), 2, o.p[0], o.p[1]);
  TI_CHECK_I(RUN(o, d), 1, 2);
}

TEST(interp_dynamic_update_slice) {
  one o = ONE(TI_F(CXLA_F32, 0, 0, 0, 0, 0), TI_F(CXLA_F32, 7, 8), ti_scalar_i(CXLA_S32, 4));
  cx_instr *d = ti_op(o.c, CX_OP_DYNAMIC_UPDATE_SLICE, ti_sh(CXLA_F32, 1, 5), 3, o.p[0], o.p[1], o.p[2]);
  TI_CHECK_F(RUN(o, d), -1, 0, 0, 0, 7, 8); /* start clamped to 3 */

  o = ONE(TI_F(CXLA_F32, 0, 0, 0, 0, 0), TI_F(CXLA_F32, 7, 8), ti_scalar_i(CXLA_S8, -3));
  d = ti_op(o.c, CX_OP_DYNAMIC_UPDATE_SLICE, ti_sh(CXLA_F32, 1, 5), 3, o.p[0], o.p[1], o.p[2]);
  TI_CHECK_F(RUN(o, d), -1, 7, 8, 0, 0, 0);

  /* 2-D: x[3,3] zeros, update [[1,2]] at (2, 1) */
  double z[9] = {0};
  o = ONE(ti_lit_f(CXLA_S32, ti_sh(CXLA_S32, 2, 3, 3), z), ti_lit_f(CXLA_S32, ti_sh(CXLA_S32, 2, 1, 2), (double[]){1, 2}),
          ti_scalar_i(CXLA_S32, 2), ti_scalar_i(CXLA_S32, 1));
  d = ti_op(o.c, CX_OP_DYNAMIC_UPDATE_SLICE, ti_sh(CXLA_S32, 2, 3, 3), 4, o.p[0], o.p[1], o.p[2], o.p[3]);
  TI_CHECK_I(RUN(o, d), 0, 0, 0, 0, 0, 0, 0, 1, 2);
}

TEST(interp_concatenate) {
  one o = ONE(f32_2d(2, 1, (double[]){1, 4}), f32_2d(2, 2, (double[]){2, 3, 5, 6}));
  cx_instr *c = ti_op(o.c, CX_OP_CONCATENATE, ti_sh(CXLA_F32, 2, 2, 3), 2, o.p[0], o.p[1]);
  ti_ints(o.c, &c->a.dims, 1, 1);
  TI_CHECK_F(RUN(o, c), -1, 1, 2, 3, 4, 5, 6);

  o = ONE(TI_I(CXLA_U8, 1, 2), TI_I(CXLA_U8, 3), TI_I(CXLA_U8, 4, 5, 6));
  c = ti_op(o.c, CX_OP_CONCATENATE, ti_sh(CXLA_U8, 1, 6), 3, o.p[0], o.p[1], o.p[2]);
  ti_ints(o.c, &c->a.dims, 1, 0);
  TI_CHECK_I(RUN(o, c), 1, 2, 3, 4, 5, 6);
}

/* pad of a 1-D f32 operand with pad value -1 */
static cxla_literal *pad1(cxla_literal *x, int lo, int hi, int in, int out, const char *file, int line) {
  one o = ONE(x, ti_scalar_f(CXLA_F32, -1));
  cx_instr *p = ti_op(o.c, CX_OP_PAD, ti_sh(CXLA_F32, 1, out), 2, o.p[0], o.p[1]);
  ti_ints(o.c, &p->a.pad_lo, 1, lo);
  ti_ints(o.c, &p->a.pad_hi, 1, hi);
  ti_ints(o.c, &p->a.pad_interior, 1, in);
  return one_run(&o, p, file, line);
}

TEST(interp_pad) {
  TI_CHECK_F(pad1(TI_F(CXLA_F32, 1, 2, 3), 1, 2, 1, 8, __FILE__, __LINE__), -1, -1, 1, -1, 2, -1, 3, -1, -1);
  TI_CHECK_F(pad1(TI_F(CXLA_F32, 1, 2, 3, 4), -1, -1, 0, 2, __FILE__, __LINE__), -1, 2, 3);
  /* negative with interior: [1,p,2,p,3] cropped by 2 at the start */
  TI_CHECK_F(pad1(TI_F(CXLA_F32, 1, 2, 3), -2, 0, 1, 3, __FILE__, __LINE__), -1, 2, -1, 3);
  /* [1,p,p,2,p,p,3] cropped by one at each end */
  TI_CHECK_F(pad1(TI_F(CXLA_F32, 1, 2, 3), -1, -1, 2, 5, __FILE__, __LINE__), -1, -1, -1, 2, -1, -1);
  /* cropping everything but padding */
  TI_CHECK_F(pad1(TI_F(CXLA_F32, 1, 2), -3, 2, 0, 1, __FILE__, __LINE__), -1, -1);
  TI_CHECK_F(pad1(TI_F(CXLA_F32, 5), 2, 1, 3, 4, __FILE__, __LINE__), -1, -1, -1, 5, -1);

  /* 2-D: rows lo 1; columns hi 1 and interior 1 */
  one o = ONE(ti_lit_i(CXLA_S32, ti_sh(CXLA_S32, 2, 2, 2), (int64_t[]){1, 2, 3, 4}), ti_scalar_i(CXLA_S32, 9));
  cx_instr *p = ti_op(o.c, CX_OP_PAD, ti_sh(CXLA_S32, 2, 3, 4), 2, o.p[0], o.p[1]);
  ti_ints(o.c, &p->a.pad_lo, 2, 1, 0);
  ti_ints(o.c, &p->a.pad_hi, 2, 0, 1);
  ti_ints(o.c, &p->a.pad_interior, 2, 0, 1);
  TI_CHECK_I(RUN(o, p), 9, 9, 9, 9, 1, 9, 2, 9, 3, 9, 4, 9);
}

TEST(interp_reverse) {
  one o = ONE(f32_2d(2, 3, (double[]){1, 2, 3, 4, 5, 6}));
  cx_instr *r = ti_op(o.c, CX_OP_REVERSE, ti_sh(CXLA_F32, 2, 2, 3), 1, o.p[0]);
  ti_ints(o.c, &r->a.dims, 1, 1);
  TI_CHECK_F(RUN(o, r), -1, 3, 2, 1, 6, 5, 4);

  o = ONE(f32_2d(2, 3, (double[]){1, 2, 3, 4, 5, 6}));
  r = ti_op(o.c, CX_OP_REVERSE, ti_sh(CXLA_F32, 2, 2, 3), 1, o.p[0]);
  ti_ints(o.c, &r->a.dims, 2, 0, 1);
  TI_CHECK_F(RUN(o, r), -1, 6, 5, 4, 3, 2, 1);
}

static cxla_literal *iota(cx_shape s, int dim, const char *file, int line) {
  one o = one_new(0, NULL);
  cx_instr *r = ti_op(o.c, CX_OP_IOTA, s, 0);
  r->a.index = dim;
  return one_run(&o, r, file, line);
}

TEST(interp_iota) {
  TI_CHECK_I(iota(ti_sh(CXLA_S32, 2, 2, 3), 1, __FILE__, __LINE__), 0, 1, 2, 0, 1, 2);
  TI_CHECK_I(iota(ti_sh(CXLA_U8, 2, 2, 3), 0, __FILE__, __LINE__), 0, 0, 0, 1, 1, 1);
  TI_CHECK_F(iota(ti_sh(CXLA_F32, 1, 4), 0, __FILE__, __LINE__), -1, 0, 1, 2, 3);
  TI_CHECK_F(iota(ti_sh(CXLA_F64, 2, 1, 2), 1, __FILE__, __LINE__), -1, 0, 1);
  cxla_literal *h = iota(ti_sh(CXLA_F16, 1, 2052), 0, __FILE__, __LINE__);
  if (h) { /* f16 cannot hold 2049 or 2051: ties to even give 2048 and 2052 */
    CHECK_NEAR(cxla_literal_get_f64(h, 2047), 2047, 0);
    CHECK_NEAR(cxla_literal_get_f64(h, 2049), 2048, 0);
    CHECK_NEAR(cxla_literal_get_f64(h, 2051), 2052, 0);
  }
  cxla_literal_destroy(h);
  cxla_literal *b = iota(ti_sh(CXLA_BF16, 1, 260), 0, __FILE__, __LINE__);
  if (b) CHECK_NEAR(cxla_literal_get_f64(b, 257), 256, 0);
  cxla_literal_destroy(b);
}

TEST(interp_bitcast) {
  /* default layouts: a reshape */
  one o = ONE(f32_2d(2, 3, (double[]){1, 2, 3, 4, 5, 6}));
  cx_instr *r = ti_op(o.c, CX_OP_BITCAST, ti_sh(CXLA_F32, 1, 6), 1, o.p[0]);
  TI_CHECK_F(RUN(o, r), -1, 1, 2, 3, 4, 5, 6);

  /* a column-major operand f32[2,3]{0,1} holds 1,4,2,5,3,6 physically; read as f32[3,2]{1,0}
   * that is the transpose */
  cx_shape cm = ti_sh(CXLA_F32, 2, 2, 3);
  cm.has_layout = 1;
  cm.minor_to_major[0] = 0;
  cm.minor_to_major[1] = 1;
  cxla_literal *x = f32_2d(2, 3, (double[]){1, 2, 3, 4, 5, 6});
  cx_module *m = ti_module();
  cx_comp *c = ti_comp(m, "main");
  cx_instr *p = ti_param(c, 0, cm);
  ti_finish(m, c, ti_op(c, CX_OP_BITCAST, ti_sh(CXLA_F32, 2, 3, 2), 1, p), 1);
  TI_CHECK_F(TI_RUN(m, 1, &x), -1, 1, 4, 2, 5, 3, 6);
  cxla_literal_destroy(x);
  cx_module_free(m);

  /* bitcast to s32 reinterprets the bits */
  o = ONE(TI_F(CXLA_F32, 1.0));
  r = ti_op(o.c, CX_OP_BITCAST, ti_sh(CXLA_S32, 1, 1), 1, o.p[0]);
  TI_CHECK_I(RUN(o, r), 0x3F800000);
}
