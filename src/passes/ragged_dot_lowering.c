/* ragged_dot_lowering.c — a ragged-dot (ir/ragged_dot.h) in the canonical form the cpu runtime
 * routine (ragged_dot.c) takes, so that each group is one GEMM over contiguous rows:
 *   non-contracting: lhs [B, X, M, Y, K], rhs [G, B, K, N], group_sizes [B, X, G] -> [B, X, M, Y, N]
 *   contracting:     lhs [B, X, R, Z, M], rhs [B, X, R, Z, N], group_sizes [B, X, G] -> [G, B, M, N]
 * B: the batch dims, X: the dims before the ragged one that index group_sizes, M/R: the ragged
 * dim, Y/Z: the other dims of its kind, K/N/M: the rest, each group of dims collapsed into one.
 * Each operand gets one fused kernel (convert, transpose, reshape) into that form, in the type
 * the GEMM takes (f32, f64, c64, c128; s64 for integers), and the result one back (a reshape,
 * and a convert where the types differ): both result orders are the original's flattened. A
 * ragged batch dimension is a plain dot (group_sizes changes nothing): it becomes one. */
#include "ir/edit.h"
#include "ir/ragged_dot.h"
#include "passes/fusion_build.h"
#include "passes/library_lowering.h"

typedef struct prep {
  cx_instr *parts[3];
  int n;
  cx_instr *top;
} prep;

static cxla_status add(cx_comp *c, prep *p, cx_op op, cx_shape *sh, const int64_t *dims, int ndims, cx_loc loc) {
  cx_instr *x = cx_instr_add(c, op, sh, 1, &p->top, loc);
  if (!x || (ndims && !cx_ints_set(c->module, &x->a.dims, ndims, dims))) return cx_oom(c->module->ctx);
  p->parts[p->n++] = p->top = x;
  return CXLA_OK;
}

/* x converted to t, transposed by perm (rank entries) and reshaped to dims (nd), as one fused
 * kernel; steps that change nothing are left out (x itself when all do). */
static cxla_status operand(cx_comp *c, cx_instr *x, cxla_type t, const int64_t *perm, const int64_t *dims, int nd,
                           cx_loc loc, cx_instr **out) {
  prep p = {.n = 0, .top = x};
  const cx_shape *s = &x->shape;
  int ident = 1;
  for (int i = 0; i < s->rank; i++) ident &= perm[i] == i;
  if (s->type != t) {
    cx_shape sh = cx_shape_array(t, s->rank, s->dims);
    CX_TRY(add(c, &p, CX_OP_CONVERT, &sh, NULL, 0, loc));
  }
  if (!ident) {
    int64_t td[CXLA_MAX_RANK];
    for (int i = 0; i < s->rank; i++) td[i] = s->dims[perm[i]];
    cx_shape sh = cx_shape_array(t, s->rank, td);
    CX_TRY(add(c, &p, CX_OP_TRANSPOSE, &sh, perm, s->rank, loc));
  }
  cx_shape sh = cx_shape_array(t, nd, dims);
  if (!cx_shape_equal(&sh, &p.top->shape)) CX_TRY(add(c, &p, CX_OP_RESHAPE, &sh, NULL, 0, loc));
  *out = p.top;
  if (!p.n) return CXLA_OK;
  return cx_fusion_make(c, p.parts, p.n, p.top, CX_FUSION_LOOP, out);
}

/* The type the runtime routine computes in: f64 or f32, c128 or c64, else s64 (integers and
 * pred wrap as the interpreter's 64-bit sums do, then convert). */
static cxla_type compute_type(const cx_instr *x) {
  cxla_type l = x->ops[0]->shape.type, r = x->ops[1]->shape.type, o = x->shape.type;
  if (cx_type_is_complex(o)) return l == CXLA_C128 || r == CXLA_C128 || o == CXLA_C128 ? CXLA_C128 : CXLA_C64;
  if (cx_type_is_float(o)) return l == CXLA_F64 || r == CXLA_F64 || o == CXLA_F64 ? CXLA_F64 : CXLA_F32;
  return CXLA_S64;
}

static int64_t prod(const cx_shape *s, const int64_t *perm, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; i++) p *= s->dims[perm[i]];
  return p;
}

cxla_status cx_lower_ragged_dot(cx_comp *c, cx_instr *x) {
  cx_module *m = c->module;
  cx_dot_dims *d = &x->a.dot;
  const cx_shape *ls = &x->ops[0]->shape, *rs = &x->ops[1]->shape, *gs = &x->ops[2]->shape;
  cx_ragged_dims rd;
  if (x->nops != 3 || !cx_ragged_dims_of(x, ls->rank, &rd))
    return cx_error(m->ctx, CXLA_ERR_INTERNAL, "ragged-dot %s: not verified", x->name);
  if (rd.mode == CX_RAGGED_BATCH) { /* a dot */
    x->op = CX_OP_DOT;
    x->nops = 2;
    d->lhs_ragged.n = d->rhs_group.n = 0;
    return CXLA_OK;
  }
  int nc = rd.mode == CX_RAGGED_CONTRACTING;
  /* the lhs: batch, X, ragged, Y, rest; the ends of each run in lp */
  int64_t lp[CXLA_MAX_RANK], rp[CXLA_MAX_RANK];
  int n = 0, nb = d->lhs_batch.n, xend, yend;
  for (int i = 0; i < nb; i++) lp[n++] = d->lhs_batch.v[i];
  for (int i = nb; i < rd.nprefix; i++) lp[n++] = rd.prefix[i];
  xend = n;
  lp[n++] = rd.lhs_ragged;
  if (nc) {
    int after = 0;
    for (int i = 0; i < d->lhs_contract.n; i++) {
      if (after) lp[n++] = d->lhs_contract.v[i];
      after |= d->lhs_contract.v[i] == rd.lhs_ragged;
    }
  } else
    for (int64_t i = rd.lhs_ragged + 1; i < ls->rank; i++)
      if (!cx_ints_has(&d->lhs_batch, i) && !cx_ints_has(&d->lhs_contract, i)) lp[n++] = i;
  yend = n;
  if (nc) {
    for (int64_t i = 0; i < ls->rank; i++)
      if (!cx_ints_has(&d->lhs_batch, i) && !cx_ints_has(&d->lhs_contract, i)) lp[n++] = i;
  } else
    for (int i = 0; i < d->lhs_contract.n; i++) lp[n++] = d->lhs_contract.v[i];
  int64_t B = prod(ls, lp, 0, nb), X = prod(ls, lp, nb, xend), R = ls->dims[rd.lhs_ragged];
  int64_t Y = prod(ls, lp, xend + 1, yend), K = prod(ls, lp, yend, ls->rank);
  /* the rhs: non-contracting [G, batch, contracting, free]; contracting [batch, contracting (paired), free] */
  int k = 0;
  if (!nc) rp[k++] = rd.rhs_group;
  for (int i = 0; i < d->rhs_batch.n; i++) rp[k++] = d->rhs_batch.v[i];
  if (nc) { /* the pairs in the order lp holds the lhs's contracting dims */
    for (int j = nb; j < yend; j++)
      for (int i = 0; i < d->lhs_contract.n; i++)
        if (d->lhs_contract.v[i] == lp[j]) rp[k++] = d->rhs_contract.v[i];
  } else
    for (int i = 0; i < d->rhs_contract.n; i++) rp[k++] = d->rhs_contract.v[i];
  int kfree = k;
  for (int64_t i = 0; i < rs->rank; i++)
    if (i != rd.rhs_group && !cx_ints_has(&d->rhs_batch, i) && !cx_ints_has(&d->rhs_contract, i)) rp[k++] = i;
  int64_t N = prod(rs, rp, kfree, rs->rank), G = gs->dims[gs->rank - 1];
  cxla_type t = compute_type(x);
  int64_t l5[5] = {B, X, R, Y, K}, r4[4] = {G, B, K, N}, r5[5] = {B, X, R, Y, N}, g3[3] = {B, X, G};
  cx_instr *ops[3];
  CX_TRY(operand(c, x->ops[0], t, lp, l5, 5, x->loc, &ops[0]));
  CX_TRY(operand(c, x->ops[1], t, rp, nc ? r5 : r4, nc ? 5 : 4, x->loc, &ops[1]));
  /* group_sizes as s64 [B, X, G]: a [G] one broadcast */
  int64_t id[CXLA_MAX_RANK];
  for (int i = 0; i < gs->rank; i++) id[i] = i;
  if (gs->rank == 1 && B * X != 1) {
    cx_instr *g = x->ops[2];
    prep p = {.n = 0, .top = g};
    cx_shape sh = cx_shape_array(CXLA_S64, 1, &G);
    if (g->shape.type != CXLA_S64) CX_TRY(add(c, &p, CX_OP_CONVERT, &sh, NULL, 0, x->loc));
    sh = cx_shape_array(CXLA_S64, 3, g3);
    CX_TRY(add(c, &p, CX_OP_BROADCAST, &sh, (int64_t[]){2}, 1, x->loc));
    CX_TRY(cx_fusion_make(c, p.parts, p.n, p.top, CX_FUSION_LOOP, &ops[2]));
  } else
    CX_TRY(operand(c, x->ops[2], CXLA_S64, id, g3, 3, x->loc, &ops[2]));
  /* the canonical ragged-dot, then its result in the original shape and type */
  int64_t o5[5] = {B, X, R, Y, N}, o4[4] = {G, B, K, N};
  cx_shape osh = cx_shape_array(t, nc ? 4 : 5, nc ? o4 : o5);
  cx_instr *y = cx_instr_add(c, CX_OP_RAGGED_DOT, &osh, 3, ops, x->loc);
  if (!y) return cx_oom(m->ctx);
  cx_dot_dims *e = &y->a.dot;
  int ok = cx_ints_set(m, &e->lhs_batch, 1, (int64_t[]){0}) && cx_ints_set(m, &e->lhs_ragged, 1, (int64_t[]){2});
  if (nc)
    ok = ok && cx_ints_set(m, &e->rhs_batch, 1, (int64_t[]){0}) && cx_ints_set(m, &e->lhs_contract, 3, (int64_t[]){1, 2, 3}) &&
         cx_ints_set(m, &e->rhs_contract, 3, (int64_t[]){1, 2, 3});
  else
    ok = ok && cx_ints_set(m, &e->rhs_batch, 1, (int64_t[]){1}) && cx_ints_set(m, &e->lhs_contract, 1, (int64_t[]){4}) &&
         cx_ints_set(m, &e->rhs_contract, 1, (int64_t[]){2}) && cx_ints_set(m, &e->rhs_group, 1, (int64_t[]){0});
  if (!ok) return cx_oom(m->ctx);
  cx_instr *res;
  for (int i = 0; i < osh.rank; i++) id[i] = i;
  /* operand() converts to t: here the other way, to the result's type */
  prep p = {.n = 0, .top = y};
  if (t != x->shape.type) {
    cx_shape sh = cx_shape_array(x->shape.type, osh.rank, osh.dims);
    CX_TRY(add(c, &p, CX_OP_CONVERT, &sh, NULL, 0, x->loc));
  }
  cx_shape fin = cx_shape_array(x->shape.type, x->shape.rank, x->shape.dims);
  CX_TRY(add(c, &p, CX_OP_RESHAPE, &fin, NULL, 0, x->loc));
  CX_TRY(cx_fusion_make(c, p.parts, p.n, p.top, CX_FUSION_LOOP, &res));
  cx_comp_replace_uses(c, x, res);
  uint8_t *drop = cx_calloc((size_t)c->ninstrs + 1, 1);
  if (!drop) return cx_oom(m->ctx);
  for (int i = 0; i < c->ninstrs; i++) drop[i] = c->instrs[i] == x;
  cx_comp_remove_instrs(c, drop);
  cx_free(drop);
  return CXLA_OK;
}
