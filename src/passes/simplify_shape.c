/* simplify_shape.c — simplifier rules for re-indexing ops: identities (reshape to the same
 * dims, identity transpose, full slice, zero padding, ...), merging chains of the same op, and
 * re-shaping broadcasts of scalars (a scalar broadcast stays a scalar broadcast, which fusion
 * turns into a register instead of a memory read). */
#include <string.h>
#include "passes/simplify.h"

static int is_scalar_broadcast(const cx_instr *x) {
  return x->op == CX_OP_BROADCAST && x->ops[0]->shape.rank == 0;
}

/* broadcast(scalar) re-shaped to in's shape: the same scalar broadcast to it. */
static cxla_status rebroadcast(cx_instr *in, cx_instr *x, cx_instr **out) {
  *out = cx_simp_new(in, CX_OP_BROADCAST, &in->shape, 1, &x->ops[0]);
  return *out ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
}

/* A new `op` of x shaped like in, with dimensions= set to dims. */
static cxla_status new_with_dims(cx_instr *in, cx_op op, cx_instr *x, int n, const int64_t *dims,
                                 cx_instr **out) {
  cx_instr *r = cx_simp_new(in, op, &in->shape, 1, &x);
  if (!r || !cx_ints_set(in->parent->module, &r->a.dims, n, dims)) return CXLA_ERR_OUT_OF_MEMORY;
  *out = r;
  return CXLA_OK;
}

cxla_status cx_simp_reshape_op(cx_instr *in, cx_instr **out) {
  cx_instr *x = in->ops[0];
  if (cx_shape_same_dims(&x->shape, &in->shape)) { *out = x; return CXLA_OK; }
  if (x->op == CX_OP_RESHAPE) { /* reshape(reshape(y)) == reshape(y): both keep row-major order */
    cx_instr *y = x->ops[0];
    if (cx_shape_same_dims(&y->shape, &in->shape)) { *out = y; return CXLA_OK; }
    *out = cx_simp_new(in, CX_OP_RESHAPE, &in->shape, 1, &y);
    return *out ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
  }
  if (is_scalar_broadcast(x)) return rebroadcast(in, x, out);
  return CXLA_OK;
}

cxla_status cx_simp_transpose(cx_instr *in, cx_instr **out) {
  cx_instr *x = in->ops[0];
  const cx_ints *p = &in->a.dims;
  int ident = 1;
  for (int i = 0; i < p->n; i++) ident &= p->v[i] == i;
  if (ident) { *out = x; return CXLA_OK; }
  if (is_scalar_broadcast(x)) return rebroadcast(in, x, out);
  if (x->op != CX_OP_TRANSPOSE || x->a.dims.n != p->n || p->n > CXLA_MAX_RANK) return CXLA_OK;
  /* result dim i is x's dim p[i], which is y's dim q[p[i]] */
  int64_t comp[CXLA_MAX_RANK];
  ident = 1;
  for (int i = 0; i < p->n; i++) {
    comp[i] = x->a.dims.v[p->v[i]];
    ident &= comp[i] == i;
  }
  cx_instr *y = x->ops[0];
  if (ident) { *out = y; return CXLA_OK; }
  return new_with_dims(in, CX_OP_TRANSPOSE, y, p->n, comp, out);
}

cxla_status cx_simp_broadcast(cx_instr *in, cx_instr **out) {
  cx_instr *x = in->ops[0];
  const cx_ints *d = &in->a.dims;
  if (d->n != x->shape.rank) return CXLA_OK; /* unverified input */
  /* the rules below read dimensions in increasing order; an out-of-order broadcast also
   * transposes (the broadcast-order pass splits it) */
  for (int i = 1; i < d->n; i++)
    if (d->v[i - 1] > d->v[i]) return CXLA_OK;
  if (x->shape.rank == in->shape.rank && cx_shape_same_dims(&x->shape, &in->shape)) {
    *out = x; /* dims are increasing, so with equal ranks they are the identity */
    return CXLA_OK;
  }
  if (x->op == CX_OP_BROADCAST) { /* y's dim i -> x's dim e[i] -> result dim d[e[i]] */
    cx_instr *y = x->ops[0];
    int64_t comp[CXLA_MAX_RANK];
    for (int i = 0; i < x->a.dims.n; i++) comp[i] = d->v[x->a.dims.v[i]];
    return new_with_dims(in, CX_OP_BROADCAST, y, x->a.dims.n, comp, out);
  }
  /* only size-1 dimensions added and nothing expanded: a reshape. Scalar constants stay
   * broadcast, the form fusion handles best. */
  if (x->op == CX_OP_CONSTANT && x->shape.rank == 0) return CXLA_OK;
  int64_t covered = 0;
  for (int i = 0; i < d->n; i++) {
    if (x->shape.dims[i] != in->shape.dims[d->v[i]]) return CXLA_OK;
    covered |= INT64_C(1) << d->v[i];
  }
  for (int k = 0; k < in->shape.rank; k++)
    if (!(covered & (INT64_C(1) << k)) && in->shape.dims[k] != 1) return CXLA_OK;
  *out = cx_simp_new(in, CX_OP_RESHAPE, &in->shape, 1, &x);
  return *out ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
}

static cxla_status set_slice(cx_instr *r, int rank, const int64_t *st, const int64_t *li, const int64_t *sd) {
  cx_module *m = r->parent->module;
  if (!cx_ints_set(m, &r->a.slice_start, rank, st) || !cx_ints_set(m, &r->a.slice_limit, rank, li) ||
      !cx_ints_set(m, &r->a.slice_stride, rank, sd))
    return CXLA_ERR_OUT_OF_MEMORY;
  return CXLA_OK;
}

static int64_t stride_of(const cx_instr *in, int i) {
  return in->a.slice_stride.n ? in->a.slice_stride.v[i] : 1;
}

/* A slice that reads from one operand of a concatenate is a slice of that operand (or the
 * operand itself), as JAX's split/concat patterns produce. */
static cxla_status slice_of_concatenate(cx_instr *in, cx_instr *x, cx_instr **out) {
  int rank = in->shape.rank;
  int64_t k = x->a.dims.n == 1 ? x->a.dims.v[0] : -1;
  if (k < 0 || k >= rank || in->shape.dims[k] == 0) return CXLA_OK;
  int64_t s = in->a.slice_start.v[k], l = in->a.slice_limit.v[k], off = 0;
  for (int j = 0; j < x->nops; j++) {
    cx_instr *y = x->ops[j];
    int64_t n = y->shape.dims[k];
    if (s >= off && l <= off + n) { /* entirely inside operand j */
      int64_t st[CXLA_MAX_RANK], li[CXLA_MAX_RANK], sd[CXLA_MAX_RANK];
      int full = 1;
      for (int i = 0; i < rank; i++) {
        st[i] = in->a.slice_start.v[i] - (i == k ? off : 0);
        li[i] = in->a.slice_limit.v[i] - (i == k ? off : 0);
        sd[i] = stride_of(in, i);
        full &= st[i] == 0 && li[i] == y->shape.dims[i] && sd[i] == 1;
      }
      if (full) { *out = y; return CXLA_OK; }
      cx_instr *r = cx_simp_new(in, CX_OP_SLICE, &in->shape, 1, &y);
      if (!r || set_slice(r, rank, st, li, sd) != CXLA_OK) return CXLA_ERR_OUT_OF_MEMORY;
      *out = r;
      return CXLA_OK;
    }
    off += n;
  }
  return CXLA_OK;
}

cxla_status cx_simp_slice(cx_instr *in, cx_instr **out) {
  cx_instr *x = in->ops[0];
  int rank = in->shape.rank, full = 1;
  if (in->a.slice_start.n != rank || in->a.slice_limit.n != rank) return CXLA_OK; /* unverified */
  for (int i = 0; i < rank; i++)
    full &= in->a.slice_start.v[i] == 0 && in->a.slice_limit.v[i] == x->shape.dims[i] && stride_of(in, i) == 1;
  if (full) { *out = x; return CXLA_OK; }
  if (is_scalar_broadcast(x)) return rebroadcast(in, x, out);
  if (x->op == CX_OP_CONCATENATE) return slice_of_concatenate(in, x, out);
  if (x->op != CX_OP_SLICE || x->a.slice_start.n != rank) return CXLA_OK;
  /* element j of the result is x[s2 + j*t2] = y[s1 + (s2 + j*t2)*t1] */
  int64_t st[CXLA_MAX_RANK], li[CXLA_MAX_RANK], sd[CXLA_MAX_RANK];
  for (int i = 0; i < rank; i++) {
    int64_t s1 = x->a.slice_start.v[i], t1 = stride_of(x, i), s2 = in->a.slice_start.v[i], t2 = stride_of(in, i);
    int64_t n = in->shape.dims[i];
    st[i] = n ? s1 + s2 * t1 : 0;
    sd[i] = n ? t1 * t2 : 1;
    li[i] = n ? st[i] + (n - 1) * sd[i] + 1 : 0;
  }
  cx_instr *r = cx_simp_new(in, CX_OP_SLICE, &in->shape, 1, &x->ops[0]);
  if (!r || set_slice(r, rank, st, li, sd) != CXLA_OK) return CXLA_ERR_OUT_OF_MEMORY;
  *out = r;
  return CXLA_OK;
}

/* Start index k of a dynamic-(update-)slice whose indices begin at operand `first`, if it is
 * a constant: the scalar form or the older single index-vector form. */
static int const_start(const cx_instr *in, int first, int k, int64_t *v) {
  const cx_instr *s;
  int64_t pos = 0;
  if (in->nops - first == 1 && in->ops[first]->shape.rank == 1) {
    s = in->ops[first];
    pos = k;
  } else if (first + k < in->nops) {
    s = in->ops[first + k];
  } else {
    return 0;
  }
  if (s->op != CX_OP_CONSTANT || !s->a.literal || !cx_type_is_int(s->shape.type)) return 0;
  cxla_type t = s->shape.type;
  *v = cx_scalar_load(t, s->a.literal->data, pos).i;
  if (cx_type_kind(t) == CX_KIND_UINT && *v < 0) *v = INT64_MAX; /* u64 above 2^63: clamps high */
  return 1;
}

cxla_status cx_simp_dynamic_slice(cx_instr *in, cx_instr **out) {
  cx_instr *x = in->ops[0];
  int rank = x->shape.rank;
  /* whole-operand windows: the clamped start is 0 whatever the indices are */
  if (cx_shape_same_dims(&x->shape, &in->shape)) { *out = x; return CXLA_OK; }
  int64_t st[CXLA_MAX_RANK], li[CXLA_MAX_RANK], sd[CXLA_MAX_RANK];
  for (int i = 0; i < rank; i++) {
    int64_t v, size = in->shape.dims[i], hi = x->shape.dims[i] - size;
    if (!const_start(in, 1, i, &v)) return CXLA_OK;
    st[i] = v < 0 ? 0 : v > hi ? hi : v; /* dynamic-slice clamps the window into the operand */
    li[i] = st[i] + size;
    sd[i] = 1;
  }
  cx_instr *r = cx_simp_new(in, CX_OP_SLICE, &in->shape, 1, &x);
  if (!r || set_slice(r, rank, st, li, sd) != CXLA_OK) return CXLA_ERR_OUT_OF_MEMORY;
  *out = r;
  return CXLA_OK;
}

cxla_status cx_simp_dynamic_update_slice(cx_instr *in, cx_instr **out) {
  cx_instr *x = in->ops[0], *u = in->ops[1];
  if (cx_shape_same_dims(&u->shape, &x->shape)) *out = u; /* clamped start is 0: u overwrites all */
  else if (cx_shape_elems(&u->shape) == 0) *out = x;      /* writes nothing */
  return CXLA_OK;
}

cxla_status cx_simp_pad(cx_instr *in, cx_instr **out) {
  const cx_attrs *a = &in->a;
  if (a->pad_lo.n != in->shape.rank || a->pad_hi.n != in->shape.rank) return CXLA_OK;
  for (int i = 0; i < in->shape.rank; i++)
    if (a->pad_lo.v[i] || a->pad_hi.v[i] || (a->pad_interior.n && a->pad_interior.v[i])) return CXLA_OK;
  *out = in->ops[0];
  return CXLA_OK;
}

cxla_status cx_simp_concatenate(cx_instr *in, cx_instr **out) {
  if (in->nops == 1) { *out = in->ops[0]; return CXLA_OK; }
  int64_t k = in->a.dims.v[0];
  cx_instr *keep[64];
  int n = 0;
  for (int i = 0; i < in->nops; i++)
    if (in->ops[i]->shape.dims[k] != 0) {
      if (n == CX_ARRAY_LEN(keep)) return CXLA_OK;
      keep[n++] = in->ops[i];
    }
  if (n == in->nops || n == 0) return CXLA_OK;
  if (n == 1) { *out = keep[0]; return CXLA_OK; } /* empty operands contribute nothing */
  cx_instr *r = cx_simp_new(in, CX_OP_CONCATENATE, &in->shape, n, keep);
  if (!r || !cx_ints_set(in->parent->module, &r->a.dims, 1, &k)) return CXLA_ERR_OUT_OF_MEMORY;
  *out = r;
  return CXLA_OK;
}

cxla_status cx_simp_reverse(cx_instr *in, cx_instr **out) {
  int64_t keep[CXLA_MAX_RANK];
  int n = 0;
  for (int i = 0; i < in->a.dims.n; i++) { /* reversing a dimension of size 0 or 1 does nothing */
    int64_t d = in->a.dims.v[i];
    if (d < 0 || d >= in->shape.rank || n == CXLA_MAX_RANK) return CXLA_OK;
    if (in->shape.dims[d] > 1) keep[n++] = d;
  }
  if (n == in->a.dims.n) return CXLA_OK;
  if (n == 0) { *out = in->ops[0]; return CXLA_OK; }
  return new_with_dims(in, CX_OP_REVERSE, in->ops[0], n, keep, out);
}
