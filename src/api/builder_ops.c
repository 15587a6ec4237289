/* builder_ops.c — builder calls for re-indexing ops (broadcast, reshape, transpose, slices,
 * concatenate, pad, reverse, iota), tuples and reduce-precision. Each fills the attributes its
 * HLO text carries; the verifier's cx_infer_shape then checks them and gives the shape. */
#include <string.h>
#include "api/api.h"

/* The rank of an array operand (0 for tuples, which the verifier rejects with its message). */
static int rank_of(const cx_instr *in) { return in->shape.type == CXLA_TUPLE ? 0 : in->shape.rank; }

static int check_rank_arg(cxla_builder *b, const char *op, int rank, const int64_t *dims) {
  if (rank < 0 || rank > CXLA_MAX_RANK) {
    cx_b_fail(b, op, CXLA_ERR_INVALID_ARGUMENT, "rank %d out of range [0, %d]", rank, CXLA_MAX_RANK);
    return 0;
  }
  if (rank && !dims) { cx_b_fail(b, op, CXLA_ERR_INVALID_ARGUMENT, "dims is NULL"); return 0; }
  return 1;
}

cxla_op cxla_builder_broadcast(cxla_builder *b, cxla_op x, int rank, const int64_t *dims,
                               const int64_t *operand_to_result_dims) {
  cxla_op none = {0};
  cx_instr *opnd = cx_b_get(b, x, "broadcast", 0);
  if (!opnd || !check_rank_arg(b, "broadcast", rank, dims)) return none;
  cx_shape s = cx_shape_array(opnd->shape.type, rank, dims);
  cx_instr *in = cx_b_new(b, CX_OP_BROADCAST, 1, &opnd, &s);
  if (!in || !cx_b_ints(b, in, &in->a.dims, rank_of(opnd), operand_to_result_dims)) return none;
  return cx_b_done(b, in);
}

cxla_op cxla_builder_reshape(cxla_builder *b, cxla_op x, int rank, const int64_t *dims) {
  cxla_op none = {0};
  cx_instr *opnd = cx_b_get(b, x, "reshape", 0);
  if (!opnd || !check_rank_arg(b, "reshape", rank, dims)) return none;
  cx_shape s = cx_shape_array(opnd->shape.type, rank, dims);
  cx_instr *in = cx_b_new(b, CX_OP_RESHAPE, 1, &opnd, &s);
  return in ? cx_b_done(b, in) : none;
}

cxla_op cxla_builder_transpose(cxla_builder *b, cxla_op x, const int64_t *permutation) {
  cxla_op none = {0};
  cx_instr *opnd = cx_b_get(b, x, "transpose", 0);
  if (!opnd) return none;
  cx_instr *in = cx_b_new(b, CX_OP_TRANSPOSE, 1, &opnd, NULL);
  if (!in || !cx_b_ints(b, in, &in->a.dims, rank_of(opnd), permutation)) return none;
  return cx_b_done(b, in);
}

cxla_op cxla_builder_slice(cxla_builder *b, cxla_op x, const int64_t *starts, const int64_t *limits,
                           const int64_t *strides) {
  cxla_op none = {0};
  cx_instr *opnd = cx_b_get(b, x, "slice", 0);
  if (!opnd) return none;
  int r = rank_of(opnd);
  int64_t ones[CXLA_MAX_RANK];
  for (int i = 0; i < CXLA_MAX_RANK; i++) ones[i] = 1;
  cx_instr *in = cx_b_new(b, CX_OP_SLICE, 1, &opnd, NULL);
  if (!in || !cx_b_ints(b, in, &in->a.slice_start, r, starts) || !cx_b_ints(b, in, &in->a.slice_limit, r, limits) ||
      !cx_b_ints(b, in, &in->a.slice_stride, r, strides ? strides : ones))
    return none;
  return cx_b_done(b, in);
}

cxla_op cxla_builder_dynamic_slice(cxla_builder *b, cxla_op x, const cxla_op *start_indices, const int64_t *sizes) {
  cxla_op none = {0};
  cx_instr *ops[1 + CXLA_MAX_RANK];
  if (!(ops[0] = cx_b_get(b, x, "dynamic-slice", 0))) return none;
  int r = rank_of(ops[0]);
  if (!cx_b_get_n(b, r, start_indices, ops + 1, "dynamic-slice", 1)) return none;
  cx_instr *in = cx_b_new(b, CX_OP_DYNAMIC_SLICE, 1 + r, ops, NULL);
  if (!in || !cx_b_ints(b, in, &in->a.dims, r, sizes)) return none;
  return cx_b_done(b, in);
}

cxla_op cxla_builder_dynamic_update_slice(cxla_builder *b, cxla_op x, cxla_op update, const cxla_op *start_indices) {
  cxla_op none = {0};
  cx_instr *ops[2 + CXLA_MAX_RANK];
  if (!(ops[0] = cx_b_get(b, x, "dynamic-update-slice", 0)) || !(ops[1] = cx_b_get(b, update, "dynamic-update-slice", 1)))
    return none;
  int r = rank_of(ops[0]);
  if (!cx_b_get_n(b, r, start_indices, ops + 2, "dynamic-update-slice", 2)) return none;
  cx_instr *in = cx_b_new(b, CX_OP_DYNAMIC_UPDATE_SLICE, 2 + r, ops, NULL);
  return in ? cx_b_done(b, in) : none;
}

/* Operand arrays of variadic ops come from the heap: n is caller-chosen. */
static cx_instr **op_array(cxla_builder *b, int n, const char *op) {
  if (n < 0) { cx_b_fail(b, op, CXLA_ERR_INVALID_ARGUMENT, "negative operand count %d", n); return NULL; }
  cx_instr **v = cx_calloc((size_t)(n ? n : 1), sizeof *v);
  if (!v) cx_b_fail(b, op, CXLA_ERR_OUT_OF_MEMORY, "out of memory");
  return v;
}

cxla_op cxla_builder_concatenate(cxla_builder *b, int n, const cxla_op *xs, int64_t dimension) {
  cxla_op none = {0}, r = none;
  if (!cx_b_ok(b)) return none;
  cx_instr **ops = op_array(b, n, "concatenate");
  if (!ops) return none;
  if (cx_b_get_n(b, n, xs, ops, "concatenate", 0)) {
    cx_instr *in = cx_b_new(b, CX_OP_CONCATENATE, n, ops, NULL);
    if (in && cx_b_ints(b, in, &in->a.dims, 1, &dimension)) r = cx_b_done(b, in);
  }
  cx_free(ops);
  return r;
}

cxla_op cxla_builder_pad(cxla_builder *b, cxla_op x, cxla_op pad_value, const int64_t *lo, const int64_t *hi,
                         const int64_t *interior) {
  cxla_op none = {0};
  cx_instr *ops[2];
  cxla_op xs[2] = {x, pad_value};
  if (!cx_b_get_n(b, 2, xs, ops, "pad", 0)) return none;
  int r = rank_of(ops[0]);
  int64_t zeros[CXLA_MAX_RANK] = {0};
  cx_instr *in = cx_b_new(b, CX_OP_PAD, 2, ops, NULL);
  if (!in || !cx_b_ints(b, in, &in->a.pad_lo, r, lo) || !cx_b_ints(b, in, &in->a.pad_hi, r, hi) ||
      !cx_b_ints(b, in, &in->a.pad_interior, r, interior ? interior : zeros))
    return none;
  return cx_b_done(b, in);
}

cxla_op cxla_builder_reverse(cxla_builder *b, cxla_op x, int n, const int64_t *dimensions) {
  cxla_op none = {0};
  cx_instr *opnd = cx_b_get(b, x, "reverse", 0);
  if (!opnd) return none;
  if (n < 0) return cx_b_fail(b, "reverse", CXLA_ERR_INVALID_ARGUMENT, "negative dimension count %d", n);
  cx_instr *in = cx_b_new(b, CX_OP_REVERSE, 1, &opnd, NULL);
  if (!in || !cx_b_ints(b, in, &in->a.dims, n, dimensions)) return none;
  return cx_b_done(b, in);
}

cxla_op cxla_builder_iota(cxla_builder *b, cxla_type type, int rank, const int64_t *dims, int64_t iota_dimension) {
  cxla_op none = {0};
  if (!cx_b_ok(b) || !check_rank_arg(b, "iota", rank, dims)) return none;
  cx_shape s = cx_shape_array(type, rank, dims);
  cx_instr *in = cx_b_new(b, CX_OP_IOTA, 0, NULL, &s);
  if (!in) return none;
  in->a.index = iota_dimension;
  return cx_b_done(b, in);
}

cxla_op cxla_builder_reduce_precision(cxla_builder *b, cxla_op x, int exponent_bits, int mantissa_bits) {
  cxla_op none = {0};
  cx_instr *opnd = cx_b_get(b, x, "reduce-precision", 0);
  if (!opnd) return none;
  cx_instr *in = cx_b_new(b, CX_OP_REDUCE_PRECISION, 1, &opnd, NULL);
  if (!in) return none;
  in->a.exponent_bits = exponent_bits;
  in->a.mantissa_bits = mantissa_bits;
  return cx_b_done(b, in);
}

cxla_op cxla_builder_tuple(cxla_builder *b, int n, const cxla_op *elems) {
  cxla_op none = {0}, r = none;
  if (!cx_b_ok(b)) return none;
  cx_instr **ops = op_array(b, n, "tuple");
  if (!ops) return none;
  if (cx_b_get_n(b, n, elems, ops, "tuple", 0)) {
    cx_instr *in = cx_b_new(b, CX_OP_TUPLE, n, ops, NULL);
    if (in) r = cx_b_done(b, in);
  }
  cx_free(ops);
  return r;
}

cxla_op cxla_builder_get_tuple_element(cxla_builder *b, cxla_op t, int64_t index) {
  cxla_op none = {0};
  cx_instr *opnd = cx_b_get(b, t, "get-tuple-element", 0);
  if (!opnd) return none;
  cx_instr *in = cx_b_new(b, CX_OP_GET_TUPLE_ELEMENT, 1, &opnd, NULL);
  if (!in) return none;
  in->a.index = index;
  return cx_b_done(b, in);
}
