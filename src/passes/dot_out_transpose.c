/* dot_out_transpose.c — a dot whose result a kernel only transposes writes the transposed
 * layout itself. Attention computes its products per head, [b, h, t, dh], and hands them on as
 * [b, t, h, dh] (then [b, t, d]): left alone, each is a GEMM into a temporary and a transpose
 * kernel that reads and writes the whole result again (four of them in the transformer step).
 * A GEMM writes C at any row stride and, batched, at any batch strides (two levels on the cpu:
 * b and h above), and writing C transposed is computing Cᵀ = Bᵀ·Aᵀ; so where the transpose's
 * strides fit such a plan (cx_dot_plan_out), dot and transpose become one kOutput fusion, which
 * the backend runs as one GEMM into the fusion's output. The interpreter, and any backend that
 * does not recognise the fusion, computes it as written: the dot, then its transpose.
 *
 * Runs on what fusion left, before buffer assignment (cx_lower_library_ops): the transpose is
 * then a kLoop fusion of the dot's result alone, perhaps with a reshape after it (a reshape of
 * a row-major array moves nothing). */
#include <string.h>
#include "ir/edit.h"
#include "passes/fusion_build.h"
#include "passes/library_lowering.h"
#include "passes/use_counts.h"

/* The transpose of root r of a fusion body (r itself, or the operand of a reshape r) when it
 * reads `src`; else NULL. */
static const cx_instr *transpose_of(const cx_instr *r, const cx_instr *src) {
  const cx_instr *t = r && r->op == CX_OP_RESHAPE && r->nops == 1 ? r->ops[0] : r;
  if (!t || t->op != CX_OP_TRANSPOSE || t->nops != 1 || t->ops[0] != src || t->a.dims.n != t->shape.rank) return NULL;
  return t;
}

/* Where the row-major output of transpose t holds each dim of its operand. */
static void out_strides(const cx_instr *t, int64_t *cst) {
  int64_t st[CXLA_MAX_RANK];
  cx_shape_strides(&t->shape, st);
  for (int i = 0; i < t->shape.rank; i++) cst[t->a.dims.v[i]] = st[i];
}

const cx_instr *cx_dot_out_fusion(const cx_instr *f, int64_t *cstride) {
  if (f->op != CX_OP_FUSION || f->a.fusion_kind != CX_FUSION_OUTPUT || f->ncalled != 1 ||
      !cx_type_is_array(f->shape.type))
    return NULL;
  const cx_comp *fc = f->called[0];
  const cx_instr *r = fc->root, *t = r && r->nops == 1 ? (r->op == CX_OP_RESHAPE ? r->ops[0] : r) : NULL;
  const cx_instr *d = t && t->nops == 1 ? t->ops[0] : NULL;
  if (!d || d->op != CX_OP_DOT || d->nops != 2 || transpose_of(r, d) != t) return NULL;
  for (int i = 0; i < fc->ninstrs; i++) { /* nothing but the chain and the dot's parameters */
    const cx_instr *x = fc->instrs[i];
    if (x != r && x != t && x != d && x->op != CX_OP_PARAMETER) return NULL;
  }
  for (int k = 0; k < 2; k++)
    if (d->ops[k]->op != CX_OP_PARAMETER || d->ops[k]->a.index < 0 || d->ops[k]->a.index >= f->nops) return NULL;
  out_strides(t, cstride);
  return d;
}

static cxla_status fold(cx_comp *c, cx_instr *f, cx_instr *d, const cx_instr *t, const cx_instr *r) {
  cx_module *m = c->module;
  cx_instr *parts[3] = {d, NULL, NULL}, *nf = NULL;
  const char *name = f->name;
  parts[1] = cx_instr_add(c, CX_OP_TRANSPOSE, &t->shape, 1, &d, f->loc);
  if (!parts[1] || !cx_ints_set(m, &parts[1]->a.dims, t->a.dims.n, t->a.dims.v)) return cx_oom(m->ctx);
  int n = 2;
  if (r != t && !(parts[n++] = cx_instr_add(c, CX_OP_RESHAPE, &f->shape, 1, &parts[1], f->loc)))
    return cx_oom(m->ctx);
  cx_comp_replace_uses(c, f, parts[n - 1]);
  uint8_t *drop = cx_calloc((size_t)c->ninstrs + 1, 1);
  if (!drop) return cx_oom(m->ctx);
  for (int i = 0; i < c->ninstrs; i++) drop[i] = c->instrs[i] == f;
  cx_comp_remove_instrs(c, drop);
  cx_free(drop);
  CX_TRY(cx_fusion_make(c, parts, n, parts[n - 1], CX_FUSION_OUTPUT, &nf));
  nf->name = name; /* what traces and dumps knew the transpose kernel as */
  return CXLA_OK;
}

cxla_status cx_fold_dot_out_transposes(cx_comp *c, const cx_gemm_target *tg, int *folded) {
  if (!tg->strided_c) return CXLA_OK;
  cx_pass_count_uses(c);
  int n;
  cx_instr **snap = cx_comp_snapshot(c, &n);
  if (!snap) return cx_oom(c->module->ctx);
  cxla_status s = CXLA_OK;
  for (int i = 0; i < n && s == CXLA_OK; i++) {
    cx_instr *f = snap[i];
    if (f->op != CX_OP_FUSION || f->a.fusion_kind != CX_FUSION_LOOP || f->ncalled != 1 || f->nops != 1 ||
        !cx_type_is_array(f->shape.type))
      continue;
    cx_instr *d = f->ops[0];
    const cx_comp *fc = f->called[0];
    if (d->op != CX_OP_DOT || d->nops != 2 || d->parent != c || (uintptr_t)d->aux != 1 || fc->ninstrs > 3) continue;
    const cx_instr *r = fc->root, *x = r && r->op == CX_OP_RESHAPE && r->nops == 1 ? r->ops[0] : r;
    const cx_instr *t = x && x->nops == 1 && x->ops[0]->op == CX_OP_PARAMETER ? transpose_of(r, x->ops[0]) : NULL;
    if (!t || fc->ninstrs != (r == t ? 2 : 3)) continue;
    int64_t cst[CXLA_MAX_RANK];
    cx_gemm_plan p;
    const char *why;
    out_strides(t, cst);
    if (!cx_dot_plan_out(d, cst, tg, &p, &why)) continue;
    s = fold(c, f, d, t, r);
    (*folded)++;
    cx_pass_count_uses(c); /* the fusion builder uses aux too */
  }
  cx_free(snap);
  for (int i = 0; i < c->ninstrs; i++) c->instrs[i]->aux = NULL;
  return s;
}
