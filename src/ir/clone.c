/* clone.c — deep copies of attributes, instructions and whole modules. Passes and backends
 * work on a clone so that a compiled executable never depends on the caller's module. */
#include <string.h>
#include "ir/clone.h"
#include "ir/groups.h"

static int copy_ints(cx_module *m, cx_ints *to, const cx_ints *from) { return cx_ints_set(m, to, from->n, from->v); }

static int copy_window(cx_module *m, cx_window *to, const cx_window *from) {
  *to = *from;
  if (!from->rank) return 1;
  to->d = cx_arena_memdup(&m->arena, from->d, sizeof(cx_window_dim) * (size_t)from->rank);
  return to->d != NULL;
}

static int copy_conv(cx_module *m, cx_conv_dims **to, const cx_conv_dims *from) {
  *to = from ? cx_arena_memdup(&m->arena, from, sizeof *from) : NULL;
  return !from || *to;
}

static int copy_str(cx_module *m, const char **to, const char *from) {
  *to = from ? cx_arena_strdup(&m->arena, from) : NULL;
  return !from || *to;
}

static int copy_literal(cx_module *m, cxla_literal **to, const cxla_literal *from) {
  *to = from ? cxla_literal_clone(m->ctx, from) : NULL;
  return !from || (*to && cx_module_own_literal(m, *to)); /* owned (and freed) even on failure */
}

static int copy_raw(cx_module *m, int *nto, cx_raw_attr **to, int n, const cx_raw_attr *from) {
  int ok = 1;
  for (int i = 0; ok && i < n; i++) ok = cx_attr_add_raw(m, nto, to, from[i].key, from[i].value);
  return ok;
}

/* Field by field as ir/attrs.def describes them, starting from nothing: a field the
 * description lacked would read as unset in the copy, never as a pointer into from's module. */
int cx_attrs_copy(cx_module *m, cx_attrs *to, const cx_attrs *from) {
  cx_attrs a;
  memset(&a, 0, sizeof a);
  int ok = 1;
#define COPY_POD(f) a.f = from->f;
#define COPY_INTS(f) ok = ok && copy_ints(m, &a.f, &from->f);
#define COPY_WINDOW(f) ok = ok && copy_window(m, &a.f, &from->f);
#define COPY_CONV(f) ok = ok && copy_conv(m, &a.f, from->f);
#define COPY_STR(f) ok = ok && copy_str(m, &a.f, from->f);
#define COPY_LITERAL(f) ok = ok && copy_literal(m, &a.f, from->f);
#define COPY_RAW(f) ok = ok && copy_raw(m, &a.n##f, &a.f, from->n##f, from->f);
#define COPY_GROUPS(f) ok = ok && cx_groups_copy(m, &a.f, from->f);
#define CX_ATTR_FIELD(id, member, kind, dflt) COPY_##kind(member)
#include "ir/attrs.def"
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

cxla_status cx_module_compact(cx_module **m) {
  cx_module *live = cx_module_clone(*m);
  if (!live) return cx_oom((*m)->ctx);
  live->parse_ms = (*m)->parse_ms;
  cx_module_free(*m);
  *m = live;
  return CXLA_OK;
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
