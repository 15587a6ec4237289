/* rules_sort.c — the gradients of sort and top-k (jax's rules): they only move elements, so
 * each operand's cotangent is the result's cotangent moved back where it came from.
 *
 * On the way forward an active sort is replaced by the same sort with one more operand, an
 * iota along the sorted dim that the comparator ignores: its sorted copy is the permutation
 * (where each result element came from), saved on the tape. The rule sorts the cotangents
 * of every differentiated operand by that permutation, which puts each one back where its
 * element came from — a scatter through a permutation as one sort, keys unique. */
#include "grad/grad_int.h"

#define E (&s->e)

/* cmp with two more (ignored) s32 parameters: the comparator of the sort that carries the
 * iota along. */
static cx_comp *comparator_with_index(gr_state *s, cx_comp *cmp) {
  gr_module *g = s->e.g;
  if (!cx_comp_index_params(cmp)) {
    s->e.st = cx_error(g->m->ctx, CXLA_ERR_INTERNAL, "grad: %s: bad parameter numbers", cmp->name);
    return NULL;
  }
  cx_comp *c = gr_comp_begin(g, "grad_", cmp->name);
  int max = 0;
  for (int i = 0; i < cmp->ninstrs; i++)
    if (cmp->instrs[i]->id > max) max = cmp->instrs[i]->id;
  cx_instr **map = cx_calloc((size_t)max + 1, sizeof *map);
  if (!c || !map) {
    cx_free(map);
    s->e.st = cx_oom(g->m->ctx);
    return NULL;
  }
  gr_em e = {g, c, cmp->loc, CXLA_OK};
  cx_shape index = cx_shape_scalar(CXLA_S32);
  gr_param(&e, cmp->nparams, &index);
  gr_param(&e, cmp->nparams + 1, &index);
  for (int i = 0; i < cmp->ninstrs && e.st == CXLA_OK; i++) {
    cx_instr *in = cmp->instrs[i], *ops[8] = {0}, **o = in->nops <= 8 ? ops : cx_calloc((size_t)in->nops, sizeof *o);
    if (!o) {
      e.st = cx_oom(g->m->ctx);
      break;
    }
    for (int k = 0; k < in->nops; k++) o[k] = map[in->ops[k]->id];
    if (in->op == CX_OP_PARAMETER) map[in->id] = gr_param(&e, (int)in->a.index, &in->shape);
    else if (!(map[in->id] = cx_instr_clone(c, in, o)) || !(map[in->id]->name = cx_module_unique_name(g->m, cx_op_name(in->op))))
      e.st = cx_oom(g->m->ctx);
    if (o != ops) cx_free(o);
  }
  cx_instr *root = e.st == CXLA_OK ? map[cmp->root->id] : NULL;
  cx_free(map);
  if (e.st != CXLA_OK || gr_comp_end(g, c, root) != CXLA_OK) {
    if (s->e.st == CXLA_OK) s->e.st = e.st != CXLA_OK ? e.st : CXLA_ERR_OUT_OF_MEMORY;
    return NULL;
  }
  return c;
}

/* A sort of ops along in's dim with comparator cmp. */
static cx_instr *sort_like(gr_em *e, const cx_instr *in, int n, cx_instr *const *ops, cx_comp *cmp, int stable) {
  cx_instr *r = gr_new(e, CX_OP_SORT, NULL, n, ops);
  if (r && (!cmp || !gr_ints(e, &r->a.dims, in->a.dims.n, in->a.dims.v) || !cx_instr_set_called(r, 1, &cmp))) {
    if (e->st == CXLA_OK) e->st = CXLA_ERR_OUT_OF_MEMORY;
    return NULL;
  }
  if (r) r->a.is_stable = stable;
  return gr_done(e, r);
}

cxla_status gr_forward_sort(gr_state *s, cx_instr *in) {
  int n = in->nops;
  s->e.loc = in->loc;
  cx_instr **ops = cx_calloc((size_t)n + 1, sizeof *ops);
  if (!ops) return s->e.st = cx_oom(s->e.g->m->ctx);
  for (int k = 0; k < n; k++) ops[k] = gr_x(s, in, k);
  const cx_shape *xs = &in->ops[0]->shape;
  cx_shape is = cx_shape_array(CXLA_S32, xs->rank, xs->dims);
  ops[n] = gr_new(E, CX_OP_IOTA, &is, 0, NULL);
  if (ops[n]) ops[n]->a.index = in->a.dims.v[0];
  ops[n] = gr_done(E, ops[n]);
  cx_instr *sorted = sort_like(E, in, n + 1, ops, comparator_with_index(s, in->called[0]), in->a.is_stable);
  for (int k = 0; k < n; k++) ops[k] = gr_gte(E, sorted, k);
  s->prim[in->id] = n == 1 ? ops[0] : gr_tuple(E, n, ops);
  s->tape[in->id] = gr_gte(E, sorted, n);
  cx_free(ops);
  return s->e.st;
}

/* (s32, s32, T0, T0, T1, T1, ...) -> p0 < p1: sorts by the permutation alone. */
static cx_comp *by_index(gr_state *s, int n, cx_instr *const *g) {
  cx_comp *c = gr_comp_begin(s->e.g, "grad_unsort", "");
  if (!c) return NULL;
  gr_em e = {s->e.g, c, s->e.loc, CXLA_OK};
  cx_shape index = cx_shape_scalar(CXLA_S32);
  cx_instr *a = gr_param(&e, 0, &index), *b = gr_param(&e, 1, &index);
  for (int j = 0; j < n; j++) {
    cx_shape t = cx_shape_scalar(g[j]->shape.type);
    gr_param(&e, 2 + 2 * j, &t);
    gr_param(&e, 3 + 2 * j, &t);
  }
  cx_instr *lt = gr_cmp(&e, a, b, CXLA_LT);
  if (e.st != CXLA_OK || gr_comp_end(s->e.g, c, lt) != CXLA_OK) {
    if (s->e.st == CXLA_OK) s->e.st = e.st != CXLA_OK ? e.st : CXLA_ERR_OUT_OF_MEMORY;
    return NULL;
  }
  return c;
}

cxla_status gr_rule_sort(gr_state *s, cx_instr *in, const gr_ct *ct) {
  cx_instr *perm = s->tape[in->id];
  if (!perm) return gr_refuse(s, in, "the forward kept no permutation for this sort");
  int n = in->nops, m = 0;
  cx_instr **ops = cx_calloc((size_t)n + 1, sizeof *ops);
  int *which = cx_calloc((size_t)n, sizeof *which);
  if (!ops || !which) {
    cx_free(ops);
    cx_free(which);
    return s->e.st = cx_oom(s->e.g->m->ctx);
  }
  for (int k = 0; k < n; k++) {
    cx_instr *g = n == 1 ? ct->v : ct->e ? ct->e[k].v : NULL;
    if (g && gr_wants(s, in, k)) which[m] = k, ops[1 + m++] = g;
  }
  if (m) {
    ops[0] = perm;
    cx_instr *back = sort_like(E, in, m + 1, ops, by_index(s, m, ops + 1), 0);
    for (int j = 0; j < m; j++) gr_acc(s, in->ops[which[j]], gr_gte(E, back, j + 1));
  }
  cx_free(ops);
  cx_free(which);
  return s->e.st;
}

/* topk (lax.top_k): each of the k results of a row came from the operand's element at its
 * index, so that element takes its cotangent (jax's rule: the transpose of a gather at the
 * indices). Built as one-hot rows — index == iota over a new dim of the row's length — that
 * select the cotangent, summed over the k results. */
cxla_status gr_rule_topk(gr_state *s, cx_instr *in, const gr_ct *ct) {
  if (!gr_wants(s, in, 0) || !ct->e || !ct->e[0].v) return CXLA_OK;
  const cx_shape *xs = &in->ops[0]->shape;
  int r = xs->rank;
  if (r < 1 || r + 1 > CXLA_MAX_RANK)
    return gr_refuse(s, in, "a top-k of rank %d has no gradient rule (rank 1 to %d)", r, CXLA_MAX_RANK - 1);
  cx_instr *g = ct->e[0].v, *idx = gr_gte(E, gr_y(s, in), 1);
  int64_t dims[CXLA_MAX_RANK], map[CXLA_MAX_RANK];
  for (int d = 0; d < r; d++) dims[d] = g->shape.dims[d], map[d] = d; /* batch..., k */
  dims[r] = xs->dims[r - 1];                                           /* then the row's n */
  cx_shape is = cx_shape_array(CXLA_S32, r + 1, dims);
  cx_instr *iota = gr_new(E, CX_OP_IOTA, &is, 0, NULL);
  if (iota) iota->a.index = r;
  iota = gr_done(E, iota);
  cx_instr *hit = gr_cmp(E, gr_bcast(E, idx, r + 1, dims, map), iota, CXLA_EQ);
  cx_instr *gb = gr_bcast(E, g, r + 1, dims, map);
  int64_t k_dim = r - 1;
  gr_acc(s, in->ops[0], gr_reduce(E, gr_select(E, hit, gb, gr_like(E, gb, 0)), 1, &k_dim, CX_OP_ADD));
  return s->e.st;
}
