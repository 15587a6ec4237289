/* builder_calls.c — builder calls for ops with called computations or structured attributes:
 * reductions, windows, sort, map, dot, convolution, gather, scatter and control flow. */
#include <string.h>
#include "api/api.h"
#include "ir/conv_dims.h"

static int rank_of(const cx_instr *in) { return in->shape.type == CXLA_TUPLE ? 0 : in->shape.rank; }

/* Resolves a + b operand lists (b may be NULL with nb == 0) into one heap array. */
static cx_instr **gather_ops(cxla_builder *b, const char *op, int na, const cxla_op *xa, int nb, const cxla_op *xb) {
  if (!cx_b_ok(b)) return NULL;
  if (na < 0 || nb < 0) { cx_b_fail(b, op, CXLA_ERR_INVALID_ARGUMENT, "negative operand count"); return NULL; }
  cx_instr **v = cx_calloc((size_t)(na + nb ? na + nb : 1), sizeof *v);
  if (!v) { cx_b_fail(b, op, CXLA_ERR_OUT_OF_MEMORY, "out of memory"); return NULL; }
  if (!cx_b_get_n(b, na, xa, v, op, 0) || !cx_b_get_n(b, nb, xb, v + na, op, na)) { cx_free(v); return NULL; }
  return v;
}

static int set_called(cxla_builder *b, cx_instr *in, int n, cx_comp *const *called) {
  if (cx_instr_set_called(in, n, called)) return 1;
  cx_b_oom(b, in);
  return 0;
}

cxla_op cxla_builder_reduce(cxla_builder *b, int n, const cxla_op *operands, const cxla_op *init_values, int ndims,
                            const int64_t *dimensions, cxla_computation *to_apply) {
  cxla_op none = {0}, r = none;
  if (!cx_b_check_comp(b, to_apply, "reduce", "to_apply")) return none;
  if (ndims < 0) return cx_b_fail(b, "reduce", CXLA_ERR_INVALID_ARGUMENT, "negative dimension count %d", ndims);
  cx_instr **ops = gather_ops(b, "reduce", n, operands, n, init_values);
  if (!ops) return none;
  cx_instr *in = cx_b_new(b, CX_OP_REDUCE, 2 * n, ops, NULL);
  if (in && cx_b_ints(b, in, &in->a.dims, ndims, dimensions) && set_called(b, in, 1, &to_apply)) r = cx_b_done(b, in);
  cx_free(ops);
  return r;
}

cxla_op cxla_builder_map(cxla_builder *b, int n, const cxla_op *operands, cxla_computation *to_apply) {
  cxla_op none = {0}, r = none;
  if (!cx_b_check_comp(b, to_apply, "map", "to_apply")) return none;
  cx_instr **ops = gather_ops(b, "map", n, operands, 0, NULL);
  if (!ops) return none;
  /* HLO map carries dimensions={0,...,rank-1}: every dimension is mapped. */
  int64_t all[CXLA_MAX_RANK];
  int rank = n ? rank_of(ops[0]) : 0;
  for (int i = 0; i < rank; i++) all[i] = i;
  cx_instr *in = cx_b_new(b, CX_OP_MAP, n, ops, NULL);
  if (in && cx_b_ints(b, in, &in->a.dims, rank, all) && set_called(b, in, 1, &to_apply)) r = cx_b_done(b, in);
  cx_free(ops);
  return r;
}

cxla_op cxla_builder_sort(cxla_builder *b, int n, const cxla_op *operands, int64_t dimension, int is_stable,
                          cxla_computation *comparator) {
  cxla_op none = {0}, r = none;
  if (!cx_b_check_comp(b, comparator, "sort", "comparator")) return none;
  cx_instr **ops = gather_ops(b, "sort", n, operands, 0, NULL);
  if (!ops) return none;
  cx_instr *in = cx_b_new(b, CX_OP_SORT, n, ops, NULL);
  if (in && cx_b_ints(b, in, &in->a.dims, 1, &dimension) && set_called(b, in, 1, &comparator)) {
    in->a.is_stable = is_stable != 0;
    r = cx_b_done(b, in);
  }
  cx_free(ops);
  return r;
}

cxla_op cxla_builder_reduce_window(cxla_builder *b, int n, const cxla_op *operands, const cxla_op *init_values,
                                   const cxla_window_dim *window, cxla_computation *to_apply) {
  cxla_op none = {0}, r = none;
  if (!cx_b_check_comp(b, to_apply, "reduce-window", "to_apply")) return none;
  cx_instr **ops = gather_ops(b, "reduce-window", n, operands, n, init_values);
  if (!ops) return none;
  cx_instr *in = cx_b_new(b, CX_OP_REDUCE_WINDOW, 2 * n, ops, NULL);
  if (in && cx_b_window(b, in, n ? rank_of(ops[0]) : 0, window) && set_called(b, in, 1, &to_apply))
    r = cx_b_done(b, in);
  cx_free(ops);
  return r;
}

cxla_op cxla_builder_select_and_scatter(cxla_builder *b, cxla_op operand, cxla_op source, cxla_op init_value,
                                        const cxla_window_dim *window, cxla_computation *select,
                                        cxla_computation *scatter) {
  cxla_op none = {0};
  cx_instr *ops[3];
  cxla_op xs[3] = {operand, source, init_value};
  if (!cx_b_check_comp(b, select, "select-and-scatter", "select") ||
      !cx_b_check_comp(b, scatter, "select-and-scatter", "scatter") ||
      !cx_b_get_n(b, 3, xs, ops, "select-and-scatter", 0))
    return none;
  cx_comp *called[2] = {select, scatter};
  cx_instr *in = cx_b_new(b, CX_OP_SELECT_AND_SCATTER, 3, ops, NULL);
  if (!in || !cx_b_window(b, in, rank_of(ops[0]), window) || !set_called(b, in, 2, called)) return none;
  return cx_b_done(b, in);
}

cxla_op cxla_builder_dot(cxla_builder *b, cxla_op lhs, cxla_op rhs, const cxla_dot_dims *dims) {
  cxla_op none = {0};
  cx_instr *ops[2];
  cxla_op xs[2] = {lhs, rhs};
  if (!cx_b_get_n(b, 2, xs, ops, "dot", 0)) return none;
  if (!dims) return cx_b_fail(b, "dot", CXLA_ERR_INVALID_ARGUMENT, "dimension numbers are NULL");
  if (dims->nbatch < 0 || dims->ncontract < 0)
    return cx_b_fail(b, "dot", CXLA_ERR_INVALID_ARGUMENT, "negative batch or contracting dimension count");
  cx_instr *in = cx_b_new(b, CX_OP_DOT, 2, ops, NULL);
  cx_dot_dims *d = in ? &in->a.dot : NULL;
  if (!in || !cx_b_ints(b, in, &d->lhs_batch, dims->nbatch, dims->lhs_batch) ||
      !cx_b_ints(b, in, &d->rhs_batch, dims->nbatch, dims->rhs_batch) ||
      !cx_b_ints(b, in, &d->lhs_contract, dims->ncontract, dims->lhs_contract) ||
      !cx_b_ints(b, in, &d->rhs_contract, dims->ncontract, dims->rhs_contract))
    return none;
  return cx_b_done(b, in);
}

cxla_op cxla_builder_ragged_dot(cxla_builder *b, cxla_op lhs, cxla_op rhs, cxla_op group_sizes,
                                const cxla_dot_dims *dims, int64_t lhs_ragged_dim, int64_t rhs_group_dim) {
  cxla_op none = {0};
  cx_instr *ops[3];
  cxla_op xs[3] = {lhs, rhs, group_sizes};
  if (!cx_b_get_n(b, 3, xs, ops, "ragged-dot", 0)) return none;
  if (!dims) return cx_b_fail(b, "ragged-dot", CXLA_ERR_INVALID_ARGUMENT, "dimension numbers are NULL");
  if (dims->nbatch < 0 || dims->ncontract < 0)
    return cx_b_fail(b, "ragged-dot", CXLA_ERR_INVALID_ARGUMENT, "negative batch or contracting dimension count");
  cx_instr *in = cx_b_new(b, CX_OP_RAGGED_DOT, 3, ops, NULL);
  cx_dot_dims *d = in ? &in->a.dot : NULL;
  if (!in || !cx_b_ints(b, in, &d->lhs_batch, dims->nbatch, dims->lhs_batch) ||
      !cx_b_ints(b, in, &d->rhs_batch, dims->nbatch, dims->rhs_batch) ||
      !cx_b_ints(b, in, &d->lhs_contract, dims->ncontract, dims->lhs_contract) ||
      !cx_b_ints(b, in, &d->rhs_contract, dims->ncontract, dims->rhs_contract) ||
      !cx_b_ints(b, in, &d->lhs_ragged, 1, &lhs_ragged_dim) ||
      !cx_b_ints(b, in, &d->rhs_group, rhs_group_dim >= 0 ? 1 : 0, &rhs_group_dim))
    return none;
  return cx_b_done(b, in);
}

cxla_op cxla_builder_matmul(cxla_builder *b, cxla_op lhs, cxla_op rhs) {
  cxla_op none = {0};
  cx_instr *l = cx_b_get(b, lhs, "dot", 0);
  if (!l) return none;
  if (l->shape.type == CXLA_TUPLE || l->shape.rank < 1)
    return cx_b_fail(b, "dot", CXLA_ERR_INVALID_ARGUMENT, "matmul needs an lhs of rank >= 1");
  int64_t lc = l->shape.rank - 1, rc = 0;
  cxla_dot_dims d = {0, 1, NULL, NULL, &lc, &rc};
  return cxla_builder_dot(b, lhs, rhs, &d);
}

cxla_op cxla_builder_convolution(cxla_builder *b, cxla_op lhs, cxla_op rhs, const char *dim_labels,
                                 const cxla_window_dim *window, int64_t feature_group_count,
                                 int64_t batch_group_count) {
  cxla_op none = {0};
  cx_instr *ops[2];
  cxla_op xs[2] = {lhs, rhs};
  if (!cx_b_get_n(b, 2, xs, ops, "convolution", 0)) return none;
  if (!dim_labels) return cx_b_fail(b, "convolution", CXLA_ERR_INVALID_ARGUMENT, "dim_labels is NULL");
  cx_conv_dims cd;
  char err[256];
  if (!cx_parse_dim_labels(dim_labels, strlen(dim_labels), rank_of(ops[0]), &cd, err, sizeof err))
    return cx_b_fail(b, "convolution", CXLA_ERR_INVALID_ARGUMENT, "%s", err);
  cx_instr *in = cx_b_new(b, CX_OP_CONVOLUTION, 2, ops, NULL);
  if (!in || !cx_b_window(b, in, cd.nspatial, window)) return none;
  if (!(in->a.conv = cx_arena_memdup(&b->m->arena, &cd, sizeof cd)))
    return cx_b_fail(b, "convolution", CXLA_ERR_OUT_OF_MEMORY, "out of memory");
  in->a.feature_group_count = feature_group_count;
  in->a.batch_group_count = batch_group_count;
  return cx_b_done(b, in);
}

cxla_op cxla_builder_gather(cxla_builder *b, cxla_op operand, cxla_op start_indices, const cxla_gather_dims *dims) {
  cxla_op none = {0};
  cx_instr *ops[2];
  cxla_op xs[2] = {operand, start_indices};
  if (!cx_b_get_n(b, 2, xs, ops, "gather", 0)) return none;
  if (!dims) return cx_b_fail(b, "gather", CXLA_ERR_INVALID_ARGUMENT, "dimension numbers are NULL");
  const cxla_gather_dims *g = dims;
  if (g->noffset < 0 || g->ncollapsed < 0 || g->nstart_index_map < 0 || g->noperand_batching < 0 || g->nslice_sizes < 0)
    return cx_b_fail(b, "gather", CXLA_ERR_INVALID_ARGUMENT, "negative count in dimension numbers");
  cx_instr *in = cx_b_new(b, CX_OP_GATHER, 2, ops, NULL);
  cx_gather_dims *d = in ? &in->a.gather : NULL;
  if (!in || !cx_b_ints(b, in, &d->offset_dims, g->noffset, g->offset_dims) ||
      !cx_b_ints(b, in, &d->collapsed_slice_dims, g->ncollapsed, g->collapsed_slice_dims) ||
      !cx_b_ints(b, in, &d->start_index_map, g->nstart_index_map, g->start_index_map) ||
      !cx_b_ints(b, in, &d->operand_batching_dims, g->noperand_batching, g->operand_batching_dims) ||
      !cx_b_ints(b, in, &d->start_indices_batching_dims, g->noperand_batching, g->start_indices_batching_dims) ||
      !cx_b_ints(b, in, &d->slice_sizes, g->nslice_sizes, g->slice_sizes))
    return none;
  d->index_vector_dim = g->index_vector_dim;
  return cx_b_done(b, in);
}

cxla_op cxla_builder_scatter_n(cxla_builder *b, int n, const cxla_op *operands, cxla_op indices,
                               const cxla_op *updates, const cxla_scatter_dims *dims, cxla_computation *to_apply) {
  cxla_op none = {0};
  if (!cx_b_check_comp(b, to_apply, "scatter", "to_apply")) return none;
  if (n < 1 || n > 1 << 20) return cx_b_fail(b, "scatter", CXLA_ERR_INVALID_ARGUMENT, "bad operand count %d", n);
  if (!dims) return cx_b_fail(b, "scatter", CXLA_ERR_INVALID_ARGUMENT, "dimension numbers are NULL");
  const cxla_scatter_dims *s = dims;
  if (s->nupdate_window < 0 || s->ninserted_window < 0 || s->nscatter_to_operand < 0 || s->ninput_batching < 0)
    return cx_b_fail(b, "scatter", CXLA_ERR_INVALID_ARGUMENT, "negative count in dimension numbers");
  if (!operands || !updates) return cx_b_fail(b, "scatter", CXLA_ERR_INVALID_ARGUMENT, "operands or updates is NULL");
  /* HLO order: the operands, the indices, the updates */
  cx_instr **ops = cx_calloc((size_t)(2 * n + 1), sizeof *ops);
  if (!ops) return cx_b_fail(b, "scatter", CXLA_ERR_OUT_OF_MEMORY, "out of memory");
  cxla_op ix[1] = {indices};
  if (!cx_b_get_n(b, n, operands, ops, "scatter", 0) || !cx_b_get_n(b, 1, ix, ops + n, "scatter", n) ||
      !cx_b_get_n(b, n, updates, ops + n + 1, "scatter", n + 1)) {
    cx_free(ops);
    return none;
  }
  cx_instr *in = cx_b_new(b, CX_OP_SCATTER, 2 * n + 1, ops, NULL);
  cx_free(ops);
  cx_scatter_dims *d = in ? &in->a.scatter : NULL;
  if (!in || !cx_b_ints(b, in, &d->update_window_dims, s->nupdate_window, s->update_window_dims) ||
      !cx_b_ints(b, in, &d->inserted_window_dims, s->ninserted_window, s->inserted_window_dims) ||
      !cx_b_ints(b, in, &d->scatter_dims_to_operand_dims, s->nscatter_to_operand, s->scatter_dims_to_operand_dims) ||
      !cx_b_ints(b, in, &d->input_batching_dims, s->ninput_batching, s->input_batching_dims) ||
      !cx_b_ints(b, in, &d->scatter_indices_batching_dims, s->ninput_batching, s->scatter_indices_batching_dims) ||
      !set_called(b, in, 1, &to_apply))
    return none;
  d->index_vector_dim = s->index_vector_dim;
  return cx_b_done(b, in);
}

cxla_op cxla_builder_scatter(cxla_builder *b, cxla_op operand, cxla_op indices, cxla_op updates,
                             const cxla_scatter_dims *dims, cxla_computation *to_apply) {
  return cxla_builder_scatter_n(b, 1, &operand, indices, &updates, dims, to_apply);
}

cxla_op cxla_builder_call(cxla_builder *b, int n, const cxla_op *args, cxla_computation *c) {
  cxla_op none = {0}, r = none;
  if (!cx_b_check_comp(b, c, "call", "to_apply")) return none;
  cx_instr **ops = gather_ops(b, "call", n, args, 0, NULL);
  if (!ops) return none;
  cx_instr *in = cx_b_new(b, CX_OP_CALL, n, ops, NULL);
  if (in && set_called(b, in, 1, &c)) r = cx_b_done(b, in);
  cx_free(ops);
  return r;
}

cxla_op cxla_builder_while(cxla_builder *b, cxla_op init, cxla_computation *condition, cxla_computation *body) {
  cxla_op none = {0};
  if (!cx_b_check_comp(b, condition, "while", "condition") || !cx_b_check_comp(b, body, "while", "body")) return none;
  cx_instr *opnd = cx_b_get(b, init, "while", 0);
  if (!opnd) return none;
  cx_comp *called[2] = {condition, body};
  cx_instr *in = cx_b_new(b, CX_OP_WHILE, 1, &opnd, NULL);
  if (!in || !set_called(b, in, 2, called)) return none;
  return cx_b_done(b, in);
}

cxla_op cxla_builder_conditional(cxla_builder *b, cxla_op branch_index, int n, const cxla_op *branch_operands,
                                 cxla_computation **branches) {
  cxla_op none = {0}, r = none;
  if (!cx_b_ok(b)) return none;
  if (n < 1) return cx_b_fail(b, "conditional", CXLA_ERR_INVALID_ARGUMENT, "needs at least one branch, got %d", n);
  if (!branches) return cx_b_fail(b, "conditional", CXLA_ERR_INVALID_ARGUMENT, "branches is NULL");
  for (int i = 0; i < n; i++)
    if (!cx_b_check_comp(b, branches[i], "conditional", "branch")) return none;
  cx_instr **ops = gather_ops(b, "conditional", 1, &branch_index, n, branch_operands);
  if (!ops) return none;
  cx_instr *in = cx_b_new(b, CX_OP_CONDITIONAL, 1 + n, ops, NULL);
  if (in && set_called(b, in, n, branches)) r = cx_b_done(b, in);
  cx_free(ops);
  return r;
}
