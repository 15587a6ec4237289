/* fusion_absorb.c — a consumer fusion takes one producer into its own fused computation, in
 * place. Loop fusion grows a consumer one producer at a time; building a new fused computation
 * at every step (fu_fuse) cloned the whole body again each time, and the discarded bodies
 * stayed in the module arena: on deep models that was most of the fusion pass and of the
 * compile's memory. Here the producer's clone replaces the parameters bound to it, its
 * operands become parameters where the consumer does not read them already, and the consumer
 * keeps its instruction, name and position (XLA's HloFusionInstruction::FuseInstruction does
 * the same). */
#include <string.h>
#include "passes/fusion_util.h"
#include "ir/clone.h"

/* The consumer's operands after the edit are numbered as fu_fuse would number them (and the
 * body then prints the same): the producer's operands first, in the order it reads them, then
 * the consumer's other operands in their old order. */
typedef struct absorb {
  cx_module *m;
  cx_comp *fc;
  const cx_instr *cons;
  cx_instr **old_param;  /* fc's parameters before the edit, by number */
  uint8_t *gone, *taken; /* per old operand: bound to the producer; already in ext */
  cx_instr **ext;        /* the operands after the edit, in order */
  cx_instr **param;      /* their parameters in fc */
  uint8_t *fresh;        /* ext[k] is new to the consumer */
  int next, cap;
} absorb;

/* The parameter of fc bound to external operand o: one the consumer has, or a new one. */
static cxla_status operand_value(absorb *a, cx_instr *o, cx_instr **out) {
  for (int k = 0; k < a->next; k++)
    if (a->ext[k] == o) {
      *out = a->param[k];
      return CXLA_OK;
    }
  if (a->next >= a->cap) return cx_error(a->m->ctx, CXLA_ERR_INTERNAL, "fusion: too many operands");
  cx_instr *p = NULL;
  for (int k = 0; k < a->cons->nops && !p; k++)
    if (a->cons->ops[k] == o && !a->gone[k]) {
      p = a->old_param[k];
      a->taken[k] = 1;
    }
  if (!p) {
    const char *nm = cx_module_unique_name(a->m, "param");
    if (!nm || !(p = cx_instr_new(a->fc, CX_OP_PARAMETER, &o->shape, 0, NULL))) return cx_oom(a->m->ctx);
    p->name = nm;
    a->fresh[a->next] = 1;
  }
  a->ext[a->next] = o;
  a->param[a->next++] = p;
  *out = p;
  return CXLA_OK;
}

/* Names are unique in a computation (bodies written by hand may reuse "r" or "p0" across
 * computations): a clone whose name an instruction of fc has takes a fresh one. */
static cxla_status unique_name(absorb *a, cx_instr *cl, int fresh) {
  for (int i = 0; i < a->fc->ninstrs && cl->name && !fresh; i++) {
    const cx_instr *y = a->fc->instrs[i];
    fresh = y != cl && y->name && !strcmp(y->name, cl->name);
  }
  if (fresh && !(cl->name = fu_fresh_name(a->m, cl->name))) return cx_oom(a->m->ctx);
  return CXLA_OK;
}

static cxla_status clone_one(absorb *a, const cx_instr *x, cx_instr *const *ops, int fresh, cx_instr **out) {
  if ((*out = fu_same_constant(a->fc, x))) return CXLA_OK;
  if (!(*out = cx_instr_clone(a->fc, x, ops))) return cx_oom(a->m->ctx);
  return unique_name(a, *out, fresh);
}

/* Clones producer p (a raw op, or a single-output fusion's body) into fc; *v is its value. */
static cxla_status clone_producer(absorb *a, cx_instr *p, int keep_p, cx_instr **v) {
  if (p->op != CX_OP_FUSION) {
    cx_instr *ops[p->nops ? p->nops : 1];
    for (int j = 0; j < p->nops; j++) CX_TRY(operand_value(a, p->ops[j], &ops[j]));
    return clone_one(a, p, ops, keep_p, v);
  }
  cx_comp *body = p->called[0];
  int n = body->ninstrs;
  cx_instr **map = cx_calloc((size_t)n + 1, sizeof *map);
  if (!map) return cx_oom(a->m->ctx);
  cxla_status st = CXLA_OK;
  for (int k = 0; k < n; k++) body->instrs[k]->aux = (void *)(intptr_t)(k + 1);
  for (int k = 0; k < n && st == CXLA_OK; k++) {
    cx_instr *x = body->instrs[k];
    if (x->op == CX_OP_PARAMETER) {
      st = x->a.index >= 0 && x->a.index < p->nops ? operand_value(a, p->ops[x->a.index], &map[k])
                                                    : cx_error(a->m->ctx, CXLA_ERR_INTERNAL, "fusion: bad parameter in %s", body->name);
      continue;
    }
    cx_instr *ops[x->nops ? x->nops : 1];
    for (int j = 0; j < x->nops; j++) ops[j] = map[(intptr_t)x->ops[j]->aux - 1];
    st = clone_one(a, x, ops, keep_p, &map[k]);
  }
  if (st == CXLA_OK) *v = map[(intptr_t)body->root->aux - 1];
  for (int k = 0; k < n; k++) body->instrs[k]->aux = NULL;
  cx_free(map);
  return st;
}

/* Parameters first (numbered in ext's order), then instructions without operands (a clone may
 * be an old constant, fu_same_constant), then the rest made here (it reads only those), then
 * the rest of the old body: every instruction after its operands. */
static cxla_status relayout_body(absorb *a, int nold_instrs) {
  cx_comp *fc = a->fc;
  int n = fc->ninstrs, k = 0;
  cx_instr **v = cx_malloc(sizeof *v * (size_t)n);
  if (!v) return cx_oom(a->m->ctx);
  for (int q = 0; q < a->next; q++) {
    a->param[q]->a.index = q;
    v[k++] = a->param[q];
  }
  for (int i = 0; i < n; i++)
    if (fc->instrs[i]->op != CX_OP_PARAMETER && !fc->instrs[i]->nops) v[k++] = fc->instrs[i];
  for (int i = nold_instrs; i < n; i++)
    if (fc->instrs[i]->op != CX_OP_PARAMETER && fc->instrs[i]->nops) v[k++] = fc->instrs[i];
  for (int i = 0; i < nold_instrs; i++)
    if (fc->instrs[i]->op != CX_OP_PARAMETER && fc->instrs[i]->nops) v[k++] = fc->instrs[i];
  memcpy(fc->instrs, v, sizeof *v * (size_t)k);
  fc->ninstrs = k;
  cx_free(v);
  if (cx_comp_index_params(fc)) return CXLA_OK;
  return fc->params ? cx_error(a->m->ctx, CXLA_ERR_INTERNAL, "fusion: bad parameters in %s", fc->name)
                    : CXLA_ERR_OUT_OF_MEMORY; /* cx_comp_index_params set the error */
}

/* c's user lists after the edit: cons reads p's operands instead of p, and a p that is not
 * kept leaves c. */
static cxla_status update_graph(cx_comp *c, cx_instr *cons, cx_instr *p, int keep_p, const absorb *a) {
  fu_index_remove_user(c, p, cons);
  for (int k = 0; k < a->next; k++)
    if (a->fresh[k] && !fu_index_add_user(c, a->ext[k], cons)) return cx_oom(c->module->ctx);
  if (keep_p) return CXLA_OK;
  for (int j = 0; j < p->nops; j++) {
    int seen = 0;
    for (int q = 0; q < j && !seen; q++) seen = p->ops[q] == p->ops[j];
    if (!seen) fu_index_remove_user(c, p->ops[j], p);
  }
  if (p->op == CX_OP_FUSION && !fu_index_drop_comp(c, p->called[0])) fu_remove_comp(c->module, p->called[0]);
  p->parent = NULL;
  return CXLA_OK;
}

static int applies(const cx_comp *c, const cx_instr *cons, const cx_instr *p, int keep_p) {
  if (!fu_index_active(c) || cons->op != CX_OP_FUSION || cons->ncalled != 1 || fu_is_multi_output(cons)) return 0;
  if (!keep_p && (c->root == p || !fu_only_user_is(c, p, cons))) return 0;
  const cx_comp *fc = cons->called[0];
  if (fc->nparams != cons->nops) return 0;
  for (int k = 0; k < fc->nparams; k++)
    if (!fc->params[k] || fc->params[k]->a.index != k || fc->params[k]->parent != fc) return 0;
  if (p->op == CX_OP_FUSION) return p->ncalled == 1 && !fu_is_multi_output(p) && p->called[0]->root;
  return p->op != CX_OP_PARAMETER && p->op != CX_OP_GET_TUPLE_ELEMENT && p->op != CX_OP_TUPLE;
}

cxla_status fu_absorb(cx_comp *c, cx_instr *cons, int i, int keep_p, cx_fusion_kind kind, int *done) {
  cx_instr *p = cons->ops[i];
  *done = 0;
  if (!applies(c, cons, p, keep_p)) return CXLA_OK;
  cx_module *m = c->module;
  absorb a = {.m = m, .fc = cons->called[0], .cons = cons, .cap = cons->nops + p->nops};
  int nold = a.fc->ninstrs;
  a.old_param = a.fc->params;
  a.ext = cx_arena_alloc(&m->arena, sizeof *a.ext * (size_t)(a.cap + 1));
  a.param = cx_malloc(sizeof *a.param * (size_t)(a.cap + 1));
  a.gone = cx_calloc((size_t)a.cap + 1, 3);
  cxla_status st = CXLA_OK;
  if (!a.ext || !a.param || !a.gone) {
    st = cx_oom(m->ctx);
  } else {
    a.taken = a.gone + a.cap + 1;
    a.fresh = a.taken + a.cap + 1;
    for (int k = 0; k < cons->nops; k++) a.gone[k] = cons->ops[k] == p;
    cx_instr *v = NULL;
    st = clone_producer(&a, p, keep_p, &v);
    for (int k = 0; k < cons->nops && st == CXLA_OK; k++) {
      if (a.gone[k]) cx_comp_replace_uses(a.fc, a.old_param[k], v);
      else if (!a.taken[k]) {
        a.ext[a.next] = cons->ops[k];
        a.param[a.next++] = a.old_param[k];
      }
    }
    if (st == CXLA_OK) st = relayout_body(&a, nold);
  }
  if (st == CXLA_OK) {
    st = update_graph(c, cons, p, keep_p, &a);
    cons->ops = a.ext;
    cons->nops = a.next;
    cons->a.fusion_kind = kind;
    *done = st == CXLA_OK;
  }
  cx_free(a.param);
  cx_free(a.gone);
  return st;
}
