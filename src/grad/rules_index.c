/* rules_index.c — gradients of the ops that read or write at computed indices: dynamic-slice
 * and dynamic-update-slice (which clamp their starts the same way, so the cotangent goes
 * back to where the values came from), gather (whose cotangent is a scatter-add at the same,
 * clamped, indices) and scatter with an add combiner (whose updates read the cotangent back
 * with a gather; windows that scatter skips, being out of bounds, get zero). Indices are
 * integers and get nothing. */
#include "grad/grad_int.h"

#define E (&s->e)

cxla_status gr_rule_dynamic_slice(gr_state *s, cx_instr *in, const gr_ct *ct) {
  if (!gr_wants(s, in, 0)) return CXLA_OK;
  cx_instr *x = gr_x(s, in, 0), *starts[CXLA_MAX_RANK];
  for (int d = 0; d < in->nops - 1; d++) starts[d] = gr_x(s, in, 1 + d);
  gr_acc(s, in->ops[0], gr_dynamic_update_slice(E, gr_zeros(E, &x->shape), ct->v, starts));
  return s->e.st;
}

cxla_status gr_rule_dynamic_update_slice(gr_state *s, cx_instr *in, const gr_ct *ct) {
  cx_instr *u = gr_x(s, in, 1), *starts[CXLA_MAX_RANK];
  for (int d = 0; d < in->nops - 2; d++) starts[d] = gr_x(s, in, 2 + d);
  if (gr_wants(s, in, 0)) gr_acc(s, in->ops[0], gr_dynamic_update_slice(E, ct->v, gr_zeros(E, &u->shape), starts));
  if (gr_wants(s, in, 1)) gr_acc(s, in->ops[1], gr_dynamic_slice(E, ct->v, starts, u->shape.dims));
  return s->e.st;
}

/* How an index vector addresses the operand: which operand dim each entry starts, and how
 * large the window is there (what start may be at most: dim - size). */
typedef struct index_map {
  int64_t ivd;                   /* index_vector_dim */
  int n;                         /* entries of an index vector */
  int64_t dim[CXLA_MAX_RANK];    /* operand dim of entry k */
  int64_t size[CXLA_MAX_RANK];   /* window size along it */
} index_map;

/* idx with each entry clamped into [0, operand dim - window size] (gather's own rule). */
static cx_instr *clamp_indices(gr_state *s, cx_instr *idx, const index_map *im, const cx_shape *xs) {
  const cx_shape *is = &idx->shape;
  cxla_type t = is->type;
  cx_instr *hi;
  if (im->ivd < is->rank) {
    cx_shape vs = cx_shape_array(t, 1, (int64_t[]){im->n});
    cxla_literal *lit = cx_literal_new(&vs);
    if (!lit || !cx_module_own_literal(s->e.c->module, lit)) {
      if (s->e.st == CXLA_OK) s->e.st = cx_oom(s->e.g->m->ctx);
      return NULL;
    }
    for (int k = 0; k < im->n; k++) cx_store_i64(t, lit->data, k, xs->dims[im->dim[k]] - im->size[k]);
    cx_instr *c = gr_new(E, CX_OP_CONSTANT, &vs, 0, NULL);
    if (c) c->a.literal = lit;
    hi = gr_bcast(E, gr_done(E, c), is->rank, is->dims, &im->ivd);
  } else {
    hi = gr_full(E, t, is, (double)(xs->dims[im->dim[0]] - im->size[0]));
  }
  cx_instr *lo = gr_scalar(E, t, 0), *ops[3] = {lo, idx, hi};
  return gr_done(E, gr_new(E, CX_OP_CLAMP, NULL, 3, ops));
}

/* An add computation of the cotangent's type for scatter. */
static cx_comp *adder(gr_state *s, cxla_type t) {
  cx_comp *c = gr_scalar_comp(s->e.g, CX_OP_ADD, t, CXLA_EQ);
  if (!c && s->e.st == CXLA_OK) s->e.st = CXLA_ERR_OUT_OF_MEMORY;
  return c;
}

/* gather: scatter-add the cotangent into zeros at the clamped starts */
cxla_status gr_rule_gather(gr_state *s, cx_instr *in, const gr_ct *ct) {
  if (!gr_wants(s, in, 0)) return CXLA_OK;
  const cx_gather_dims *gd = &in->a.gather;
  cx_instr *x = gr_x(s, in, 0), *idx = gr_x(s, in, 1);
  index_map im = {gd->index_vector_dim, gd->start_index_map.n, {0}, {0}};
  for (int k = 0; k < im.n; k++) {
    im.dim[k] = gd->start_index_map.v[k];
    im.size[k] = gd->slice_sizes.v[im.dim[k]];
  }
  cx_instr *ops[3] = {gr_zeros(E, &x->shape), clamp_indices(s, idx, &im, &x->shape), ct->v};
  cx_comp *add = adder(s, x->shape.type);
  cx_instr *sc = gr_new(E, CX_OP_SCATTER, &x->shape, 3, ops);
  if (sc) {
    cx_scatter_dims *sd = &sc->a.scatter;
    sd->index_vector_dim = gd->index_vector_dim;
    sd->indices_are_sorted = gd->indices_are_sorted;
    if (!gr_ints(E, &sd->update_window_dims, gd->offset_dims.n, gd->offset_dims.v) ||
        !gr_ints(E, &sd->inserted_window_dims, gd->collapsed_slice_dims.n, gd->collapsed_slice_dims.v) ||
        !gr_ints(E, &sd->scatter_dims_to_operand_dims, gd->start_index_map.n, gd->start_index_map.v) ||
        !gr_ints(E, &sd->input_batching_dims, gd->operand_batching_dims.n, gd->operand_batching_dims.v) ||
        !gr_ints(E, &sd->scatter_indices_batching_dims, gd->start_indices_batching_dims.n,
                 gd->start_indices_batching_dims.v) ||
        !cx_instr_set_called(sc, 1, &add))
      sc = NULL;
  }
  gr_acc(s, in->ops[0], gr_done(E, sc));
  return s->e.st;
}

/* scatter with add: the operand passes the cotangent through; each update window reads it
 * back where it was added (gather), or zero where scatter skipped the window. */
cxla_status gr_rule_scatter(gr_state *s, cx_instr *in, const gr_ct *ct) {
  if (in->nops != 3) return gr_refuse(s, in, "a scatter of several arrays has no gradient rule");
  if (gr_reducer_op(in->called[0]) != CX_OP_ADD)
    return gr_refuse(s, in, "only a scatter that adds (to_apply=add) has a gradient rule, '%s' does something else",
                     in->called[0]->name);
  if (gr_wants(s, in, 0)) gr_acc(s, in->ops[0], ct->v);
  if (!gr_wants(s, in, 2)) return s->e.st;
  const cx_scatter_dims *sd = &in->a.scatter;
  cx_instr *x = gr_x(s, in, 0), *idx = gr_x(s, in, 1), *u = gr_x(s, in, 2);
  const cx_shape *xs = &x->shape, *us = &u->shape;
  int64_t sizes[CXLA_MAX_RANK];
  for (int d = 0, w = 0; d < xs->rank; d++)
    sizes[d] = cx_ints_has(&sd->inserted_window_dims, d) || cx_ints_has(&sd->input_batching_dims, d)
                   ? 1 : us->dims[sd->update_window_dims.v[w++]];
  cx_instr *ga = gr_new(E, CX_OP_GATHER, NULL, 2, (cx_instr *[]){ct->v, idx});
  if (ga) {
    cx_gather_dims *gd = &ga->a.gather;
    gd->index_vector_dim = sd->index_vector_dim;
    gd->indices_are_sorted = sd->indices_are_sorted;
    if (!gr_ints(E, &gd->offset_dims, sd->update_window_dims.n, sd->update_window_dims.v) ||
        !gr_ints(E, &gd->collapsed_slice_dims, sd->inserted_window_dims.n, sd->inserted_window_dims.v) ||
        !gr_ints(E, &gd->start_index_map, sd->scatter_dims_to_operand_dims.n, sd->scatter_dims_to_operand_dims.v) ||
        !gr_ints(E, &gd->operand_batching_dims, sd->input_batching_dims.n, sd->input_batching_dims.v) ||
        !gr_ints(E, &gd->start_indices_batching_dims, sd->scatter_indices_batching_dims.n,
                 sd->scatter_indices_batching_dims.v) ||
        !gr_ints(E, &gd->slice_sizes, xs->rank, sizes))
      ga = NULL;
  }
  ga = gr_done(E, ga);
  /* in bounds where clamping changes no entry of the index vector */
  index_map im = {sd->index_vector_dim, sd->scatter_dims_to_operand_dims.n, {0}, {0}};
  for (int k = 0; k < im.n; k++) {
    im.dim[k] = sd->scatter_dims_to_operand_dims.v[k];
    im.size[k] = sizes[im.dim[k]];
  }
  cx_instr *ok = gr_cmp(E, idx, clamp_indices(s, idx, &im, xs), CXLA_EQ);
  if (ok && im.ivd < ok->shape.rank) ok = gr_reduce(E, ok, 1, &im.ivd, CX_OP_AND);
  /* the mask's dims are the update's scatter dims, in order */
  int64_t map[CXLA_MAX_RANK];
  int nm = 0;
  for (int d = 0; d < us->rank; d++)
    if (!cx_ints_has(&sd->update_window_dims, d)) map[nm++] = d;
  cx_instr *mask = gr_bcast(E, ok, us->rank, us->dims, map);
  gr_acc(s, in->ops[2], gr_select(E, mask, ga, gr_zeros(E, us)));
  return s->e.st;
}
