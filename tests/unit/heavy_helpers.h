/* heavy_helpers.h — building one instruction on literals by hand to test the interpreter's
 * heavy ops (reduce, windows, sort, map, dot, convolution, gather, scatter) directly, plus
 * literal construction and comparison. */
#ifndef CX_TEST_HEAVY_HELPERS_H
#define CX_TEST_HEAVY_HELPERS_H
#include "interp/interp.h"
#include "test.h"

typedef struct hh {
  cx_module *m;
  cx_comp *entry; /* holds the instruction under test */
  cx_interp st;
} hh;

/* A fresh module with an (unfinished) entry computation. */
int hh_init(hh *h);
void hh_free(hh *h);

/* Array literal with values v[0..elems) (NULL: zeros), stored with `convert` semantics. */
cxla_literal *hh_lit(cxla_type t, int rank, const int64_t *dims, const double *v);
cxla_literal *hh_scalar(cxla_type t, double v);
/* Literal of `elems` values filled from a fixed pseudo-random sequence (seeded), values
 * integers in [lo, hi] so sums are exact. */
cxla_literal *hh_rand(cxla_type t, int rank, const int64_t *dims, unsigned seed, int lo, int hi);
void hh_free_lits(int n, cxla_literal **l);

/* Computation building: begin, add scalar instructions, end (sets root, adds to module). */
cx_comp *hh_comp(hh *h, const char *name);
cx_instr *hh_param(cx_comp *c, int index, cxla_type t);
cx_instr *hh_op2(cx_comp *c, cx_op op, cx_instr *a, cx_instr *b);      /* result type = a's */
cx_instr *hh_cmp(cx_comp *c, cxla_compare_dir dir, cx_cmp_type ct, cx_instr *a, cx_instr *b);
cx_instr *hh_select(cx_comp *c, cx_instr *p, cx_instr *a, cx_instr *b);
cx_instr *hh_tuple(cx_comp *c, int n, cx_instr *const *elems);
cx_comp *hh_end(hh *h, cx_comp *c, cx_instr *root);
/* (x, y) -> op(x, y) */
cx_comp *hh_binary(hh *h, cx_op op, cxla_type t);
/* 2n params of types types[i/2] each; root compare(param a, param b). */
cx_comp *hh_comparator(hh *h, int n, const cxla_type *types, int a, int b,
                       cxla_compare_dir dir, cx_cmp_type ct);

/* The instruction under test: `op` on parameters shaped like ops[], with result shape rs
 * (array) or a tuple of the n array shapes in rs[0..n). */
cx_instr *hh_instr(hh *h, cx_op op, int nres, const cx_shape *rs, int nops,
                   cxla_literal *const *ops);
cx_instr *hh_instr1(hh *h, cx_op op, cxla_type t, int rank, const int64_t *dims, int nops,
                    cxla_literal *const *ops);
void hh_ints(hh *h, cx_ints *dst, int n, const int64_t *v);
/* window dims: each row {size, stride, pad_lo, pad_hi, lhs_dilate, rhs_dilate, reversal} */
void hh_window(hh *h, cx_instr *in, int rank, const int64_t (*w)[7]);

/* Compares an array literal with the expected type, dims and values (|got-want| <= tol, NaN
 * matches NaN, and with tol == 0 the sign of zero must match too). Reports via test_fail. */
int hh_expect_at(const char *file, int line, const cxla_literal *got, cxla_type t, int rank,
                 const int64_t *dims, const double *want, double tol);
#define HH_EXPECT(got, t, rank, dims, want, tol) \
  hh_expect_at(__FILE__, __LINE__, (got), (t), (rank), (dims), (want), (tol))

#define HH_DIMS(...) ((const int64_t[]){__VA_ARGS__})
#define HH_VALS(...) ((const double[]){__VA_ARGS__})

#endif
