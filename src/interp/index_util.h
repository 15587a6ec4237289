/* index_util.h — plumbing shared by the interpreter's heavy ops (reduce, windows, sort, dot,
 * convolution, gather, scatter): multi-index stepping, checked sizes, window taps, operand
 * checks and conversions. Every check here guards against attributes that disagree with the
 * operand shapes: the verifier should have caught them, but the interpreter must never index
 * out of bounds even when it did not. */
#ifndef CX_INTERP_INDEX_UTIL_H
#define CX_INTERP_INDEX_UTIL_H
#include "interp/interp.h"

/* Steps idx to the next index of a `dims`-shaped array in row-major order. Returns 0 after
 * the last index (idx is then all zeros again). */
static inline int cx_idx_next(int rank, const int64_t *dims, int64_t *idx) {
  for (int d = rank - 1; d >= 0; d--) {
    if (++idx[d] < dims[d]) return 1;
    idx[d] = 0;
  }
  return 0;
}

/* Largest element count or size the heavy ops accept (matches cx_shape_elems' limit). */
#define CX_HV_MAX ((int64_t)1 << 62)

/* *out = a * b for a, b >= 0; returns 0 if the product exceeds CX_HV_MAX. */
int cx_hv_mul(int64_t a, int64_t b, int64_t *out);

/* "<op>: <message>" as CXLA_ERR_VERIFY at the instruction (attributes inconsistent with the
 * operands), and an out-of-memory error. */
cxla_status cx_hv_bad(cx_interp *st, cx_instr *in, const char *fmt, ...) CX_PRINTF(3, 4);
cxla_status cx_hv_oom(cx_interp *st, cx_instr *in);

/* A zero-filled literal of shape s (an OOM error is set on failure). */
cxla_literal *cx_hv_literal(cx_interp *st, cx_instr *in, const cx_shape *s);
/* The i-th array shape of the instruction's result: the shape itself for i == 0 when it is
 * not a tuple, else tuple element i. NULL (with an error set) if there is none. */
const cx_shape *cx_hv_result_shape(cx_interp *st, cx_instr *in, int i, int n);
/* Hands over n result arrays as the instruction's result: the array itself, or a tuple when
 * the declared result is a tuple. Takes ownership of lits (all destroyed on failure). */
cxla_status cx_hv_finish(cx_interp *st, cx_instr *in, int n, cxla_literal **lits,
                         cxla_literal **out);
/* Checks that ops[i] is an array literal; with rank >= 0 also that it has that rank. */
cxla_status cx_hv_check_array(cx_interp *st, cx_instr *in, const cxla_literal *lit, int rank,
                              const char *what);
/* Checks that a list of dimension numbers is within [0, rank) and has no repeats; marks each
 * in `seen` (which the caller zeroes, and may share between lists that must be disjoint). */
cxla_status cx_hv_check_dims(cx_interp *st, cx_instr *in, const cx_ints *dims, int rank,
                             int *seen, const char *what);
/* Checks that the declared result shape has the given element type and dims. */
cxla_status cx_hv_check_result(cx_interp *st, cx_instr *in, const cx_shape *declared,
                               cxla_type type, int rank, const int64_t *dims);

/* ---- windows (reduce-window, select-and-scatter, convolution) ---- */
/* A window dimension with 0 stride/dilations read as 1 and its values checked for sanity. */
cxla_status cx_hv_window_dim(cx_interp *st, cx_instr *in, const cx_window_dim *w,
                             cx_window_dim *out);
/* Reads the instruction's window for an operand of `rank` dims (in_dims): normalised window
 * dims into w[] and the window-position counts into out_dims[]. allow_reversal: only
 * convolution has window reversal. */
cxla_status cx_hv_window(cx_interp *st, cx_instr *in, int rank, const int64_t *in_dims,
                         int allow_reversal, cx_window_dim *w, int64_t *out_dims);
/* Number of window positions along a dimension of in_size elements (XLA's StridedBound of
 * the base-dilated, padded size), or -1 if the sizes overflow. */
int64_t cx_window_out_size(const cx_window_dim *w, int64_t in_size);
/* The taps of window position o: the input coordinates the window touches, in window order,
 * with base-dilation holes and padding left out. Writes in_coord[] and the window offsets
 * k[] (before any reversal) and returns the count (at most w->size). */
int64_t cx_window_taps(const cx_window_dim *w, int64_t in_size, int64_t o, int64_t *in_coord,
                       int64_t *k);

/* ---- values ---- */
/* Element i of a `src` array as the value `convert` to type `to` would give, in the wide
 * accumulation type: double for float `to`, int64 (two's complement) otherwise. */
double cx_hv_load_f64_as(cxla_type src, const void *data, int64_t i, cxla_type to);
int64_t cx_hv_load_i64_as(cxla_type src, const void *data, int64_t i, cxla_type to);
/* An index value (gather/scatter start indices): integer types only; u64 values above
 * INT64_MAX read as INT64_MAX so clamping and bounds checks still see them as too large. */
int64_t cx_hv_load_index(cxla_type t, const void *data, int64_t i);

#endif
