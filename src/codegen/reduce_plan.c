/* reduce_plan.c — analysis of kInput fusions for reduce_emit.c: the reduces (single or
 * variadic, all over the same input dims and reduced dims), row vs column strategy, and how
 * each output is produced: after its reduction (the reduce itself or an epilogue that reads
 * reduce results only at the output's linear index, e.g. log(sum(x)) or sum(x)/N), or while
 * the input is read (an input-shaped output such as the exp of softmax). */
#include <stdio.h>
#include <string.h>
#include "codegen/emit.h"

const char *cx_emit_why(const char *fmt, ...) {
  static _Thread_local char buf[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

/* Depth-first search with a visit budget; running out answers "yes" (the callers then take
 * the conservative path: unsupported, or the slower correct one). */
static int dep_walk(const cx_instr *x, const cx_instr *target, const cx_instr **seen, int *nseen) {
  if (x == target || (!target && x->op == CX_OP_REDUCE)) return 1;
  for (int i = 0; i < *nseen; i++)
    if (seen[i] == x) return 0;
  if (*nseen >= 512) return 1;
  seen[(*nseen)++] = x;
  for (int k = 0; k < x->nops; k++)
    if (dep_walk(x->ops[k], target, seen, nseen)) return 1;
  return 0;
}

int cx_emit_depends_on(const cx_instr *x, const cx_instr *target) {
  const cx_instr *seen[512];
  int n = 0;
  return dep_walk(x, target, seen, &n);
}

static int same_index_walk(const cx_instr *x, const cx_instr *target, int64_t count, int *budget) {
  if (x == target || !cx_emit_depends_on(x, target)) return 1;
  if (--*budget < 0) return 0;
  switch (x->op) {
  case CX_OP_GET_TUPLE_ELEMENT: case CX_OP_RESHAPE: case CX_OP_BITCAST: case CX_OP_COPY:
    break;
  case CX_OP_BITCAST_CONVERT:
    if (x->shape.rank != x->ops[0]->shape.rank) return 0;
    break;
  default:
    if (!cx_op_is_elementwise(x->op)) return 0;
  }
  if (x->op != CX_OP_GET_TUPLE_ELEMENT && cx_shape_elems(&x->shape) != count) return 0;
  for (int k = 0; k < x->nops; k++)
    if (!same_index_walk(x->ops[k], target, count, budget)) return 0;
  return 1;
}

int cx_emit_reads_at_same_index(const cx_instr *x, const cx_instr *target, int64_t count) {
  int budget = 4096;
  return same_index_walk(x, target, count, &budget);
}

static int same_dim_set(const cx_ints *a, const cx_ints *b) {
  if (a->n != b->n) return 0;
  for (int i = 0; i < a->n; i++) {
    int found = 0;
    for (int j = 0; j < b->n; j++) found |= a->v[i] == b->v[j];
    if (!found) return 0;
  }
  return 1;
}

static int leaf_count(const cx_shape *s) {
  if (s->type != CXLA_TUPLE) return 1;
  int n = 0;
  for (int i = 0; i < s->ntuple; i++) n += leaf_count(&s->tuple[i]);
  return n;
}

static int add_leaf(cx_red_plan *p, const cx_instr *x, int v) {
  if (p->nleaves >= CX_EMIT_MAX_ARGS) return 0;
  p->leaf[p->nleaves] = x;
  p->leaf_val[p->nleaves++] = v;
  return 1;
}

int cx_red_plan_make(const cx_instr *fusion, cx_red_plan *p, const char **why) {
  const cx_comp *c = fusion->called[0];
  memset(p, 0, sizeof *p);
  for (int i = 0; i < c->ninstrs; i++) {
    const cx_instr *r = c->instrs[i];
    if (r->op != CX_OP_REDUCE) continue;
    if (p->nred >= CX_EMIT_MAX_REDUCES) return *why = "too many reduces in one fusion", 0;
    int n = r->nops / 2;
    if (n < 1 || r->nops != 2 * n || r->ncalled != 1 || n > CX_GEN_MAX_VALS)
      return *why = cx_emit_why("%s: malformed reduce", r->name), 0;
    for (int k = 0; k < n; k++)
      if (!cx_shape_same_dims(&r->ops[k]->shape, &r->ops[0]->shape) || r->ops[n + k]->shape.rank != 0)
        return *why = cx_emit_why("%s: operands of different dims", r->name), 0;
    if (p->nred && (!cx_shape_same_dims(&r->ops[0]->shape, &p->red[0]->ops[0]->shape) ||
                    !same_dim_set(&r->a.dims, &p->red[0]->a.dims)))
      return *why = cx_emit_why("%s: reduces over different dims in one fusion", r->name), 0;
    p->red[p->nred++] = r;
  }
  if (!p->nred) return *why = "no reduce", 0;
  const cx_instr *r0 = p->red[0];
  p->in = cx_shape_array(CXLA_F32, r0->ops[0]->shape.rank, r0->ops[0]->shape.dims);
  int64_t od[CXLA_MAX_RANK];
  int ro = 0;
  for (int i = 0; i < r0->a.dims.n; i++) {
    int64_t d = r0->a.dims.v[i];
    if (d < 0 || d >= p->in.rank || p->reduced[d]) return *why = "bad reduce dimensions", 0;
    p->reduced[d] = 1;
  }
  for (int d = 0; d < p->in.rank; d++)
    if (!p->reduced[d]) od[ro++] = p->in.dims[d];
  p->out = cx_shape_array(CXLA_F32, ro, od);
  p->inner = p->in.rank - 1;
  while (p->inner >= 0 && p->in.dims[p->inner] == 1) p->inner--;
  p->row = p->inner < 0 || p->reduced[p->inner];

  /* the outputs, in the fusion's DFS order */
  const cx_instr *root = c->root;
  int ok = 1;
  if (root->op == CX_OP_TUPLE) {
    for (int k = 0; k < root->nops && ok; k++)
      for (int v = 0; v < leaf_count(&root->ops[k]->shape) && ok; v++) ok = add_leaf(p, root->ops[k], v);
  } else {
    for (int v = 0; v < leaf_count(&root->shape) && ok; v++) ok = add_leaf(p, root, v);
  }
  const cx_shape *leaves[CX_EMIT_MAX_ARGS];
  int nout = cx_emit_out_leaves(&fusion->shape, leaves, CX_EMIT_MAX_ARGS);
  if (!ok || nout != p->nleaves) return *why = "unsupported output structure", 0;
  int64_t ocount = cx_shape_elems(&p->out);
  for (int i = 0; i < p->nleaves; i++) {
    const cx_instr *x = p->leaf[i];
    int dep = cx_emit_depends_on(x, NULL);
    if (dep) {
      for (int r = 0; r < p->nred; r++)
        if (!cx_emit_reads_at_same_index(x, p->red[r], ocount))
          return *why = cx_emit_why("%s reads a reduce result other than at its own index", x->name), 0;
      if (cx_shape_elems(leaves[i]) != ocount) return *why = "output size differs from the reduce's", 0;
    } else if (cx_shape_same_dims(leaves[i], &p->in)) {
      p->leaf_in[i] = 1;
    } else if (cx_shape_elems(leaves[i]) != ocount) {
      return *why = cx_emit_why("output %d has neither the reduce input nor output size", i), 0;
    }
  }
  return 1;
}
