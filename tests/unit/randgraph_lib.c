/* randgraph_lib.c — the generator's library ops (feature "lib"): top-k of any pool value,
 * random bits from rng-bit-generator (Threefry and Philox, chained through the state they
 * return), stochastic-convert of an exact float with such bits, and the Cholesky factor of a
 * matrix that is SPD by construction, M = A A^T + c I, with a triangular solve against it.
 * The analysis cannot see that an arbitrary matrix is positive definite, so M is always built
 * in the shape randgraph_lib_rules.c recognizes: add(dot(A, A) over A's last dimension,
 * select(compare(iota, iota, EQ) [broadcast to the batch], c, 0)). */
#include <math.h>
#include "randgraph_int.h"

#define B_(g) ((g)->cur->b)

static gval gte(gen *g, gval t, int64_t i) { return rg_v(g, cxla_builder_get_tuple_element(B_(g), t.op, i)); }

static int topk_operand(gen *g, gval v, const void *arg) {
  (void)g, (void)arg;
  const cx_shape *s = &v.in->shape;
  return s->rank > 0 && s->type != CXLA_PRED && s->dims[s->rank - 1] > 0;
}

void rg_op_topk(gen *g) {
  gval v;
  if (!rg_pick(g, topk_operand, NULL, &v)) return;
  const cx_shape *s = &v.in->shape;
  int64_t n = s->dims[s->rank - 1];
  int64_t k = rg_chance(g, 0.15) ? n : rg_size(g, rg_chance(g, 0.1) ? 0 : 1, n < 8 ? (int)n : 8);
  gval t = rg_v(g, cxla_builder_topk(B_(g), v.op, k, rg_chance(g, 0.7)));
  if (!rg_ok(t)) return;
  rg_keep(g, gte(g, t, 0));
  rg_keep(g, gte(g, t, 1));
}

/* The (state, bits) tuple of one rng-bit-generator call on a fresh u64 state parameter. */
static gval random_bits(gen *g, cxla_type type, int rank, const int64_t *dims) {
  int philox = rg_chance(g, 0.5);
  int64_t sn = philox && rg_chance(g, 0.5) ? 3 : 2;
  rg_val range = {0, 65535, 0, 0, 0};
  gval st = rg_param_new(g, CXLA_U64, 1, &sn, range);
  if (!rg_ok(st)) return st;
  cxla_rng_algorithm alg = philox ? (rg_chance(g, 0.5) ? CXLA_RNG_PHILOX : CXLA_RNG_DEFAULT) : CXLA_RNG_THREE_FRY;
  gval t = rg_v(g, cxla_builder_rng_bit_generator(B_(g), st.op, alg, type, rank, dims));
  if (rg_ok(t) && rg_chance(g, 0.3)) /* a second draw from the state the first returns */
    t = rg_v(g, cxla_builder_rng_bit_generator(B_(g), gte(g, t, 0).op, alg, type, rank, dims));
  return t;
}

void rg_op_random_bits(gen *g) {
  /* not u64: the pool's values must fit a double's integers where they meet fresh parameters */
  static const cxla_type types[] = {CXLA_U32, CXLA_S32, CXLA_U8, CXLA_S8, CXLA_U16};
  int rank;
  int64_t dims[CXLA_MAX_RANK];
  rg_pick_shape(g, &rank, dims);
  gval t = random_bits(g, types[rg_below(&g->rs, CX_ARRAY_LEN(types))], rank, dims);
  if (rg_ok(t)) rg_keep(g, gte(g, t, 1));
}

static int exact_float(gen *g, gval v, const void *arg) {
  (void)arg;
  return cx_type_is_float(v.in->shape.type) && rg_is_exact(g, v);
}

void rg_op_stochastic_convert(gen *g) {
  gval v;
  if (!rg_pick(g, exact_float, NULL, &v)) return;
  const cx_shape *s = &v.in->shape;
  int bits = cx_type_bits(s->type);
  cxla_type ut = bits == 16 ? CXLA_U16 : bits == 32 ? CXLA_U32 : CXLA_U64;
  static const cxla_type to[] = {CXLA_S8, CXLA_S16, CXLA_S32, CXLA_S64};
  gval r = random_bits(g, ut, s->rank, s->dims);
  if (!rg_ok(r)) return;
  gval q = rg_v(g, cxla_builder_stochastic_convert(B_(g), v.op, gte(g, r, 1).op, to[rg_below(&g->rs, 4)]));
  rg_keep(g, q);
}

/* c I over [batch,] n, n: select(compare(iota, iota, EQ), c, 0), the mask broadcast over the
 * batch. */
static gval scaled_identity(gen *g, cxla_type t, int rank, const int64_t *dims, double c) {
  int64_t n = dims[rank - 1], nn[2] = {n, n};
  cxla_op i0 = cxla_builder_iota(B_(g), CXLA_S32, 2, nn, 0), i1 = cxla_builder_iota(B_(g), CXLA_S32, 2, nn, 1);
  gval mask = rg_v(g, cxla_builder_compare(B_(g), i0, i1, CXLA_EQ, NULL));
  if (rank == 3) {
    int64_t map[2] = {1, 2};
    mask = rg_v(g, cxla_builder_broadcast(B_(g), mask.op, 3, dims, map));
  }
  gval cc = rg_splat(g, t, rank, dims, c), zero = rg_splat(g, t, rank, dims, 0);
  if (!rg_ok(mask) || !rg_ok(cc) || !rg_ok(zero)) return mask;
  return rg_v(g, cxla_builder_select(B_(g), mask.op, cc.op, zero.op));
}

void rg_op_cholesky(gen *g) {
  cxla_type t = rg_chance(g, 0.7) ? CXLA_F32 : CXLA_F64;
  int64_t n = rg_size(g, 1, 10), m = rg_size(g, 1, 10), batch = rg_chance(g, 0.4) ? rg_size(g, 1, 3) : 0;
  int rank = batch ? 3 : 2;
  int64_t ad[3], md[3];
  if (batch) ad[0] = md[0] = batch;
  ad[rank - 2] = md[rank - 2] = md[rank - 1] = n;
  ad[rank - 1] = m;
  gval a = rg_bounded(g, rg_get(g, t, rank, ad, 0), 2);
  if (!rg_ok(a) || rg_info(g, a).special) return;
  int64_t last = rank - 1, b0 = 0;
  cxla_dot_dims dd = {batch ? 1 : 0, 1, &b0, &b0, &last, &last};
  gval gram = rg_v(g, cxla_builder_dot(B_(g), a.op, a.op, &dd));
  /* eigenvalues of A A^T + c I lie in [c, c + n m B^2]: c of that order keeps M well
   * conditioned (kappa <= 3), a power of two keeps it exact */
  double mag = rg_mag(g, a), c = ldexp(1, (int)ceil(log2(fmax(1, 0.5 * (double)(n * m) * mag * mag))));
  gval id = scaled_identity(g, t, rank, md, c);
  if (!rg_ok(gram) || !rg_ok(id)) return;
  gval mm = rg_chance(g, 0.5) ? rg_v(g, cxla_builder_add(B_(g), gram.op, id.op)) : rg_v(g, cxla_builder_add(B_(g), id.op, gram.op));
  int lower = rg_chance(g, 0.5);
  gval l = rg_keep(g, rg_v(g, cxla_builder_cholesky(B_(g), mm.op, lower)));
  if (!rg_ok(l) || !rg_chance(g, 0.7)) return;
  int left = rg_chance(g, 0.5);
  int64_t k = rg_size(g, 1, 6), bd[3];
  if (batch) bd[0] = batch;
  bd[rank - 2] = left ? n : k;
  bd[rank - 1] = left ? k : n;
  gval rhs = rg_bounded(g, rg_get(g, t, rank, bd, 0), 4);
  if (!rg_ok(rhs)) return;
  static const cxla_transpose tr[] = {CXLA_TRANSPOSE_NO, CXLA_TRANSPOSE_YES, CXLA_TRANSPOSE_ADJOINT};
  rg_keep(g, rg_v(g, cxla_builder_triangular_solve(B_(g), l.op, rhs.op, left, lower, 0, tr[rg_below(&g->rs, 3)])));
}
