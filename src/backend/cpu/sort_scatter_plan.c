/* sort_scatter_plan.c — the sequencer's side of sort, scatter and select-and-scatter: the
 * descriptor of each instruction (rt/sort_scatter.h), planned from its shapes, with the called
 * computation recognised when it is one f32 op the routine runs inline, and the routine call
 * (native_call.c). An instruction the routine cannot take goes to the interpreter. */
#include "backend/cpu/sort_scatter.h"

/* ---- sort ---- */

static int sort_fast_kind(const cx_instr *in) {
  const cx_instr *r = in->ncalled == 1 && in->called[0] ? in->called[0]->root : NULL;
  if (!r || r->op != CX_OP_COMPARE || in->ops[0]->shape.type != CXLA_F32 || in->ops[0]->shape.dims[in->a.dims.v[0]] > INT32_MAX)
    return SORT_CALL;
  if (r->ops[0]->op != CX_OP_PARAMETER || r->ops[1]->op != CX_OP_PARAMETER || r->ops[0]->a.index != 0 ||
      r->ops[1]->a.index != 1)
    return SORT_CALL;
  int total = r->a.cmp_type == CX_CMP_TOTALORDER;
  if (!total && r->a.cmp_type != CX_CMP_DEFAULT && r->a.cmp_type != CX_CMP_FLOAT) return SORT_CALL;
  if (r->a.dir == CXLA_LT) return total ? SORT_F32_TOTAL_LT : SORT_F32_LT;
  if (r->a.dir == CXLA_GT) return total ? SORT_F32_TOTAL_GT : SORT_F32_GT;
  return SORT_CALL;
}

cxla_status cx_seq_sort(cx_seq *s, cx_instr *in) {
  const cx_shape *x = &in->ops[0]->shape;
  const char *why = "sort of more than 64 operands or along no dimension";
  if (in->nops > SORT_MAX_OPS || in->a.dims.n != 1 || x->rank < 1) return cx_seq_fallback(s, in, why);
  sort_desc *d = cx_arena_alloc(&s->g->m->arena, sizeof *d);
  if (!d) return cx_cg_fail(s->g, CXLA_ERR_OUT_OF_MEMORY, "out of memory");
  int dim = (int)in->a.dims.v[0];
  d->n = in->nops;
  d->outer = d->inner = 1;
  for (int k = 0; k < x->rank; k++) {
    if (k < dim) d->outer *= x->dims[k];
    if (k > dim) d->inner *= x->dims[k];
  }
  d->len = x->dims[dim];
  for (int k = 0; k < d->n; k++) d->esize[k] = cxla_type_size(in->ops[k]->shape.type);
  const cx_comp *c = in->ncalled == 1 ? in->called[0] : NULL;
  d->used = !c || !c->root || c->root->op == CX_OP_PARAMETER ? ~0ull : 0;
  for (int i = 0; c && i < c->ninstrs; i++)
    for (int k = 0; k < c->instrs[i]->nops; k++) {
      const cx_instr *o = c->instrs[i]->ops[k];
      if (o->op == CX_OP_PARAMETER && o->a.index >= 0 && o->a.index / 2 < 64) d->used |= 1ull << (o->a.index / 2);
    }
  d->fast = sort_fast_kind(in);
  if (cx_seq_native_call(s, in, "cx_rt_sort", d, 1, &why)) return s->g->status;
  return cx_seq_fallback(s, in, why);
}

/* ---- scatter: the plan, and the combiner recognised as one f32 op ---- */

/* op(current, update): parameter 0 then parameter 1, as the emitted function would read them */
static int is_param_pair(const cx_instr *r) {
  return r->nops == 2 && r->ops[0]->op == CX_OP_PARAMETER && r->ops[1]->op == CX_OP_PARAMETER &&
         r->ops[0]->a.index == 0 && r->ops[1]->a.index == 1;
}

static int scatter_fast_kind(const cx_instr *in) {
  if (in->nops != 3 || in->ncalled < 1 || in->shape.type != CXLA_F32 || in->ops[2]->shape.type != CXLA_F32)
    return SC_CALL;
  const cx_instr *r = in->called[0]->root;
  if (!r || !is_param_pair(r) || r->shape.type != CXLA_F32) return SC_CALL;
  static const int8_t k_fast[CX_OP_COUNT] = {[CX_OP_ADD] = SC_ADD_F32, [CX_OP_MAXIMUM] = SC_MAX_F32,
                                             [CX_OP_MINIMUM] = SC_MIN_F32};
  return k_fast[r->op];
}

static int plan(const cx_instr *in, scatter_desc *d) {
  const cx_scatter_dims *sd = &in->a.scatter;
  int n = in->nops / 2;
  const cx_shape *os = &in->ops[0]->shape, *is = &in->ops[n]->shape, *us = &in->ops[n + 1]->shape;
  if (n > SC_MAX_OPS || os->rank > CXLA_MAX_RANK) return 0;
  d->n = n;
  d->orank = os->rank;
  d->itype = is->type;
  d->oelems = cx_shape_elems(os);
  for (int i = 0; i < n; i++) {
    d->oes[i] = cxla_type_size(in->ops[i]->shape.type);
    d->ues[i] = cxla_type_size(in->ops[n + 1 + i]->shape.type);
  }
  int64_t ivd = sd->index_vector_dim;
  d->nidx = ivd < is->rank ? is->dims[ivd] : 1;
  int64_t ist[CXLA_MAX_RANK], ust[CXLA_MAX_RANK];
  cx_shape_strides(is, ist);
  cx_shape_strides(us, ust);
  cx_shape_strides(os, d->ostride);
  d->ivec_stride = ivd < is->rank ? ist[ivd] : 0;
  for (int k = 0; k < sd->scatter_dims_to_operand_dims.n; k++) d->start_map[k] = sd->scatter_dims_to_operand_dims.v[k];
  int taken[CXLA_MAX_RANK] = {0}, window[CXLA_MAX_RANK] = {0};
  for (int k = 0; k < sd->inserted_window_dims.n; k++) taken[sd->inserted_window_dims.v[k]] = 1;
  for (int k = 0; k < sd->input_batching_dims.n; k++) taken[sd->input_batching_dims.v[k]] = 1;
  for (int k = 0; k < sd->update_window_dims.n; k++) window[sd->update_window_dims.v[k]] = 1;
  for (int a = 0; a < os->rank; a++) {
    d->odims[a] = os->dims[a];
    d->wsize[a] = 1;
    d->batching_from[a] = -1;
  }
  int j = 0, w = 0, od = 0;
  for (int u = 0; u < us->rank; u++) {
    if (window[u]) {
      while (od < os->rank && taken[od]) od++;
      if (od >= os->rank) return 0;
      d->wdims[w] = us->dims[u];
      d->upd_wstride[w] = ust[u];
      d->op_wstride[w] = d->ostride[od];
      d->wsize[od] = us->dims[u];
      w++, od++;
    } else {
      int idim = j < ivd ? j : j + 1;
      d->sdims[j] = us->dims[u];
      d->upd_sstride[j] = ust[u];
      d->idx_stride[j] = ist[idim];
      j++;
    }
  }
  d->nwd = w;
  d->nsd = j;
  for (int k = 0; k < sd->input_batching_dims.n; k++) {
    int64_t sdim = sd->scatter_indices_batching_dims.v[k];
    d->batching_from[sd->input_batching_dims.v[k]] = (int)(sdim < ivd ? sdim : sdim - 1);
  }
  d->fast = scatter_fast_kind(in);
  return 1;
}

cxla_status cx_seq_scatter(cx_seq *s, cx_instr *in) {
  const char *why = "scatter of more than 32 operands";
  scatter_desc *d = cx_arena_alloc(&s->g->m->arena, sizeof *d);
  if (!d) return cx_cg_fail(s->g, CXLA_ERR_OUT_OF_MEMORY, "out of memory");
  if (plan(in, d) && cx_seq_native_call(s, in, "cx_rt_scatter", d, 1, &why)) return s->g->status;
  return cx_seq_fallback(s, in, why);
}

/* ---- select-and-scatter ---- */

/* select(a, b) = compare(parameter 0, parameter 1) direction GE or GT, on f32 */
static int sas_fast_kind(const cx_instr *in) {
  const cx_instr *s = in->called[0]->root, *c = in->called[1]->root;
  if (in->ops[0]->shape.type != CXLA_F32 || in->shape.type != CXLA_F32 || in->ops[1]->shape.type != CXLA_F32)
    return 0;
  if (!s || s->op != CX_OP_COMPARE || s->nops != 2 || s->ops[0]->op != CX_OP_PARAMETER ||
      s->ops[1]->op != CX_OP_PARAMETER || s->ops[0]->a.index != 0 || s->ops[1]->a.index != 1)
    return 0;
  if (!c || c->op != CX_OP_ADD || c->nops != 2 || c->ops[0]->op != CX_OP_PARAMETER ||
      c->ops[1]->op != CX_OP_PARAMETER || c->ops[0]->a.index != 0 || c->ops[1]->a.index != 1)
    return 0;
  if (s->a.cmp_type != CX_CMP_DEFAULT && s->a.cmp_type != CX_CMP_FLOAT) return 0;
  return s->a.dir == CXLA_GE ? 1 : s->a.dir == CXLA_GT ? 2 : 0;
}

cxla_status cx_seq_select_and_scatter(cx_seq *s, cx_instr *in) {
  const char *why = "malformed select-and-scatter";
  const cx_shape *x = &in->ops[0]->shape, *src = &in->ops[1]->shape;
  if (in->nops != 3 || in->ncalled != 2 || in->a.window.rank != x->rank) return cx_seq_fallback(s, in, why);
  sas_desc *d = cx_arena_alloc(&s->g->m->arena, sizeof *d);
  if (!d) return cx_cg_fail(s->g, CXLA_ERR_OUT_OF_MEMORY, "out of memory");
  d->rank = x->rank;
  for (int a = 0; a < x->rank; a++) {
    d->w[a] = in->a.window.d[a];
    if (d->w[a].size > 64 || d->w[a].reversal) return cx_seq_fallback(s, in, "select-and-scatter window over 64 wide or reversed");
    d->odims[a] = x->dims[a];
    d->sdims[a] = src->dims[a];
  }
  cx_shape_strides(x, d->ostride);
  d->oelems = cx_shape_elems(x);
  d->selems = cx_shape_elems(src);
  d->indep = 0;
  while (d->indep < x->rank) {
    const cx_window_dim *w = &d->w[d->indep];
    if (w->size != 1 || w->stride != 1 || w->pad_lo || w->pad_hi || w->lhs_dilate != 1 || w->rhs_dilate != 1) break;
    d->indep++;
  }
  d->slice_o = d->slice_s = 1;
  for (int a = d->indep; a < x->rank; a++) {
    d->slice_o *= x->dims[a];
    d->slice_s *= src->dims[a];
  }
  d->oes = cxla_type_size(x->type);
  d->res = cxla_type_size(in->shape.type);
  d->ses = cxla_type_size(src->type);
  d->fast = sas_fast_kind(in);
  if (cx_seq_native_call(s, in, "cx_rt_select_and_scatter", d, 2, &why)) return s->g->status;
  return cx_seq_fallback(s, in, why);
}
