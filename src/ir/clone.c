/* clone.c — deep copies of attributes, instructions and whole modules. Passes and backends
 * work on a clone so that a compiled executable never depends on the caller's module. */
#include <string.h>
#include "ir/clone.h"

static int ints(cx_module *m, cx_ints *to, const cx_ints *from) { return cx_ints_set(m, to, from->n, from->v); }

static const char *str(cx_module *m, const char *s, int *ok) {
  if (!s) return NULL;
  const char *d = cx_arena_strdup(&m->arena, s);
  if (!d) *ok = 0;
  return d;
}

int cx_attrs_copy(cx_module *m, cx_attrs *to, const cx_attrs *from) {
  cx_attrs a = *from;
  int ok = 1;
  ok &= ints(m, &a.dims, &from->dims);
  ok &= ints(m, &a.slice_start, &from->slice_start) && ints(m, &a.slice_limit, &from->slice_limit) &&
        ints(m, &a.slice_stride, &from->slice_stride);
  ok &= ints(m, &a.pad_lo, &from->pad_lo) && ints(m, &a.pad_hi, &from->pad_hi) &&
        ints(m, &a.pad_interior, &from->pad_interior);
  ok &= ints(m, &a.dot.lhs_batch, &from->dot.lhs_batch) && ints(m, &a.dot.rhs_batch, &from->dot.rhs_batch) &&
        ints(m, &a.dot.lhs_contract, &from->dot.lhs_contract) &&
        ints(m, &a.dot.rhs_contract, &from->dot.rhs_contract);
  const cx_gather_dims *g = &from->gather;
  ok &= ints(m, &a.gather.offset_dims, &g->offset_dims) &&
        ints(m, &a.gather.collapsed_slice_dims, &g->collapsed_slice_dims) &&
        ints(m, &a.gather.start_index_map, &g->start_index_map) &&
        ints(m, &a.gather.operand_batching_dims, &g->operand_batching_dims) &&
        ints(m, &a.gather.start_indices_batching_dims, &g->start_indices_batching_dims) &&
        ints(m, &a.gather.slice_sizes, &g->slice_sizes);
  const cx_scatter_dims *s = &from->scatter;
  ok &= ints(m, &a.scatter.update_window_dims, &s->update_window_dims) &&
        ints(m, &a.scatter.inserted_window_dims, &s->inserted_window_dims) &&
        ints(m, &a.scatter.scatter_dims_to_operand_dims, &s->scatter_dims_to_operand_dims) &&
        ints(m, &a.scatter.input_batching_dims, &s->input_batching_dims) &&
        ints(m, &a.scatter.scatter_indices_batching_dims, &s->scatter_indices_batching_dims);
  if (from->conv) {
    a.conv = cx_arena_memdup(&m->arena, from->conv, sizeof *from->conv);
    ok &= a.conv != NULL;
  }
  if (from->window.rank) {
    a.window.d = cx_arena_memdup(&m->arena, from->window.d, sizeof(cx_window_dim) * (size_t)from->window.rank);
    ok &= a.window.d != NULL;
  }
  a.fusion_kind = str(m, from->fusion_kind, &ok);
  a.custom_call_target = str(m, from->custom_call_target, &ok);
  a.nraw = 0;
  a.raw = NULL;
  for (int i = 0; ok && i < from->nraw; i++)
    ok = cx_attr_add_raw(m, &a.nraw, &a.raw, from->raw[i].key, from->raw[i].value);
  a.literal = NULL;
  if (ok && from->literal) {
    a.literal = cxla_literal_clone(m->ctx, from->literal);
    ok = a.literal && cx_module_own_literal(m, a.literal);
  }
  if (!ok) { cx_oom(m->ctx); return 0; }
  *to = a;
  return 1;
}

cx_instr *cx_instr_clone(cx_comp *dst, const cx_instr *src, cx_instr *const *ops) {
  cx_instr *in = cx_instr_new(dst, src->op, &src->shape, src->nops, ops);
  if (!in) return NULL;
  if (!cx_attrs_copy(dst->module, &in->a, &src->a)) return NULL;
  if (src->name && !cx_instr_set_name(in, src->name)) return NULL;
  in->loc = src->loc;
  if (!cx_instr_set_called(in, src->ncalled, src->called)) return NULL;
  return in;
}

/* Clones computation src into module m; called computations are mapped through map_comp
 * (indexed by position in the source module). */
static cx_comp *clone_comp(cx_module *m, cx_module *srcm, const cx_comp *src, cx_comp **mapped) {
  cx_comp *c = cx_comp_new(m, src->name);
  if (!c) return NULL;
  c->is_entry = src->is_entry;
  c->loc = src->loc;
  cx_instr **map = cx_calloc((size_t)(src->ninstrs ? src->ninstrs : 1), sizeof *map);
  cx_instr **ops = NULL;
  int64_t opcap = 0;
  if (!map) { cx_oom(m->ctx); return NULL; }
  for (int i = 0; i < src->ninstrs; i++) src->instrs[i]->aux = (void *)(intptr_t)(i + 1);
  cx_comp *result = c;
  for (int i = 0; i < src->ninstrs && result; i++) {
    cx_instr *s = src->instrs[i];
    if (!cx_vec_reserve((void **)&ops, &opcap, s->nops + 1, sizeof *ops)) { cx_oom(m->ctx); result = NULL; break; }
    for (int j = 0; j < s->nops; j++) ops[j] = map[(intptr_t)s->ops[j]->aux - 1];
    cx_instr *in = cx_instr_clone(c, s, ops);
    if (!in) { result = NULL; break; }
    for (int j = 0; j < s->ncalled; j++) in->called[j] = mapped[cx_module_comp_index(srcm, s->called[j])];
    in->id = s->id;
    map[i] = in;
    if (s == src->root) c->root = in;
  }
  for (int i = 0; i < src->ninstrs; i++) src->instrs[i]->aux = NULL;
  cx_free(map);
  cx_free(ops);
  if (result && !cx_comp_index_params(c)) { /* numbering was valid in the source */ }
  return result;
}

cx_module *cx_module_clone(cx_module *src) {
  cx_module *m = cx_module_new(src->ctx, src->name);
  if (!m) return NULL;
  m->filename = cx_arena_strdup(&m->arena, src->filename ? src->filename : "<builder>");
  m->next_id = src->next_id;
  cx_comp **mapped = cx_calloc((size_t)(src->ncomps ? src->ncomps : 1), sizeof *mapped);
  int ok = mapped && m->filename;
  for (int i = 0; ok && i < src->nraw; i++) ok = cx_attr_add_raw(m, &m->nraw, &m->raw, src->raw[i].key, src->raw[i].value);
  for (int t = 0; t < CX_FRAME_TABLES; t++)
    for (int i = 0; ok && i < src->nframes[t]; i++)
      ok = cx_attr_add_raw(m, &m->nframes[t], &m->frames[t], src->frames[t][i].key, src->frames[t][i].value);
  for (int i = 0; ok && i < src->ncomps; i++) {
    mapped[i] = clone_comp(m, src, src->comps[i], mapped);
    ok = mapped[i] && cx_module_add_comp(m, mapped[i]);
  }
  cx_free(mapped);
  if (!ok) { cx_oom(src->ctx); cx_module_free(m); return NULL; }
  m->next_id = src->next_id;
  return m;
}
