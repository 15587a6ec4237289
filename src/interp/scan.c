/* scan.c — scan(inputs..., inits...), dimensions={d}, num_carries=C, to_apply=f
 * (ir/infer_scan.c gives the shapes): for k = 0, 1, ..., N-1 (N-1 down to 0 with is_reverse),
 * f(the inputs' slices at k along d..., the carries...) gives (outputs..., new carries...); the
 * outputs are written at k along d of the stacked results, the carries go to the next step. In
 * that order whatever is_associative says: the reference computes the sequential answer. */
#include <string.h>
#include "interp/internal.h"

/* Rows of an array around dimension d: outer (before d), n (along d), inner (after d, in bytes). */
static void split(const cx_shape *s, int d, int64_t *outer, int64_t *n, size_t *inner) {
  *outer = 1, *inner = cxla_type_size(s->type);
  for (int i = 0; i < d; i++) *outer *= s->dims[i];
  *n = s->dims[d];
  for (int i = d + 1; i < s->rank; i++) *inner *= (size_t)s->dims[i];
}

/* Copies between x's slice k along d and the array s (x's shape without d): to_slice copies
 * x -> s, else s -> x. */
static void move_slice(cxla_literal *x, cxla_literal *s, int d, int64_t k, int to_slice) {
  int64_t outer, n;
  size_t inner;
  split(&x->shape, d, &outer, &n, &inner);
  for (int64_t o = 0; o < outer; o++) {
    char *big = (char *)x->data + ((size_t)(o * n + k)) * inner, *small = (char *)s->data + (size_t)o * inner;
    if (inner) memcpy(to_slice ? small : big, to_slice ? big : small, inner);
  }
}

cxla_status cx_interp_scan(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out) {
  *out = NULL;
  if (in->ncalled != 1 || !in->called[0]) return cx_interp_bad(st, in, "needs its to_apply computation");
  cx_comp *f = in->called[0];
  int nc = (int)in->a.num_carries, ni = in->nops - nc, d = (int)in->a.dims.v[0];
  const cx_shape *r = &in->shape;
  int nres = r->type == CXLA_TUPLE ? r->ntuple : 1, no = nres - nc;
  int64_t n = ops[0]->shape.dims[d];
  cxla_literal **args = cx_calloc((size_t)in->nops + 1, sizeof *args); /* slices, then carries */
  cxla_literal **res = cx_calloc((size_t)nres + 1, sizeof *res);       /* stacked outputs, then carries */
  cxla_status s = args && res ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
  for (int i = 0; s == CXLA_OK && i < ni; i++) {
    if (!(args[i] = cx_literal_new_uninit(&f->params[i]->shape))) s = CXLA_ERR_OUT_OF_MEMORY;
  }
  for (int k = 0; s == CXLA_OK && k < no; k++)
    if (!(res[k] = cx_literal_new(r->type == CXLA_TUPLE ? &r->tuple[k] : r))) s = CXLA_ERR_OUT_OF_MEMORY;
  for (int j = 0; s == CXLA_OK && j < nc; j++)
    if (!(args[ni + j] = cxla_literal_clone(st->ctx, ops[ni + j]))) s = CXLA_ERR_OUT_OF_MEMORY;
  for (int64_t step = 0; s == CXLA_OK && step < n; step++) {
    int64_t k = in->a.is_reverse ? n - 1 - step : step;
    for (int i = 0; i < ni; i++) move_slice(ops[i], args[i], d, k, 1);
    cxla_literal *y = NULL;
    if ((s = cx_interp_call(st, f, in->nops, args, &y)) != CXLA_OK) break;
    for (int v = 0; v < nres; v++) {
      cxla_literal *e = nres == 1 ? y : y->elems[v];
      if (v < no) {
        move_slice(res[v], e, d, k, 0);
      } else { /* the carry moves on: take it out of y */
        cxla_literal_destroy(args[ni + v - no]);
        args[ni + v - no] = e;
        if (nres == 1) y = NULL;
        else y->elems[v] = NULL;
      }
    }
    cxla_literal_destroy(y);
  }
  if (s == CXLA_OK) { /* the final carries join the results */
    for (int j = 0; j < nc; j++) res[no + j] = args[ni + j], args[ni + j] = NULL;
    if (nres == 1) {
      *out = res[0];
      res[0] = NULL;
    } else if (!(*out = cxla_literal_tuple(st->ctx, nres, res))) {
      s = CXLA_ERR_OUT_OF_MEMORY;
    }
    if (nres > 1) memset(res, 0, sizeof *res * (size_t)nres); /* the tuple owns them, or freed them */
  }
  for (int i = 0; args && i < in->nops; i++) cxla_literal_destroy(args[i]);
  for (int k = 0; res && k < nres; k++) cxla_literal_destroy(res[k]);
  cx_free(args);
  cx_free(res);
  return s;
}
