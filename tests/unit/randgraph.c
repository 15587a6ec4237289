/* randgraph.c — the random graph generator's core: PRNG, the value pool, shapes and types,
 * fresh values (parameters, iota, constants), adapting a value to a wanted type and shape, the
 * step dispatcher, and rg_generate. Every builder call is followed by the analysis of what it
 * added (rg_v), so the generator knows each value's range and exactness while it builds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "randgraph_int.h"
#include "ir/types.h"

/* ---- PRNG (splitmix64: tiny, good enough, the same everywhere) ---- */

uint64_t rg_next(rg_rng *r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
int rg_below(rg_rng *r, int n) { return n <= 0 ? 0 : (int)(rg_next(r) % (uint64_t)n); }
double rg_unit(rg_rng *r) { return (double)(rg_next(r) >> 11) * 0x1.0p-53; }

int rg_has(const gen *g, unsigned f) { return (g->cfg.features & f) != 0; }
int rg_chance(gen *g, double p) { return rg_unit(&g->rs) < p; }
int rg_size(gen *g, int lo, int hi) { return hi <= lo ? lo : lo + rg_below(&g->rz, hi - lo + 1); }

/* ---- features ---- */

static const char *const feature_names[] = {"while",  "cond", "dot",     "reduce", "rwindow", "gather", "dynamic",
                                            "half",   "int",  "special", "big",    "zero",    "transc", "layout",
                                            "lib"};

const char *rg_feature_name(int bit) { return bit >= 0 && bit < CX_ARRAY_LEN(feature_names) ? feature_names[bit] : "?"; }

int rg_parse_features(const char *s, unsigned *out) {
  unsigned f = RG_F_ALL;
  int first = 1;
  while (s && *s) {
    while (*s == ',' || *s == ' ') s++;
    if (!*s) break;
    int neg = *s == '-';
    if (neg) s++;
    size_t n = strcspn(s, ", ");
    int bit = -1;
    for (int i = 0; i < CX_ARRAY_LEN(feature_names); i++)
      if (strlen(feature_names[i]) == n && !strncmp(s, feature_names[i], n)) bit = i;
    if (bit < 0) return -1;
    if (!neg && first) f = 0; /* a positive list names exactly what to build */
    first = 0;
    if (neg) f &= ~(1u << bit);
    else f |= 1u << bit;
    s += n;
  }
  *out = f;
  return 0;
}

void rg_config_default(rg_config *c) {
  memset(c, 0, sizeof *c);
  c->features = RG_F_ALL;
}

/* ---- values ---- */

int rg_ok(gval v) { return v.op.id != 0 && v.in != NULL; }

static void sync(gen *g) {
  gcomp *c = g->cur;
  cx_comp *cc = c->b->c;
  for (; c->analysed < cc->ninstrs; c->analysed++) {
    cx_instr *in = cc->instrs[c->analysed];
    if (in->op == CX_OP_PARAMETER) {
      if (c->depth == 0) rg_bounds_set(&g->bd, in, &g->params[in->a.index].v, 1);
      else rg_bounds_set(&g->bd, in, c->pleaves, c->npleaves);
    } else {
      rg_bounds_instr(&g->bd, in);
    }
  }
}

gval rg_v(gen *g, cxla_op op) {
  gval v = {op, NULL};
  if (!op.id) {
    g->failed = 1;
    return v;
  }
  sync(g);
  int idx = (op.id & CX_OP_INDEX_MASK) - 1;
  if (idx >= 0 && idx < g->cur->b->c->ninstrs) v.in = g->cur->b->c->instrs[idx];
  return v;
}

rg_val rg_info(gen *g, gval v) {
  rg_val bad = {-INFINITY, INFINITY, INFINITY, 1, 1};
  int n;
  const rg_val *r = rg_ok(v) ? rg_bounds_get(&g->bd, v.in, &n) : NULL;
  return r ? r[0] : bad;
}

int rg_is_exact(gen *g, gval v) {
  rg_val i = rg_info(g, v);
  return i.err == 0 && i.rel == 0 && !i.special && !i.bad;
}

double rg_mag(gen *g, gval v) {
  rg_val i = rg_info(g, v);
  return fmax(fabs(i.lo), fabs(i.hi));
}

gval rg_keep(gen *g, gval v) {
  gcomp *c = g->cur;
  if (!rg_ok(v) || v.in->shape.type == CXLA_TUPLE || rg_info(g, v).bad) return v;
  for (int i = 0; i < c->npool; i++)
    if (c->pool[i].in == v.in) return v;
  if (c->npool == RG_MAX_POOL) { /* forget an old one */
    memmove(c->pool, c->pool + 1, sizeof c->pool[0] * (RG_MAX_POOL - 1));
    c->npool--;
  }
  c->pool[c->npool++] = v;
  return v;
}

int rg_pick(gen *g, gfilter f, const void *arg, gval *out) {
  gcomp *c = g->cur;
  int idx[RG_MAX_POOL], n = 0;
  for (int i = 0; i < c->npool; i++)
    if (!f || f(g, c->pool[i], arg)) idx[n++] = i;
  if (!n) return 0;
  int k = rg_chance(g, 0.5) ? n - 1 - rg_below(&g->rs, n < 6 ? n : 6) : rg_below(&g->rs, n);
  *out = c->pool[idx[k]];
  return 1;
}

/* ---- types and shapes ---- */

cxla_type rg_pick_type(gen *g) {
  int r = rg_below(&g->rs, 100);
  cxla_type t = r < 55 ? CXLA_F32 : r < 63 ? CXLA_F64 : r < 69 ? CXLA_F16 : r < 75 ? CXLA_BF16 : r < 87 ? CXLA_S32
              : r < 91 ? CXLA_S8 : r < 95 ? CXLA_U32 : CXLA_PRED;
  if ((t == CXLA_F16 || t == CXLA_BF16) && !rg_has(g, RG_F_HALF)) t = CXLA_F32;
  if (!cx_type_is_float(t) && !rg_has(g, RG_F_INT)) t = CXLA_F32;
  return t;
}

static int max_dim(gen *g) { return g->cfg.max_dim > 0 ? g->cfg.max_dim : 40; }

static int64_t pick_dim(gen *g) {
  double u = rg_unit(&g->rz);
  int md = max_dim(g);
  int64_t d = u < 0.15 ? 1 : u < 0.6 ? rg_size(g, 2, 8) : rg_size(g, 9, 40);
  return d > md ? md : d;
}

static void cap_elems(gen *g, int rank, int64_t *dims) {
  for (;;) {
    int64_t n = 1;
    int big = 0;
    for (int d = 0; d < rank; d++) {
      n *= dims[d];
      if (dims[d] > dims[big]) big = d;
    }
    if (n <= g->budget || rank == 0) return;
    dims[big] = (dims[big] + 1) / 2;
  }
}

void rg_pick_shape(gen *g, int *rank, int64_t *dims) {
  int r = rg_below(&g->rs, 100);
  *rank = r < 10 ? 0 : r < 35 ? 1 : r < 70 ? 2 : r < 90 ? 3 : 4;
  for (int d = 0; d < *rank; d++) dims[d] = pick_dim(g);
  cap_elems(g, *rank, dims);
}

static int64_t elems_of(int rank, const int64_t *dims) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= dims[d];
  return n;
}

/* ---- fresh values ---- */

gval rg_param_new(gen *g, cxla_type t, int rank, const int64_t *dims, rg_val range) {
  if (g->cur->depth > 0) return rg_fresh(g, t, rank, dims, 1); /* nested: no parameters */
  if (g->nparams == g->pcap) {
    int cap = g->pcap ? 2 * g->pcap : 8;
    rg_param *np = cx_realloc(g->params, sizeof *np * (size_t)cap);
    if (!np) { g->failed = 1; gval none = {{0}, NULL}; return none; }
    g->params = np;
    g->pcap = cap;
  }
  g->params[g->nparams].v = range;
  cxla_shape s = {t, rank, dims, 0, NULL};
  cxla_op op = cxla_builder_parameter(g->cur->b, g->nparams, &s, NULL);
  g->nparams++;
  return rg_keep(g, rg_v(g, op));
}

static rg_val param_range(gen *g, cxla_type t, int exact) {
  rg_val r = {-1, 1, 0, 0, 0};
  int u = rg_below(&g->rz, 100);
  if (cx_type_is_float(t)) {
    if (u < 15) r.lo = 0.5, r.hi = 2;
    else if (u < 30) r.lo = -4, r.hi = 4;
    if (!exact && rg_has(g, RG_F_SPECIAL) && rg_chance(g, 0.08)) r.special = 1;
  } else if (t == CXLA_PRED) {
    r.lo = 0, r.hi = 1;
  } else if (cx_type_kind(t) == CX_KIND_UINT) {
    r.lo = 0, r.hi = u < 60 ? 16 : ldexp(1, cx_type_bits(t)) - 1;
  } else {
    double full = ldexp(1, cx_type_bits(t) - 1);
    if (u < 60) r.lo = -8, r.hi = 8;
    else if (u < 80 && t != CXLA_S8) r.lo = -1000, r.hi = 1000;
    else r.lo = -full, r.hi = full - 1;
  }
  return r;
}

gval rg_const(gen *g, cxla_type t, double v) {
  return rg_v(g, cxla_builder_constant_scalar(g->cur->b, t, v));
}

gval rg_bcast_to(gen *g, gval scalar, const cx_shape *s) {
  if (!rg_ok(scalar) || s->rank == 0) return scalar;
  return rg_v(g, cxla_builder_broadcast(g->cur->b, scalar.op, s->rank, s->dims, NULL));
}

gval rg_splat(gen *g, cxla_type t, int rank, const int64_t *dims, double v) {
  cx_shape s = cx_shape_array(t, rank, dims);
  return rg_bcast_to(g, rg_const(g, t, v), &s);
}

static double const_value(gen *g, cxla_type t) {
  static const double fl[] = {0, 1, -1, 0.5, 2, -0.25, 3, -1.5, 0.125};
  static const double in[] = {0, 1, -1, 2, 7, -3, 100, 5};
  if (t == CXLA_PRED) return rg_below(&g->rz, 2);
  if (cx_type_is_float(t)) {
    if (rg_below(&g->rz, 3) == 0) return (rg_below(&g->rz, 33) - 16) / 8.0;
    return fl[rg_below(&g->rz, CX_ARRAY_LEN(fl))];
  }
  double v = in[rg_below(&g->rz, CX_ARRAY_LEN(in))];
  if (cx_type_kind(t) == CX_KIND_UINT && v < 0) v = -v;
  if (t == CXLA_S8 && v > 100) v = 100;
  return v;
}

gval rg_fresh(gen *g, cxla_type t, int rank, const int64_t *dims, int exact) {
  int r = rg_below(&g->rs, 100);
  if (g->cur->depth == 0 && r < 60) return rg_param_new(g, t, rank, dims, param_range(g, t, exact));
  if (r < 75 && rank > 0 && t != CXLA_PRED) {
    int d = rg_below(&g->rz, rank); /* iota values must fit the type (f16: exactly up to 2048) */
    int64_t cap = t == CXLA_S8 ? 128 : t == CXLA_F16 ? 2048 : INT64_MAX;
    if (dims[d] <= cap) return rg_keep(g, rg_v(g, cxla_builder_iota(g->cur->b, t, rank, dims, d)));
  }
  int64_t n = elems_of(rank, dims);
  if (r < 90 || n > 64) return rg_keep(g, rg_splat(g, t, rank, dims, const_value(g, t)));
  cxla_literal *lit = cxla_literal_create(g->ctx, t, rank, dims);
  if (!lit) { g->failed = 1; gval none = {{0}, NULL}; return none; }
  for (int64_t i = 0; i < n; i++) cxla_literal_set_f64(lit, i, const_value(g, t));
  gval v = rg_v(g, cxla_builder_constant(g->cur->b, lit));
  cxla_literal_destroy(lit);
  return rg_keep(g, v);
}

cxla_type rg_index_type(gen *g, int64_t max_dim) {
  int r = rg_below(&g->rs, 10);
  cxla_type t = r < 7 ? CXLA_S32 : r < 8 ? CXLA_S64 : r < 9 ? CXLA_U32 : CXLA_S8;
  return t == CXLA_S8 && max_dim > 100 ? CXLA_S32 : t;
}

static int int_scalar(gen *g, gval v, const void *arg) {
  (void)arg;
  return v.in->shape.rank == 0 && cx_type_is_int(v.in->shape.type) && rg_is_exact(g, v);
}

gval rg_index_scalar(gen *g, cxla_type t, int64_t lo, int64_t hi) {
  gval s;
  /* a computed index (in a loop body: the counter), clamped into range by the op itself */
  if (rg_chance(g, 0.35) && rg_pick(g, int_scalar, NULL, &s))
    return s.in->shape.type == t ? s : rg_v(g, cxla_builder_convert(g->cur->b, s.op, t));
  int64_t v = lo + rg_below(&g->rz, (int)(hi - lo + 1));
  if (cx_type_kind(t) == CX_KIND_UINT && v < 0) v = 0;
  if (g->cur->depth == 0 && rg_chance(g, 0.4)) {
    rg_val range = {(double)lo, (double)hi, 0, 0, 0};
    if (cx_type_kind(t) == CX_KIND_UINT && range.lo < 0) range.lo = 0;
    return rg_param_new(g, t, 0, NULL, range);
  }
  return rg_const(g, t, (double)v);
}

/* ---- adapting values ---- */

static gval convert_to(gen *g, gval v, cxla_type t) {
  if (!rg_ok(v) || v.in->shape.type == t) return v;
  if (cx_type_is_float(v.in->shape.type) && !cx_type_is_float(t) && !rg_is_exact(g, v)) {
    gval none = {{0}, NULL};
    return none; /* the result would depend on rounding */
  }
  return rg_v(g, cxla_builder_convert(g->cur->b, v.op, t));
}

/* Same rank: slice or pad each dimension to the wanted size. */
static gval resize(gen *g, gval v, int rank, const int64_t *dims) {
  const cx_shape *s = RG_SHAPE(v);
  int64_t st[CXLA_MAX_RANK], li[CXLA_MAX_RANK], sr[CXLA_MAX_RANK], mid[CXLA_MAX_RANK];
  int need_slice = 0, need_pad = 0;
  int use_negpad = rg_chance(g, 0.2);
  for (int d = 0; d < rank; d++) {
    int64_t a = s->dims[d], w = dims[d];
    st[d] = 0, li[d] = a, sr[d] = 1, mid[d] = a;
    if (a > w && !use_negpad) {
      int64_t k = 1;
      if (w > 1 && rg_chance(g, 0.3)) k = 1 + rg_below(&g->rz, (int)((a - 1) / (w - 1) < 3 ? (a - 1) / (w - 1) : 3));
      if (w == 0) k = 1;
      int64_t span = w ? (w - 1) * k + 1 : 0;
      st[d] = rg_below(&g->rz, (int)(a - span + 1));
      li[d] = st[d] + span, sr[d] = k, mid[d] = w;
      need_slice = 1;
    } else if (a != w) {
      need_pad = 1;
    }
  }
  gval cur = v;
  if (need_slice) cur = rg_v(g, cxla_builder_slice(g->cur->b, cur.op, st, li, sr));
  if (need_pad) {
    int64_t lo[CXLA_MAX_RANK], hi[CXLA_MAX_RANK], in[CXLA_MAX_RANK];
    for (int d = 0; d < rank; d++) {
      int64_t a = mid[d], w = dims[d];
      in[d] = 0;
      if (a >= 2 && 2 * a - 1 <= w && rg_chance(g, 0.3)) in[d] = 1, a = 2 * a - 1;
      int64_t tot = w - a; /* may be negative: a crop */
      lo[d] = tot >= 0 ? rg_below(&g->rz, (int)tot + 1) : -rg_below(&g->rz, (int)-tot + 1);
      hi[d] = tot - lo[d];
    }
    gval pv = rg_const(g, cur.in->shape.type, const_value(g, cur.in->shape.type));
    cur = rg_v(g, cxla_builder_pad(g->cur->b, cur.op, pv.op, lo, hi, in));
  }
  return cur;
}

gval rg_fit(gen *g, gval v, cxla_type t, int rank, const int64_t *dims) {
  gval none = {{0}, NULL};
  gval cur = convert_to(g, v, t);
  if (!rg_ok(cur)) return none;
  const cx_shape *s = RG_SHAPE(cur);
  cx_shape want = cx_shape_array(t, rank, dims);
  if (cx_shape_same_dims(s, &want)) return cur;
  if (s->rank == 0) return rg_bcast_to(g, cur, &want);
  int64_t ns = cx_shape_elems(s), nw = elems_of(rank, dims);
  if (ns == nw && rg_chance(g, 0.7)) return rg_v(g, cxla_builder_reshape(g->cur->b, cur.op, rank, dims));
  if (s->rank == rank) {
    int64_t perm[CXLA_MAX_RANK], used = 0;
    int ok = 1;
    for (int d = 0; d < rank && ok; d++) { /* dims a permutation of the wanted ones? */
      ok = 0;
      for (int e = 0; e < rank; e++)
        if (!(used >> e & 1) && s->dims[e] == dims[d]) { perm[d] = e, used |= 1 << e, ok = 1; break; }
    }
    if (ok && rg_chance(g, 0.8)) return rg_v(g, cxla_builder_transpose(g->cur->b, cur.op, perm));
    return resize(g, cur, rank, dims);
  }
  if (s->rank < rank) {
    /* broadcast into a subsequence of the wanted dims, resizing first where sizes differ */
    int64_t map[CXLA_MAX_RANK], sub[CXLA_MAX_RANK];
    int k = 0;
    for (int d = 0; d < rank && k < s->rank; d++) /* random increasing positions */
      if (rank - d == s->rank - k || rg_chance(g, (double)(s->rank - k) / (rank - d))) map[k] = d, sub[k] = dims[d], k++;
    gval r = resize(g, cur, s->rank, sub);
    if (!rg_ok(r)) return none;
    return rg_v(g, cxla_builder_broadcast(g->cur->b, r.op, rank, dims, map));
  }
  /* higher rank: flatten, resize, reshape */
  int64_t flat = ns;
  gval f = rg_v(g, cxla_builder_reshape(g->cur->b, cur.op, 1, &flat));
  f = resize(g, f, 1, &nw);
  if (!rg_ok(f)) return none;
  return rg_v(g, cxla_builder_reshape(g->cur->b, f.op, rank, dims));
}

typedef struct want_t {
  cxla_type t;
  int rank;
  const int64_t *dims;
  int exact, same;
} want_t;

static int fits(gen *g, gval v, const void *arg) {
  const want_t *w = arg;
  const cx_shape *s = RG_SHAPE(v);
  if (w->exact && !rg_is_exact(g, v)) return 0;
  if (w->same) {
    cx_shape ws = cx_shape_array(w->t, w->rank, w->dims);
    return cx_shape_equal(s, &ws);
  }
  if (cx_type_is_float(s->type) && !cx_type_is_float(w->t) && !rg_is_exact(g, v)) return 0;
  return cx_shape_elems(s) > 0 || elems_of(w->rank, w->dims) == 0 || rg_chance(g, 0.3);
}

gval rg_get(gen *g, cxla_type t, int rank, const int64_t *dims, int exact) {
  want_t w = {t, rank, dims, exact, 1};
  gval v;
  if (rg_chance(g, 0.65)) {
    if (rg_chance(g, 0.5) && rg_pick(g, fits, &w, &v)) return v;
    w.same = 0;
    if (rg_pick(g, fits, &w, &v)) {
      gval r = rg_fit(g, v, t, rank, dims);
      if (rg_ok(r) && !rg_info(g, r).bad && (!exact || rg_is_exact(g, r))) {
        if (rg_chance(g, 0.3)) rg_keep(g, r);
        return r;
      }
    }
  }
  return rg_fresh(g, t, rank, dims, exact);
}

/* ---- reducers ---- */

const char *rg_comp_name(gen *g, const char *prefix, char *buf, size_t n) {
  snprintf(buf, n, "%s_%d", prefix, g->ncomps++);
  return buf;
}

static cxla_computation *cached(gen *g, const char *name) {
  for (int i = 0; i < g->nreducers; i++)
    if (!strcmp(g->reducer_names[i], name)) return g->reducers[i];
  return NULL;
}

static void cache(gen *g, const char *name, cxla_computation *c) {
  if (g->nreducers == CX_ARRAY_LEN(g->reducers)) return;
  snprintf(g->reducer_names[g->nreducers], sizeof g->reducer_names[0], "%s", name);
  g->reducers[g->nreducers++] = c;
}

cxla_computation *rg_reducer(gen *g, cxla_type t, const char *op) {
  char name[24];
  snprintf(name, sizeof name, "%s_%s", op, cxla_type_name(t));
  cxla_computation *c = cached(g, name);
  if (c) return c;
  cxla_builder *b = cxla_builder_create(g->m, name);
  cxla_shape s = {t, 0, NULL, 0, NULL};
  cxla_op x = cxla_builder_parameter(b, 0, &s, NULL), y = cxla_builder_parameter(b, 1, &s, NULL);
  cxla_op r = cxla_builder_binary(b, op, x, y);
  if (cxla_builder_finish(b, r, 0, &c) != CXLA_OK) { g->failed = 1; return NULL; }
  cache(g, name, c);
  return c;
}

/* (value, index) pairs: the larger (smaller) value wins, ties go to the smaller index. This
 * is associative and commutative for non-NaN values, so every reduction order agrees. */
cxla_computation *rg_argmax_reducer(gen *g, cxla_type t, int is_min) {
  char name[24];
  snprintf(name, sizeof name, "arg%s_%s", is_min ? "min" : "max", cxla_type_name(t));
  cxla_computation *c = cached(g, name);
  if (c) return c;
  cxla_builder *b = cxla_builder_create(g->m, name);
  cxla_shape sv = {t, 0, NULL, 0, NULL}, si = {CXLA_S32, 0, NULL, 0, NULL};
  cxla_op av = cxla_builder_parameter(b, 0, &sv, NULL), ai = cxla_builder_parameter(b, 1, &si, NULL);
  cxla_op bv = cxla_builder_parameter(b, 2, &sv, NULL), bi = cxla_builder_parameter(b, 3, &si, NULL);
  cxla_op wins = cxla_builder_compare(b, av, bv, is_min ? CXLA_LT : CXLA_GT, NULL);
  cxla_op tie = cxla_builder_and(b, cxla_builder_compare(b, av, bv, CXLA_EQ, NULL),
                                 cxla_builder_compare(b, ai, bi, CXLA_LT, NULL));
  cxla_op take = cxla_builder_or(b, wins, tie);
  cxla_op outs[2] = {cxla_builder_select(b, take, av, bv), cxla_builder_select(b, take, ai, bi)};
  if (cxla_builder_finish(b, cxla_builder_tuple(b, 2, outs), 0, &c) != CXLA_OK) { g->failed = 1; return NULL; }
  cache(g, name, c);
  return c;
}

/* ---- steps ---- */

static void rg_op_library(gen *g) {
  int r = rg_below(&g->rs, 100);
  if (r < 35) rg_op_topk(g);
  else if (r < 65) rg_op_cholesky(g);
  else if (r < 80) rg_op_random_bits(g);
  else rg_op_stochastic_convert(g);
}

void rg_step(gen *g) {
  int nested = g->cur->depth > 0;
  for (int tries = 0; tries < 8; tries++) {
    int r = rg_below(&g->rs, 100);
    if (r < 16) { rg_op_unary(g); return; }
    if (r < 38) { rg_op_binary(g); return; }
    if (r < 45) { rg_op_compare_select(g); return; }
    if (r < 48) { rg_op_clamp(g); return; }
    if (r < 52) { rg_op_convert(g); return; }
    if (r < 56) { rg_op_shape(g); return; }
    if (r < 64) { if (rg_has(g, RG_F_LAYOUT)) rg_op_layout(g); else rg_op_shape(g); return; }
    if (r < 68) { if (rg_has(g, RG_F_DYNAMIC)) { rg_op_dynamic(g); return; } continue; }
    if (r < 71) { if (rg_has(g, RG_F_GATHER)) { rg_op_gather(g); return; } continue; }
    if (r < 79) { if (rg_has(g, RG_F_REDUCE)) { rg_op_reduce(g); return; } continue; }
    if (r < 81) { if (rg_has(g, RG_F_REDUCE)) { rg_op_argmax(g); return; } continue; }
    if (r < 86) { if (rg_has(g, RG_F_DOT)) { rg_op_dot(g); return; } continue; }
    if (r < 88) { if (rg_has(g, RG_F_LIB)) { rg_op_library(g); return; } continue; }
    if (r < 92) { if (rg_has(g, RG_F_RWINDOW)) { rg_op_reduce_window(g); return; } continue; }
    if (r < 96) { if (rg_has(g, RG_F_WHILE) && g->cur->depth < 2 && (!nested || rg_chance(g, 0.3))) { rg_op_while(g); return; } continue; }
    if (rg_has(g, RG_F_COND) && g->cur->depth < 2 && (!nested || rg_chance(g, 0.3))) { rg_op_conditional(g); return; }
  }
}

/* ---- the whole graph ---- */

static void first_params(gen *g) {
  int n = 1 + rg_below(&g->rs, 3);
  for (int i = 0; i < n; i++) {
    int rank;
    int64_t dims[CXLA_MAX_RANK];
    cxla_type t = rg_pick_type(g);
    if (g->big && i == 0) { /* ~100k elements */
      static const int64_t shapes[][3] = {{316, 317, 0}, {64, 40, 41}, {100003, 0, 0}, {2, 250, 200}};
      int k = rg_below(&g->rz, 4);
      rank = shapes[k][2] ? 3 : shapes[k][1] ? 2 : 1;
      memcpy(dims, shapes[k], sizeof shapes[k]);
      t = CXLA_F32;
    } else {
      rg_pick_shape(g, &rank, dims);
    }
    rg_param_new(g, t, rank, dims, param_range(g, t, 0));
  }
}

/* The root: the newest value and, mostly, other values nothing uses yet (so that little of
 * the graph is dead code), plus now and then outputs that alias. */
static cxla_op pick_root(gen *g) {
  gcomp *c = g->cur;
  cxla_op outs[8];
  int n = 0;
  if (!c->npool) return rg_fresh(g, CXLA_F32, 0, NULL, 1).op;
  outs[n++] = c->pool[c->npool - 1].op;
  cx_comp *cc = c->b->c;
  for (int i = 0; i < cc->ninstrs; i++) cc->instrs[i]->aux = NULL;
  for (int i = 0; i < cc->ninstrs; i++)
    for (int j = 0; j < cc->instrs[i]->nops; j++) cc->instrs[i]->ops[j]->aux = cc;
  int sinks = 1 + rg_below(&g->rs, 5);
  for (int i = c->npool - 2; i >= 0 && n < 1 + sinks; i--)
    if (!c->pool[i].in->aux && c->pool[i].in->op != CX_OP_PARAMETER && rg_chance(g, 0.8)) outs[n++] = c->pool[i].op;
  for (int i = 0; i < cc->ninstrs; i++) cc->instrs[i]->aux = NULL;
  if (n < 6 && rg_chance(g, 0.3)) outs[n++] = c->pool[rg_below(&g->rs, c->npool)].op;
  if (n == 1 && rg_chance(g, 0.5)) return outs[0];
  /* outputs that alias: a parameter, the same value twice, a constant */
  if (n < 6 && g->nparams && rg_chance(g, 0.1)) outs[n++] = c->pool[0].op;
  if (n < 6 && rg_chance(g, 0.1)) {
    cxla_op dup = outs[rg_below(&g->rs, n)];
    outs[n++] = dup;
  }
  if (n < 6 && rg_chance(g, 0.05)) outs[n++] = rg_const(g, CXLA_F32, 1.5).op;
  return cxla_builder_tuple(c->b, n, outs);
}

cxla_status rg_generate(cxla_context *ctx, uint64_t seed, const rg_config *cfg, rg_graph *out) {
  memset(out, 0, sizeof *out);
  gen *g = cx_calloc(1, sizeof *g);
  gcomp *entry = cx_calloc(1, sizeof *entry);
  char name[48];
  snprintf(name, sizeof name, "rand_%llu", (unsigned long long)seed);
  cx_module *m = g && entry ? cxla_module_create(ctx, name) : NULL;
  if (!m) {
    cx_free(g);
    cx_free(entry);
    return CXLA_ERR_OUT_OF_MEMORY;
  }
  g->ctx = ctx;
  g->m = m;
  g->cfg = *cfg;
  g->rs.s = seed * 0x2545F4914F6CDD1Dull + 1;
  g->rz.s = seed ^ 0x5DEECE66DA3B1F27ull;
  rg_next(&g->rs);
  rg_next(&g->rz);
  rg_bounds_init(&g->bd, m);
  g->big = rg_has(g, RG_F_BIG) && cfg->max_dim == 0 && (rg_chance(g, 0.04) || cfg->big);
  g->budget = g->big ? 131072 : 4096;
  entry->b = cxla_builder_create(m, "main");
  g->cur = entry;
  cxla_status s = CXLA_OK;
  if (!entry->b) {
    s = CXLA_ERR_OUT_OF_MEMORY;
  } else {
    first_params(g);
    int steps = cfg->steps > 0 ? cfg->steps : 5 + rg_below(&g->rs, 28);
    /* a big graph first runs elementwise chains on its big values (multi-threaded kernels) */
    for (int i = 0; g->big && i < 2 + steps / 3 && !g->failed; i++) {
      static void (*const ew[])(gen *) = {rg_op_unary, rg_op_binary, rg_op_binary, rg_op_compare_select, rg_op_clamp};
      ew[rg_below(&g->rs, CX_ARRAY_LEN(ew))](g);
    }
    for (int i = 0; i < steps && cxla_builder_status(entry->b) == CXLA_OK && !g->failed; i++) rg_step(g);
    cxla_op root = pick_root(g);
    s = cxla_builder_finish(entry->b, root, 1, NULL);
    if (s == CXLA_OK && g->failed) /* a nested builder failed: a generator bug */
      s = cx_error(ctx, CXLA_ERR_INTERNAL, "a nested builder failed: %s", cxla_context_errmsg(ctx));
  }
  if (s == CXLA_OK) {
    out->text = cxla_module_to_string(m);
    if (!out->text) s = CXLA_ERR_OUT_OF_MEMORY;
  }
  out->m = m;
  out->nparams = g->nparams;
  out->params = g->params;
  if (s != CXLA_OK) {
    rg_graph_free(out);
  }
  rg_bounds_free(&g->bd);
  cx_free(entry);
  cx_free(g);
  return s;
}

void rg_graph_free(rg_graph *g) {
  cxla_module_destroy(g->m);
  cx_free(g->params);
  free(g->text);
  memset(g, 0, sizeof *g);
}

/* ---- inputs ---- */

cxla_literal *rg_make_input(const cx_shape *s, const rg_param *p, uint64_t seed) {
  cxla_literal *l = cx_literal_new(s);
  if (!l) return NULL;
  rg_rng r = {seed * 0x9E3779B97F4A7C15ull + 12345};
  rg_next(&r);
  int64_t n = cx_shape_elems(s);
  cxla_type t = s->type;
  double lo = p->v.lo, hi = p->v.hi;
  for (int64_t i = 0; i < n; i++) {
    double u = rg_unit(&r), v;
    if (cx_type_is_float(t)) {
      v = lo + (hi - lo) * u;
      if (p->v.special && rg_unit(&r) < 0.12) {
        static const double sp[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0};
        v = sp[rg_below(&r, 5)];
      }
    } else {
      v = floor(lo + (hi - lo + 1) * u);
      if (v > hi) v = hi;
      if (rg_unit(&r) < 0.1) { /* the ends of the range, where wrapping happens */
        double ends[4] = {lo, hi, 0, -1};
        v = ends[rg_below(&r, 4)];
        if (v < lo || v > hi) v = lo;
      }
    }
    cxla_literal_set_f64(l, i, v);
  }
  return l;
}
