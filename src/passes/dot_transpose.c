/* dot_transpose.c — transpose(dot(a, b)) whose permutation swaps the dot's two groups of free
 * dimensions is dot(b, a) (XLA's algebraic simplifier has the same rule). Gradients are full
 * of it: a dense layer's kernel gradient is dot(g, x) contracted over the batch, [out, in],
 * transposed into the kernel's [in, out] order, which the optimizer update then reads. Left
 * alone, the transpose is a strided pass over the whole result inside the next fusion; the
 * swapped dot costs nothing more, because a GEMM reads either operand transposed for free.
 *
 * The transpose becomes the dot in place (it keeps its name and users); the old dot is left
 * to DCE. Only where the transpose is the dot's one user, so no dot is computed twice; and
 * not where operand_precision is set, which is per operand (swapping it is not worth a rule
 * for what JAX writes only at non-default precision). */
#include <string.h>
#include "ir/edit.h"
#include "passes/pass.h"
#include "passes/use_counts.h"

/* The permutation p of dot x's result that puts rhs's free dims before lhs's, batch first. */
static int swaps_free_dims(const cx_instr *x, const cx_ints *p) {
  const cx_dot_dims *d = &x->a.dot;
  int nb = d->lhs_batch.n;
  int nl = x->ops[0]->shape.rank - nb - d->lhs_contract.n;
  int nr = x->ops[1]->shape.rank - nb - d->rhs_contract.n;
  if (nl <= 0 || nr <= 0 || p->n != nb + nl + nr || d->lhs_ragged.n || d->rhs_group.n) return 0;
  for (int i = 0; i < nb; i++)
    if (p->v[i] != i) return 0;
  for (int j = 0; j < nr; j++)
    if (p->v[nb + j] != nb + nl + j) return 0;
  for (int j = 0; j < nl; j++)
    if (p->v[nb + nr + j] != nb + j) return 0;
  return 1;
}

static int has_raw(const cx_instr *in, const char *key) {
  for (int i = 0; i < in->a.nraw; i++)
    if (!strcmp(in->a.raw[i].key, key)) return 1;
  return 0;
}

static cxla_status swap_into(cx_instr *t, cx_instr *x) {
  cx_module *m = t->parent->module;
  cx_instr **ops = cx_arena_alloc(&m->arena, 2 * sizeof *ops);
  const cx_dot_dims *d = &x->a.dot;
  cx_dot_dims nd;
  memset(&nd, 0, sizeof nd);
  if (!ops || !cx_ints_set(m, &nd.lhs_batch, d->rhs_batch.n, d->rhs_batch.v) ||
      !cx_ints_set(m, &nd.rhs_batch, d->lhs_batch.n, d->lhs_batch.v) ||
      !cx_ints_set(m, &nd.lhs_contract, d->rhs_contract.n, d->rhs_contract.v) ||
      !cx_ints_set(m, &nd.rhs_contract, d->lhs_contract.n, d->lhs_contract.v))
    return cx_oom(m->ctx);
  ops[0] = x->ops[1];
  ops[1] = x->ops[0];
  t->op = CX_OP_DOT;
  t->nops = 2;
  t->ops = ops;
  t->a.dims.n = 0;
  t->a.dot = nd;
  return CXLA_OK;
}

static cxla_status fold_comp(cx_comp *c, int *changed) {
  cx_pass_count_uses(c); /* uses per instruction, in aux */
  cxla_status s = CXLA_OK;
  for (int i = 0; i < c->ninstrs && s == CXLA_OK; i++) {
    cx_instr *t = c->instrs[i];
    if (t->op != CX_OP_TRANSPOSE || t->nops != 1) continue;
    cx_instr *x = t->ops[0];
    if (x->op != CX_OP_DOT || x->nops != 2 || x->parent != c || (uintptr_t)x->aux != 1 ||
        has_raw(x, "operand_precision") || !swaps_free_dims(x, &t->a.dims))
      continue;
    x->aux = NULL; /* now unused: it cannot match twice */
    s = swap_into(t, x);
    if (s == CXLA_OK) (*changed)++;
  }
  for (int i = 0; i < c->ninstrs; i++) c->instrs[i]->aux = NULL;
  return s;
}

/* Operand k of dot x is t = transpose(y): x reads y directly when the permutation keeps y's free
 * dims in their order (the dot's result lists an operand's free dims in operand order; batch
 * and contracting dims are matched by the lists, which are simply renumbered). */
static cxla_status fold_operand(cx_instr *x, int k, int *changed) {
  cx_instr *t = x->ops[k];
  cx_module *m = x->parent->module;
  cx_dot_dims *d = &x->a.dot;
  cx_ints *bs = k ? &d->rhs_batch : &d->lhs_batch, *cs = k ? &d->rhs_contract : &d->lhs_contract;
  const int64_t *p = t->a.dims.v;
  int r = t->shape.rank;
  if (t->a.dims.n != r) return CXLA_OK;
  int64_t last = -1;
  for (int i = 0; i < r; i++) {
    int used = 0;
    for (int j = 0; j < bs->n; j++) used |= bs->v[j] == i;
    for (int j = 0; j < cs->n; j++) used |= cs->v[j] == i;
    if (used) continue;
    if (p[i] < last) return CXLA_OK; /* the free dims would come out in another order */
    last = p[i];
  }
  int64_t nb[CXLA_MAX_RANK], nc[CXLA_MAX_RANK];
  for (int j = 0; j < bs->n; j++) nb[j] = p[bs->v[j]];
  for (int j = 0; j < cs->n; j++) nc[j] = p[cs->v[j]];
  if (!cx_ints_set(m, bs, bs->n, nb) || !cx_ints_set(m, cs, cs->n, nc)) return cx_oom(m->ctx);
  x->ops[k] = t->ops[0];
  (*changed)++;
  return CXLA_OK;
}

/* Dots that read a transpose read its operand instead, with their dims renumbered: a GEMM
 * reads batch and matrix dims at any strides the plan takes (two batch levels on the cpu), so
 * the transpose, a copy kernel, goes (attention's gradient transposes dO, [b, t, h, dh] ->
 * [b, h, dh, t], for two dots). Where the plan does not take the new layout the dot lowering
 * copies the operand into order, as it did the transpose. */
static cxla_status fold_operands(cx_comp *c, int *changed) {
  for (int i = 0; i < c->ninstrs; i++) {
    cx_instr *x = c->instrs[i];
    if (x->op != CX_OP_DOT || x->nops != 2 || x->a.dot.lhs_ragged.n || x->a.dot.rhs_group.n) continue;
    for (int k = 0; k < 2; k++) {
      cx_instr *t = x->ops[k];
      if (t->op == CX_OP_TRANSPOSE && t->nops == 1 && t->parent == c && !t->shape.dynamic && !t->ops[0]->shape.dynamic)
        CX_TRY(fold_operand(x, k, changed));
    }
  }
  return CXLA_OK;
}

cxla_status cx_pass_dot_transpose(cx_module *m, int *changed) {
  *changed = 0;
  for (int i = 0; i < m->ncomps; i++) CX_TRY(fold_comp(m->comps[i], changed));
  for (int i = 0; i < m->ncomps; i++) CX_TRY(fold_operands(m->comps[i], changed));
  return CXLA_OK;
}
