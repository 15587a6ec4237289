/* relu_mask.c — a comparison of x with a constant k reads max(x, c) instead of x, where that
 * maximum is computed anyway and the answer cannot change: for x > k with c <= k, and x >= k
 * with c < k (mirrored: k < x, k <= x). Above k, max(x, c) is x; at or below k, it is x or c,
 * both at or below k (below, for >=); a NaN x gives a NaN maximum, false either way.
 *
 * This is a relu's gradient: JAX writes relu as max(x, 0) and its mask as x > 0 on the same x,
 * the dot (or convolution) plus bias before it. With the mask reading the relu's output, that
 * x has one reader left, the relu, so the dot's epilogue runs on to the relu and x is never
 * stored: in the flax MLP step each layer's bias kernel and relu kernel (6 + 14 us, 128x512)
 * became one epilogue of 7 us, and the buffer of x is gone.
 *
 * Floats under the default comparison only (total order sorts -0 below +0 and ranks NaNs);
 * k and c are uniform constants (a constant of equal elements, or a broadcast of one). */
#include <math.h>
#include "passes/pass.h"
#include "passes/simplify.h"

/* The uniform value of x when it is a non-NaN float constant of the comparison's type. */
static int uniform_float(const cx_instr *x, double *v) {
  cx_scalar s;
  if (!cx_type_is_float(x->shape.type) || !cx_simp_uniform(x, &s) || isnan(s.f)) return 0;
  *v = s.f;
  return 1;
}

/* The x of m = max(x, c) (either order, c a constant, *c set), or NULL if m is no such maximum. */
static cx_instr *clamped(const cx_instr *m, double *c) {
  if (m->op != CX_OP_MAXIMUM || m->nops != 2 || !cx_type_is_float(m->shape.type)) return NULL;
  for (int i = 0; i < 2; i++)
    if (uniform_float(m->ops[1 - i], c) && cx_shape_same_dims(&m->ops[i]->shape, &m->shape)) return m->ops[i];
  return NULL;
}

/* Compare q as `x > k` or `x >= k`: the index of x in q's operands (-1 if neither), *k and
 * *strict set. */
static int lower_bound_test(const cx_instr *q, double *k, int *strict) {
  if (q->op != CX_OP_COMPARE || q->nops != 2 || !cx_type_is_float(q->ops[0]->shape.type) ||
      (q->a.cmp_type != CX_CMP_DEFAULT && q->a.cmp_type != CX_CMP_FLOAT))
    return -1;
  cxla_compare_dir d = q->a.dir;
  if ((d == CXLA_GT || d == CXLA_GE) && uniform_float(q->ops[1], k)) return *strict = d == CXLA_GT, 0;
  if ((d == CXLA_LT || d == CXLA_LE) && uniform_float(q->ops[0], k)) return *strict = d == CXLA_LT, 1;
  return -1;
}

static cxla_status mask_comp(cx_comp *c, int *changed) {
  for (int i = 0; i < c->ninstrs; i++) c->instrs[i]->aux = NULL;
  /* x's aux: one maximum of x with a constant (the first; its c is read again below) */
  for (int i = 0; i < c->ninstrs; i++) {
    double cv;
    cx_instr *m = c->instrs[i], *x = clamped(m, &cv);
    if (x && !x->aux) x->aux = m;
  }
  int any = 0;
  for (int i = 0; i < c->ninstrs; i++) {
    cx_instr *q = c->instrs[i];
    double k, cv;
    int strict, at = lower_bound_test(q, &k, &strict);
    cx_instr *m = at < 0 ? NULL : q->ops[at]->aux;
    if (!m || !clamped(m, &cv) || !(strict ? cv <= k : cv < k)) continue;
    q->ops[at] = m;
    any = 1, (*changed)++;
  }
  for (int i = 0; i < c->ninstrs; i++) c->instrs[i]->aux = NULL;
  /* a maximum placed after the comparison it now feeds */
  return any ? cx_comp_resort(c, "relu-mask") : CXLA_OK;
}

cxla_status cx_pass_relu_mask(cx_module *m, int *changed) {
  *changed = 0;
  for (int i = 0; i < m->ncomps; i++) CX_TRY(mask_comp(m->comps[i], changed));
  return CXLA_OK;
}
