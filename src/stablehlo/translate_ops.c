/* translate_ops.c — the op table (each VHLO op cxla has, with its handler; each VHLO op it has
 * not, with the reason it is refused) and the handlers of elementwise and re-indexing ops. */
#include <stdio.h>
#include <string.h>
#include "stablehlo/translate.h"

/* ---- elementwise ---- */

/* An op whose HLO form is the same op on the same operands (arg: the cx_op). StableHLO lets
 * select's predicate and clamp's bounds be scalars; XLA's builder broadcasts them, so does this. */
static cxla_status h_elementwise(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  cx_op opc = (cx_op)arg;
  CX_TRY(cx_sx_arity(sx, op, cx_op_arity(opc), 1));
  cx_shape s;
  CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &s));
  cx_instr **ops;
  int n;
  CX_TRY(cx_sx_operands(sx, op, 0, &ops, &n));
  if (opc == CX_OP_SELECT) CX_TRY(cx_sx_broadcast_scalar(sx, c, op, ops[0], &s, &ops[0]));
  if (opc == CX_OP_CLAMP) {
    CX_TRY(cx_sx_broadcast_scalar(sx, c, op, ops[0], &s, &ops[0]));
    CX_TRY(cx_sx_broadcast_scalar(sx, c, op, ops[2], &s, &ops[2]));
  }
  /* result_accuracy (v2 of the transcendental ops): the default asks nothing of cxla; another
   * mode is a request cxla's kernels do not take, kept in the text so that it shows */
  const cx_mlir_attr *acc = cx_mlir_op_attr(op, "result_accuracy");
  cx_instr *in = cx_sx_add(sx, c, opc, &s, n, ops, op);
  if (!in) return CXLA_ERR_OUT_OF_MEMORY;
  if (acc && acc->kind == CX_MLIR_ATTR_RESULT_ACCURACY) {
    const cx_mlir_attr *mode = acc->u.acc.mode;
    const char *mn = mode && mode->kind == CX_MLIR_ATTR_ENUM ? mode->u.enm.name : NULL;
    if (mn && strcmp(mn, "DEFAULT")) {
      char v[160];
      snprintf(v, sizeof v, "{mode=%s atol=%g rtol=%g ulps=%lld}", mn, acc->u.acc.atol, acc->u.acc.rtol,
               (long long)acc->u.acc.ulps);
      if (!cx_attr_add_raw(sx->m, &in->a.nraw, &in->a.raw, "result_accuracy", v)) return CXLA_ERR_OUT_OF_MEMORY;
    }
  }
  return cx_sx_bind(sx, c, op, in);
}

static cxla_status h_compare(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  static const char *const dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"}; /* cxla_compare_dir order */
  static const char *const types[] = {"NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"}; /* cx_cmp_type */
  CX_TRY(cx_sx_arity(sx, op, 2, 1));
  uint32_t d, t;
  CX_TRY(cx_sx_enum(sx, op, "comparison_direction", CX_MLIR_ENUM_COMPARISON_DIRECTION, 1, 0, &d));
  CX_TRY(cx_sx_enum(sx, op, "compare_type", CX_MLIR_ENUM_COMPARISON_TYPE, 0, 0, &t));
  const char *dn = cx_mlir_enum_name(CX_MLIR_ENUM_COMPARISON_DIRECTION, d);
  const char *tn = cx_mlir_op_attr(op, "compare_type") ? cx_mlir_enum_name(CX_MLIR_ENUM_COMPARISON_TYPE, t) : "NOTYPE";
  int di = -1, ti = -1;
  for (int i = 0; i < CX_ARRAY_LEN(dirs); i++)
    if (dn && !strcmp(dn, dirs[i])) di = i;
  for (int i = 0; i < CX_ARRAY_LEN(types); i++)
    if (tn && !strcmp(tn, types[i])) ti = i;
  if (di < 0 || ti < 0) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "unknown comparison %s / %s", dn ? dn : "?", tn ? tn : "?");
  cx_shape s;
  CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &s));
  cx_instr **ops;
  int n;
  CX_TRY(cx_sx_operands(sx, op, 0, &ops, &n));
  cx_instr *in = cx_sx_add(sx, c, CX_OP_COMPARE, &s, n, ops, op);
  if (!in) return CXLA_ERR_OUT_OF_MEMORY;
  in->a.dir = (cxla_compare_dir)di;
  in->a.cmp_type = (cx_cmp_type)ti;
  return cx_sx_bind(sx, c, op, in);
}

static cxla_status h_reduce_precision(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, 1, 1));
  int64_t e, m;
  CX_TRY(cx_sx_int(sx, op, "exponent_bits", 1, 0, &e));
  CX_TRY(cx_sx_int(sx, op, "mantissa_bits", 1, 0, &m));
  if (e < 1 || e > 64 || m < 0 || m > 64)
    return cx_sx_err(sx, op, CXLA_ERR_PARSE, "exponent_bits %lld / mantissa_bits %lld out of range", (long long)e, (long long)m);
  cx_shape s;
  CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &s));
  cx_instr *x;
  CX_TRY(cx_sx_operand(sx, op, 0, &x));
  cx_instr *in = cx_sx_add(sx, c, CX_OP_REDUCE_PRECISION, &s, 1, &x, op);
  if (!in) return CXLA_ERR_OUT_OF_MEMORY;
  in->a.exponent_bits = (int)e;
  in->a.mantissa_bits = (int)m;
  return cx_sx_bind(sx, c, op, in);
}

/* ---- re-indexing ---- */

/* One operand, one result, the attribute `arg` names read into dims (broadcast_in_dim,
 * transpose, reverse) or nothing (reshape). */
static cxla_status simple_shape_op(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, cx_op opc, const char *dims_attr) {
  CX_TRY(cx_sx_arity(sx, op, 1, 1));
  cx_shape s;
  CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &s));
  cx_instr *x;
  CX_TRY(cx_sx_operand(sx, op, 0, &x));
  cx_ints dims = {0, NULL};
  if (dims_attr) CX_TRY(cx_sx_ints(sx, op, dims_attr, 1, &dims));
  cx_instr *in = cx_sx_add(sx, c, opc, &s, 1, &x, op);
  if (!in) return CXLA_ERR_OUT_OF_MEMORY;
  in->a.dims = dims;
  return cx_sx_bind(sx, c, op, in);
}

static cxla_status h_broadcast_in_dim(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  return simple_shape_op(sx, c, op, CX_OP_BROADCAST, "broadcast_dimensions");
}
static cxla_status h_transpose(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  return simple_shape_op(sx, c, op, CX_OP_TRANSPOSE, "permutation");
}
static cxla_status h_reverse(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  return simple_shape_op(sx, c, op, CX_OP_REVERSE, "dimensions");
}
static cxla_status h_reshape(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  return simple_shape_op(sx, c, op, CX_OP_RESHAPE, NULL);
}

/* broadcast_v1 (the old form): broadcast_sizes become the major dimensions. */
static cxla_status h_broadcast(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, 1, 1));
  cx_shape s;
  CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &s));
  cx_instr *x;
  CX_TRY(cx_sx_operand(sx, op, 0, &x));
  if (x->shape.type == CXLA_TUPLE || x->shape.rank > s.rank) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "operand rank exceeds the result's");
  int64_t d[CXLA_MAX_RANK];
  int lead = s.rank - x->shape.rank;
  for (int i = 0; i < x->shape.rank; i++) d[i] = lead + i;
  cx_instr *in = cx_sx_add(sx, c, CX_OP_BROADCAST, &s, 1, &x, op);
  if (!in || !cx_ints_set(sx->m, &in->a.dims, x->shape.rank, d)) return CXLA_ERR_OUT_OF_MEMORY;
  return cx_sx_bind(sx, c, op, in);
}

static cxla_status h_slice(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, 1, 1));
  cx_shape s;
  CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &s));
  cx_instr *x;
  CX_TRY(cx_sx_operand(sx, op, 0, &x));
  cx_ints st, li, sr;
  CX_TRY(cx_sx_ints(sx, op, "start_indices", 1, &st));
  CX_TRY(cx_sx_ints(sx, op, "limit_indices", 1, &li));
  CX_TRY(cx_sx_ints(sx, op, "strides", 1, &sr));
  cx_instr *in = cx_sx_add(sx, c, CX_OP_SLICE, &s, 1, &x, op);
  if (!in) return CXLA_ERR_OUT_OF_MEMORY;
  in->a.slice_start = st;
  in->a.slice_limit = li;
  in->a.slice_stride = sr;
  return cx_sx_bind(sx, c, op, in);
}

static cxla_status h_dynamic_slice(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, -1, 1));
  cx_shape s;
  CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &s));
  cx_instr **ops;
  int n;
  CX_TRY(cx_sx_operands(sx, op, 0, &ops, &n));
  cx_ints sizes;
  CX_TRY(cx_sx_ints(sx, op, "slice_sizes", 1, &sizes));
  cx_instr *in = cx_sx_add(sx, c, CX_OP_DYNAMIC_SLICE, &s, n, ops, op);
  if (!in) return CXLA_ERR_OUT_OF_MEMORY;
  in->a.dims = sizes;
  return cx_sx_bind(sx, c, op, in);
}

/* Operands as they are, result type as declared, no attributes. */
static cxla_status h_plain(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  CX_TRY(cx_sx_arity(sx, op, cx_op_arity((cx_op)arg) >= 0 ? cx_op_arity((cx_op)arg) : -1, 1));
  cx_shape s;
  CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &s));
  cx_instr **ops;
  int n;
  CX_TRY(cx_sx_operands(sx, op, 0, &ops, &n));
  cx_instr *in = cx_sx_add(sx, c, (cx_op)arg, &s, n, ops, op);
  return in ? cx_sx_bind(sx, c, op, in) : CXLA_ERR_OUT_OF_MEMORY;
}

static cxla_status h_concatenate(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, -1, 1));
  int64_t d;
  CX_TRY(cx_sx_int(sx, op, "dimension", 1, 0, &d));
  cx_shape s;
  CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &s));
  cx_instr **ops;
  int n;
  CX_TRY(cx_sx_operands(sx, op, 0, &ops, &n));
  cx_instr *in = cx_sx_add(sx, c, CX_OP_CONCATENATE, &s, n, ops, op);
  if (!in || !cx_ints_set(sx->m, &in->a.dims, 1, &d)) return CXLA_ERR_OUT_OF_MEMORY;
  return cx_sx_bind(sx, c, op, in);
}

static cxla_status h_pad(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, 2, 1));
  cx_shape s;
  CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &s));
  cx_instr **ops;
  int n;
  CX_TRY(cx_sx_operands(sx, op, 0, &ops, &n));
  cx_ints lo, hi, in_;
  CX_TRY(cx_sx_ints(sx, op, "edge_padding_low", 1, &lo));
  CX_TRY(cx_sx_ints(sx, op, "edge_padding_high", 1, &hi));
  CX_TRY(cx_sx_ints(sx, op, "interior_padding", 1, &in_));
  cx_instr *in = cx_sx_add(sx, c, CX_OP_PAD, &s, n, ops, op);
  if (!in) return CXLA_ERR_OUT_OF_MEMORY;
  in->a.pad_lo = lo;
  in->a.pad_hi = hi;
  in->a.pad_interior = in_;
  return cx_sx_bind(sx, c, op, in);
}

static cxla_status h_iota(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, 0, 1));
  int64_t d;
  CX_TRY(cx_sx_int(sx, op, "iota_dimension", 1, 0, &d));
  cx_shape s;
  CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &s));
  cx_instr *in = cx_sx_add(sx, c, CX_OP_IOTA, &s, 0, NULL, op);
  if (!in) return CXLA_ERR_OUT_OF_MEMORY;
  in->a.index = d;
  return cx_sx_bind(sx, c, op, in);
}

static cxla_status h_constant(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, 0, 1));
  cx_shape s;
  CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &s));
  cxla_status st;
  const cx_mlir_attr *v = cx_sx_attr(sx, op, "value", 1, &st);
  if (!v) return st;
  cxla_literal *lit;
  int one;
  CX_TRY(cx_sx_literal(sx, op, v, &s, &lit, &one));
  if (!cx_module_own_literal(sx->m, lit)) return CXLA_ERR_OUT_OF_MEMORY;
  cx_shape ls = one ? lit->shape : s; /* a splat's literal is its one element */
  cx_instr *in = cx_sx_add(sx, c, CX_OP_CONSTANT, &ls, 0, NULL, op);
  if (!in) return CXLA_ERR_OUT_OF_MEMORY;
  in->a.literal = lit;
  /* A splat is a broadcast of its element, as the HLO jax writes has it: jax expands CHLO
   * before it hands a plugin the module, and erf_inv's (random.normal's) polynomial then holds
   * a splat constant per coefficient at the full shape. Expanded, a bf16 normal of 1M elements
   * carried 30 arrays of 4 MB and took a minute to compile and run. */
  if (one) CX_TRY(cx_sx_broadcast_scalar(sx, c, op, in, &s, &in));
  return cx_sx_bind(sx, c, op, in);
}

/* With static shapes the size is known here: an s32 constant, as XLA's simplifier makes it. */
static cxla_status h_get_dimension_size(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, 1, 1));
  int64_t d;
  CX_TRY(cx_sx_int(sx, op, "dimension", 1, 0, &d));
  cx_instr *x;
  CX_TRY(cx_sx_operand(sx, op, 0, &x));
  if (x->shape.type == CXLA_TUPLE || x->shape.type == CXLA_TOKEN || d < 0 || d >= x->shape.rank)
    return cx_sx_err(sx, op, CXLA_ERR_PARSE, "dimension %lld is not a dimension of the operand", (long long)d);
  cx_shape s;
  CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &s));
  if (s.type != CXLA_S32 || s.rank) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "the result must be tensor<i32>");
  cxla_literal *lit = cx_literal_new(&s);
  if (!lit || !cx_module_own_literal(sx->m, lit)) return cx_oom(sx->ctx);
  int32_t v = (int32_t)x->shape.dims[d];
  memcpy(lit->data, &v, sizeof v);
  cx_instr *in = cx_sx_add(sx, c, CX_OP_CONSTANT, &s, 0, NULL, op);
  if (!in) return CXLA_ERR_OUT_OF_MEMORY;
  in->a.literal = lit;
  return cx_sx_bind(sx, c, op, in);
}

/* ---- the table ---- */

/* handlers elsewhere */
cxla_status cx_sx_h_dot_general(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_dot(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_convolution(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_reduce(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_reduce_window(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_select_and_scatter(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_map(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_sort(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_gather(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_scatter(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_fft(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_rng_bit_generator(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_rng(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_cholesky(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_triangular_solve(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_batch_norm(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_while(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_if(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_case(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_call(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_tuple(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_get_tuple_element(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_optimization_barrier(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_after_all(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_custom_call(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_composite(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_all_reduce(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_all_gather(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_reduce_scatter(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_all_to_all(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_collective_permute(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_collective_broadcast(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_cross_replica_sum(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_infeed(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_outfeed(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_einsum(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_send(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_recv(cx_sx *, cx_comp *, const cx_mlir_op *, int);
cxla_status cx_sx_h_torch_index_select(cx_sx *, cx_comp *, const cx_mlir_op *, int);

#define EW(name, opc) {name, h_elementwise, CX_OP_##opc}
static const cx_sx_rule rules[] = {
    EW("abs_v1", ABS), EW("add_v1", ADD), EW("and_v1", AND), EW("atan2_v1", ATAN2), EW("cbrt_v1", CBRT),
    EW("cbrt_v2", CBRT), EW("ceil_v1", CEIL), EW("clamp_v1", CLAMP), EW("count_leading_zeros_v1", CLZ),
    EW("complex_v1", COMPLEX), EW("convert_v1", CONVERT), EW("bitcast_convert_v1", BITCAST_CONVERT),
    EW("cosine_v1", COS), EW("cosine_v2", COS), EW("divide_v1", DIVIDE), EW("exponential_v1", EXP),
    EW("exponential_v2", EXP), EW("exponential_minus_one_v1", EXPM1), EW("exponential_minus_one_v2", EXPM1),
    EW("floor_v1", FLOOR), EW("imag_v1", IMAG), EW("is_finite_v1", IS_FINITE), EW("log_v1", LOG), EW("log_v2", LOG),
    EW("log_plus_one_v1", LOG1P), EW("log_plus_one_v2", LOG1P), EW("logistic_v1", LOGISTIC),
    EW("logistic_v2", LOGISTIC), EW("maximum_v1", MAXIMUM), EW("minimum_v1", MINIMUM), EW("multiply_v1", MULTIPLY),
    EW("negate_v1", NEGATE), EW("not_v1", NOT), EW("or_v1", OR), EW("popcnt_v1", POPCNT), EW("power_v1", POWER),
    EW("real_v1", REAL), EW("remainder_v1", REMAINDER), EW("round_nearest_afz_v1", ROUND_AFZ),
    EW("round_nearest_even_v1", ROUND_EVEN), EW("rsqrt_v1", RSQRT), EW("rsqrt_v2", RSQRT), EW("select_v1", SELECT),
    EW("shift_left_v1", SHIFT_LEFT), EW("shift_right_arithmetic_v1", SHIFT_RIGHT_ARITHMETIC),
    EW("shift_right_logical_v1", SHIFT_RIGHT_LOGICAL), EW("sign_v1", SIGN), EW("sine_v1", SIN), EW("sine_v2", SIN),
    EW("sqrt_v1", SQRT), EW("sqrt_v2", SQRT), EW("subtract_v1", SUBTRACT), EW("tan_v1", TAN), EW("tan_v2", TAN),
    EW("tanh_v1", TANH), EW("tanh_v2", TANH), EW("xor_v1", XOR),
    {"compare_v1", h_compare, 0},
    {"reduce_precision_v1", h_reduce_precision, 0},
    {"broadcast_in_dim_v1", h_broadcast_in_dim, 0},
    {"broadcast_v1", h_broadcast, 0},
    {"reshape_v1", h_reshape, 0},
    {"transpose_v1", h_transpose, 0},
    {"reverse_v1", h_reverse, 0},
    {"slice_v1", h_slice, 0},
    {"dynamic_slice_v1", h_dynamic_slice, 0},
    {"dynamic_update_slice_v1", h_plain, CX_OP_DYNAMIC_UPDATE_SLICE},
    {"concatenate_v1", h_concatenate, 0},
    {"pad_v1", h_pad, 0},
    {"iota_v1", h_iota, 0},
    {"constant_v1", h_constant, 0},
    {"get_dimension_size_v1", h_get_dimension_size, 0},
    {"partition_id_v1", h_plain, CX_OP_PARTITION_ID},
    {"replica_id_v1", h_plain, CX_OP_REPLICA_ID},
    {"dot_general_v1", cx_sx_h_dot_general, 0},
    {"dot_general_v2", cx_sx_h_dot_general, 0},
    {"dot_v1", cx_sx_h_dot, 0},
    {"convolution_v1", cx_sx_h_convolution, 0},
    {"reduce_v1", cx_sx_h_reduce, 0},
    {"reduce_window_v1", cx_sx_h_reduce_window, 0},
    {"select_and_scatter_v1", cx_sx_h_select_and_scatter, 0},
    {"map_v1", cx_sx_h_map, 0},
    {"sort_v1", cx_sx_h_sort, 0},
    {"gather_v1", cx_sx_h_gather, 0},
    {"gather_v2", cx_sx_h_gather, 0},
    {"scatter_v1", cx_sx_h_scatter, 0},
    {"scatter_v2", cx_sx_h_scatter, 0},
    {"fft_v1", cx_sx_h_fft, 0},
    {"rng_bit_generator_v1", cx_sx_h_rng_bit_generator, 0},
    {"rng_v1", cx_sx_h_rng, 0},
    {"cholesky_v1", cx_sx_h_cholesky, 0},
    {"triangular_solve_v1", cx_sx_h_triangular_solve, 0},
    {"batch_norm_training_v1", cx_sx_h_batch_norm, CX_OP_BATCH_NORM_TRAINING},
    {"batch_norm_inference_v1", cx_sx_h_batch_norm, CX_OP_BATCH_NORM_INFERENCE},
    {"batch_norm_grad_v1", cx_sx_h_batch_norm, CX_OP_BATCH_NORM_GRAD},
    {"while_v1", cx_sx_h_while, 0},
    {"if_v1", cx_sx_h_if, 0},
    {"case_v1", cx_sx_h_case, 0},
    {"call_v1", cx_sx_h_call, 0},
    {"tuple_v1", cx_sx_h_tuple, 0},
    {"get_tuple_element_v1", cx_sx_h_get_tuple_element, 0},
    {"optimization_barrier_v1", cx_sx_h_optimization_barrier, 0},
    {"after_all_v1", cx_sx_h_after_all, 0},
    {"create_token_v1", cx_sx_h_after_all, 0},
    {"custom_call_v1", cx_sx_h_custom_call, 0},
    {"composite_v1", cx_sx_h_composite, 0},
    {"composite_v2", cx_sx_h_composite, 0},
    {"all_reduce_v1", cx_sx_h_all_reduce, 0},
    {"all_reduce_v2", cx_sx_h_all_reduce, 0},
    {"all_gather_v1", cx_sx_h_all_gather, 0},
    {"all_gather_v2", cx_sx_h_all_gather, 0},
    {"reduce_scatter_v1", cx_sx_h_reduce_scatter, 0},
    {"all_to_all_v1", cx_sx_h_all_to_all, 0},
    {"all_to_all_v2", cx_sx_h_all_to_all, 0},
    {"collective_permute_v1", cx_sx_h_collective_permute, 0},
    {"collective_broadcast_v1", cx_sx_h_collective_broadcast, 0},
    {"cross-replica-sum_v1", cx_sx_h_cross_replica_sum, 0},
    {"infeed_v1", cx_sx_h_infeed, 0},
    {"outfeed_v1", cx_sx_h_outfeed, 0},
    {"einsum_v1", cx_sx_h_einsum, 0},
    {"send_v1", cx_sx_h_send, 0},
    {"send_v2", cx_sx_h_send, 0},
    {"recv_v1", cx_sx_h_recv, 0},
    {"recv_v2", cx_sx_h_recv, 0},
    {"torch_index_select_v1", cx_sx_h_torch_index_select, 0},
};

/* VHLO ops (VhloOps.td, StableHLO 1.16.3) cxla does not translate, and why. */
static const struct {
  const char *name, *why;
} refused[] = {
    {"dynamic_broadcast_in_dim_v1", "a dynamic (shape-polymorphic) op; export with static shapes"},
    {"dynamic_conv_v1", "a dynamic (shape-polymorphic) op; export with static shapes"},
    {"dynamic_conv_v2", "a dynamic (shape-polymorphic) op; export with static shapes"},
    {"dynamic_gather_v1", "a dynamic (shape-polymorphic) op; export with static shapes"},
    {"dynamic_gather_v2", "a dynamic (shape-polymorphic) op; export with static shapes"},
    {"dynamic_iota_v1", "a dynamic (shape-polymorphic) op; export with static shapes"},
    {"dynamic_pad_v1", "a dynamic (shape-polymorphic) op; export with static shapes"},
    {"dynamic_reshape_v1", "a dynamic (shape-polymorphic) op; export with static shapes"},
    {"real_dynamic_slice_v1", "a dynamic (shape-polymorphic) op; export with static shapes"},
    {"set_dimension_size_v1", "dynamic dimension sizes (cxla's shapes are static)"},
    {"unary_einsum_v1", "unary_einsum is deprecated in StableHLO and XLA does not translate it either"},
    {"uniform_quantize_v1", "quantized types (cxla has no quantized element types)"},
    {"uniform_dequantize_v1", "quantized types (cxla has no quantized element types)"},
    {"async_start_v1", "asynchronous StableHLO ops (async_start/async_done with futures)"},
    {"async_done_v1", "asynchronous StableHLO ops (async_start/async_done with futures)"},
    {"func_v1", "a function nested in another op"},
    {"return_v1", "a return outside the end of a block"},
};

const cx_sx_rule *cx_sx_find_rule(const char *name) {
  if (strncmp(name, "vhlo.", 5)) return NULL;
  for (int i = 0; i < CX_ARRAY_LEN(rules); i++)
    if (!strcmp(rules[i].name, name + 5)) return &rules[i];
  return NULL;
}

const char *cx_sx_refusal(const char *name) {
  if (strncmp(name, "vhlo.", 5)) return NULL;
  for (int i = 0; i < CX_ARRAY_LEN(refused); i++)
    if (!strcmp(refused[i].name, name + 5)) return refused[i].why;
  return NULL;
}
