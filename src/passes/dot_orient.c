/* dot_orient.c — transpose(dot(a, b)) where the GEMM would read both a and b transposed is
 * transpose'(dot(b, a)), whose GEMM reads both straight. A row-major GEMM reads its lhs as
 * [M, K] and its rhs as [K, N]; a dot whose lhs holds its contracting dim before its free dim
 * ([K, M]) and whose rhs holds it after ([N, K]) is read transposed on both sides, and the
 * dot lowering then copies one side into order and leaves a GEMM with B transposed, which
 * OpenBLAS runs at half its speed for the small batched shapes of attention (JAX's p·v,
 * "bhts,bshd->bthd", is dot(v, p) with v [b, s, h, d] and p [b, h, t, s]: f32[8,4,32,128]
 * from [8,4,128,128], one core: 386 us as the GEMM with B transposed, 210 us with both
 * straight). Swapping the operands makes each one's contracting dim sit where the GEMM wants
 * it; the result comes out with the two free dims swapped, which the transpose that already
 * follows the dot absorbs (its permutation composed with the swap), so nothing is added.
 *
 * Only where that transpose is the dot's one user (no dot computed twice, no new transpose),
 * the dot has one free and one contracting dim per side (the attention form; more would need
 * a rule for how groups collapse) and no per-operand precision. Runs once, after
 * dot-transpose's fixpoint: that rule turns transpose(dot) into a dot whenever the transpose
 * only swaps the free dims, and this one never leaves such a pair behind (the new permutation
 * is the old one with the two free dims exchanged, and the old one was not a pure swap, or
 * dot-transpose would have taken it). Each output element sums the same products in the same
 * order: the interpreter gives the same bits. */
#include <string.h>
#include "ir/edit.h"
#include "passes/pass.h"
#include "passes/use_counts.h"

/* The one free dim of an operand of rank nb + 2 with batch dims bd and contracting dim k, or -1. */
static int64_t free_dim(const cx_instr *op, const cx_ints *bd, int64_t k) {
  int64_t f = -1;
  for (int64_t i = 0; i < op->shape.rank; i++) {
    int used = i == k;
    for (int j = 0; j < bd->n; j++) used |= bd->v[j] == i;
    if (used) continue;
    if (f >= 0) return -1;
    f = i;
  }
  return f;
}

/* Whether dot x reads both operands transposed (lhs [K, M], rhs [N, K] in memory order). */
static int both_transposed(const cx_instr *x) {
  const cx_dot_dims *d = &x->a.dot;
  if (x->nops != 2 || d->lhs_contract.n != 1 || d->rhs_contract.n != 1 || d->lhs_ragged.n || d->rhs_group.n ||
      !cx_type_is_float(x->shape.type))
    return 0;
  for (int i = 0; i < x->a.nraw; i++)
    if (!strcmp(x->a.raw[i].key, "operand_precision")) return 0;
  int64_t lk = d->lhs_contract.v[0], rk = d->rhs_contract.v[0];
  int64_t lf = free_dim(x->ops[0], &d->lhs_batch, lk), rf = free_dim(x->ops[1], &d->rhs_batch, rk);
  return lf >= 0 && rf >= 0 && lk < lf && rf < rk;
}

/* t = transpose(x): t becomes transpose(y) with y = dot(b, a), a new dot of x's shape with its
 * last two (free) dims exchanged. */
static cxla_status swap(cx_comp *c, cx_instr *t, cx_instr *x) {
  cx_module *m = c->module;
  const cx_dot_dims *d = &x->a.dot;
  int r = x->shape.rank;
  cx_shape sh = x->shape;
  sh.dims[r - 2] = x->shape.dims[r - 1];
  sh.dims[r - 1] = x->shape.dims[r - 2];
  cx_instr *ops[2] = {x->ops[1], x->ops[0]};
  cx_instr *y = cx_instr_add(c, CX_OP_DOT, &sh, 2, ops, x->loc);
  int64_t perm[CXLA_MAX_RANK];
  if (!y) return cx_oom(m->ctx);
  cx_dot_dims nd;
  memset(&nd, 0, sizeof nd);
  if (!cx_ints_set(m, &nd.lhs_batch, d->rhs_batch.n, d->rhs_batch.v) ||
      !cx_ints_set(m, &nd.rhs_batch, d->lhs_batch.n, d->lhs_batch.v) ||
      !cx_ints_set(m, &nd.lhs_contract, d->rhs_contract.n, d->rhs_contract.v) ||
      !cx_ints_set(m, &nd.rhs_contract, d->lhs_contract.n, d->lhs_contract.v))
    return cx_oom(m->ctx);
  y->a.dot = nd;
  for (int i = 0; i < r; i++) {
    int64_t p = t->a.dims.v[i];
    perm[i] = p == r - 2 ? r - 1 : p == r - 1 ? r - 2 : p; /* x's dim p is y's dim perm[i] */
  }
  if (!cx_ints_set(m, &t->a.dims, r, perm)) return cx_oom(m->ctx);
  t->ops[0] = y;
  return CXLA_OK;
}

static char dropped; /* aux of a dot this pass replaced */

static cxla_status orient_comp(cx_comp *c, int *changed) {
  cx_pass_count_uses(c); /* uses per instruction, in aux */
  cxla_status s = CXLA_OK;
  int n = c->ninstrs, any = 0;
  for (int i = 0; i < n && s == CXLA_OK; i++) {
    cx_instr *t = c->instrs[i];
    if (t->op != CX_OP_TRANSPOSE || t->nops != 1) continue;
    cx_instr *x = t->ops[0];
    if (x->op != CX_OP_DOT || x->parent != c || (uintptr_t)x->aux != 1 || !both_transposed(x) ||
        x->shape.rank != x->a.dot.lhs_batch.n + 2 || x->shape.dynamic || t->a.dims.n != x->shape.rank)
      continue;
    s = swap(c, t, x);
    if (s != CXLA_OK) break;
    x->aux = (void *)&dropped; /* unused now: to be dropped (the fusion pass would still make
                                  it a GEMM), and it cannot match twice */
    any = 1, (*changed)++;
  }
  /* c->instrs grew by the new dots: the drop marks are sized after the loop */
  uint8_t *drop = s == CXLA_OK && any ? cx_calloc((size_t)c->ninstrs + 1, 1) : NULL;
  if (s == CXLA_OK && any && !drop) s = cx_oom(c->module->ctx);
  for (int i = 0; drop && i < c->ninstrs; i++) drop[i] = c->instrs[i]->aux == (void *)&dropped;
  for (int i = 0; i < c->ninstrs; i++) c->instrs[i]->aux = NULL;
  if (drop) cx_comp_remove_instrs(c, drop);
  cx_free(drop);
  return s == CXLA_OK && any ? cx_comp_resort(c, "dot-orient") : s;
}

cxla_status cx_pass_dot_orient(cx_module *m, int *changed) {
  *changed = 0;
  for (int i = 0; i < m->ncomps; i++) CX_TRY(orient_comp(m->comps[i], changed));
  return CXLA_OK;
}
