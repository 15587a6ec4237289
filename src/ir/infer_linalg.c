/* infer_linalg.c — shape rules of cholesky and triangular-solve (XLA's InferCholeskyShape and
 * InferTriangularSolveShape): batches of square matrices in the two minor dimensions, leading
 * dimensions alike, the result the shape of the matrix (cholesky) or of b (triangular-solve). */
#include "ir/infer.h"

/* Operand i: a float array of rank >= 2 whose two minor dimensions are equal. */
static cxla_status square_batch(cx_infer *ic, int i, const char *what) {
  CX_TRY(cx_vneed_array(ic, i, what));
  const cx_shape *a = cx_vop(ic, i);
  if (!cx_type_is_float(a->type) && !cx_type_is_complex(a->type))
    return cx_vfail(ic, "%s must have a floating-point or complex element type, got %s", what, cx_vtype(a->type));
  if (a->rank < 2) return cx_vfail(ic, "%s must have rank >= 2, got %s", what, cx_vshape(ic, a));
  if (a->dims[a->rank - 1] != a->dims[a->rank - 2])
    return cx_vfail(ic, "the two minor dimensions of %s must be equal, got %s", what, cx_vshape(ic, a));
  return CXLA_OK;
}

cxla_status cx_infer_cholesky(cx_infer *ic, cx_shape *out) {
  CX_TRY(square_batch(ic, 0, "a"));
  *out = *cx_vop(ic, 0);
  cx_vplain(out);
  return CXLA_OK;
}

cxla_status cx_infer_triangular_solve(cx_infer *ic, cx_shape *out) {
  const cx_attrs *o = &ic->in->a;
  CX_TRY(square_batch(ic, 0, "a"));
  CX_TRY(cx_vneed_array(ic, 1, "b"));
  const cx_shape *a = cx_vop(ic, 0), *b = cx_vop(ic, 1);
  if (b->type != a->type)
    return cx_vfail(ic, "a and b must have the same element type, got %s and %s", cx_vtype(a->type), cx_vtype(b->type));
  if (b->rank != a->rank) return cx_vfail(ic, "a and b must have the same rank, got %s and %s", cx_vshape(ic, a), cx_vshape(ic, b));
  int shared = o->left_side ? b->rank - 2 : b->rank - 1;
  if (b->dims[shared] != a->dims[a->rank - 1])
    return cx_vfail(ic, "b's dimension %d (%s side) must have a's size %lld, got %s", shared, o->left_side ? "left" : "right",
                    (long long)a->dims[a->rank - 1], cx_vshape(ic, b));
  for (int d = 0; d < a->rank - 2; d++)
    if (a->dims[d] != b->dims[d])
      return cx_vfail(ic, "a and b must have the same batch dimensions, got %s and %s", cx_vshape(ic, a), cx_vshape(ic, b));
  if (o->transpose_a < CX_TRANSPOSE_NO || o->transpose_a > CX_TRANSPOSE_ADJOINT)
    return cx_vfail(ic, "needs transpose_a= (NO_TRANSPOSE, TRANSPOSE or ADJOINT)");
  *out = *b;
  cx_vplain(out);
  return CXLA_OK;
}
