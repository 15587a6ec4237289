/* literal.h — host arrays and tuples (cxla_literal). Data is dense row-major in the logical
 * shape; f16/bf16 are stored as their 16-bit patterns, pred as one byte (0 or 1). */
#ifndef CX_LITERAL_H
#define CX_LITERAL_H
#include "ir/shape.h"

struct cxla_literal {
  cx_shape shape;           /* heap-owned tuple element shapes */
  void *data;               /* arrays: shape bytes (at least 1 byte allocated) */
  int nelems;
  struct cxla_literal **elems; /* tuples */
};

/* A zero-filled literal of any shape (tuples recursively); NULL on OOM or a bad shape. */
cxla_literal *cx_literal_new(const cx_shape *shape);
/* The same without zeroing array data (for results every element of which gets written). */
cxla_literal *cx_literal_new_uninit(const cx_shape *shape);
/* Prints "{1, 2}" (values only) or "f32[2] {1, 2}" (with_shape); tuples as "(a, b)". */
void cx_literal_print(cx_sb *sb, const cxla_literal *lit, int with_shape);
/* Prints one element in HLO literal syntax. */
void cx_literal_print_elem(cx_sb *sb, const cxla_literal *lit, int64_t i);
/* Compares got with want: same shape, integers and pred exact, floats within
 * |got-want| <= atol + rtol*|want| (NaN matches NaN, infinities must match; complex numbers as
 * cx_complex_close says). Returns 1 if
 * they match; otherwise 0 and a description of the first difference in why (may be NULL). */
int cx_literal_compare(const cxla_literal *got, const cxla_literal *want, double rtol,
                       double atol, cx_sb *why);
/* Whether element i of two complex arrays of type t are within tolerance, as
 * cx_literal_compare judges them: NaN parts match NaN, infinite parts must be equal, and the
 * distance in the complex plane is at most atol + rtol*|want|. */
int cx_complex_close(cxla_type t, const void *got, const void *want, int64_t i, double rtol, double atol);
/* Bitwise equality of shape and data. */
int cx_literal_equal(const cxla_literal *a, const cxla_literal *b);
/* The array leaves of l, depth first (tuple elements in order; tokens and empty tuples have
 * none), into out[*k], out[*k + 1], ... with *k advanced; 0 when there are more than cap. */
int cx_literal_leaves(const cxla_literal *l, const cxla_literal **out, int *k, int cap);

#endif
