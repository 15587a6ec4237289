/* rules_shape.c — gradients of the ops that only move elements: each sends the cotangent
 * back along the same index map (a broadcast's copies are summed, a slice's or pad's
 * dropped elements get zero). */
#include "grad/grad_int.h"

#define E (&s->e)

/* broadcast: operand dim i went to result dim map[i] (any order; a size-1 operand dim may be
 * expanded). Sum over the other result dims and the expanded ones, put the rest back in the
 * operand's order, and restore its size-1 dims. */
cxla_status gr_rule_broadcast(gr_state *s, cx_instr *in, const gr_ct *ct) {
  if (!gr_wants(s, in, 0)) return CXLA_OK;
  const cx_shape *xs = &in->ops[0]->shape, *ys = &in->shape;
  const int64_t *map = in->a.dims.v;
  int keep_of_result[CXLA_MAX_RANK] = {0};
  for (int i = 0; i < xs->rank; i++)
    if (xs->dims[i] == ys->dims[map[i]]) keep_of_result[map[i]] = 1;
  int64_t red[CXLA_MAX_RANK], nred = 0, pos[CXLA_MAX_RANK];
  for (int d = 0, kept = 0; d < ys->rank; d++) {
    if (keep_of_result[d]) pos[d] = kept++;
    else red[nred++] = d;
  }
  cx_instr *r = gr_reduce(E, ct->v, (int)nred, red, CX_OP_ADD);
  /* the kept dims are in result order; operand order is map's order */
  int64_t perm[CXLA_MAX_RANK], np = 0;
  for (int i = 0; i < xs->rank; i++)
    if (xs->dims[i] == ys->dims[map[i]]) perm[np++] = pos[map[i]];
  r = gr_transpose(E, r, perm);
  gr_acc(s, in->ops[0], gr_reshape(E, r, xs->rank, xs->dims));
  return s->e.st;
}

/* reshape, and a bitcast between default layouts (a reshape of the same bytes) */
cxla_status gr_rule_reshape(gr_state *s, cx_instr *in, const gr_ct *ct) {
  const cx_shape *xs = &in->ops[0]->shape;
  if (in->op == CX_OP_BITCAST && (!cx_shape_has_default_layout(xs) || !cx_shape_has_default_layout(&in->shape)))
    return gr_refuse(s, in, "a bitcast between layouts reorders elements; only default layouts have a gradient rule");
  if (in->op == CX_OP_BITCAST && xs->type != in->shape.type)
    return gr_refuse(s, in, "a bitcast that changes the element type has no gradient");
  if (gr_wants(s, in, 0)) gr_acc(s, in->ops[0], gr_reshape(E, ct->v, xs->rank, xs->dims));
  return s->e.st;
}

cxla_status gr_rule_transpose(gr_state *s, cx_instr *in, const gr_ct *ct) {
  if (!gr_wants(s, in, 0)) return CXLA_OK;
  int64_t inv[CXLA_MAX_RANK];
  for (int i = 0; i < in->a.dims.n; i++) inv[in->a.dims.v[i]] = i;
  gr_acc(s, in->ops[0], gr_transpose(E, ct->v, inv));
  return s->e.st;
}

/* slice: the cotangent padded back into place, holes (strides) and borders zero */
cxla_status gr_rule_slice(gr_state *s, cx_instr *in, const gr_ct *ct) {
  if (!gr_wants(s, in, 0) || cx_shape_elems(&in->shape) == 0) return CXLA_OK;
  const cx_shape *xs = &in->ops[0]->shape;
  int64_t lo[CXLA_MAX_RANK], hi[CXLA_MAX_RANK], interior[CXLA_MAX_RANK];
  for (int d = 0; d < xs->rank; d++) {
    int64_t st = in->a.slice_stride.v[d], last = in->a.slice_start.v[d] + (in->shape.dims[d] - 1) * st;
    lo[d] = in->a.slice_start.v[d];
    hi[d] = xs->dims[d] - 1 - last;
    interior[d] = st - 1;
  }
  gr_acc(s, in->ops[0], gr_pad(E, ct->v, gr_scalar(E, xs->type, 0), lo, hi, interior));
  return s->e.st;
}

/* pad(x, v): x's elements are every (interior+1)-th of the cotangent once the borders are
 * undone (a negative border, which cut x, becomes zeros); v takes everything else. */
cxla_status gr_rule_pad(gr_state *s, cx_instr *in, const gr_ct *ct) {
  const cx_shape *xs = &in->ops[0]->shape;
  cx_instr *g = ct->v, *gx = NULL;
  if (gr_wants(s, in, 0) || gr_wants(s, in, 1)) {
    int64_t lo[CXLA_MAX_RANK], hi[CXLA_MAX_RANK], zero[CXLA_MAX_RANK] = {0}, start[CXLA_MAX_RANK] = {0};
    int64_t limit[CXLA_MAX_RANK], stride[CXLA_MAX_RANK];
    for (int d = 0; d < xs->rank; d++) {
      lo[d] = -in->a.pad_lo.v[d];
      hi[d] = -in->a.pad_hi.v[d];
      stride[d] = in->a.pad_interior.v[d] + 1;
    }
    cx_instr *un = gr_pad(E, g, gr_scalar(E, xs->type, 0), lo, hi, zero);
    for (int d = 0; un && d < xs->rank; d++) limit[d] = un->shape.dims[d];
    gx = un ? gr_slice(E, un, start, limit, stride) : NULL;
  }
  if (gr_wants(s, in, 0)) gr_acc(s, in->ops[0], gx);
  if (gr_wants(s, in, 1)) gr_acc(s, in->ops[1], gr_bin(E, CX_OP_SUBTRACT, gr_sum_all(E, g), gr_sum_all(E, gx)));
  return s->e.st;
}

cxla_status gr_rule_concatenate(gr_state *s, cx_instr *in, const gr_ct *ct) {
  int64_t dim = in->a.dims.v[0], at = 0;
  int64_t start[CXLA_MAX_RANK] = {0}, limit[CXLA_MAX_RANK], stride[CXLA_MAX_RANK];
  for (int d = 0; d < in->shape.rank; d++) {
    limit[d] = in->shape.dims[d];
    stride[d] = 1;
  }
  for (int k = 0; k < in->nops; k++) {
    int64_t n = in->ops[k]->shape.dims[dim];
    start[dim] = at;
    limit[dim] = at + n;
    at += n;
    if (gr_wants(s, in, k)) gr_acc(s, in->ops[k], gr_slice(E, ct->v, start, limit, stride));
  }
  return s->e.st;
}

cxla_status gr_rule_reverse(gr_state *s, cx_instr *in, const gr_ct *ct) {
  if (gr_wants(s, in, 0)) gr_acc(s, in->ops[0], gr_reverse(E, ct->v, in->a.dims.n, in->a.dims.v));
  return s->e.st;
}
