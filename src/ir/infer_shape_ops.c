/* infer_shape_ops.c — shape rules of re-indexing ops: broadcast, reshape, bitcast, transpose,
 * slice, dynamic-slice, dynamic-update-slice, concatenate, pad, reverse. */
#include "ir/infer.h"

cxla_status cx_infer_broadcast(cx_infer *ic, cx_shape *out) {
  cx_instr *in = ic->in;
  CX_TRY(cx_vneed_array(ic, 0, "operand"));
  CX_TRY(cx_vdeclared_array(ic));
  const cx_shape *x = cx_vop(ic, 0), *r = &in->shape;
  const cx_ints *d = &in->a.dims;
  if (r->type != x->type)
    return cx_vfail(ic, "declared element type %s differs from the operand's %s", cx_vtype(r->type), cx_vtype(x->type));
  if (d->n != x->rank)
    return cx_vfail(ic, "dimensions=%s must have one entry per operand dimension (%d for %s)", cx_vints(ic, d),
                    x->rank, cx_vshape(ic, x));
  /* XLA allows any order (an out-of-order broadcast also transposes its operand), but each
   * result dimension once */
  uint32_t used = 0;
  for (int i = 0; i < d->n; i++) {
    int64_t k = d->v[i];
    if (k < 0 || k >= r->rank)
      return cx_vfail(ic, "dimensions=%s: %lld is out of range for the result %s", cx_vints(ic, d), (long long)k,
                      cx_vshape(ic, r));
    if (used >> k & 1)
      return cx_vfail(ic, "dimensions=%s: result dimension %lld is used more than once", cx_vints(ic, d), (long long)k);
    used |= 1u << k;
    if (x->dims[i] != r->dims[k] && x->dims[i] != 1)
      return cx_vfail(ic, "operand dimension %d has size %lld but result dimension %lld has size %lld (expected "
                      "equal sizes or an operand size of 1)", i, (long long)x->dims[i], (long long)k,
                      (long long)r->dims[k]);
  }
  *out = *r;
  cx_vplain(out);
  return CXLA_OK;
}

cxla_status cx_infer_reshape(cx_infer *ic, cx_shape *out) {
  cx_instr *in = ic->in;
  CX_TRY(cx_vneed_array(ic, 0, "operand"));
  CX_TRY(cx_vdeclared_array(ic));
  const cx_shape *x = cx_vop(ic, 0), *r = &in->shape;
  if (in->op == CX_OP_RESHAPE) {
    if (r->type != x->type)
      return cx_vfail(ic, "declared element type %s differs from the operand's %s", cx_vtype(r->type),
                      cx_vtype(x->type));
    if (cx_shape_elems(r) != cx_shape_elems(x))
      return cx_vfail(ic, "%s has %lld elements but the operand %s has %lld", cx_vshape(ic, r),
                      (long long)cx_shape_elems(r), cx_vshape(ic, x), (long long)cx_shape_elems(x));
  } else if (cx_shape_bytes(r) != cx_shape_bytes(x)) {
    return cx_vfail(ic, "%s has %lld bytes but the operand %s has %lld (expected the same size)", cx_vshape(ic, r),
                    (long long)cx_shape_bytes(r), cx_vshape(ic, x), (long long)cx_shape_bytes(x));
  }
  *out = *r;
  cx_vplain(out);
  return CXLA_OK;
}

cxla_status cx_infer_transpose(cx_infer *ic, cx_shape *out) {
  CX_TRY(cx_vneed_array(ic, 0, "operand"));
  const cx_shape *x = cx_vop(ic, 0);
  const cx_ints *d = &ic->in->a.dims;
  if (d->n != x->rank)
    return cx_vfail(ic, "dimensions=%s must be a permutation of 0..%d for %s", cx_vints(ic, d), x->rank - 1,
                    cx_vshape(ic, x));
  CX_TRY(cx_vdims(ic, d, x->rank, "dimensions", NULL));
  cx_vset_array(out, x->type, x->rank, NULL);
  for (int i = 0; i < x->rank; i++) out->dims[i] = x->dims[d->v[i]];
  return CXLA_OK;
}

cxla_status cx_infer_slice(cx_infer *ic, cx_shape *out) {
  cx_instr *in = ic->in;
  CX_TRY(cx_vneed_array(ic, 0, "operand"));
  const cx_shape *x = cx_vop(ic, 0);
  const cx_ints *st = &in->a.slice_start, *li = &in->a.slice_limit, *sd = &in->a.slice_stride;
  if (st->n != x->rank || li->n != x->rank || (sd->n != x->rank && sd->n != 0))
    return cx_vfail(ic, "slice needs one [start:limit:stride] per dimension of %s, got %d starts, %d limits, %d strides",
                    cx_vshape(ic, x), st->n, li->n, sd->n);
  cx_vset_array(out, x->type, x->rank, NULL);
  for (int i = 0; i < x->rank; i++) {
    int64_t s = st->v[i], l = li->v[i], k = sd->n ? sd->v[i] : 1;
    if (s < 0 || s > l || l > x->dims[i])
      return cx_vfail(ic, "dimension %d: slice [%lld:%lld] must satisfy 0 <= start <= limit <= %lld", i, (long long)s,
                      (long long)l, (long long)x->dims[i]);
    if (k < 1) return cx_vfail(ic, "dimension %d: stride %lld must be >= 1", i, (long long)k);
    out->dims[i] = l == s ? 0 : (l - s - 1) / k + 1;
  }
  return CXLA_OK;
}

/* Start indices of dynamic-(update-)slice from operand `first` on: one scalar integer per
 * dimension, all of one type; or the older form, a single rank-1 integer vector. */
static cxla_status start_indices(cx_infer *ic, int first, int rank) {
  cx_instr *in = ic->in;
  int n = in->nops - first;
  const cx_shape *s0 = n > 0 ? cx_vop(ic, first) : NULL;
  if (n == 1 && cx_varray(s0) && s0->rank == 1 && rank != 0) {
    if (!cx_type_is_int(s0->type) || s0->dims[0] != rank)
      return cx_vfail(ic, "start index vector %s must be an integer vector of %d elements", cx_vshape(ic, s0), rank);
    return CXLA_OK;
  }
  if (n != rank)
    return cx_vfail(ic, "expected %d start indices (one per operand dimension), got %d", rank, n);
  for (int i = first; i < in->nops; i++) {
    const cx_shape *s = cx_vop(ic, i);
    if (!cx_varray(s) || s->rank != 0 || !cx_type_is_int(s->type))
      return cx_vfail(ic, "start index (operand %d) must be an integer scalar, got %s", i, cx_vshape(ic, s));
    if (s->type != s0->type)
      return cx_vfail(ic, "start indices must all have one type, got %s and %s", cx_vshape(ic, s0), cx_vshape(ic, s));
  }
  return CXLA_OK;
}

cxla_status cx_infer_dynamic_slice(cx_infer *ic, cx_shape *out) {
  if (ic->in->nops < 1) return cx_vfail(ic, "expected an operand followed by start indices, got %d operands", ic->in->nops);
  CX_TRY(cx_vneed_array(ic, 0, "operand"));
  const cx_shape *x = cx_vop(ic, 0);
  const cx_ints *sz = &ic->in->a.dims;
  CX_TRY(start_indices(ic, 1, x->rank));
  if (sz->n != x->rank)
    return cx_vfail(ic, "dynamic_slice_sizes=%s must have one entry per dimension of %s", cx_vints(ic, sz),
                    cx_vshape(ic, x));
  for (int i = 0; i < x->rank; i++)
    if (sz->v[i] < 0 || sz->v[i] > x->dims[i])
      return cx_vfail(ic, "dynamic_slice_sizes=%s: size %lld of dimension %d must be in [0, %lld]", cx_vints(ic, sz),
                      (long long)sz->v[i], i, (long long)x->dims[i]);
  cx_vset_array(out, x->type, x->rank, sz->v);
  return CXLA_OK;
}

cxla_status cx_infer_dynamic_update_slice(cx_infer *ic, cx_shape *out) {
  if (ic->in->nops < 2)
    return cx_vfail(ic, "expected an operand, an update and start indices, got %d operands", ic->in->nops);
  CX_TRY(cx_vneed_array(ic, 0, "operand"));
  CX_TRY(cx_vneed_array(ic, 1, "update"));
  const cx_shape *x = cx_vop(ic, 0), *u = cx_vop(ic, 1);
  if (u->rank != x->rank || u->type != x->type)
    return cx_vfail(ic, "update %s must have the rank and element type of the operand %s", cx_vshape(ic, u),
                    cx_vshape(ic, x));
  for (int i = 0; i < x->rank; i++)
    if (u->dims[i] > x->dims[i])
      return cx_vfail(ic, "update %s does not fit in the operand %s (dimension %d)", cx_vshape(ic, u), cx_vshape(ic, x), i);
  CX_TRY(start_indices(ic, 2, x->rank));
  *out = *x;
  cx_vplain(out);
  return CXLA_OK;
}

cxla_status cx_infer_concatenate(cx_infer *ic, cx_shape *out) {
  if (ic->in->nops < 1) return cx_vfail(ic, "expected at least 1 operand, got 0");
  cx_instr *in = ic->in;
  CX_TRY(cx_vneed_array(ic, 0, "operand"));
  const cx_shape *x = cx_vop(ic, 0);
  const cx_ints *d = &in->a.dims;
  if (d->n != 1 || d->v[0] < 0 || d->v[0] >= x->rank)
    return cx_vfail(ic, "dimensions=%s must name one dimension of %s", cx_vints(ic, d), cx_vshape(ic, x));
  int64_t k = d->v[0];
  cx_vset_array(out, x->type, x->rank, x->dims);
  for (int i = 1; i < in->nops; i++) {
    CX_TRY(cx_vneed_array(ic, i, "operand"));
    const cx_shape *y = cx_vop(ic, i);
    if (y->rank != x->rank || y->type != x->type)
      return cx_vfail(ic, "operand %d %s must have the rank and element type of operand 0 %s", i, cx_vshape(ic, y),
                      cx_vshape(ic, x));
    for (int j = 0; j < x->rank; j++)
      if (j != k && y->dims[j] != x->dims[j])
        return cx_vfail(ic, "operand %d %s differs from operand 0 %s in dimension %d (only dimension %lld may differ)",
                        i, cx_vshape(ic, y), cx_vshape(ic, x), j, (long long)k);
    if (cx_add_ovf(out->dims[k], y->dims[k], &out->dims[k]))
      return cx_vfail(ic, "concatenated dimension overflows");
  }
  return CXLA_OK;
}

cxla_status cx_infer_pad(cx_infer *ic, cx_shape *out) {
  cx_instr *in = ic->in;
  CX_TRY(cx_vneed_array(ic, 0, "operand"));
  CX_TRY(cx_vneed_scalar(ic, 1, "padding value"));
  const cx_shape *x = cx_vop(ic, 0), *v = cx_vop(ic, 1);
  if (v->type != x->type)
    return cx_vfail(ic, "padding value %s must have the element type of the operand %s", cx_vshape(ic, v),
                    cx_vshape(ic, x));
  const cx_ints *lo = &in->a.pad_lo, *hi = &in->a.pad_hi, *it = &in->a.pad_interior;
  if (lo->n != x->rank || hi->n != x->rank || (it->n != x->rank && it->n != 0))
    return cx_vfail(ic, "padding needs one lo_hi[_interior] entry per dimension of %s, got %d", cx_vshape(ic, x), lo->n);
  cx_vset_array(out, x->type, x->rank, NULL);
  for (int i = 0; i < x->rank; i++) {
    int64_t in_ = it->n ? it->v[i] : 0, n = x->dims[i], r;
    if (in_ < 0) return cx_vfail(ic, "dimension %d: interior padding %lld must be >= 0", i, (long long)in_);
    if (cx_mul_ovf(n > 0 ? n - 1 : 0, in_, &r) || cx_add_ovf(r, n, &r) || cx_add_ovf(r, lo->v[i], &r) ||
        cx_add_ovf(r, hi->v[i], &r))
      return cx_vfail(ic, "dimension %d: padded size overflows", i);
    if (r < 0)
      return cx_vfail(ic, "dimension %d: padding %lld_%lld_%lld of size %lld gives a negative size %lld", i,
                      (long long)lo->v[i], (long long)hi->v[i], (long long)in_, (long long)n, (long long)r);
    out->dims[i] = r;
  }
  return CXLA_OK;
}

cxla_status cx_infer_reverse(cx_infer *ic, cx_shape *out) {
  CX_TRY(cx_vneed_array(ic, 0, "operand"));
  const cx_shape *x = cx_vop(ic, 0);
  CX_TRY(cx_vdims(ic, &ic->in->a.dims, x->rank, "dimensions", NULL));
  *out = *x;
  cx_vplain(out);
  return CXLA_OK;
}
