/* async.c — the pass that runs an async chain on one device as what it wraps: async-start
 * becomes the tuple ((operands), call(operands), zero context...) of a plain call to its
 * computation (which the inline pass then inlines), async-update its operand and async-done
 * element {1} of it; a chain that binds parameters late calls at its first op with all of
 * them and the whole result (or at async-done), and its other ops carry the bound operands; copy-start becomes (copy(x), x, u32[] 0) and copy-done element {0};
 * all-reduce-start becomes the all-reduce, all-gather-start and collective-permute-start the
 * tuple of their operands and the collective (with zero context), and their -done what they
 * take of it. The simplifier folds the tuple/get-tuple-element pairs away, so nothing of the
 * chain is left by code generation. Values stay the same even where a chain's tuple escapes (as a while loop's
 * state or a result). */
#include <string.h>
#include "ir/clone.h"
#include "ir/edit.h"
#include "ir/verify.h"
#include "passes/pass.h"

/* A value of shape s no one reads: zeros, tokens from after-all. */
static cx_instr *zero_value(cx_comp *c, const cx_shape *s, cx_loc loc) {
  cx_module *m = c->module;
  if (s->type == CXLA_TOKEN) return cx_instr_add(c, CX_OP_AFTER_ALL, s, 0, NULL, loc);
  if (s->type != CXLA_TUPLE) {
    cx_shape plain = cx_shape_array(s->type, s->rank, s->dims);
    cxla_literal *lit = cx_literal_new(&plain);
    if (!lit) { cx_oom(m->ctx); return NULL; }
    if (!cx_module_own_literal(m, lit)) return NULL;
    cx_instr *k = cx_instr_add(c, CX_OP_CONSTANT, &plain, 0, NULL, loc);
    if (k) k->a.literal = lit;
    return k;
  }
  cx_instr **el = cx_arena_alloc(&m->arena, sizeof *el * (size_t)(s->ntuple ? s->ntuple : 1));
  if (!el) { cx_oom(m->ctx); return NULL; }
  for (int i = 0; i < s->ntuple; i++)
    if (!(el[i] = zero_value(c, &s->tuple[i], loc))) return NULL;
  return cx_instr_add(c, CX_OP_TUPLE, s, s->ntuple, el, loc);
}

static cx_instr *gte(cx_comp *c, cx_instr *t, int k, const cx_shape *s, cx_loc loc) {
  cx_instr *g = cx_instr_add(c, CX_OP_GET_TUPLE_ELEMENT, s, 1, &t, loc);
  if (g) g->a.index = k;
  return g;
}

/* The stand-in for an async-start or async-update: the tuple ((bound...), result,
 * context...) for the n bound parameters. The call runs at the chain's first fully bound op
 * (as the interpreter's async.c); an element that keeps its shape is prev's (the chain's
 * previous value, NULL for async-start), the others zeros. */
static cx_instr *chain_value(cx_comp *c, cx_instr *in, int n, cx_instr **bound, cx_instr *prev, int prev_fully_bound) {
  const cx_shape *s = &in->shape;
  cx_instr **el = cx_arena_alloc(&c->module->arena, sizeof *el * (size_t)s->ntuple);
  if (!el) { cx_oom(c->module->ctx); return NULL; }
  if (!(el[0] = cx_instr_add(c, CX_OP_TUPLE, &s->tuple[0], n, bound, in->loc))) return NULL;
  for (int i = 1; i < s->ntuple; i++) {
    if (i == 1 && cx_async_fully_bound(in) && !prev_fully_bound) {
      if (!(el[1] = cx_instr_add(c, CX_OP_CALL, &s->tuple[1], n, bound, in->loc))) return NULL;
      if (!cx_instr_set_called(el[1], 1, in->called)) return NULL;
    } else if (prev && i < prev->shape.ntuple && cx_shape_equal(&prev->shape.tuple[i], &s->tuple[i])) {
      if (!(el[i] = gte(c, prev, i, &s->tuple[i], in->loc))) return NULL;
    } else if (!(el[i] = zero_value(c, &s->tuple[i], in->loc))) {
      return NULL;
    }
  }
  return cx_instr_add(c, CX_OP_TUPLE, s, s->ntuple, el, in->loc);
}

/* The parameters a chain's value p has bound: get-tuple-elements of its element {0}. */
static cx_instr **bound_of(cx_comp *c, cx_instr *p, int extra, cx_loc loc) {
  const cx_shape *b = &p->shape.tuple[0];
  cx_instr **v = cx_arena_alloc(&c->module->arena, sizeof *v * (size_t)(b->ntuple + extra + 1));
  cx_instr *t = v ? gte(c, p, 0, b, loc) : NULL;
  if (!t) { if (!v) cx_oom(c->module->ctx); return NULL; }
  for (int i = 0; i < b->ntuple; i++)
    if (!(v[i] = gte(c, t, i, &b->tuple[i], loc))) return NULL;
  return v;
}

/* Each op's rewrite gives the instructions that stand for `in`; NULL on OOM. in->ops are
 * the stand-ins already (same shapes); the chain's ops before `in` are `in`'s original
 * operands, whose fully-bound state the caller keeps in in->aux. */
static cx_instr *async_start(cx_comp *c, cx_instr *in) { return chain_value(c, in, in->nops, in->ops, NULL, 0); }
static cx_instr *async_update(cx_comp *c, cx_instr *in) {
  cx_instr *prev = in->ops[0];
  int before = prev->shape.tuple[0].ntuple, prev_full = in->aux != NULL;
  if (in->nops == 1 && cx_shape_equal(&prev->shape, &in->shape)) return prev;
  cx_instr **bound = bound_of(c, prev, in->nops - 1, in->loc);
  if (!bound) return NULL;
  for (int i = 1; i < in->nops; i++) bound[before + i - 1] = in->ops[i];
  return chain_value(c, in, before + in->nops - 1, bound, prev, prev_full);
}
static cx_instr *async_done(cx_comp *c, cx_instr *in) {
  if (in->aux) return gte(c, in->ops[0], 1, &in->shape, in->loc);
  cx_instr *prev = in->ops[0];
  cx_instr **bound = bound_of(c, prev, 0, in->loc);
  cx_instr *call = bound ? cx_instr_add(c, CX_OP_CALL, &in->shape, prev->shape.tuple[0].ntuple, bound, in->loc) : NULL;
  if (call && !cx_instr_set_called(call, 1, in->called)) return NULL;
  return call;
}
static cx_instr *operand0(cx_comp *c, cx_instr *in) { (void)c; return in->ops[0]; }
static cx_instr *result1(cx_comp *c, cx_instr *in) { return gte(c, in->ops[0], 1, &in->shape, in->loc); }
static cx_instr *copy_done(cx_comp *c, cx_instr *in) { return gte(c, in->ops[0], 0, &in->shape, in->loc); }
static cx_instr *copy_start(cx_comp *c, cx_instr *in) {
  const cx_shape *s = &in->shape;
  cx_instr *el[3];
  if (!(el[0] = cx_instr_add(c, CX_OP_COPY, &s->tuple[0], 1, in->ops, in->loc))) return NULL;
  el[1] = in->ops[0];
  if (!(el[2] = zero_value(c, &s->tuple[2], in->loc))) return NULL;
  return cx_instr_add(c, CX_OP_TUPLE, s, 3, el, in->loc);
}

/* The collectives' own -start ops: the collective itself (`op`, with in's operands, attributes
 * and reducer) for the result, in the tuple their -start gives: all-reduce-start gives the
 * result alone, all-gather-start (operands, result), collective-permute-start (operands,
 * result, zero context...). */
static cx_instr *collective(cx_comp *c, cx_instr *in, cx_op op, const cx_shape *s) {
  cx_instr *x = cx_instr_add(c, op, s, in->nops, in->ops, in->loc);
  if (!x || !cx_attrs_copy(c->module, &x->a, &in->a) || !cx_instr_set_called(x, in->ncalled, in->called)) return NULL;
  return x;
}
static cx_instr *collective_start(cx_comp *c, cx_instr *in, cx_op op) {
  const cx_shape *s = &in->shape;
  cx_instr **el = cx_arena_alloc(&c->module->arena, sizeof *el * (size_t)s->ntuple);
  if (!el) { cx_oom(c->module->ctx); return NULL; }
  el[0] = in->nops == 1 ? in->ops[0] : cx_instr_add(c, CX_OP_TUPLE, &s->tuple[0], in->nops, in->ops, in->loc);
  if (!el[0] || !(el[1] = collective(c, in, op, &s->tuple[1]))) return NULL;
  for (int i = 2; i < s->ntuple; i++)
    if (!(el[i] = zero_value(c, &s->tuple[i], in->loc))) return NULL;
  return cx_instr_add(c, CX_OP_TUPLE, s, s->ntuple, el, in->loc);
}
static cx_instr *all_reduce_start(cx_comp *c, cx_instr *in) { return collective(c, in, CX_OP_ALL_REDUCE, &in->shape); }
static cx_instr *all_gather_start(cx_comp *c, cx_instr *in) { return collective_start(c, in, CX_OP_ALL_GATHER); }
static cx_instr *permute_start(cx_comp *c, cx_instr *in) { return collective_start(c, in, CX_OP_COLLECTIVE_PERMUTE); }

static cx_instr *(*const k_rewrite[CX_OP_COUNT])(cx_comp *c, cx_instr *in) = {
  [CX_OP_ASYNC_START] = async_start, [CX_OP_ASYNC_UPDATE] = async_update, [CX_OP_ASYNC_DONE] = async_done,
  [CX_OP_COPY_START] = copy_start, [CX_OP_COPY_DONE] = copy_done,
  [CX_OP_ALL_REDUCE_START] = all_reduce_start, [CX_OP_ALL_REDUCE_DONE] = operand0,
  [CX_OP_ALL_GATHER_START] = all_gather_start, [CX_OP_ALL_GATHER_DONE] = result1,
  [CX_OP_COLLECTIVE_PERMUTE_START] = permute_start, [CX_OP_COLLECTIVE_PERMUTE_DONE] = result1,
};

static int is_async(cx_op op) { return k_rewrite[op] != NULL; }
static cx_instr *rewrite(cx_comp *c, cx_instr *in) { return k_rewrite[in->op] ? k_rewrite[in->op](c, in) : in; }

static cxla_status rewrite_comp(cx_comp *c, int *changed) {
  int n = c->ninstrs, found = 0;
  for (int i = 0; i < n; i++) found |= is_async(c->instrs[i]->op);
  if (!found) return CXLA_OK;
  for (int i = 0; i < n; i++) { /* whether the chain op each async-update/-done follows ran the call */
    cx_instr *in = c->instrs[i];
    in->aux = (in->op == CX_OP_ASYNC_UPDATE || in->op == CX_OP_ASYNC_DONE) && in->nops >= 1 &&
              cx_async_fully_bound(in->ops[0]) ? in : NULL;
  }
  uint8_t *drop = cx_calloc((size_t)n, 1);
  if (!drop) return cx_oom(c->module->ctx);
  for (int i = 0; i < n; i++) { /* operands first: a chain's later ops see their operand's stand-in */
    cx_instr *in = c->instrs[i];
    if (!is_async(in->op)) continue;
    if (in->op == CX_OP_COPY_START && (in->shape.type != CXLA_TUPLE || in->shape.ntuple != 3)) {
      cx_free(drop);
      return cx_error_at(c->module, in->loc, CXLA_ERR_INTERNAL, "copy-start %s has shape of %d elements, not 3",
                         in->name ? in->name : "?", in->shape.ntuple);
    }
    cx_instr *r = rewrite(c, in);
    in->aux = NULL;
    if (!r) { cx_free(drop); return CXLA_ERR_OUT_OF_MEMORY; }
    cx_comp_replace_uses(c, in, r);
    drop[i] = 1;
  }
  /* the stand-ins were appended after the dropped ones: positions 0..n-1 are unchanged */
  int m = c->ninstrs;
  uint8_t *all = cx_calloc((size_t)m, 1);
  if (!all) { cx_free(drop); return cx_oom(c->module->ctx); }
  memcpy(all, drop, (size_t)n);
  cx_comp_remove_instrs(c, all);
  cx_free(all);
  cx_free(drop);
  *changed = 1;
  return cx_comp_resort(c, "async");
}

cxla_status cx_pass_async(cx_module *m, int *changed) {
  *changed = 0;
  for (int i = 0; i < m->ncomps; i++) CX_TRY(rewrite_comp(m->comps[i], changed));
  return CXLA_OK;
}
