/* dot_lowering.c — mapping library ops onto what the GEMM libraries and the emitter provide.
 *
 * A general dot (batch dims and contracting dims anywhere) is a batch of row-major GEMMs when
 * each group of dimensions — batch, lhs free (M), rhs free (N), contracting (K) — collapses to
 * one strided dimension in each operand, and each operand's two matrix dims have one of the
 * layouts BLAS reads (unit column stride, or unit row stride = transposed). The result is
 * [batch, M, N] row-major, which is what dot's output order is, unless a transpose of it is
 * folded in (cx_dot_plan_out, dot_out_transpose.c): then C is written at that transpose's
 * strides. Operands that do not fit
 * are transposed first by a kernel (an HLO transpose fusion inserted before buffer assignment),
 * f16/bf16 dots are computed in f32 (as XLA's CPU backend does), kOutput fusions become a dot
 * plus a kLoop epilogue that buffer assignment runs in place over the GEMM result, and
 * convolutions are wrapped in single-op fusions for the emitter (or im2col). */
#include <string.h>
#include "ir/clone.h"
#include "ir/edit.h"
#include "passes/fusion_build.h"
#include "passes/library_lowering.h"

/* ---- GEMM plans ---- */

/* Collapses dims (in order) of a row-major shape into one (size, stride); size-1 dims are
 * skipped. 0 if they are not evenly nested. */
static int collapse(const cx_shape *s, const int64_t *st, const int64_t *dims, int n, int64_t *size, int64_t *stride) {
  int64_t sz = 1, prev = -1;
  for (int i = 0; i < n; i++) {
    int64_t d = dims[i];
    if (s->dims[d] == 1) continue;
    if (prev >= 0 && st[prev] != st[d] * s->dims[d]) return 0;
    sz *= s->dims[d];
    prev = d;
  }
  *size = sz;
  *stride = prev >= 0 ? st[prev] : 1;
  return 1;
}

/* An R x C matrix with element (r, c) at r*rs + c*cs: BLAS layout (trans, ld), or 0. */
static int matrix(int64_t R, int64_t rs, int64_t C, int64_t cs, int *trans, int64_t *ld) {
  int64_t minc = C > 1 ? C : 1, minr = R > 1 ? R : 1;
  if (C <= 1 || cs == 1) { /* stored R x C: (r, c) at r*ld + c */
    int64_t l = R <= 1 ? minc : rs;
    if (l >= minc) { *trans = 0; *ld = l; return 1; }
  }
  if (R <= 1 || rs == 1) { /* stored C x R: (r, c) at c*ld + r */
    int64_t l = C <= 1 ? minr : cs;
    if (l >= minr) { *trans = 1; *ld = l; return 1; }
  }
  return 0;
}

/* The dimension groups of one dot operand. */
typedef struct side {
  int64_t batch[CXLA_MAX_RANK], free_[CXLA_MAX_RANK], contract[CXLA_MAX_RANK];
  int nb, nf, nc;
} side;

static void sides(const cx_instr *in, side *l, side *r) {
  const cx_dot_dims *d = &in->a.dot;
  side *ss[2] = {l, r};
  const cx_ints *bs[2] = {&d->lhs_batch, &d->rhs_batch}, *cs[2] = {&d->lhs_contract, &d->rhs_contract};
  for (int k = 0; k < 2; k++) {
    side *s = ss[k];
    const cx_shape *sh = &in->ops[k]->shape;
    s->nb = bs[k]->n;
    s->nc = cs[k]->n;
    if (s->nb) memcpy(s->batch, bs[k]->v, sizeof(int64_t) * (size_t)s->nb);
    if (s->nc) memcpy(s->contract, cs[k]->v, sizeof(int64_t) * (size_t)s->nc);
    s->nf = 0;
    for (int64_t i = 0; i < sh->rank; i++) {
      int used = 0;
      for (int j = 0; j < s->nb; j++) used |= s->batch[j] == i;
      for (int j = 0; j < s->nc; j++) used |= s->contract[j] == i;
      if (!used) s->free_[s->nf++] = i;
    }
  }
}

/* Reorders the contracting pairs of both sides by one side's dimension order (by = 0: lhs). */
static void order_pairs(side *l, side *r, int by) {
  int n = l->nc;
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0; j--) {
      int64_t a = by ? r->contract[j - 1] : l->contract[j - 1], b = by ? r->contract[j] : l->contract[j];
      if (a <= b) break;
      int64_t t = l->contract[j]; l->contract[j] = l->contract[j - 1]; l->contract[j - 1] = t;
      t = r->contract[j]; r->contract[j] = r->contract[j - 1]; r->contract[j - 1] = t;
    }
}

/* Matrix layout of one operand: lhs is M x K, rhs is K x N. The batch dims are read as two
 * levels: s->batch[0..split) collapsed to stride *bst, s->batch[split..nb) to *bst2 (with
 * split == nb, one level and *bst2 = 0). */
static int side_layout2(const cx_shape *sh, const side *s, int is_lhs, int split, int64_t *bst, int64_t *bst2,
                        int *trans, int64_t *ld) {
  int64_t st[CXLA_MAX_RANK], bsz, bsz2 = 1, fs, fst, ks, kst;
  cx_shape_strides(sh, st);
  *bst2 = 0;
  if (!collapse(sh, st, s->batch, split, &bsz, bst) ||
      (split < s->nb && !collapse(sh, st, s->batch + split, s->nb - split, &bsz2, bst2)) ||
      !collapse(sh, st, s->free_, s->nf, &fs, &fst) || !collapse(sh, st, s->contract, s->nc, &ks, &kst))
    return 0;
  return is_lhs ? matrix(fs, fst, ks, kst, trans, ld) : matrix(ks, kst, fs, fst, trans, ld);
}

static int side_layout(const cx_shape *sh, const side *s, int is_lhs, int64_t *bst, int *trans, int64_t *ld) {
  int64_t bst2;
  return side_layout2(sh, s, is_lhs, s->nb, bst, &bst2, trans, ld);
}

/* half: the GEMM library also takes f16 and bf16 (accumulating in f32, rounding once) */
static int gemm_type(const cx_instr *in, int half) {
  cxla_type t = in->shape.type;
  int ok = t == CXLA_F32 || t == CXLA_F64 || t == CXLA_C64 || t == CXLA_C128 || (half && (t == CXLA_F16 || t == CXLA_BF16));
  return ok && in->ops[0]->shape.type == t && in->ops[1]->shape.type == t;
}

/* C's layout for one split of the batch dims: (stride, stride2) of its two batch levels and
 * (trans, ldc) of its M x N matrix, from the result's strides cst (row-major: NULL). */
static int out_layout(const cx_instr *in, const int64_t *cst, int nb, int nl, int split, int64_t *sc, int64_t *sc2,
                      int *trans, int64_t *ldc) {
  const cx_shape *s = &in->shape;
  int64_t dims[CXLA_MAX_RANK], m, sm, n, sn, bsz;
  for (int i = 0; i < s->rank; i++) dims[i] = i;
  *sc2 = 0;
  if (!collapse(s, cst, dims, split, &bsz, sc) ||
      (split < nb && !collapse(s, cst, dims + split, nb - split, &bsz, sc2)) ||
      !collapse(s, cst, dims + nb, nl, &m, &sm) || !collapse(s, cst, dims + nb + nl, s->rank - nb - nl, &n, &sn))
    return 0;
  return matrix(m, sm, n, sn, trans, ldc);
}

static int plan_out(const cx_instr *in, const int64_t *cst, const cx_gemm_target *t, cx_gemm_plan *p,
                    const char **why) {
  memset(p, 0, sizeof *p);
  if (in->op != CX_OP_DOT || in->nops != 2) { *why = "not a dot"; return 0; }
  if (!gemm_type(in, t->half)) { *why = "GEMM takes f32, f64, c64 or c128 operands and result of one type"; return 0; }
  const cx_shape *ls = &in->ops[0]->shape, *rs = &in->ops[1]->shape;
  side l, r;
  sides(in, &l, &r);
  int64_t M = 1, N = 1, K = 1, B = 1;
  for (int i = 0; i < l.nf; i++) M *= ls->dims[l.free_[i]];
  for (int i = 0; i < r.nf; i++) N *= rs->dims[r.free_[i]];
  for (int i = 0; i < l.nc; i++) K *= ls->dims[l.contract[i]];
  for (int i = 0; i < l.nb; i++) B *= ls->dims[l.batch[i]];
  p->type = in->shape.type;
  p->m = M, p->n = N, p->k = K, p->batch = B;
  p->ldc = N > 1 ? N : 1;
  p->stride_c = M * N;
  if (!M || !N || !K || !B) { /* nothing to read: the runtime only zeroes (or skips) C */
    if (cst) { *why = "an empty dot writes no strided result"; return 0; }
    p->lda = K > 1 ? K : 1;
    p->ldb = N > 1 ? N : 1;
    return 1;
  }
  p->batch_inner = 1;
  /* One batch level if the batch dims collapse so; else (where the target takes it) two, split
   * at the first point where all sides' groups collapse. */
  for (int by = 0; by < 2; by++)
    for (int split = l.nb; split >= (t->batch2 && l.nb > 1 ? 1 : l.nb); split--) {
      order_pairs(&l, &r, by);
      int64_t lbs, lbs2, rbs, rbs2, sc = M * N, sc2 = 0, ldc = p->ldc;
      int ct = 0;
      if (!side_layout2(ls, &l, 1, split, &lbs, &lbs2, &p->trans_a, &p->lda) ||
          !side_layout2(rs, &r, 0, split, &rbs, &rbs2, &p->trans_b, &p->ldb) ||
          (cst && !out_layout(in, cst, l.nb, l.nf, split, &sc, &sc2, &ct, &ldc)))
        continue;
      int64_t inner = 1;
      for (int i = split; i < l.nb; i++) inner *= ls->dims[l.batch[i]];
      if (inner > 1 && !cst) sc2 = M * N, sc = inner * M * N; /* row-major C: one level in two */
      p->stride_a = lbs, p->stride_b = rbs, p->stride_c = sc, p->ldc = ldc;
      if (inner > 1) p->stride_a2 = lbs2, p->stride_b2 = rbs2, p->stride_c2 = sc2;
      if (ct) { /* C stored transposed: Cᵀ = op(B)ᵀ·op(A)ᵀ */
        int64_t x;
        int ta = p->trans_a;
        p->swap_ab = 1;
        p->m = N, p->n = M;
        p->trans_a = !p->trans_b, p->trans_b = !ta;
        x = p->lda, p->lda = p->ldb, p->ldb = x;
        x = p->stride_a, p->stride_a = p->stride_b, p->stride_b = x;
        x = p->stride_a2, p->stride_a2 = p->stride_b2, p->stride_b2 = x;
      }
      /* B read transposed in place is OpenBLAS's slow form on attention's small products
       * (q·kᵀ per head, f32[8,4,128,128] from dh 32, one core: 181 us as NN from a copy of
       * k, 307 us as NT in place, the copy 60-100 us): then B is copied into order, unless
       * the target's library for this product reads it well (t->batch2_bt). */
      if (inner > 1 && p->trans_b && !(t->batch2_bt && t->batch2_bt(p))) {
        p->swap_ab = 0, p->stride_a2 = p->stride_b2 = p->stride_c2 = 0;
        p->m = M, p->n = N;
        continue;
      }
      p->batch_inner = inner;
      if (p->m > INT32_MAX || p->n > INT32_MAX || p->k > INT32_MAX || p->lda > INT32_MAX || p->ldb > INT32_MAX ||
          p->ldc > INT32_MAX) {
        *why = "a GEMM dimension exceeds 32-bit BLAS sizes";
        return 0;
      }
      return 1;
    }
  *why = cst ? "operand or result layout fits no GEMM" : "operand layout fits no GEMM (needs a transpose)";
  return 0;
}

int cx_dot_plan(const cx_instr *in, const cx_gemm_target *t, cx_gemm_plan *p, const char **why) {
  return plan_out(in, NULL, t, p, why);
}

int cx_dot_plan_out(const cx_instr *in, const int64_t *cstride, const cx_gemm_target *t, cx_gemm_plan *p,
                    const char **why) {
  if (!t->strided_c) { *why = "the target writes GEMM results row-major only"; return 0; }
  return plan_out(in, cstride, t, p, why);
}


static int drop_instr(cx_comp *c, const cx_instr *x) {
  uint8_t *drop = cx_calloc((size_t)c->ninstrs + 1, 1);
  if (!drop) return 0;
  for (int i = 0; i < c->ninstrs; i++) drop[i] = c->instrs[i] == x;
  cx_comp_remove_instrs(c, drop);
  cx_free(drop);
  return 1;
}

/* x as a single-op kLoop fusion in its place (a kernel of its own). */
static cxla_status wrap(cx_comp *c, cx_instr *x, cx_instr **out) {
  return cx_fusion_make(c, &x, 1, x, CX_FUSION_LOOP, out);
}

/* ---- rewrites ---- */

static cx_instr *add_convert(cx_comp *c, cx_instr *x, cxla_type t) {
  if (x->shape.type == t) return x;
  cx_shape sh = cx_shape_array(t, x->shape.rank, x->shape.dims);
  cx_instr *cv = cx_instr_add(c, CX_OP_CONVERT, &sh, 1, &x, x->loc), *f = NULL;
  if (!cv || wrap(c, cv, &f) != CXLA_OK) return NULL;
  return f;
}

/* f16/bf16 (and mixed float) dots in f32, or f64 if any side is f64, and complex dots that
 * widen (c64 x c64 -> c128) in c128: converts around a dot of one type. The interpreter
 * computes in double and rounds once; so does this, up to the f32 accumulation that XLA's CPU
 * backend also uses. */
static cxla_status retype_dot(cx_comp *c, cx_instr *d, const cx_gemm_target *t, cx_instr **out) {
  cx_module *m = c->module;
  cxla_type lt = d->ops[0]->shape.type, rt = d->ops[1]->shape.type, ot = d->shape.type;
  *out = d;
  if (gemm_type(d, t->half)) return CXLA_OK;
  cxla_type ct;
  if (cx_type_is_float(lt) && cx_type_is_float(rt) && cx_type_is_float(ot))
    ct = lt == CXLA_F64 || rt == CXLA_F64 || ot == CXLA_F64 ? CXLA_F64 : CXLA_F32;
  else if (cx_type_is_complex(lt) && cx_type_is_complex(rt) && cx_type_is_complex(ot))
    ct = lt == CXLA_C128 || rt == CXLA_C128 || ot == CXLA_C128 ? CXLA_C128 : CXLA_C64;
  else
    return CXLA_OK;
  cx_instr *a = add_convert(c, d->ops[0], ct), *b = a ? add_convert(c, d->ops[1], ct) : NULL;
  if (!a || !b) return cx_oom(m->ctx);
  cx_instr *ops[2] = {a, b};
  cx_instr *nd = cx_instr_clone(c, d, ops);
  const char *nm = nd ? cx_module_unique_name(m, "dot") : NULL;
  if (!nm) return cx_oom(m->ctx);
  nd->name = nm;
  nd->shape.type = ct;
  cx_instr *res = nd;
  if (ot != ct) {
    cx_shape sh = d->shape;
    cx_instr *cv = cx_instr_add(c, CX_OP_CONVERT, &sh, 1, &nd, d->loc), *f = NULL;
    if (!cv) return cx_oom(m->ctx);
    CX_TRY(wrap(c, cv, &f));
    res = f;
  }
  cx_comp_replace_uses(c, d, res);
  if (!drop_instr(c, d)) return cx_oom(m->ctx);
  *out = nd;
  return CXLA_OK;
}

/* Transposes operand k of dot d into [batch, free, contract] (lhs) or [batch, contract, free]
 * (rhs) order, with the contracting pairs in the order sd[] holds them, and rewrites d's dims
 * (the other side's contracting list too, so the pairs stay matched). */
static cxla_status transpose_operand(cx_comp *c, cx_instr *d, int k, const side *sd) {
  cx_module *m = c->module;
  const side *s = &sd[k], *o = &sd[1 - k];
  cx_instr *x = d->ops[k];
  int64_t perm[CXLA_MAX_RANK];
  int n = 0;
  for (int i = 0; i < s->nb; i++) perm[n++] = s->batch[i];
  if (k == 0) {
    for (int i = 0; i < s->nf; i++) perm[n++] = s->free_[i];
    for (int i = 0; i < s->nc; i++) perm[n++] = s->contract[i];
  } else {
    for (int i = 0; i < s->nc; i++) perm[n++] = s->contract[i];
    for (int i = 0; i < s->nf; i++) perm[n++] = s->free_[i];
  }
  int64_t dims[CXLA_MAX_RANK];
  for (int i = 0; i < n; i++) dims[i] = x->shape.dims[perm[i]];
  cx_shape sh = cx_shape_array(x->shape.type, n, dims);
  cx_instr *t = cx_instr_add(c, CX_OP_TRANSPOSE, &sh, 1, &x, d->loc), *f = NULL;
  if (!t || !cx_ints_set(m, &t->a.dims, n, perm)) return cx_oom(m->ctx);
  CX_TRY(wrap(c, t, &f));
  d->ops[k] = f;
  int64_t bd[CXLA_MAX_RANK], cd[CXLA_MAX_RANK];
  for (int i = 0; i < s->nb; i++) bd[i] = i;
  for (int i = 0; i < s->nc; i++) cd[i] = k == 0 ? s->nb + s->nf + i : s->nb + i;
  cx_dot_dims *dd = &d->a.dot;
  if (!cx_ints_set(m, k == 0 ? &dd->lhs_batch : &dd->rhs_batch, s->nb, bd) ||
      !cx_ints_set(m, k == 0 ? &dd->lhs_contract : &dd->rhs_contract, s->nc, cd) ||
      !cx_ints_set(m, k == 0 ? &dd->rhs_contract : &dd->lhs_contract, o->nc, o->contract))
    return cx_oom(m->ctx);
  return CXLA_OK;
}

static cxla_status lower_dot(cx_comp *c, cx_instr *d, const cx_gemm_target *t) {
  CX_TRY(retype_dot(c, d, t, &d));
  cx_gemm_plan p;
  const char *why;
  if (cx_type_is_int(d->shape.type)) return cx_int_dot_as_reduce(c, d);
  if (!gemm_type(d, t->half) || cx_dot_plan(d, t, &p, &why)) return CXLA_OK;
  side sd[2];
  sides(d, &sd[0], &sd[1]);
  int64_t bst, ld;
  int tr;
  for (int by = 0; by < 2; by++) { /* keep the side that fits; transpose the other to match */
    order_pairs(&sd[0], &sd[1], by);
    if (side_layout(&d->ops[0]->shape, &sd[0], 1, &bst, &tr, &ld)) return transpose_operand(c, d, 1, sd);
    if (side_layout(&d->ops[1]->shape, &sd[1], 0, &bst, &tr, &ld)) return transpose_operand(c, d, 0, sd);
  }
  /* A read in place as a two-level batch (cx_dot_plan's second form): only B is copied, into
   * the order the GEMM reads straight. */
  for (int split = sd[0].nb - 1; t->batch2 && split >= 1; split--) {
    int64_t bst2;
    order_pairs(&sd[0], &sd[1], 0);
    if (side_layout2(&d->ops[0]->shape, &sd[0], 1, split, &bst, &bst2, &tr, &ld)) return transpose_operand(c, d, 1, sd);
  }
  order_pairs(&sd[0], &sd[1], 0);
  CX_TRY(transpose_operand(c, d, 0, sd));
  sides(d, &sd[0], &sd[1]); /* the lhs is canonical now; the rhs keeps its matched pair order */
  return transpose_operand(c, d, 1, sd);
}

/* kOutput fusion -> raw dot + kLoop fusion of the epilogue reading the dot as a new last
 * operand (at the same index, so buffer assignment computes it in place). */
static cxla_status split_output_fusion(cx_comp *c, cx_instr *f) {
  cx_comp *fc = f->called[0];
  cx_instr *d = NULL, *nd;
  for (int i = 0; i < fc->ninstrs; i++)
    if (fc->instrs[i]->op == CX_OP_DOT) {
      if (d) return CXLA_OK; /* two dots: leave it to the interpreter */
      d = fc->instrs[i];
    }
  if (!d || d->ops[0]->op != CX_OP_PARAMETER || d->ops[1]->op != CX_OP_PARAMETER) return CXLA_OK;
  return cx_fusion_hoist(c, f, d, CX_FUSION_LOOP, &nd);
}

static cxla_status lower_comp(cx_comp *c, const cx_gemm_target *t, int *folded) {
  int n;
  cx_instr **snap = cx_comp_snapshot(c, &n);
  if (!snap) return cx_oom(c->module->ctx);
  cxla_status s = CXLA_OK;
  for (int i = 0; i < n && s == CXLA_OK; i++) {
    cx_instr *x = snap[i];
    if (x->op == CX_OP_FUSION && x->ncalled == 1 && x->a.fusion_kind == CX_FUSION_OUTPUT)
      s = split_output_fusion(c, x);
  }
  /* dots, including the ones split out above */
  cx_free(snap);
  snap = cx_comp_snapshot(c, &n);
  if (!snap) return cx_oom(c->module->ctx);
  for (int i = 0; i < n && s == CXLA_OK; i++) {
    cx_instr *x = snap[i], *f;
    if (x->op == CX_OP_RAGGED_DOT) s = cx_lower_ragged_dot(c, x); /* a batch one becomes a dot */
    if (s == CXLA_OK && x->op == CX_OP_DOT && x->nops == 2) s = lower_dot(c, x, t);
    else if (x->op == CX_OP_CONVOLUTION) s = wrap(c, x, &f);
  }
  cx_free(snap);
  if (s == CXLA_OK && cx_comp_sort(c) <= 0) s = cx_oom(c->module->ctx);
  if (s == CXLA_OK) s = cx_fold_dot_out_transposes(c, t, folded); /* the dots' final forms are known now */
  return s;
}

static cxla_status lower_rec(cx_comp *c, int depth, const cx_gemm_target *t, int *folded) {
  if (c->aux) return CXLA_OK;
  if (depth > 256) return cx_error(c->module->ctx, CXLA_ERR_UNSUPPORTED, "control flow nested deeper than 256 levels");
  c->aux = (void *)1;
  for (int i = 0; i < c->ninstrs; i++) {
    cx_instr *x = c->instrs[i];
    if (x->op == CX_OP_WHILE || x->op == CX_OP_CONDITIONAL || x->op == CX_OP_CALL)
      for (int k = 0; k < x->ncalled; k++) CX_TRY(lower_rec(x->called[k], depth + 1, t, folded));
  }
  return lower_comp(c, t, folded);
}

cxla_status cx_lower_library_ops(cx_module *m, const cx_gemm_target *t) {
  if (!m->entry) return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "module %s has no ENTRY computation", m->name);
  for (int i = 0; i < m->ncomps; i++) m->comps[i]->aux = NULL;
  int folded = 0;
  cxla_status s = lower_rec(m->entry, 0, t, &folded);
  for (int i = 0; i < m->ncomps; i++) m->comps[i]->aux = NULL;
  if (s == CXLA_OK && folded) cx_module_remove_unreachable(m); /* the folded transposes' bodies */
  return s;
}

