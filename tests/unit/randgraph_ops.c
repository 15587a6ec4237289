/* randgraph_ops.c — the generator's data ops: elementwise chains (with domain fixes so log,
 * sqrt, divide, exp stay well defined), compare/select/clamp/convert, shape ops, dynamic
 * slices, gather, reductions (sum/max/min/product/bitwise, argmax), dots and reduce-window.
 * Each op keeps its result in the pool unless the analysis finds it undetermined. */
#include <math.h>
#include <string.h>
#include "randgraph_int.h"
#include "ir/types.h"

#define B_(g) ((g)->cur->b)

static gval un(gen *g, const char *op, gval x) { return rg_v(g, cxla_builder_unary(B_(g), op, x.op)); }
static gval bin(gen *g, const char *op, gval x, gval y) { return rg_v(g, cxla_builder_binary(B_(g), op, x.op, y.op)); }
static cxla_type ty(gval v) { return v.in->shape.type; }
static int rank_of(gval v) { return v.in->shape.rank; }
static const int64_t *dims_of(gval v) { return v.in->shape.dims; }
static gval like(gen *g, gval v, double c) { return rg_splat(g, ty(v), rank_of(v), dims_of(v), c); }

/* Any pool value, or a fresh one of a random type and shape. */
static gval any_val(gen *g) {
  gval v;
  if (rg_pick(g, NULL, NULL, &v)) return v;
  int rank;
  int64_t dims[CXLA_MAX_RANK];
  rg_pick_shape(g, &rank, dims);
  return rg_fresh(g, rg_pick_type(g), rank, dims, 0);
}

static int is_exact_val(gen *g, gval v, const void *arg) {
  (void)arg;
  return rg_is_exact(g, v);
}
static int has_rank(gen *g, gval v, const void *arg) {
  (void)g, (void)arg;
  return rank_of(v) > 0 && ty(v) != CXLA_PRED;
}
static int exact_ranked(gen *g, gval v, const void *arg) {
  (void)arg;
  return rank_of(v) > 0 && ty(v) != CXLA_PRED && rg_is_exact(g, v) && cx_shape_elems(&v.in->shape) > 0;
}

/* ---- domain helpers ---- */

gval rg_bounded(gen *g, gval v, double B) {
  if (!rg_ok(v) || rg_mag(g, v) <= B) return v;
  int r = cx_type_is_float(ty(v)) ? rg_below(&g->rs, 3) : 0; /* integers: clamp */
  if (r == 0) { /* clamp with scalar bounds: exact, and the range is exactly [-B, B] */
    gval lo = rg_const(g, ty(v), -B), hi = rg_const(g, ty(v), B);
    return rg_v(g, cxla_builder_clamp(B_(g), lo.op, v.op, hi.op));
  }
  if (r == 1 && rg_has(g, RG_F_TRANSC)) return bin(g, "multiply", un(g, "tanh", v), like(g, v, B));
  double m = rg_mag(g, v), s = B / m;
  if (!isfinite(s) || s == 0) return rg_v(g, cxla_builder_clamp(B_(g), rg_const(g, ty(v), -B).op, v.op, rg_const(g, ty(v), B).op));
  return bin(g, "multiply", v, like(g, v, ldexp(1, (int)floor(log2(s))))); /* a power of two */
}

gval rg_positive(gen *g, gval v, double m) {
  if (!rg_ok(v) || rg_info(g, v).lo > m) return v;
  double c = m + 0.25 * (1 + rg_below(&g->rz, 4));
  int r = rg_below(&g->rs, 3);
  if (r == 0 && rg_has(g, RG_F_TRANSC) && m < 0.01) return un(g, "exponential", rg_bounded(g, v, 4));
  if (r == 1) {
    gval b = rg_bounded(g, v, 8);
    return bin(g, "add", bin(g, "multiply", b, b), like(g, v, c));
  }
  return bin(g, "add", un(g, "abs", v), like(g, v, c));
}

/* ---- elementwise ---- */

void rg_op_unary(gen *g) {
  gval v = any_val(g);
  if (!rg_ok(v)) return;
  cxla_type t = ty(v);
  gval r;
  if (t == CXLA_PRED) {
    r = un(g, "not", v);
  } else if (!cx_type_is_float(t)) {
    static const char *const iops[] = {"negate", "not", "popcnt", "count-leading-zeros", "copy", "abs", "sign"};
    int signed_ = cx_type_kind(t) == CX_KIND_SINT; /* abs and sign take no unsigned operand */
    r = un(g, iops[rg_below(&g->rs, CX_ARRAY_LEN(iops) - (signed_ ? 0 : 2))], v);
  } else {
    static const char *const cheap[] = {"negate", "abs", "copy", "floor", "ceil", "round-nearest-afz",
                                        "round-nearest-even", "sign", "is-finite"};
    static const char *const tr[] = {"exponential", "exponential-minus-one", "log", "log-plus-one", "logistic",
                                     "sqrt", "rsqrt", "cbrt", "sine", "cosine", "tan", "tanh", "erf"};
    int use_tr = rg_has(g, RG_F_TRANSC) && rg_chance(g, 0.6);
    const char *op = use_tr ? tr[rg_below(&g->rs, CX_ARRAY_LEN(tr))] : cheap[rg_below(&g->rs, CX_ARRAY_LEN(cheap))];
    int half = t == CXLA_F16 || t == CXLA_BF16;
    gval x = v;
    if (!use_tr && strcmp(op, "negate") && strcmp(op, "abs") && strcmp(op, "copy") && !rg_is_exact(g, v)) op = "negate";
    if (!strcmp(op, "exponential") || !strcmp(op, "exponential-minus-one")) x = rg_bounded(g, v, half ? 4 : 10);
    else if (!strcmp(op, "log") || !strcmp(op, "rsqrt")) x = rg_positive(g, v, 0.05);
    else if (!strcmp(op, "sqrt")) x = rg_info(g, v).lo >= 0 ? v : rg_chance(g, 0.5) ? un(g, "abs", v) : rg_positive(g, v, 0.05);
    else if (!strcmp(op, "log-plus-one")) x = rg_info(g, v).lo > -0.9 ? v : un(g, rg_chance(g, 0.5) ? "abs" : "logistic", v);
    else if (!strcmp(op, "tan")) x = rg_bounded(g, v, 1.2);
    else if (!strcmp(op, "sine") || !strcmp(op, "cosine")) x = rg_bounded(g, v, 8);
    if (!rg_ok(x)) return;
    rg_keep(g, x);
    r = un(g, op, x);
  }
  rg_keep(g, r);
}

void rg_op_binary(gen *g) {
  gval a = any_val(g);
  if (!rg_ok(a)) return;
  cxla_type t = ty(a);
  gval b = rg_chance(g, 0.25) ? like(g, a, 0) : rg_get(g, t, rank_of(a), dims_of(a), 0);
  if (!rg_ok(b)) return;
  if (rg_chance(g, 0.25)) { /* a scalar broadcast operand */
    double c[] = {0.5, 2, -1, 3, 0.25, 1.5};
    b = like(g, a, cx_type_is_float(t) ? c[rg_below(&g->rz, 6)] : rg_size(g, -3, 5));
  }
  const char *op;
  if (t == CXLA_PRED) {
    static const char *const pops[] = {"and", "or", "xor", "add", "multiply", "maximum", "minimum"};
    op = pops[rg_below(&g->rs, CX_ARRAY_LEN(pops))];
  } else if (!cx_type_is_float(t)) {
    static const char *const iops[] = {"add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum",
                                       "and", "or", "xor", "shift-left", "shift-right-arithmetic", "shift-right-logical"};
    op = iops[rg_below(&g->rs, CX_ARRAY_LEN(iops))];
  } else {
    int r = rg_below(&g->rs, 100);
    op = r < 22 ? "add" : r < 40 ? "subtract" : r < 62 ? "multiply" : r < 72 ? "maximum" : r < 80 ? "minimum"
       : r < 88 ? "divide" : r < 92 ? "power" : r < 95 ? "atan2" : "remainder";
    if (!rg_has(g, RG_F_TRANSC) && (!strcmp(op, "power") || !strcmp(op, "atan2"))) op = "multiply";
    if (!strcmp(op, "multiply") && rg_mag(g, a) * rg_mag(g, b) > 1e4) a = rg_bounded(g, a, 64), b = rg_bounded(g, b, 64);
    if (!strcmp(op, "divide")) {
      b = rg_positive(g, rg_bounded(g, b, 1e3), 0.25);
      if (rg_chance(g, 0.3)) b = un(g, "negate", b);
    } else if (!strcmp(op, "power")) {
      a = rg_positive(g, rg_bounded(g, a, 4), 0.1);
      b = rg_bounded(g, b, 2);
    } else if (!strcmp(op, "atan2")) {
      b = rg_positive(g, b, 0.1);
    } else if (!strcmp(op, "remainder")) {
      if (!rg_is_exact(g, a)) a = un(g, "floor", rg_get(g, t, rank_of(a), dims_of(a), 1));
      double d[] = {0.75, -1.5, 2, 0.3};
      b = like(g, a, d[rg_below(&g->rz, 4)]);
    }
  }
  if (!rg_ok(a) || !rg_ok(b)) return;
  gval r = rg_chance(g, 0.2) && cx_type_is_float(t) && strcmp(op, "divide") && strcmp(op, "power") &&
                   strcmp(op, "atan2") && strcmp(op, "remainder")
               ? bin(g, op, b, a)
               : bin(g, op, a, b);
  rg_keep(g, r);
}

void rg_op_compare_select(gen *g) {
  gval a;
  if (!rg_pick(g, is_exact_val, NULL, &a)) {
    int rank;
    int64_t dims[CXLA_MAX_RANK];
    rg_pick_shape(g, &rank, dims);
    a = rg_fresh(g, rg_pick_type(g), rank, dims, 1);
  }
  if (!rg_ok(a)) return;
  cxla_type t = ty(a);
  gval b = rg_get(g, t, rank_of(a), dims_of(a), 1);
  if (!rg_ok(b)) return;
  const char *ct = cx_type_is_float(t) && rg_chance(g, 0.25) ? "TOTALORDER" : NULL;
  gval p = rg_v(g, cxla_builder_compare(B_(g), a.op, b.op, (cxla_compare_dir)rg_below(&g->rs, 6), ct));
  rg_keep(g, p);
  if (!rg_ok(p) || rg_chance(g, 0.2)) return;
  cxla_type vt = rg_chance(g, 0.5) ? t : rg_pick_type(g);
  gval x = rg_get(g, vt, rank_of(a), dims_of(a), 0), y = rg_get(g, vt, rank_of(a), dims_of(a), 0);
  if (!rg_ok(x) || !rg_ok(y)) return;
  rg_keep(g, rg_v(g, cxla_builder_select(B_(g), p.op, x.op, y.op)));
}

void rg_op_clamp(gen *g) {
  gval x = any_val(g);
  if (!rg_ok(x) || ty(x) == CXLA_PRED) return;
  cxla_type t = ty(x);
  gval lo, hi;
  if (rg_chance(g, 0.6)) {
    double l = cx_type_is_float(t) ? -0.5 * rg_size(g, 0, 4) : -rg_size(g, 0, 4), h = l + rg_size(g, 0, 6);
    if (cx_type_kind(t) == CX_KIND_UINT) l = rg_size(g, 0, 3), h = l + rg_size(g, 0, 9);
    if (rg_chance(g, 0.1)) { double s = l; l = h; h = s; } /* lo > hi: min(max(x, lo), hi) = hi */
    lo = rg_const(g, t, l), hi = rg_const(g, t, h);
  } else {
    lo = rg_get(g, t, rank_of(x), dims_of(x), 0);
    hi = rg_get(g, t, rank_of(x), dims_of(x), 0);
  }
  if (!rg_ok(lo) || !rg_ok(hi)) return;
  rg_keep(g, rg_v(g, cxla_builder_clamp(B_(g), lo.op, x.op, hi.op)));
}

void rg_op_convert(gen *g) {
  gval v = any_val(g);
  if (!rg_ok(v)) return;
  cxla_type from = ty(v);
  int r = rg_below(&g->rs, 100);
  if (r < 12 && (from == CXLA_F32 || from == CXLA_S32 || from == CXLA_U32)) {
    /* bitcast between 32-bit types: small integers become denormals, negative ones NaNs */
    cxla_type to = from == CXLA_F32 ? (rg_chance(g, 0.5) ? CXLA_S32 : CXLA_U32) : CXLA_F32;
    if (from == CXLA_F32 && !rg_is_exact(g, v)) return;
    rg_keep(g, rg_v(g, cxla_builder_bitcast_convert(B_(g), v.op, to)));
    return;
  }
  if (r < 18 && cx_type_is_float(from)) {
    int f16 = rg_chance(g, 0.5);
    rg_keep(g, rg_v(g, cxla_builder_reduce_precision(B_(g), v.op, f16 ? 5 : 8, f16 ? 10 : 7)));
    return;
  }
  cxla_type to = rg_pick_type(g);
  if (cx_type_is_float(ty(v)) && !cx_type_is_float(to) && !rg_is_exact(g, v) && !rg_info(g, v).special) to = CXLA_F64;
  if (to == ty(v)) return;
  /* narrowing to f16 needs a range that fits */
  if (to == CXLA_F16 && rg_mag(g, v) > 60000) v = rg_bounded(g, v, 1000);
  if (rg_ok(v)) rg_keep(g, rg_v(g, cxla_builder_convert(B_(g), v.op, to)));
}

/* ---- shape ops ---- */

static void random_reshape(gen *g, gval v) {
  int64_t n = cx_shape_elems(&v.in->shape), dims[CXLA_MAX_RANK], f[64];
  int nf = 0, rank = 1 + rg_below(&g->rs, 4);
  for (int64_t p = 2, m = n; m > 1 && nf < 60;) { /* prime factors */
    if (m % p == 0) f[nf++] = p, m /= p;
    else if (p * p > m) f[nf++] = m, m = 1;
    else p++;
  }
  if (n == 0) rank = 1 + rg_below(&g->rs, 2);
  for (int d = 0; d < rank; d++) dims[d] = 1;
  for (int i = 0; i < nf; i++) dims[rg_below(&g->rz, rank)] *= f[i];
  if (n == 0) dims[rg_below(&g->rz, rank)] = 0;
  rg_keep(g, rg_v(g, cxla_builder_reshape(B_(g), v.op, rank, dims)));
}

void rg_op_shape(gen *g) {
  gval v = any_val(g);
  if (!rg_ok(v)) return;
  const cx_shape *s = &v.in->shape;
  int rank = s->rank, r = rg_below(&g->rs, 7);
  int64_t a[CXLA_MAX_RANK], b[CXLA_MAX_RANK], c[CXLA_MAX_RANK];
  if (rank == 0 && r != 5) r = rg_chance(g, 0.5) ? 5 : 0;
  switch (r) {
  case 0:
    random_reshape(g, v);
    return;
  case 1: { /* transpose */
    for (int d = 0; d < rank; d++) a[d] = d;
    for (int d = rank - 1; d > 0; d--) {
      int e = rg_below(&g->rz, d + 1);
      int64_t t = a[d];
      a[d] = a[e], a[e] = t;
    }
    rg_keep(g, rg_v(g, cxla_builder_transpose(B_(g), v.op, a)));
    return;
  }
  case 2: { /* slice */
    for (int d = 0; d < rank; d++) {
      int64_t n = s->dims[d];
      a[d] = n ? rg_below(&g->rz, (int)n) : 0;
      b[d] = n ? a[d] + 1 + rg_below(&g->rz, (int)(n - a[d])) : 0;
      c[d] = rg_chance(g, 0.25) ? 1 + rg_below(&g->rz, 3) : 1;
      if (rg_has(g, RG_F_ZERO) && rg_chance(g, 0.02)) b[d] = a[d];
    }
    rg_keep(g, rg_v(g, cxla_builder_slice(B_(g), v.op, a, b, c)));
    return;
  }
  case 3: { /* pad, edges maybe negative */
    int64_t n = 1;
    for (int d = 0; d < rank; d++) {
      c[d] = rg_chance(g, 0.2) ? rg_size(g, 1, 2) : 0;
      a[d] = rg_size(g, -1, 3), b[d] = rg_size(g, -1, 3);
      int64_t sz = s->dims[d] + (s->dims[d] > 0 ? (s->dims[d] - 1) * c[d] : 0) + a[d] + b[d];
      if (sz < 1) a[d] = b[d] = 0, sz = s->dims[d] + (s->dims[d] > 0 ? (s->dims[d] - 1) * c[d] : 0);
      n *= sz;
    }
    if (n > g->budget) return;
    gval pv = rg_const(g, s->type, s->type == CXLA_PRED ? 1 : rg_chance(g, 0.5) ? 0 : -1);
    rg_keep(g, rg_v(g, cxla_builder_pad(B_(g), v.op, pv.op, a, b, c)));
    return;
  }
  case 4: { /* reverse */
    int n = 0;
    for (int d = 0; d < rank; d++)
      if (rg_chance(g, 0.5) || (d == rank - 1 && !n)) a[n++] = d;
    rg_keep(g, rg_v(g, cxla_builder_reverse(B_(g), v.op, n, a)));
    return;
  }
  case 5: { /* broadcast into new dimensions */
    int add = 1 + rg_below(&g->rs, 2), out = rank + add;
    if (out > 4) out = rank + 1;
    if (out > CXLA_MAX_RANK) return;
    int64_t map[CXLA_MAX_RANK], dims[CXLA_MAX_RANK];
    int k = 0;
    for (int d = 0; d < out; d++) {
      if (k < rank && (out - d == rank - k || rg_chance(g, 0.5))) map[k] = d, dims[d] = s->dims[k], k++;
      else dims[d] = rg_size(g, 1, 6);
    }
    int64_t n = 1;
    for (int d = 0; d < out; d++) n *= dims[d];
    if (n > g->budget) return;
    rg_keep(g, rg_v(g, cxla_builder_broadcast(B_(g), v.op, out, dims, map)));
    return;
  }
  default: { /* concatenate 2-3 pieces along one dimension */
    int d = rg_below(&g->rz, rank), n = 2 + rg_below(&g->rs, 2);
    cxla_op parts[3];
    parts[0] = v.op;
    int64_t total = s->dims[d];
    for (int i = 1; i < n; i++) {
      memcpy(a, s->dims, sizeof a[0] * (size_t)rank);
      a[d] = rg_size(g, 1, 8);
      total += a[d];
      gval p = rg_get(g, s->type, rank, a, 0);
      if (!rg_ok(p)) return;
      parts[i] = p.op;
    }
    if (cx_shape_elems(s) / (s->dims[d] ? s->dims[d] : 1) * total > g->budget) return;
    rg_keep(g, rg_v(g, cxla_builder_concatenate(B_(g), n, parts, d)));
    return;
  }
  }
}

/* ---- dynamic slices and gather ---- */

void rg_op_dynamic(gen *g) {
  gval v;
  if (!rg_pick(g, has_rank, NULL, &v)) return;
  const cx_shape *s = &v.in->shape;
  int rank = s->rank;
  int64_t sizes[CXLA_MAX_RANK], maxd = 0;
  for (int d = 0; d < rank; d++) {
    sizes[d] = s->dims[d] <= 1 || rg_chance(g, 0.3) ? s->dims[d] : 1 + rg_below(&g->rz, (int)s->dims[d]);
    maxd = s->dims[d] > maxd ? s->dims[d] : maxd;
  }
  cxla_type it = rg_index_type(g, maxd);
  cxla_op idx[CXLA_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    gval i = rg_index_scalar(g, it, -2, s->dims[d] - sizes[d] + 2); /* out of range starts are clamped */
    if (!rg_ok(i)) return;
    idx[d] = i.op;
  }
  if (rg_chance(g, 0.5)) {
    rg_keep(g, rg_v(g, cxla_builder_dynamic_slice(B_(g), v.op, idx, sizes)));
  } else {
    gval u = rg_get(g, s->type, rank, sizes, 0);
    if (rg_ok(u)) rg_keep(g, rg_v(g, cxla_builder_dynamic_update_slice(B_(g), v.op, u.op, idx)));
  }
}

void rg_op_gather(gen *g) {
  gval v;
  if (!rg_pick(g, has_rank, NULL, &v)) return;
  const cx_shape *s = &v.in->shape;
  int R = s->rank, k = 1 + (R > 1 && rg_chance(g, 0.3));
  int64_t map[CXLA_MAX_RANK], slice[CXLA_MAX_RANK], coll[CXLA_MAX_RANK], off[CXLA_MAX_RANK], maxd = 1;
  int used[CXLA_MAX_RANK] = {0}, ncoll = 0;
  for (int i = 0; i < k; i++) {
    int d;
    do d = rg_below(&g->rz, R); while (used[d]);
    used[d] = 1, map[i] = d;
  }
  for (int d = 0; d < R; d++) {
    slice[d] = used[d] ? (rg_chance(g, 0.7) ? 1 : 1 + rg_below(&g->rz, (int)(s->dims[d] ? s->dims[d] : 1)))
                       : (rg_chance(g, 0.6) ? s->dims[d] : 1 + rg_below(&g->rz, (int)(s->dims[d] ? s->dims[d] : 1)));
    if (slice[d] > s->dims[d]) slice[d] = s->dims[d];
    if (used[d] && slice[d] == 1 && rg_chance(g, 0.7)) coll[ncoll++] = d;
    maxd = s->dims[d] > maxd ? s->dims[d] : maxd;
  }
  /* indices: batch dims then the index vector (implicit when k == 1 sometimes) */
  int nb = rg_below(&g->rs, 3), implicit = k == 1 && rg_chance(g, 0.4);
  int64_t idims[CXLA_MAX_RANK], nidx = 1;
  for (int i = 0; i < nb; i++) idims[i] = rg_size(g, 1, 6), nidx *= idims[i];
  int irank = nb + !implicit;
  if (!implicit) idims[nb] = k;
  int noff = R - ncoll, orank = nb + noff;
  int64_t outn = nidx;
  for (int d = 0; d < R; d++) outn *= slice[d];
  if (outn > g->budget) return;
  for (int i = 0, j = 0; i < orank && j < noff; i++) /* sorted offset positions */
    if (orank - i == noff - j || rg_chance(g, 0.5)) off[j++] = i;
  cxla_type it = rg_index_type(g, maxd);
  rg_val range = {-2, (double)maxd + 1, 0, 0, 0};
  if (cx_type_kind(it) == CX_KIND_UINT) range.lo = 0;
  gval ind;
  if (g->cur->depth == 0 && rg_chance(g, 0.6)) {
    ind = rg_param_new(g, it, irank, idims, range);
  } else {
    ind = rg_get(g, it, irank, idims, 1);
  }
  if (!rg_ok(ind)) return;
  cxla_gather_dims gd;
  memset(&gd, 0, sizeof gd);
  gd.noffset = noff, gd.offset_dims = off;
  gd.ncollapsed = ncoll, gd.collapsed_slice_dims = coll;
  gd.nstart_index_map = k, gd.start_index_map = map;
  gd.index_vector_dim = nb;
  gd.nslice_sizes = R, gd.slice_sizes = slice;
  rg_keep(g, rg_v(g, cxla_builder_gather(B_(g), v.op, ind.op, &gd)));
}

/* ---- reductions ---- */

static double identity(cxla_type t, const char *op) {
  double lo = 0, hi = 0;
  if (cx_type_is_float(t)) lo = -INFINITY, hi = INFINITY;
  else if (t == CXLA_PRED) lo = 0, hi = 1;
  else if (cx_type_kind(t) == CX_KIND_UINT) lo = 0, hi = ldexp(1, cx_type_bits(t)) - 1;
  else lo = -ldexp(1, cx_type_bits(t) - 1), hi = -lo - 1;
  if (!strcmp(op, "maximum")) return lo;
  if (!strcmp(op, "minimum")) return hi;
  if (!strcmp(op, "multiply")) return 1;
  if (!strcmp(op, "and")) return t == CXLA_PRED ? 1 : cx_type_kind(t) == CX_KIND_UINT ? hi : -1;
  return 0;
}

void rg_op_reduce(gen *g) {
  gval v;
  if (!rg_pick(g, has_rank, NULL, &v) && !rg_pick(g, NULL, NULL, &v)) return;
  const cx_shape *s = &v.in->shape;
  cxla_type t = s->type;
  int rank = s->rank, r = rg_below(&g->rs, 100);
  int64_t dims[CXLA_MAX_RANK];
  int n = 0;
  double cnt = 1;
  if (r < 30) for (int d = 0; d < rank; d++) dims[n++] = d;
  else if (r < 65) { if (rank) dims[n++] = rank - 1; }
  else if (r < 90) { if (rank) dims[n++] = 0; }
  else for (int d = 0; d < rank; d++) if (rg_chance(g, 0.5)) dims[n++] = d;
  for (int i = 0; i < n; i++) cnt *= (double)s->dims[dims[i]];
  const char *op;
  if (t == CXLA_PRED) op = rg_chance(g, 0.5) ? "and" : "or";
  else if (cx_type_is_float(t)) {
    int k = rg_below(&g->rs, 100);
    op = k < 55 ? "add" : k < 75 ? "maximum" : k < 95 ? "minimum" : "multiply";
    if (!strcmp(op, "multiply") && cnt > 8) op = "add";
  } else {
    static const char *const iops[] = {"add", "add", "maximum", "minimum", "multiply", "and", "or", "xor"};
    op = iops[rg_below(&g->rs, CX_ARRAY_LEN(iops))];
  }
  if (!strcmp(op, "multiply") && cx_type_is_float(t)) v = rg_bounded(g, v, 1.5);
  if (!strcmp(op, "add") && cx_type_is_float(t) && rg_mag(g, v) * cnt > (t == CXLA_F16 ? 300 : 1e6))
    v = bin(g, "multiply", v, like(g, v, ldexp(1, -(int)ceil(log2(cnt + 1)))));
  cxla_computation *red = rg_reducer(g, t, op);
  if (!rg_ok(v) || !red) return;
  gval init = rg_const(g, t, identity(t, op));
  gval res = rg_v(g, cxla_builder_reduce(B_(g), 1, &v.op, &init.op, n, dims, red));
  rg_keep(g, res);
  if (rg_ok(res) && !strcmp(op, "add") && cx_type_is_float(t) && cnt > 1 && rg_chance(g, 0.4)) /* a mean */
    rg_keep(g, bin(g, "multiply", res, like(g, res, 1.0 / cnt)));
}

void rg_op_argmax(gen *g) {
  gval v;
  if (!rg_pick(g, exact_ranked, NULL, &v)) return;
  const cx_shape *s = &v.in->shape;
  int64_t d = rg_below(&g->rz, s->rank);
  if (s->dims[d] > 2147483647) return;
  int is_min = rg_chance(g, 0.3);
  cxla_computation *red = rg_argmax_reducer(g, s->type, is_min);
  if (!red) return;
  gval iota = rg_v(g, cxla_builder_iota(B_(g), CXLA_S32, s->rank, s->dims, d));
  gval iv = rg_const(g, s->type, identity(s->type, is_min ? "minimum" : "maximum")), ii = rg_const(g, CXLA_S32, 0);
  cxla_op ops[2] = {v.op, iota.op}, inits[2] = {iv.op, ii.op};
  gval res = rg_v(g, cxla_builder_reduce(B_(g), 2, ops, inits, 1, &d, red));
  if (!rg_ok(res)) return;
  rg_keep(g, rg_v(g, cxla_builder_get_tuple_element(B_(g), res.op, 1)));
  if (rg_chance(g, 0.5)) rg_keep(g, rg_v(g, cxla_builder_get_tuple_element(B_(g), res.op, 0)));
}

/* ---- dot ---- */

typedef struct dotdim {
  int role; /* 0 batch, 1 free, 2 contracting */
  int k;    /* which batch / contracting dim */
  int64_t size;
} dotdim;

static void shuffle(gen *g, dotdim *x, int n) {
  for (int i = n - 1; i > 0; i--) {
    int j = rg_below(&g->rz, i + 1);
    dotdim t = x[i];
    x[i] = x[j], x[j] = t;
  }
}

void rg_op_dot(gen *g) {
  int r = rg_below(&g->rs, 100);
  cxla_type t = r < 65 ? CXLA_F32 : r < 80 ? CXLA_F64 : r < 90 ? CXLA_F16 : r < 95 ? CXLA_BF16 : CXLA_S32;
  if ((t == CXLA_F16 || t == CXLA_BF16) && !rg_has(g, RG_F_HALF)) t = CXLA_F32;
  if (t == CXLA_S32 && !rg_has(g, RG_F_INT)) t = CXLA_F32;
  int nb = rg_below(&g->rs, 100) < 55 ? 0 : rg_chance(g, 0.8) ? 1 : 2;
  int nc = rg_chance(g, 0.85) ? 1 : 2;
  int lf = rg_chance(g, 0.85) ? 1 : rg_chance(g, 0.5) ? 0 : 2, rf = rg_chance(g, 0.85) ? 1 : rg_chance(g, 0.5) ? 0 : 2;
  int64_t bs[2], cs[2], K = 1, work = 1;
  for (int i = 0; i < nb; i++) bs[i] = rg_size(g, 1, 6), work *= bs[i];
  for (int i = 0; i < nc; i++) cs[i] = rg_chance(g, 0.1) ? 1 : rg_size(g, 2, nc == 1 ? 64 : 12), K *= cs[i];
  dotdim L[6], R[6];
  int nl = 0, nr = 0;
  for (int i = 0; i < nb; i++) L[nl++] = (dotdim){0, i, bs[i]}, R[nr++] = (dotdim){0, i, bs[i]};
  for (int i = 0; i < nc; i++) L[nl++] = (dotdim){2, i, cs[i]}, R[nr++] = (dotdim){2, i, cs[i]};
  for (int i = 0; i < lf; i++) L[nl++] = (dotdim){1, i, rg_chance(g, 0.1) ? 1 : rg_size(g, 2, 40)};
  for (int i = 0; i < rf; i++) R[nr++] = (dotdim){1, i, rg_chance(g, 0.1) ? 1 : rg_size(g, 2, 40)};
  for (int i = nb + nc; i < nl; i++) work *= L[i].size;
  for (int i = nb + nc; i < nr; i++) work *= R[i].size;
  if (work * K > (g->big ? 1 << 22 : 1 << 20) || work > g->budget) return;
  if (rg_chance(g, 0.6)) shuffle(g, L, nl); /* transposed operands, contracting dims anywhere */
  if (rg_chance(g, 0.6)) shuffle(g, R, nr);
  int64_t ld[6], rd[6], lb[2], rb[2], lc[2], rc[2];
  for (int i = 0; i < nl; i++) {
    ld[i] = L[i].size;
    if (L[i].role == 0) lb[L[i].k] = i;
    if (L[i].role == 2) lc[L[i].k] = i;
  }
  for (int i = 0; i < nr; i++) {
    rd[i] = R[i].size;
    if (R[i].role == 0) rb[R[i].k] = i;
    if (R[i].role == 2) rc[R[i].k] = i;
  }
  gval a = rg_get(g, t, nl, ld, 0), b = rg_get(g, t, nr, rd, 0);
  if (cx_type_is_float(t)) a = rg_bounded(g, a, 4), b = rg_bounded(g, b, 4);
  if (!rg_ok(a) || !rg_ok(b)) return;
  cxla_dot_dims dd = {nb, nc, lb, rb, lc, rc};
  gval d = rg_keep(g, rg_v(g, cxla_builder_dot(B_(g), a.op, b.op, &dd)));
  if (!rg_ok(d) || !cx_type_is_float(t) || d.in->shape.rank == 0 || !rg_chance(g, 0.35)) return;
  /* a dense layer's epilogue: bias along the last dimension, then an activation */
  const cx_shape *ds = &d.in->shape;
  int64_t last = ds->rank - 1, n = ds->dims[last];
  gval bias = rg_get(g, t, 1, &n, 0);
  if (!rg_ok(bias)) return;
  gval y = bin(g, "add", d, rg_v(g, cxla_builder_broadcast(B_(g), bias.op, ds->rank, ds->dims, &last)));
  int act = rg_below(&g->rs, 4);
  if (act == 0) y = bin(g, "maximum", y, like(g, y, 0));
  else if (act == 1 && rg_has(g, RG_F_TRANSC)) y = un(g, "tanh", y);
  else if (act == 2 && rg_has(g, RG_F_TRANSC)) y = un(g, "logistic", y);
  rg_keep(g, y);
}

/* ---- reduce-window ---- */

void rg_op_reduce_window(gen *g) {
  gval v;
  if (!rg_pick(g, has_rank, NULL, &v)) return;
  const cx_shape *s = &v.in->shape;
  cxla_type t = s->type;
  if (t == CXLA_PRED) return;
  cxla_window_dim w[CXLA_MAX_RANK];
  int64_t n = 1;
  memset(w, 0, sizeof w);
  for (int d = 0; d < s->rank; d++) {
    cxla_window_dim *x = &w[d];
    x->lhs_dilate = rg_chance(g, 0.1) ? 2 : 1;
    x->rhs_dilate = rg_chance(g, 0.1) ? 2 : 1;
    if (rg_chance(g, 0.3)) x->pad_lo = rg_size(g, 0, 2), x->pad_hi = rg_size(g, 0, 2);
    int64_t in = s->dims[d] ? (s->dims[d] - 1) * x->lhs_dilate + 1 + x->pad_lo + x->pad_hi : x->pad_lo + x->pad_hi;
    x->size = rg_chance(g, 0.3) ? 1 : rg_size(g, 1, 4);
    if ((x->size - 1) * x->rhs_dilate + 1 > in) x->size = 1, x->rhs_dilate = 1;
    if (in < 1) x->pad_hi += 1, in += 1;
    x->stride = rg_chance(g, 0.6) ? 1 : rg_size(g, 1, 3);
    n *= (in - ((x->size - 1) * x->rhs_dilate + 1)) / x->stride + 1;
  }
  if (n > g->budget) return;
  const char *op = rg_below(&g->rs, 100) < 50 ? "add" : rg_chance(g, 0.5) ? "maximum" : "minimum";
  if (!strcmp(op, "add") && t == CXLA_F16 && rg_mag(g, v) > 8) v = rg_bounded(g, v, 8);
  cxla_computation *red = rg_reducer(g, t, op);
  if (!red || !rg_ok(v)) return;
  gval init = rg_const(g, t, identity(t, op));
  rg_keep(g, rg_v(g, cxla_builder_reduce_window(B_(g), 1, &v.op, &init.op, w, red)));
}

