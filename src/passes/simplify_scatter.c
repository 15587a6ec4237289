/* simplify_scatter.c — a scatter that adds one value per row into a uniform array is a one-hot
 * select: result = (iota == index) ? c + update : c, elementwise, which fuses into its users.
 *
 * JAX writes it for every gradient of take_along_axis, so for every integer-label
 * cross-entropy: scatter-add of the labels' upstream gradients into zeros of the logits' shape.
 * As a scatter it cost a fill of the whole array, the scatter, and a pass of the consumer over
 * the array; as a select the consumer computes it where it reads it.
 *
 * The form, checked field by field: one operand whose elements are all one value c; a
 * combiner that adds its two scalar parameters; no update window (every operand dim is either
 * inserted or a batching dim); one index component, scattered to one operand dim; and every
 * scatter dim that is not a batching dim of size 1, so that each batch position receives
 * exactly one update. Then operand element o gets c + update[b] where o's scattered
 * coordinate equals index[b] (b: o's batching coordinates), and c elsewhere: an index out of
 * range, as XLA skips it, matches no coordinate. */
#include "passes/simplify.h"

/* The combiner adds its two parameters (in either order: IEEE addition commutes). */
static int adds_params(const cx_comp *c) {
  const cx_instr *r = cx_comp_binary_of_params(c);
  return r && r->op == CX_OP_ADD && r->shape.rank == 0;
}

/* x (indices or updates: its dims are the scatter dims in order, and `skip` when >= 0) reshaped to its batching dims alone and broadcast to the operand's shape `os`: scatter dim j
 * of a batching pair lands on operand dim pair_op[j]. NULL on OOM. */
static cx_instr *to_operand_shape(cx_instr *at, cx_instr *x, int64_t skip, const int *pair_op, const cx_shape *os) {
  int64_t rdims[CXLA_MAX_RANK], bdims[CXLA_MAX_RANK];
  int n = 0;
  for (int d = 0, j = 0; d < x->shape.rank; d++) {
    if (d == skip) continue;
    if (pair_op[j] >= 0) rdims[n] = x->shape.dims[d], bdims[n++] = pair_op[j];
    j++;
  }
  cx_shape rs = cx_shape_array(x->shape.type, n, rdims);
  cx_instr *r = cx_simp_reshape(at, x, &rs);
  cx_shape bs = cx_shape_array(x->shape.type, os->rank, os->dims);
  cx_instr *b = r ? cx_simp_new(at, CX_OP_BROADCAST, &bs, 1, &r) : NULL;
  if (b && !cx_ints_set(at->parent->module, &b->a.dims, n, bdims)) b = NULL;
  if (!b) cx_oom(at->parent->module->ctx);
  return b;
}

cxla_status cx_simp_scatter(cx_instr *in, cx_instr **out) {
  if (in->nops != 3 || in->ncalled != 1 || !cx_type_is_array(in->shape.type) || !adds_params(in->called[0]))
    return CXLA_OK;
  cx_instr *op = in->ops[0], *ix = in->ops[1], *up = in->ops[2];
  const cx_scatter_dims *sd = &in->a.scatter;
  const cx_shape *os = &op->shape, *is = &ix->shape, *us = &up->shape;
  cx_scalar c;
  if (!cx_simp_uniform(op, &c) || !cx_type_is_int(is->type) || us->type != os->type || !cx_shape_same_dims(os, &in->shape))
    return CXLA_OK;
  int64_t ivd = sd->index_vector_dim;
  if (sd->update_window_dims.n || sd->scatter_dims_to_operand_dims.n != 1 || ivd < 0 || ivd > is->rank ||
      (ivd < is->rank && is->dims[ivd] != 1) || sd->input_batching_dims.n != sd->scatter_indices_batching_dims.n ||
      sd->inserted_window_dims.n + sd->input_batching_dims.n != os->rank)
    return CXLA_OK;
  int64_t v = sd->scatter_dims_to_operand_dims.v[0];
  int nsd = is->rank - (ivd < is->rank);
  if (v < 0 || v >= os->rank || !cx_ints_has(&sd->inserted_window_dims, v) || cx_ints_has(&sd->input_batching_dims, v) ||
      us->rank != nsd)
    return CXLA_OK;
  /* each scatter dim: the operand dim of its batching pair, or -1 (then it must have size 1) */
  int pair_op[CXLA_MAX_RANK];
  for (int j = 0; j < nsd; j++) pair_op[j] = -1;
  for (int i = 0; i < sd->input_batching_dims.n; i++) {
    int64_t odim = sd->input_batching_dims.v[i], idim = sd->scatter_indices_batching_dims.v[i];
    if (idim < 0 || idim >= is->rank || idim == ivd || odim < 0 || odim >= os->rank || is->dims[idim] != os->dims[odim])
      return CXLA_OK;
    pair_op[idim < ivd ? idim : idim - 1] = (int)odim;
  }
  for (int j = 0, last = -1; j < nsd; j++) {
    if (us->dims[j] != is->dims[j < ivd ? j : j + 1]) return CXLA_OK;
    if (pair_op[j] < 0 && us->dims[j] != 1) return CXLA_OK; /* several updates a position: a real scatter */
    if (pair_op[j] >= 0 && pair_op[j] < last) return CXLA_OK; /* the broadcast would reorder dims */
    if (pair_op[j] >= 0) last = pair_op[j];
  }
  cx_instr *idx = to_operand_shape(in, ix, ivd < is->rank ? ivd : -1, pair_op, os);
  cx_instr *upd = idx ? to_operand_shape(in, up, -1, pair_op, os) : NULL;
  cx_shape ios = cx_shape_array(is->type, os->rank, os->dims), ps = cx_shape_array(CXLA_PRED, os->rank, os->dims);
  cx_instr *iota = upd ? cx_simp_new(in, CX_OP_IOTA, &ios, 0, NULL) : NULL;
  if (iota) iota->a.index = v;
  cx_instr *eq = iota ? cx_simp_new(in, CX_OP_COMPARE, &ps, 2, (cx_instr *[]){iota, idx}) : NULL;
  if (eq) eq->a.dir = CXLA_EQ;
  cx_instr *base = eq ? cx_simp_splat(in, os, c) : NULL;
  /* c + update, in the combiner's order of its (current, update) arguments */
  const cx_comp *f = in->called[0];
  int upd_first = f->root->ops[0] == f->params[1];
  cx_instr *sum = base ? cx_simp_new(in, CX_OP_ADD, os, 2, upd_first ? (cx_instr *[]){upd, base} : (cx_instr *[]){base, upd})
                       : NULL;
  *out = sum ? cx_simp_new(in, CX_OP_SELECT, os, 3, (cx_instr *[]){eq, sum, base}) : NULL;
  return *out ? CXLA_OK : cx_oom(in->parent->module->ctx);
}
