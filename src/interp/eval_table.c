/* eval_table.c — which function evaluates each op: the interpreter's table of per-op hooks.
 * An op runs when it has a hook here, or, for an elementwise op, a scalar rule in ew_rules.c
 * (evaluated over arrays by cx_interp_elementwise); without either the interpreter refuses it
 * (cx_interp_runs_op, so also the compile-time check and docs/ops.md). Adding a structural op
 * is its evaluator and one row here. */
#include "interp/internal.h"

static const cx_interp_hook k_hooks[CX_OP_COUNT] = {
  /* the driver's own: values borrowed (parameters, constants) or moved, not copied */
  [CX_OP_PARAMETER] = {.frame = cx_frame_parameter},
  [CX_OP_CONSTANT] = {.frame = cx_frame_constant},
  [CX_OP_TUPLE] = {.frame = cx_frame_tuple},
  [CX_OP_GET_TUPLE_ELEMENT] = {.frame = cx_frame_get_tuple_element},
  [CX_OP_COPY] = {.frame = cx_frame_identity},        /* of arrays and tuples alike */
  [CX_OP_OPT_BARRIER] = {.frame = cx_frame_identity}, /* a barrier only matters to optimisers */
  /* elementwise ops need no row (ew_rules.c), but bitcast-convert may change the element
   * count: it is its bytes */
  [CX_OP_BITCAST_CONVERT] = {.eval = cx_interp_bitcast_convert},
  [CX_OP_IOTA] = {.eval = cx_interp_iota},
  [CX_OP_BROADCAST] = {.eval = cx_interp_broadcast},
  [CX_OP_RESHAPE] = {.eval = cx_interp_reshape},
  [CX_OP_BITCAST] = {.eval = cx_interp_bitcast},
  [CX_OP_TRANSPOSE] = {.eval = cx_interp_transpose},
  [CX_OP_SLICE] = {.eval = cx_interp_slice},
  [CX_OP_DYNAMIC_SLICE] = {.eval = cx_interp_dynamic_slice},
  [CX_OP_DYNAMIC_UPDATE_SLICE] = {.eval = cx_interp_dynamic_update_slice},
  [CX_OP_CONCATENATE] = {.eval = cx_interp_concatenate},
  [CX_OP_PAD] = {.eval = cx_interp_pad},
  [CX_OP_REVERSE] = {.eval = cx_interp_reverse},
  [CX_OP_GATHER] = {.eval = cx_interp_gather},
  [CX_OP_SCATTER] = {.eval = cx_interp_scatter},
  [CX_OP_REDUCE] = {.eval = cx_interp_reduce},
  [CX_OP_REDUCE_WINDOW] = {.eval = cx_interp_reduce_window},
  [CX_OP_SELECT_AND_SCATTER] = {.eval = cx_interp_select_and_scatter},
  [CX_OP_MAP] = {.eval = cx_interp_map},
  [CX_OP_SORT] = {.eval = cx_interp_sort},
  [CX_OP_DOT] = {.eval = cx_interp_dot},
  [CX_OP_RAGGED_DOT] = {.eval = cx_interp_ragged_dot},
  [CX_OP_SCALED_DOT] = {.eval = cx_interp_scaled_dot},
  [CX_OP_CONVOLUTION] = {.eval = cx_interp_convolution},
  [CX_OP_CHOLESKY] = {.eval = cx_interp_cholesky},
  [CX_OP_TRIANGULAR_SOLVE] = {.eval = cx_interp_triangular_solve},
  [CX_OP_CUSTOM_CALL] = {.eval = cx_interp_custom_call}, /* by target: custom_call.c */
  [CX_OP_BATCH_NORM_TRAINING] = {.eval = cx_interp_batch_norm_training},
  [CX_OP_BATCH_NORM_INFERENCE] = {.eval = cx_interp_batch_norm_inference},
  [CX_OP_BATCH_NORM_GRAD] = {.eval = cx_interp_batch_norm_grad},
  [CX_OP_TOPK] = {.eval = cx_interp_topk},
  [CX_OP_FFT] = {.eval = cx_interp_fft},
  [CX_OP_RNG_BIT_GENERATOR] = {.eval = cx_interp_rng_bit_generator},
  [CX_OP_RNG] = {.eval = cx_interp_rng},
  [CX_OP_CALL] = {.eval = cx_interp_call_op},
  [CX_OP_SCAN] = {.eval = cx_interp_scan},
  [CX_OP_FUSION] = {.eval = cx_interp_call_op}, /* computes exactly what its computation computes */
  [CX_OP_WHILE] = {.eval = cx_interp_while},
  [CX_OP_CONDITIONAL] = {.eval = cx_interp_conditional},
  [CX_OP_ASYNC_START] = {.eval = cx_interp_async_start},
  [CX_OP_ASYNC_UPDATE] = {.eval = cx_interp_async_update},
  [CX_OP_ASYNC_DONE] = {.eval = cx_interp_async_done},
  [CX_OP_COPY_START] = {.eval = cx_interp_copy_start},
  [CX_OP_COPY_DONE] = {.eval = cx_interp_copy_done},
  /* the token chain and the host transfer queues (host_feed.c) */
  [CX_OP_AFTER_ALL] = {.eval = cx_interp_after_all},
  [CX_OP_ADD_DEPENDENCY] = {.eval = cx_interp_add_dependency},
  [CX_OP_INFEED] = {.eval = cx_interp_infeed},
  [CX_OP_OUTFEED] = {.eval = cx_interp_outfeed},
  /* the devices of a run (collectives.c, collectives_move.c) */
  [CX_OP_PARTITION_ID] = {.eval = cx_interp_device_id},
  [CX_OP_REPLICA_ID] = {.eval = cx_interp_device_id},
  [CX_OP_ALL_REDUCE] = {.eval = cx_interp_all_reduce},
  [CX_OP_ALL_REDUCE_START] = {.eval = cx_interp_all_reduce}, /* the same value; -done passes it on */
  [CX_OP_ALL_REDUCE_DONE] = {.eval = cx_interp_collective_done},
  [CX_OP_REDUCE_SCATTER] = {.eval = cx_interp_reduce_scatter},
  [CX_OP_ALL_GATHER] = {.eval = cx_interp_all_gather},
  [CX_OP_ALL_GATHER_START] = {.eval = cx_interp_all_gather_start},
  [CX_OP_ALL_GATHER_DONE] = {.eval = cx_interp_collective_done},
  [CX_OP_ALL_TO_ALL] = {.eval = cx_interp_all_to_all},
  [CX_OP_COLLECTIVE_PERMUTE] = {.eval = cx_interp_collective_permute},
  [CX_OP_COLLECTIVE_PERMUTE_START] = {.eval = cx_interp_collective_permute_start},
  [CX_OP_COLLECTIVE_PERMUTE_DONE] = {.eval = cx_interp_collective_done},
  [CX_OP_COLLECTIVE_BROADCAST] = {.eval = cx_interp_collective_broadcast},
};

cx_interp_hook cx_interp_hook_of(cx_op op) {
  cx_interp_hook h = {0};
  if ((unsigned)op >= CX_OP_COUNT) return h;
  h = k_hooks[op];
  if (!h.frame && !h.eval && cx_ew_rule_of(op)) h.eval = cx_interp_elementwise;
  return h;
}

int cx_interp_has_evaluator(cx_op op) {
  cx_interp_hook h = cx_interp_hook_of(op);
  return h.frame || h.eval;
}

int cx_interp_runs_op(cx_op op) { return cx_interp_has_evaluator(op) && cx_op_runs_on(op) >= CX_RUNS_INTERP; }
