/* literal_diff.h — how far an array literal is from a reference one, element by element: the
 * numbers `cxla run --check` reports for each result leaf, and the default tolerances per
 * element type that it applies. */
#ifndef CX_LITERAL_DIFF_H
#define CX_LITERAL_DIFF_H
#include "ir/literal.h"

typedef struct cx_diff {
  int64_t n;          /* elements compared */
  int64_t nbad;       /* elements beyond tolerance */
  int64_t ndiff;      /* elements that differ at all (NaN matches NaN, -0 matches +0) */
  double max_abs;     /* max |got - want|; infinite for a NaN or infinity that does not match */
  double max_rel;     /* max |got - want| / |want|; infinite where want is 0 and got is not */
  int64_t first_bad;  /* row-major index of the first element beyond tolerance, or -1 */
  int64_t first_diff; /* row-major index of the first element that differs at all, or -1 */
} cx_diff;

/* The default tolerance for element type t: f64 rtol 1e-12, atol 1e-13; f32 1e-5, 1e-6;
 * f16 1e-2, 1e-3; bf16 4e-2, 1e-2 (about 5 units in the last place near 1); c64 and c128 those
 * of f32 and f64; 0, 0 for integers and pred, which always compare exactly. */
void cx_diff_default_tol(cxla_type t, double *rtol, double *atol);

/* Compares got with want (the reference), arrays of the same shape: floats within
 * |got - want| <= atol + rtol * |want| (NaN matches NaN, an infinity only itself), integers
 * and pred exactly (rtol and atol ignored), complex numbers by their distance in the complex
 * plane (cx_complex_close; a part that is NaN or infinite must match). A tuple, or shapes that differ, is
 * CXLA_ERR_INVALID_ARGUMENT naming both shapes. */
cxla_status cx_literal_diff(cxla_context *ctx, const cxla_literal *got, const cxla_literal *want, double rtol,
                            double atol, cx_diff *d);

/* The same with an extra allowance per float element: |got - want| <= atol + rtol * |want| +
 * allow[i], allow an f64 array with one element per element of got (passes/error_bound.h), in
 * row-major order; NULL for none. An allow[i] that is NaN or infinite adds nothing. */
cxla_status cx_literal_diff_allow(cxla_context *ctx, const cxla_literal *got, const cxla_literal *want, double rtol,
                                  double atol, const cxla_literal *allow, cx_diff *d);

/* Appends row-major element index i of shape s as a multi-dimensional index: "[1,0,2]", or
 * "[]" for a scalar. */
void cx_diff_index(cx_sb *sb, const cx_shape *s, int64_t i);

#endif
