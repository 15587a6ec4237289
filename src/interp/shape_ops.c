/* shape_ops.c — re-indexing ops on row-major literals. Each is one strided box copy
 * (cx_box_copy): the result-driven ops (broadcast, transpose, slice, reverse, dynamic-slice)
 * walk the result with operand strides, the operand-driven ones (pad, concatenate,
 * dynamic-update-slice) walk the operand with result strides. Attributes are checked against
 * the operand shapes so that an unverified module can never index out of bounds. */
#include <string.h>
#include "interp/internal.h"

typedef struct {
  cx_interp *st;
  cx_instr *in;
  const cxla_literal *x;  /* operand 0 */
  cxla_literal *r;        /* result */
  size_t es;
  int64_t xs[CXLA_MAX_RANK], rs[CXLA_MAX_RANK]; /* row-major strides */
} sop;

static cxla_status need_rank(sop *o, const cx_ints *v, int rank, const char *what) {
  if (v->n != rank) return cx_interp_bad(o->st, o->in, "%s has %d entries, expected %d", what, v->n, rank);
  return CXLA_OK;
}

static cxla_status broadcast(sop *o, cxla_literal *const *ops) {
  (void)ops;
  const cx_shape *xs = &o->x->shape, *rs = &o->r->shape;
  int64_t ss[CXLA_MAX_RANK] = {0};
  CX_TRY(need_rank(o, &o->in->a.dims, xs->rank, "dimensions"));
  for (int i = 0; i < xs->rank; i++) {
    int64_t d = o->in->a.dims.v[i];
    if (d < 0 || d >= rs->rank || (xs->dims[i] != rs->dims[d] && xs->dims[i] != 1) || ss[d])
      return cx_interp_bad(o->st, o->in, "operand dimension %d cannot broadcast to result dimension %lld", i, (long long)d);
    ss[d] = xs->dims[i] == 1 ? 0 : o->xs[i]; /* size-1 dims repeat their one element */
  }
  cx_box_copy(o->r->data, o->x->data, o->es, rs->rank, rs->dims, 0, o->rs, 0, ss);
  return CXLA_OK;
}

static cxla_status transpose(sop *o, cxla_literal *const *ops) {
  (void)ops;
  const cx_shape *xs = &o->x->shape, *rs = &o->r->shape;
  int64_t ss[CXLA_MAX_RANK];
  int seen[CXLA_MAX_RANK] = {0};
  CX_TRY(need_rank(o, &o->in->a.dims, xs->rank, "dimensions"));
  for (int i = 0; i < rs->rank; i++) {
    int64_t p = o->in->a.dims.v[i];
    if (p < 0 || p >= xs->rank || seen[p] || xs->dims[p] != rs->dims[i])
      return cx_interp_bad(o->st, o->in, "dimensions is not a permutation matching the result");
    seen[p] = 1;
    ss[i] = o->xs[p];
  }
  cx_box_copy(o->r->data, o->x->data, o->es, rs->rank, rs->dims, 0, o->rs, 0, ss);
  return CXLA_OK;
}

static cxla_status slice(sop *o, cxla_literal *const *ops) {
  (void)ops;
  const cx_attrs *a = &o->in->a;
  const cx_shape *xs = &o->x->shape, *rs = &o->r->shape;
  int64_t ss[CXLA_MAX_RANK], base = 0;
  CX_TRY(need_rank(o, &a->slice_start, xs->rank, "slice starts"));
  CX_TRY(need_rank(o, &a->slice_limit, xs->rank, "slice limits"));
  if (a->slice_stride.n) CX_TRY(need_rank(o, &a->slice_stride, xs->rank, "slice strides"));
  for (int i = 0; i < xs->rank; i++) {
    int64_t st = a->slice_start.v[i], stride = a->slice_stride.n ? a->slice_stride.v[i] : 1;
    int64_t lim = a->slice_limit.v[i];
    int64_t want = stride > 0 && lim >= st ? (lim - st + stride - 1) / stride : -1;
    if (st < 0 || lim > xs->dims[i] || stride < 1 || want != rs->dims[i])
      return cx_interp_bad(o->st, o->in, "slice [%lld:%lld:%lld] of dimension %d does not fit",
                           (long long)st, (long long)lim, (long long)stride, i);
    base += st * o->xs[i];
    ss[i] = stride * o->xs[i];
  }
  cx_box_copy(o->r->data, o->x->data, o->es, rs->rank, rs->dims, 0, o->rs, base, ss);
  return CXLA_OK;
}

static cxla_status reverse(sop *o, cxla_literal *const *ops) {
  (void)ops;
  const cx_shape *rs = &o->r->shape;
  int64_t ss[CXLA_MAX_RANK], base = 0;
  int seen[CXLA_MAX_RANK] = {0};
  if (!cx_shape_same_dims(rs, &o->x->shape)) return cx_interp_bad(o->st, o->in, "result dims differ from the operand's");
  memcpy(ss, o->xs, sizeof ss);
  for (int i = 0; i < o->in->a.dims.n; i++) {
    int64_t d = o->in->a.dims.v[i];
    if (d < 0 || d >= rs->rank || seen[d])
      return cx_interp_bad(o->st, o->in, "bad dimension %lld", (long long)d);
    seen[d] = 1;
    if (rs->dims[d] > 0) base += (rs->dims[d] - 1) * o->xs[d];
    ss[d] = -o->xs[d];
  }
  cx_box_copy(o->r->data, o->x->data, o->es, rs->rank, rs->dims, 0, o->rs, base, ss);
  return CXLA_OK;
}

/* Start indices of dynamic-(update-)slice: one scalar operand per dimension from `first` on
 * (any integer type), or the old form with one rank-1 vector. Each is clamped into
 * [0, dim - size] as XLA does, so the slice always fits. */
static cxla_status dyn_starts(sop *o, cxla_literal *const *ops, int first, const int64_t *size,
                              int64_t *start) {
  int rank = o->x->shape.rank, nidx = o->in->nops - first;
  int vec = nidx == 1 && ops[first]->shape.rank == 1 && rank != 0;
  if (!vec && nidx != rank) return cx_interp_bad(o->st, o->in, "%d start indices for rank %d", nidx, rank);
  if (vec && ops[first]->shape.dims[0] != rank)
    return cx_interp_bad(o->st, o->in, "start index vector has %lld entries for rank %d",
                         (long long)ops[first]->shape.dims[0], rank);
  for (int i = 0; i < rank; i++) {
    const cxla_literal *ix = ops[vec ? first : first + i];
    if (!cx_type_is_int(ix->shape.type) || (!vec && ix->shape.rank != 0))
      return cx_interp_bad(o->st, o->in, "start index %d must be an integer scalar", i);
    int64_t v = cx_load_i64(ix->shape.type, ix->data, vec ? i : 0);
    if (ix->shape.type == CXLA_U64 && v < 0) v = INT64_MAX; /* a huge unsigned start */
    int64_t hi = o->x->shape.dims[i] - size[i];
    if (hi < 0) return cx_interp_bad(o->st, o->in, "slice size %lld exceeds dimension %d", (long long)size[i], i);
    start[i] = v < 0 ? 0 : v > hi ? hi : v;
  }
  return CXLA_OK;
}

static cxla_status dynamic_slice(sop *o, cxla_literal *const *ops) {
  const cx_shape *rs = &o->r->shape;
  int64_t start[CXLA_MAX_RANK], base = 0;
  if (rs->rank != o->x->shape.rank) return cx_interp_bad(o->st, o->in, "result rank differs from the operand's");
  CX_TRY(dyn_starts(o, ops, 1, rs->dims, start));
  for (int i = 0; i < rs->rank; i++) base += start[i] * o->xs[i];
  cx_box_copy(o->r->data, o->x->data, o->es, rs->rank, rs->dims, 0, o->rs, base, o->xs);
  return CXLA_OK;
}

static cxla_status dynamic_update_slice(sop *o, cxla_literal *const *ops) {
  const cxla_literal *u = ops[1];
  int64_t start[CXLA_MAX_RANK], us[CXLA_MAX_RANK], base = 0;
  if (u->shape.type != o->r->shape.type || u->shape.rank != o->r->shape.rank)
    return cx_interp_bad(o->st, o->in, "update must have the operand's type and rank");
  CX_TRY(dyn_starts(o, ops, 2, u->shape.dims, start));
  memcpy(o->r->data, o->x->data, (size_t)cx_shape_bytes(&o->r->shape));
  cx_shape_strides(&u->shape, us);
  for (int i = 0; i < u->shape.rank; i++) base += start[i] * o->rs[i];
  cx_box_copy(o->r->data, u->data, o->es, u->shape.rank, u->shape.dims, base, o->rs, 0, us);
  return CXLA_OK;
}

static cxla_status concatenate(sop *o, cxla_literal *const *ops) {
  const cx_shape *rs = &o->r->shape;
  if (o->in->a.dims.n != 1) return cx_interp_bad(o->st, o->in, "needs one dimension");
  int64_t d = o->in->a.dims.v[0], off = 0;
  if (d < 0 || d >= rs->rank) return cx_interp_bad(o->st, o->in, "dimension %lld out of range", (long long)d);
  for (int k = 0; k < o->in->nops; k++) {
    const cx_shape *xs = &ops[k]->shape;
    int64_t ss[CXLA_MAX_RANK];
    int ok = xs->type == rs->type && xs->rank == rs->rank;
    for (int i = 0; ok && i < rs->rank; i++) ok = i == d || xs->dims[i] == rs->dims[i];
    if (!ok || off + xs->dims[d] > rs->dims[d])
      return cx_interp_bad(o->st, o->in, "operand %d does not fit the result", k);
    cx_shape_strides(xs, ss);
    cx_box_copy(o->r->data, ops[k]->data, o->es, xs->rank, xs->dims, off * o->rs[d], o->rs, 0, ss);
    off += xs->dims[d];
  }
  if (off != rs->dims[d]) return cx_interp_bad(o->st, o->in, "operands do not fill the result");
  return CXLA_OK;
}

/* pad: result position of operand index j along a dimension is lo + j*(interior+1); negative
 * lo/hi crop. Only the operand indices landing inside the result are copied. */
static cxla_status pad(sop *o, cxla_literal *const *ops) {
  const cx_attrs *a = &o->in->a;
  const cx_shape *xs = &o->x->shape, *rs = &o->r->shape;
  const cxla_literal *pv = ops[1];
  int64_t n[CXLA_MAX_RANK], ds[CXLA_MAX_RANK], sbase = 0, dbase = 0;
  if (pv->shape.rank != 0 || pv->shape.type != rs->type)
    return cx_interp_bad(o->st, o->in, "padding value must be a scalar of the operand's type");
  CX_TRY(need_rank(o, &a->pad_lo, xs->rank, "padding"));
  if (a->pad_hi.n != xs->rank || (a->pad_interior.n && a->pad_interior.n != xs->rank))
    return cx_interp_bad(o->st, o->in, "padding has the wrong number of entries");
  int empty = 0;
  for (int i = 0; i < xs->rank; i++) {
    int64_t lo = a->pad_lo.v[i], hi = a->pad_hi.v[i], in = a->pad_interior.n ? a->pad_interior.v[i] : 0;
    int64_t len = xs->dims[i], step = in + 1;
    if (in < 0 || lo + hi + (len ? len + (len - 1) * in : 0) != rs->dims[i])
      return cx_interp_bad(o->st, o->in, "padding of dimension %d does not give the result size", i);
    int64_t j0 = lo >= 0 ? 0 : (-lo + step - 1) / step;
    int64_t top = rs->dims[i] - 1 - lo; /* largest j*step that still lands inside */
    int64_t j1 = top < 0 ? 0 : top / step + 1;
    if (j1 > len) j1 = len;
    n[i] = j1 - j0;
    if (n[i] <= 0) empty = 1;
    sbase += j0 * o->xs[i];
    dbase += (lo + j0 * step) * o->rs[i];
    ds[i] = step * o->rs[i];
  }
  int64_t total = cx_shape_elems(rs);
  for (int64_t i = 0; i < total; i++) memcpy((char *)o->r->data + (size_t)i * o->es, pv->data, o->es);
  if (!empty) cx_box_copy(o->r->data, o->x->data, o->es, xs->rank, n, dbase, ds, sbase, o->xs);
  return CXLA_OK;
}

static cxla_status reshape(sop *o, cxla_literal *const *ops) {
  (void)ops;
  if (cx_shape_elems(&o->x->shape) != cx_shape_elems(&o->r->shape)) return cx_interp_bad(o->st, o->in, "element counts differ");
  memcpy(o->r->data, o->x->data, (size_t)cx_shape_bytes(&o->r->shape));
  return CXLA_OK;
}

static cxla_status iota(sop *o, cxla_literal *const *ops) {
  (void)ops;
  const cx_shape *rs = &o->r->shape;
  int64_t d = o->in->a.index, total = cx_shape_elems(rs);
  if (rs->rank == 0 || d < 0 || d >= rs->rank) return cx_interp_bad(o->st, o->in, "iota_dimension out of range");
  for (int64_t i = 0; i < total; i++) {
    cx_scalar v;
    v.i = (i / o->rs[d]) % rs->dims[d];
    cx_scalar_store(rs->type, o->r->data, i, cx_scalar_convert(CXLA_S64, rs->type, v));
  }
  return CXLA_OK;
}

/* bitcast: the result reads the operand's physical buffer. With default layouts that is a
 * reshape; otherwise lay the operand out physically, then read it back in the result's
 * layout (element sizes may differ: the physical bytes are all the two share). Tiled layouts
 * are refused unless every element stays in its tile (then they read as if untiled); a
 * suffix that only names a memory space (":S(1)") changes nothing. */
static cxla_status bitcast_bytes(sop *o, cxla_literal *const *ops) {
  (void)ops;
  const cx_shape *xl = &o->in->ops[0]->shape, *rl = &o->in->shape, *rs = &o->r->shape;
  int64_t bytes = cx_shape_bytes(rs);
  if (bytes != cx_shape_bytes(&o->x->shape)) return cx_interp_bad(o->st, o->in, "operand and result sizes differ");
  if (cx_shape_has_default_layout(xl) && cx_shape_has_default_layout(rl)) {
    memcpy(o->r->data, o->x->data, (size_t)bytes);
    return CXLA_OK;
  }
  if (((cx_shape_moves_bytes(xl) || cx_shape_moves_bytes(rl)) && !cx_bitcast_tiles_stay(xl, rl)) ||
      xl->rank != o->x->shape.rank)
    return cx_interp_unsupported(o->st, o->in, "bitcast with tiled layouts");
  size_t xes = cxla_type_size(xl->type); /* the bytes in between are untyped */
  int64_t xp[CXLA_MAX_RANK], rp[CXLA_MAX_RANK], pd[CXLA_MAX_RANK], ps[CXLA_MAX_RANK], ss[CXLA_MAX_RANK];
  cx_shape_major_to_minor(xl, xp);
  cx_shape_major_to_minor(rl, rp);
  char *phys = cx_malloc((size_t)(bytes ? bytes : 1));
  if (!phys) return cx_oom(o->st->ctx);
  /* operand -> physical: physical dim j is operand dim xp[j] */
  for (int j = 0; j < xl->rank; j++) {
    pd[j] = o->x->shape.dims[xp[j]];
    ss[j] = o->xs[xp[j]];
  }
  cx_shape pshape = cx_shape_array(xl->type, xl->rank, pd);
  cx_shape_strides(&pshape, ps);
  cx_box_copy(phys, o->x->data, xes, xl->rank, pd, 0, ps, 0, ss);
  /* physical (row-major in the result's major-to-minor dims) -> result */
  for (int j = 0; j < rs->rank; j++) pd[j] = rs->dims[rp[j]];
  pshape = cx_shape_array(rs->type, rs->rank, pd);
  cx_shape_strides(&pshape, ps);
  for (int j = 0; j < rs->rank; j++) ss[rp[j]] = ps[j];
  cx_box_copy(o->r->data, phys, o->es, rs->rank, rs->dims, 0, o->rs, 0, ss);
  cx_free(phys);
  return CXLA_OK;
}

/* A sub-byte result (s4, u4, s2, u2, f4e2m1fn) keeps only the low bits of each byte it reads:
 * cxla stores those types with the high bits zero (ir/types.c), as ml_dtypes does. */
static cxla_status bitcast(sop *o, cxla_literal *const *ops) {
  CX_TRY(bitcast_bytes(o, ops));
  int bits = cx_type_bits(o->r->shape.type);
  if (bits < 8 * (int)cxla_type_size(o->r->shape.type)) {
    uint8_t *r = o->r->data;
    for (int64_t i = 0, n = cx_shape_elems(&o->r->shape); i < n; i++) r[i] &= (uint8_t)((1u << bits) - 1);
  }
  return CXLA_OK;
}

/* What the common part checks per op: the fewest operands, and whether the result keeps
 * operand 0's element type (bitcast need not). */
typedef struct {
  cxla_status (*run)(sop *o, cxla_literal *const *ops);
  int min_ops, keeps_type;
} shape_kind;

static cxla_status shape_op(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out,
                            const shape_kind *k) {
  *out = NULL;
  sop o = {st, in, in->nops ? ops[0] : NULL, NULL, 0, {0}, {0}};
  if (in->shape.type == CXLA_TUPLE || !cx_type_is_array(in->shape.type))
    return cx_interp_unsupported(st, in, "non-array result");
  if (in->nops < k->min_ops) return cx_interp_bad(st, in, "needs at least %d operands", k->min_ops);
  for (int j = 0; j < in->nops; j++)
    if (!ops[j] || !cx_type_is_array(ops[j]->shape.type))
      return cx_interp_bad(st, in, "operand %d is not an array", j);
  if (o.x && k->keeps_type && o.x->shape.type != in->shape.type)
    return cx_interp_bad(st, in, "operand type differs from the result's");
  CX_TRY(cx_interp_new_array(st, in, &in->shape, &o.r));
  o.es = cxla_type_size(in->shape.type);
  cx_shape_strides(&o.r->shape, o.rs);
  if (o.x) cx_shape_strides(&o.x->shape, o.xs);
  cxla_status s = k->run(&o, ops);
  if (s != CXLA_OK) {
    cxla_literal_destroy(o.r);
    return s;
  }
  *out = o.r;
  return CXLA_OK;
}

#define SHAPE_EVALUATOR(name, fn, min_ops, keeps_type)                \
  CX_INTERP_EVALUATOR(cx_interp_##name) {                             \
    static const shape_kind k = {fn, min_ops, keeps_type};            \
    return shape_op(st, in, ops, out, &k);                            \
  }

SHAPE_EVALUATOR(iota, iota, 0, 1)
SHAPE_EVALUATOR(broadcast, broadcast, 1, 1)
SHAPE_EVALUATOR(reshape, reshape, 1, 1)
SHAPE_EVALUATOR(bitcast, bitcast, 1, 0)
SHAPE_EVALUATOR(transpose, transpose, 1, 1)
SHAPE_EVALUATOR(slice, slice, 1, 1)
SHAPE_EVALUATOR(dynamic_slice, dynamic_slice, 1, 1)
SHAPE_EVALUATOR(dynamic_update_slice, dynamic_update_slice, 2, 1)
SHAPE_EVALUATOR(concatenate, concatenate, 1, 1)
SHAPE_EVALUATOR(pad, pad, 2, 1)
SHAPE_EVALUATOR(reverse, reverse, 1, 1)
