/* linalg_ops.c — the cholesky and triangular-solve ops on the interpreter: each matrix of the
 * batch (the leading dimensions) loaded into doubles, solved by the reference algorithms of
 * linalg_ref.c and rounded once to the element type. */
#include "interp/index_util.h"
#include "interp/internal.h"
#include "interp/linalg.h"

/* Matrices of a batch: count, and elements per matrix. */
static int64_t batch_of(const cx_shape *s, int64_t *per) {
  *per = s->dims[s->rank - 2] * s->dims[s->rank - 1];
  return *per ? cx_shape_elems(s) / *per : 0;
}

void cx_la_load(const cxla_literal *x, int64_t base, int64_t n, cx_z *dst) {
  for (int64_t i = 0; i < n; i++) {
    double re, im;
    cx_load_complex(x->shape.type, x->data, base + i, &re, &im);
    dst[i] = cx_z_make(re, im);
  }
}

void cx_la_store(cxla_literal *x, int64_t base, int64_t n, const cx_z *src) {
  for (int64_t i = 0; i < n; i++) cx_store_complex(x->shape.type, x->data, base + i, creal(src[i]), cimag(src[i]));
}

void cx_la_transpose(int64_t n, cx_z *a) {
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = i + 1; j < n; j++) {
      cx_z t = a[i * n + j];
      a[i * n + j] = a[j * n + i];
      a[j * n + i] = t;
    }
}

/* lower=false factors the upper triangle: the lower factor of the transpose, transposed. */
CX_INTERP_EVALUATOR(cx_interp_cholesky) {
  const cxla_literal *a = ops[0];
  CX_TRY(cx_hv_check_array(st, in, a, -1, "operand"));
  if (a->shape.rank < 2) return cx_hv_bad(st, in, "operand must have rank >= 2");
  int64_t n = a->shape.dims[a->shape.rank - 1], per, nb = batch_of(&a->shape, &per);
  cxla_literal *res = cx_hv_literal(st, in, &a->shape);
  cx_z *x = cx_malloc(sizeof *x * (size_t)(per ? 2 * per : 1)), *l = x + per;
  if (!res || !x) {
    cxla_literal_destroy(res);
    cx_free(x);
    return cx_hv_oom(st, in);
  }
  for (int64_t b = 0; b < nb; b++) {
    cx_la_load(a, b * per, per, x);
    if (!in->a.lower) cx_la_transpose(n, x);
    cx_ref_cholesky_xla(n, x, l);
    if (!in->a.lower) cx_la_transpose(n, l);
    cx_la_store(res, b * per, per, l);
  }
  cx_free(x);
  *out = res;
  return CXLA_OK;
}

CX_INTERP_EVALUATOR(cx_interp_triangular_solve) {
  const cxla_literal *a = ops[0], *b = ops[1];
  CX_TRY(cx_hv_check_array(st, in, a, -1, "a"));
  CX_TRY(cx_hv_check_array(st, in, b, a->shape.rank, "b"));
  if (a->shape.rank < 2) return cx_hv_bad(st, in, "a must have rank >= 2");
  int r = b->shape.rank;
  int64_t m = b->shape.dims[r - 2], n = b->shape.dims[r - 1], aper, bper;
  int64_t na = batch_of(&a->shape, &aper), nb = batch_of(&b->shape, &bper);
  if (aper != (in->a.left_side ? m * m : n * n) || (nb && na != nb))
    return cx_hv_bad(st, in, "a and b do not fit together");
  cxla_literal *res = cx_hv_literal(st, in, &b->shape);
  cx_z *x = cx_malloc(sizeof *x * (size_t)(aper + bper + 1)), *y = x + aper;
  if (!res || !x) {
    cxla_literal_destroy(res);
    cx_free(x);
    return cx_hv_oom(st, in);
  }
  int trans = in->a.transpose_a == CX_TRANSPOSE_YES ? 1 : in->a.transpose_a == CX_TRANSPOSE_ADJOINT ? 2 : 0;
  for (int64_t k = 0; k < nb; k++) {
    cx_la_load(a, k * aper, aper, x);
    cx_la_load(b, k * bper, bper, y);
    cx_ref_trsm(in->a.left_side, in->a.lower, trans, in->a.unit_diagonal, m, n, x, y);
    cx_la_store(res, k * bper, bper, y);
  }
  cx_free(x);
  *out = res;
  return CXLA_OK;
}
