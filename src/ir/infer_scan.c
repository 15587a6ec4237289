/* infer_scan.c — scan's shape rule, as XLA's HloScanInstruction and its ScanExpander define
 * the op: scan(inputs..., inits...), dimensions={d}, num_carries=C, to_apply=f. The last C
 * operands are the carries' initial values, the others the inputs, all of the same size N along
 * d. Step k (k = N-1 down to 0 with is_reverse) calls f(the inputs' slices at k along d, with d
 * removed..., the carries...), which returns (outputs..., new carries...) — one value unframed
 * when that is a single one. The result stacks each output's N values along d, followed by the
 * final carries: (outputs with d inserted..., carries...), again one value unframed when single. */
#include "ir/infer.h"

/* Shape s with a dimension of size n inserted at position d. */
static int insert_dim(const cx_shape *s, int d, int64_t n, cx_shape *out) {
  if (!cx_varray(s) || d > s->rank || s->rank + 1 > CXLA_MAX_RANK) return 0;
  int64_t dims[CXLA_MAX_RANK];
  for (int i = 0, j = 0; i <= s->rank; i++) dims[i] = i == d ? n : s->dims[j++];
  cx_vset_array(out, s->type, s->rank + 1, dims);
  return 1;
}

cxla_status cx_infer_scan(cx_infer *ic, cx_shape *out) {
  cx_instr *in = ic->in;
  int64_t nc = in->a.num_carries;
  if (nc < 0 || nc > in->nops) return cx_vfail(ic, "num_carries=%lld out of [0, %d]", (long long)nc, in->nops);
  int ni = in->nops - (int)nc;
  if (ni < 1) return cx_vfail(ic, "needs at least one input besides its %lld carries", (long long)nc);
  if (in->a.dims.n != 1) return cx_vfail(ic, "dimensions= must name one scan dimension, got %d", in->a.dims.n);
  int64_t d = in->a.dims.v[0], n = -1;
  for (int i = 0; i < ni; i++) {
    CX_TRY(cx_vneed_array(ic, i, "input"));
    const cx_shape *x = cx_vop(ic, i);
    if (d < 0 || d >= x->rank)
      return cx_vfail(ic, "scan dimension %lld is out of range for input %d %s", (long long)d, i, cx_vshape(ic, x));
    if (n >= 0 && x->dims[d] != n)
      return cx_vfail(ic, "input %d %s has %lld elements along dimension %lld, input 0 %lld", i, cx_vshape(ic, x),
                      (long long)x->dims[d], (long long)d, (long long)n);
    n = x->dims[d];
  }
  CX_TRY(cx_vcallee(ic, 0, "to_apply", in->nops));
  cx_comp *f = in->called[0];
  for (int i = 0; i < in->nops; i++) {
    const cx_shape *p = &f->params[i]->shape, *x = cx_vop(ic, i);
    cx_shape want = *x;
    if (i < ni) { /* the slice: d removed */
      for (int k = (int)d; k + 1 < x->rank; k++) want.dims[k] = x->dims[k + 1];
      want.rank = x->rank - 1;
      want.has_layout = 0;
    }
    if (!cx_shape_equal(p, &want))
      return cx_vfail(ic, "%s parameter %d is %s but the %s is %s", f->name, i, cx_vshape(ic, p),
                      i < ni ? "input's slice" : "carry", cx_vshape(ic, &want));
  }
  const cx_shape *r = &f->root->shape;
  int nres = r->type == CXLA_TUPLE ? r->ntuple : 1;
  if (nres < nc) return cx_vfail(ic, "%s returns %d values but there are %lld carries", f->name, nres, (long long)nc);
  if (r->type == CXLA_TUPLE && nres == 1)
    return cx_vfail(ic, "%s returns a 1-tuple: a single value is returned unframed", f->name);
  int no = nres - (int)nc;
  cx_shape *el = nres == 1 ? out : cx_vtuple(ic, out, nres);
  if (!el) return CXLA_ERR_OUT_OF_MEMORY;
  for (int k = 0; k < nres; k++) {
    const cx_shape *v = r->type == CXLA_TUPLE ? &r->tuple[k] : r;
    if (k >= no) { /* a new carry: the carry's shape */
      const cx_shape *init = cx_vop(ic, ni + k - no);
      if (!cx_shape_equal(v, init))
        return cx_vfail(ic, "%s returns carry %d as %s, its init is %s", f->name, k - no, cx_vshape(ic, v),
                        cx_vshape(ic, init));
      el[k] = *init;
      cx_vplain(&el[k]);
    } else if (!insert_dim(v, (int)d, n, &el[k])) {
      return cx_vfail(ic, "%s output %d %s cannot be stacked along dimension %lld", f->name, k, cx_vshape(ic, v),
                      (long long)d);
    }
  }
  return CXLA_OK;
}
