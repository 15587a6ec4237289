/* rules.c — the gradient rule of each op, found through a table indexed by op (an op without
 * a row has no gradient: a cotangent that reaches it is refused, naming it). The rules live by
 * concept: rules_elementwise.c, rules_shape.c, rules_index.c (dynamic slices, gather,
 * scatter), rules_reduce.c (reduce, reduce-window), rules_sort.c, rules_dot_conv.c, rules_control.c.
 * Ops whose results are integers or pred never receive a cotangent and need no row. */
#include "grad/grad_int.h"

static const gr_rule k_rules[CX_OP_COUNT] = {
  /* unary elementwise; sign and the roundings are flat (zero gradient almost everywhere) */
  [CX_OP_ABS] = gr_rule_abs, [CX_OP_NEGATE] = gr_rule_negate, [CX_OP_SIGN] = gr_rule_flat,
  [CX_OP_EXP] = gr_rule_exp, [CX_OP_EXPM1] = gr_rule_expm1, [CX_OP_LOG] = gr_rule_log,
  [CX_OP_LOG1P] = gr_rule_log1p, [CX_OP_LOGISTIC] = gr_rule_logistic, [CX_OP_SQRT] = gr_rule_sqrt,
  [CX_OP_RSQRT] = gr_rule_rsqrt, [CX_OP_CBRT] = gr_rule_cbrt, [CX_OP_SIN] = gr_rule_sin, [CX_OP_COS] = gr_rule_cos,
  [CX_OP_TAN] = gr_rule_tan, [CX_OP_TANH] = gr_rule_tanh, [CX_OP_FLOOR] = gr_rule_flat, [CX_OP_CEIL] = gr_rule_flat,
  [CX_OP_ROUND_AFZ] = gr_rule_flat, [CX_OP_ROUND_EVEN] = gr_rule_flat, [CX_OP_ERF] = gr_rule_erf,
  [CX_OP_COPY] = gr_rule_copy, [CX_OP_REDUCE_PRECISION] = gr_rule_reduce_precision, [CX_OP_CONVERT] = gr_rule_convert,
  /* binary and ternary elementwise */
  [CX_OP_ADD] = gr_rule_add, [CX_OP_SUBTRACT] = gr_rule_subtract, [CX_OP_MULTIPLY] = gr_rule_multiply,
  [CX_OP_DIVIDE] = gr_rule_divide, [CX_OP_REMAINDER] = gr_rule_remainder, [CX_OP_POWER] = gr_rule_power,
  [CX_OP_ATAN2] = gr_rule_atan2, [CX_OP_MAXIMUM] = gr_rule_minmax, [CX_OP_MINIMUM] = gr_rule_minmax,
  [CX_OP_SELECT] = gr_rule_select, [CX_OP_CLAMP] = gr_rule_clamp,
  /* re-indexing */
  [CX_OP_BROADCAST] = gr_rule_broadcast, [CX_OP_RESHAPE] = gr_rule_reshape, [CX_OP_BITCAST] = gr_rule_reshape,
  [CX_OP_TRANSPOSE] = gr_rule_transpose, [CX_OP_SLICE] = gr_rule_slice, [CX_OP_PAD] = gr_rule_pad,
  [CX_OP_CONCATENATE] = gr_rule_concatenate, [CX_OP_REVERSE] = gr_rule_reverse,
  [CX_OP_DYNAMIC_SLICE] = gr_rule_dynamic_slice, [CX_OP_DYNAMIC_UPDATE_SLICE] = gr_rule_dynamic_update_slice,
  [CX_OP_GATHER] = gr_rule_gather, [CX_OP_SCATTER] = gr_rule_scatter,
  /* reductions */
  [CX_OP_REDUCE] = gr_rule_reduce, [CX_OP_REDUCE_WINDOW] = gr_rule_reduce_window,
  /* sort and top-k move elements: the cotangents go back where they came from (rules_sort.c) */
  [CX_OP_SORT] = gr_rule_sort, [CX_OP_TOPK] = gr_rule_topk,
  /* library ops */
  [CX_OP_DOT] = gr_rule_dot, [CX_OP_CONVOLUTION] = gr_rule_convolution,
  /* data plumbing and control flow; a fusion is a call of its computation */
  [CX_OP_TUPLE] = gr_rule_tuple, [CX_OP_GET_TUPLE_ELEMENT] = gr_rule_get_tuple_element,
  [CX_OP_CALL] = gr_rule_call, [CX_OP_FUSION] = gr_rule_call, [CX_OP_CONDITIONAL] = gr_rule_conditional,
  [CX_OP_WHILE] = gr_rule_while, [CX_OP_OPT_BARRIER] = gr_rule_opt_barrier,
};

gr_rule gr_rule_of(cx_op op) { return (unsigned)op < CX_OP_COUNT ? k_rules[op] : NULL; }

int cx_grad_has_rule(cx_op op) { return gr_rule_of(op) != NULL; }
