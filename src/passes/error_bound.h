/* error_bound.h — how far two correct backends may be apart, element by element, under the
 * numerics policy of docs/numerics.md: the allowance `cxla run --check` adds to its fixed
 * tolerance, so that a sum or dot whose order of accumulation differs is told apart from a
 * wrong answer. */
#ifndef CX_ERROR_BOUND_H
#define CX_ERROR_BOUND_H
#include "ir/ir.h"

/* A copy of m whose ENTRY returns (R, B): R is the original result, B mirrors its tuple
 * structure with one f64 array per leaf (same dimensions) bounding |x_backend - x_interp|
 * for each element, beyond the final rounding that a fixed relative tolerance covers. B is 0
 * for integer, pred, complex and 8-/4-bit leaves and wherever the analysis cannot bound a
 * value (it then allows nothing: the check stays as strict as its fixed tolerance). NULL with
 * the context's error set on OOM. */
cx_module *cx_module_error_bound(cx_module *m);

#endif
