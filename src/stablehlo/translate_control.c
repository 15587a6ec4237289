/* translate_control.c — regions to computations, and the ops that carry them or plumb values:
 * while, if, case, call, tuple, get_tuple_element, optimization_barrier, after_all/create_token.
 *
 * StableHLO's while/if/case regions may use values defined outside them (implicit captures);
 * HLO computations see only their parameters. As XLA's translation does, the captured values
 * travel in the loop state (while: appended to the tuple, passed through by the body) or in a
 * branch's operand (if/case: a tuple of what that branch captures). */
#include <stdio.h>
#include <string.h>
#include "stablehlo/translate.h"

#define MAX_REGION_DEPTH 64

/* ---- captures ---- */

typedef struct capture_list {
  int n, cap;
  const cx_mlir_value **v;
} capture_list;

static void mark_defined(cx_sx *sx, const cx_mlir_region *r) {
  for (int b = 0; b < r->num_blocks; b++) {
    const cx_mlir_block *blk = &r->blocks[b];
    for (int i = 0; i < blk->num_args; i++) sx->mark[blk->args[i].id] = sx->mark_now;
    for (int o = 0; o < blk->num_ops; o++) {
      const cx_mlir_op *op = blk->ops[o];
      for (int i = 0; i < op->num_results; i++) sx->mark[op->results[i].id] = sx->mark_now;
      for (int k = 0; k < op->num_regions; k++) mark_defined(sx, &op->regions[k]);
    }
  }
}

static cxla_status collect(cx_sx *sx, const cx_mlir_region *r, capture_list *cl) {
  for (int b = 0; b < r->num_blocks; b++) {
    const cx_mlir_block *blk = &r->blocks[b];
    for (int o = 0; o < blk->num_ops; o++) {
      const cx_mlir_op *op = blk->ops[o];
      for (int i = 0; i < op->num_operands; i++) {
        const cx_mlir_value *v = op->operands[i];
        if (!v || v->id < 0 || v->id >= sx->nvals) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "operand %d is not a value", i);
        if (sx->mark[v->id] == sx->mark_now || sx->mark[v->id] == sx->mark_now + 1) continue;
        sx->mark[v->id] = sx->mark_now + 1; /* seen: captured once */
        if (cl->n == cl->cap) {
          int nc = cl->cap ? cl->cap * 2 : 8;
          const cx_mlir_value **nv = cx_arena_alloc(&sx->m->arena, sizeof *nv * (size_t)nc);
          if (!nv) return cx_oom(sx->ctx);
          if (cl->n) memcpy(nv, cl->v, sizeof *nv * (size_t)cl->n);
          cl->v = nv;
          cl->cap = nc;
        }
        cl->v[cl->n++] = v;
      }
      for (int k = 0; k < op->num_regions; k++) CX_TRY(collect(sx, &op->regions[k], cl));
    }
  }
  return CXLA_OK;
}

/* The values regions r[0..nr) of op use but do not define, in first-use order. */
static cxla_status captures(cx_sx *sx, const cx_mlir_op *op, int first, int nr, capture_list *cl) {
  memset(cl, 0, sizeof *cl);
  sx->mark_now += 2;
  if (sx->mark_now < 2) { /* wrapped: start the marks afresh */
    memset(sx->mark, 0, sizeof *sx->mark * (size_t)(sx->nvals ? sx->nvals : 1));
    sx->mark_now = 2;
  }
  for (int k = first; k < first + nr; k++) mark_defined(sx, &op->regions[k]);
  for (int k = first; k < first + nr; k++) CX_TRY(collect(sx, &op->regions[k], cl));
  for (int i = 0; i < cl->n; i++)
    if (!sx->vals[cl->v[i]->id]) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "a region uses a value defined nowhere it can see");
  return CXLA_OK;
}

/* ---- regions ---- */

static const cx_mlir_block *one_block(cx_sx *sx, const cx_mlir_op *op, int r, cxla_status *st) {
  *st = CXLA_OK;
  if (r >= op->num_regions || op->regions[r].num_blocks != 1) {
    *st = cx_sx_err(sx, op, CXLA_ERR_PARSE, "region %d must have exactly one block", r);
    return NULL;
  }
  return &op->regions[r].blocks[0];
}

static cx_comp *new_region_comp(cx_sx *sx) {
  char name[32];
  snprintf(name, sizeof name, "region_%d", sx->nregions++);
  const char *u = cx_module_unique_name(sx->m, name);
  return u ? cx_comp_new(sx->m, u) : NULL;
}

static cx_instr *param(cx_sx *sx, cx_comp *c, const cx_shape *s, int i) {
  char pn[32];
  snprintf(pn, sizeof pn, "Arg_%d", i);
  cx_instr *p = cx_instr_new(c, CX_OP_PARAMETER, s, 0, NULL);
  if (!p || !(p->name = cx_module_unique_name(sx->m, pn))) return NULL;
  p->a.index = i;
  return p;
}

static cxla_status finish_comp(cx_sx *sx, const cx_mlir_op *op, cx_comp *c) {
  if (!cx_comp_index_params(c)) return cx_sx_err(sx, op, CXLA_ERR_INTERNAL, "parameters of %s", c->name);
  return cx_module_add_comp(sx->m, c) ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
}

cxla_status cx_sx_scalar_region(cx_sx *sx, const cx_mlir_op *op, int r, cx_comp **out) {
  cxla_status st;
  const cx_mlir_block *b = one_block(sx, op, r, &st);
  if (!b) return st;
  capture_list cl;
  CX_TRY(captures(sx, op, r, 1, &cl));
  /* jax's comparators and reducers use constants defined outside them: each gets a copy inside
   * (XLA sinks constants into the computations too); any other outside value is refused */
  for (int i = 0; i < cl.n; i++) {
    const cx_mlir_op *d = cl.v[i]->def;
    if (!d || strcmp(d->name, "vhlo.constant_v1"))
      return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "not supported: region %d uses a value computed outside it (only constants may be)", r);
  }
  if (++sx->depth > MAX_REGION_DEPTH) return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "regions nested deeper than %d", MAX_REGION_DEPTH);
  cx_comp *c = new_region_comp(sx);
  if (!c) return CXLA_ERR_OUT_OF_MEMORY;
  for (int i = 0; i < b->num_args; i++) {
    cx_shape s;
    CX_TRY(cx_sx_shape(sx, op, b->args[i].type, &s));
    cx_instr *p = param(sx, c, &s, i);
    if (!p) return CXLA_ERR_OUT_OF_MEMORY;
    sx->vals[b->args[i].id] = p;
  }
  cx_instr **saved = cx_arena_alloc(&sx->m->arena, sizeof *saved * (size_t)(cl.n ? cl.n : 1));
  if (!saved) return cx_oom(sx->ctx);
  cxla_status cst = CXLA_OK;
  int ncopied = 0;
  for (; ncopied < cl.n && cst == CXLA_OK; ncopied++) {
    const cx_mlir_op *d = cl.v[ncopied]->def;
    saved[ncopied] = sx->vals[cl.v[ncopied]->id];
    cst = cx_sx_find_rule(d->name)->fn(sx, c, d, cx_sx_find_rule(d->name)->arg);
  }
  const cx_mlir_op *term = NULL;
  cx_instr **rets = NULL;
  int n = 0;
  if (cst == CXLA_OK) cst = cx_sx_block(sx, c, b, &term, &rets, &n);
  for (int i = 0; i < ncopied; i++) sx->vals[cl.v[i]->id] = saved[i];
  CX_TRY(cst);
  if (!n) return cx_sx_err(sx, term, CXLA_ERR_PARSE, "region %d returns nothing", r);
  CX_TRY(cx_sx_root(sx, c, term, rets, n, 0, &c->root));
  sx->depth--;
  CX_TRY(finish_comp(sx, op, c));
  *out = c;
  return CXLA_OK;
}

/* A computation for region r of op taking one parameter of shape ps, which holds the block's
 * arguments (nargs of them, from element 0) and then the captures cl; ps is the whole tuple, or
 * the one value when ps is not a tuple. The root returns the block's results, followed by the
 * captures when pass_captures (a while body), as a tuple when force_tuple or not exactly one. */
static cxla_status unpacked_region(cx_sx *sx, const cx_mlir_op *op, int r, const cx_shape *ps, const capture_list *cl,
                                   int pass_captures, int force_tuple, cx_comp **out) {
  cxla_status st;
  const cx_mlir_block *b = one_block(sx, op, r, &st);
  if (!b) return st;
  if (++sx->depth > MAX_REGION_DEPTH) return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "regions nested deeper than %d", MAX_REGION_DEPTH);
  cx_comp *c = new_region_comp(sx);
  if (!c) return CXLA_ERR_OUT_OF_MEMORY;
  cx_instr *p = param(sx, c, ps, 0);
  if (!p) return CXLA_ERR_OUT_OF_MEMORY;
  int total = b->num_args + cl->n;
  cx_instr **inside = cx_arena_alloc(&sx->m->arena, sizeof *inside * (size_t)(total ? total : 1));
  cx_instr **saved = cx_arena_alloc(&sx->m->arena, sizeof *saved * (size_t)(cl->n ? cl->n : 1));
  if (!inside || !saved) return cx_oom(sx->ctx);
  if (ps->type != CXLA_TUPLE) {
    if (total != 1) return cx_sx_err(sx, op, CXLA_ERR_INTERNAL, "region state of one value for %d", total);
    inside[0] = p;
  } else {
    if (ps->ntuple != total) return cx_sx_err(sx, op, CXLA_ERR_INTERNAL, "region state of %d values for %d", ps->ntuple, total);
    for (int i = 0; i < total; i++) {
      if (!(inside[i] = cx_sx_add(sx, c, CX_OP_GET_TUPLE_ELEMENT, &ps->tuple[i], 1, &p, NULL))) return CXLA_ERR_OUT_OF_MEMORY;
      inside[i]->a.index = i;
    }
  }
  for (int i = 0; i < b->num_args; i++) {
    cx_shape s;
    CX_TRY(cx_sx_shape(sx, op, b->args[i].type, &s));
    if (!cx_shape_equal(&s, &inside[i]->shape))
      return cx_sx_err(sx, op, CXLA_ERR_PARSE, "region %d: argument %d's type is not the operand's", r, i);
    sx->vals[b->args[i].id] = inside[i];
  }
  for (int i = 0; i < cl->n; i++) {
    saved[i] = sx->vals[cl->v[i]->id];
    sx->vals[cl->v[i]->id] = inside[b->num_args + i];
  }
  const cx_mlir_op *term;
  cx_instr **rets;
  int n;
  st = cx_sx_block(sx, c, b, &term, &rets, &n);
  for (int i = 0; i < cl->n; i++) sx->vals[cl->v[i]->id] = saved[i];
  CX_TRY(st);
  if (pass_captures && cl->n) {
    cx_instr **all = cx_arena_alloc(&sx->m->arena, sizeof *all * (size_t)(n + cl->n));
    if (!all) return cx_oom(sx->ctx);
    memcpy(all, rets, sizeof *all * (size_t)n);
    memcpy(all + n, inside + b->num_args, sizeof *all * (size_t)cl->n);
    rets = all;
    n += cl->n;
  }
  CX_TRY(cx_sx_root(sx, c, term, rets, n, force_tuple, &c->root));
  sx->depth--;
  CX_TRY(finish_comp(sx, op, c));
  *out = c;
  return CXLA_OK;
}

/* ---- while ---- */

cxla_status cx_sx_h_while(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  if (op->num_regions != 2) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "expected 2 regions (cond, body), got %d", op->num_regions);
  CX_TRY(cx_sx_arity(sx, op, -1, op->num_operands));
  capture_list cl;
  CX_TRY(captures(sx, op, 0, 2, &cl));
  int n = op->num_operands, total = n + cl.n;
  cx_instr **state = cx_arena_alloc(&sx->m->arena, sizeof *state * (size_t)(total ? total : 1));
  if (!state) return cx_oom(sx->ctx);
  for (int i = 0; i < n; i++) CX_TRY(cx_sx_operand(sx, op, i, &state[i]));
  for (int i = 0; i < cl.n; i++) state[n + i] = sx->vals[cl.v[i]->id];
  /* one value and nothing captured: the loop state is that value, as XLA has it */
  int tupled = total != 1;
  cx_instr *init = state[0];
  if (tupled) CX_TRY(cx_sx_root(sx, c, op, state, total, 1, &init));
  cx_shape ps = init->shape;
  cx_comp *comps[2];
  CX_TRY(unpacked_region(sx, op, 0, &ps, &cl, 0, 0, &comps[0]));
  CX_TRY(unpacked_region(sx, op, 1, &ps, &cl, 1, tupled, &comps[1]));
  if (comps[0]->root->shape.type != CXLA_PRED || comps[0]->root->shape.rank)
    return cx_sx_err(sx, op, CXLA_ERR_PARSE, "the condition region must return one tensor<i1>");
  cx_instr *w = cx_sx_add(sx, c, CX_OP_WHILE, &ps, 1, &init, op);
  if (!w || !cx_instr_set_called(w, 2, comps)) return CXLA_ERR_OUT_OF_MEMORY;
  if (!tupled) {
    sx->vals[op->results[0].id] = w;
    return CXLA_OK;
  }
  for (int i = 0; i < n; i++) {
    cx_instr *g = cx_sx_add(sx, c, CX_OP_GET_TUPLE_ELEMENT, &ps.tuple[i], 1, &w, op);
    if (!g) return CXLA_ERR_OUT_OF_MEMORY;
    g->a.index = i;
    sx->vals[op->results[i].id] = g;
  }
  return CXLA_OK;
}

/* ---- if / case: each branch takes a tuple of what it captures ---- */

static cxla_status branches(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, cx_instr *index) {
  int nb = op->num_regions;
  if (nb < 1) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "expected at least one branch");
  cx_instr **ops = cx_arena_alloc(&sx->m->arena, sizeof *ops * (size_t)(nb + 1));
  cx_comp **comps = cx_arena_alloc(&sx->m->arena, sizeof *comps * (size_t)nb);
  if (!ops || !comps) return cx_oom(sx->ctx);
  ops[0] = index;
  for (int k = 0; k < nb; k++) {
    cxla_status st;
    const cx_mlir_block *b = one_block(sx, op, k, &st);
    if (!b) return st;
    if (b->num_args) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "branch %d has block arguments", k);
    capture_list cl;
    CX_TRY(captures(sx, op, k, 1, &cl));
    cx_instr **vals = cx_arena_alloc(&sx->m->arena, sizeof *vals * (size_t)(cl.n ? cl.n : 1));
    if (!vals) return cx_oom(sx->ctx);
    for (int i = 0; i < cl.n; i++) vals[i] = sx->vals[cl.v[i]->id];
    CX_TRY(cx_sx_root(sx, c, op, vals, cl.n, 1, &ops[k + 1]));
    CX_TRY(unpacked_region(sx, op, k, &ops[k + 1]->shape, &cl, 0, op->num_results != 1, &comps[k]));
  }
  cx_shape s;
  CX_TRY(cx_sx_result_shape(sx, op, &s));
  cx_instr *in = cx_sx_add(sx, c, CX_OP_CONDITIONAL, &s, nb + 1, ops, op);
  if (!in || !cx_instr_set_called(in, nb, comps)) return CXLA_ERR_OUT_OF_MEMORY;
  return cx_sx_bind(sx, c, op, in);
}

cxla_status cx_sx_h_if(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, 1, -1));
  if (op->num_regions != 2) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "expected 2 regions (true, false), got %d", op->num_regions);
  cx_instr *p;
  CX_TRY(cx_sx_operand(sx, op, 0, &p));
  if (p->shape.type != CXLA_PRED || p->shape.rank) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "the predicate must be tensor<i1>");
  return branches(sx, c, op, p);
}

cxla_status cx_sx_h_case(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, 1, -1));
  cx_instr *i;
  CX_TRY(cx_sx_operand(sx, op, 0, &i));
  if (i->shape.type != CXLA_S32 || i->shape.rank) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "the index must be tensor<i32>");
  return branches(sx, c, op, i);
}

/* ---- calls and plumbing ---- */

cxla_status cx_sx_h_call(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  const char *callee = cx_sx_str(op, "callee");
  const cx_mlir_attr *ca = cx_mlir_op_attr(op, "callee");
  if (!callee && ca && ca->kind == CX_MLIR_ATTR_SYMBOL_REF) callee = ca->u.sym.root;
  if (!callee) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "missing attribute 'callee'");
  cx_comp *f;
  CX_TRY(cx_sx_func_comp(sx, op, callee, &f));
  cx_instr **ops;
  int n;
  CX_TRY(cx_sx_operands(sx, op, 0, &ops, &n));
  if (n != f->nparams) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "calls '%s' with %d arguments; it takes %d", callee, n, f->nparams);
  cx_shape s;
  CX_TRY(cx_sx_result_shape(sx, op, &s));
  cx_instr *in = cx_sx_add(sx, c, CX_OP_CALL, &s, n, ops, op);
  if (!in || !cx_instr_set_called(in, 1, &f)) return CXLA_ERR_OUT_OF_MEMORY;
  return cx_sx_bind(sx, c, op, in);
}

cxla_status cx_sx_h_tuple(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, op->num_operands, 1));
  cx_instr **ops;
  int n;
  CX_TRY(cx_sx_operands(sx, op, 0, &ops, &n));
  cx_instr *t;
  CX_TRY(cx_sx_root(sx, c, op, ops, n, 1, &t));
  return cx_sx_bind(sx, c, op, t);
}

cxla_status cx_sx_h_get_tuple_element(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, 1, 1));
  int64_t i;
  CX_TRY(cx_sx_int(sx, op, "index", 1, 0, &i));
  cx_instr *t;
  CX_TRY(cx_sx_operand(sx, op, 0, &t));
  if (t->shape.type != CXLA_TUPLE || i < 0 || i >= t->shape.ntuple)
    return cx_sx_err(sx, op, CXLA_ERR_PARSE, "index %lld is not an element of the operand", (long long)i);
  cx_instr *g = cx_sx_add(sx, c, CX_OP_GET_TUPLE_ELEMENT, &t->shape.tuple[i], 1, &t, op);
  if (!g) return CXLA_ERR_OUT_OF_MEMORY;
  g->a.index = i;
  return cx_sx_bind(sx, c, op, g);
}

/* N values through one opt-barrier of their tuple, as XLA's builder makes it. */
cxla_status cx_sx_h_optimization_barrier(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, op->num_operands, op->num_operands));
  cx_instr **ops;
  int n;
  CX_TRY(cx_sx_operands(sx, op, 0, &ops, &n));
  cx_instr *t;
  CX_TRY(cx_sx_root(sx, c, op, ops, n, 1, &t));
  cx_instr *b = cx_sx_add(sx, c, CX_OP_OPT_BARRIER, &t->shape, 1, &t, op);
  if (!b) return CXLA_ERR_OUT_OF_MEMORY;
  if (op->num_results == 1) {
    cx_instr *g = cx_sx_add(sx, c, CX_OP_GET_TUPLE_ELEMENT, &t->shape.tuple[0], 1, &b, op);
    if (!g) return CXLA_ERR_OUT_OF_MEMORY;
    sx->vals[op->results[0].id] = g;
    return CXLA_OK;
  }
  return cx_sx_bind(sx, c, op, b);
}

/* after_all(tokens...) and create_token() (an after-all of nothing). */
cxla_status cx_sx_h_after_all(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, op->num_operands, 1));
  cx_instr **ops;
  int n;
  CX_TRY(cx_sx_operands(sx, op, 0, &ops, &n));
  cx_shape s;
  CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &s));
  if (s.type != CXLA_TOKEN) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "the result must be a token");
  cx_instr *in = cx_sx_add(sx, c, CX_OP_AFTER_ALL, &s, n, ops, op);
  return in ? cx_sx_bind(sx, c, op, in) : CXLA_ERR_OUT_OF_MEMORY;
}
