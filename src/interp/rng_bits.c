/* rng_bits.c — rng-bit-generator as XLA defines it (RngBitGeneratorExpander with
 * xla/hlo/builder/lib/prng.cc), written from those definitions element by element:
 *
 * Threefry2x32-20 (algorithm=rng_three_fry), state u64[2] = [key, counter]: 64-bit elements
 * take Threefry(counter + i) of their linear index i, low word first; narrower elements split
 * the shape in halves along its first even dimension (else its first largest): element j of
 * that dimension takes word j % 2 of Threefry(counter + h), h the linear index of the element
 * in the half shape (j / 2 in that dimension), truncated to the element's width. The counter
 * advances by the elements generated (64-bit: n; narrower: the half shape's).
 *
 * Philox4x32-10 (rng_philox, and rng_default as on XLA:CPU): a 128-bit counter [lo, hi] =
 * state[1], state[2] (u64[3]) or state[1], state[0] (u64[2]: the key is the high word), block
 * b = Philox(counter + b) gives 4 words; element i takes word i % 4 of block i / 4 (32 bits
 * and narrower, truncated) or words 2(i % 2), 2(i % 2) + 1 of block i / 2 (64 bits, low
 * first). The counter advances by the blocks used; u64[2] keeps only its low word.
 *
 * The key is state[0] as two words, low first. Bits are stored as the result's element type
 * (floats get the raw bits). */
#include <string.h>
#include "interp/index_util.h"
#include "interp/internal.h"

static uint32_t rotl(uint32_t v, int d) { return (v << d) | (v >> (32 - d)); }

/* Threefry2x32 with 20 rounds, Random123's rotations and key schedule. */
static void threefry(uint64_t key, uint64_t ctr, uint32_t out[2]) {
  static const int rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  uint32_t ks[3] = {(uint32_t)key, (uint32_t)(key >> 32), 0x1BD11BDA};
  ks[2] ^= ks[0] ^ ks[1];
  uint32_t x[2] = {(uint32_t)ctr + ks[0], (uint32_t)(ctr >> 32) + ks[1]};
  for (int group = 0; group < 5; group++) {
    for (int r = 0; r < 4; r++) {
      x[0] += x[1];
      x[1] = rotl(x[1], rot[(group % 2) * 4 + r]) ^ x[0];
    }
    /* injection s = group + 1: ks[s % 3], ks[(s + 1) % 3] + s */
    x[0] += ks[(group + 1) % 3];
    x[1] += ks[(group + 2) % 3] + (uint32_t)(group + 1);
  }
  out[0] = x[0];
  out[1] = x[1];
}

/* Philox4x32 with 10 rounds on counter words c (low first) and key (k0, k1). */
void cx_philox4x32(const uint32_t c[4], uint32_t k0, uint32_t k1, uint32_t out[4]) {
  uint32_t x[4] = {c[0], c[1], c[2], c[3]};
  for (int r = 0; r < 10; r++) {
    uint64_t p0 = (uint64_t)x[0] * 0xD2511F53u, p1 = (uint64_t)x[2] * 0xCD9E8D57u;
    uint32_t y[4] = {(uint32_t)(p1 >> 32) ^ x[1] ^ k0, (uint32_t)p1, (uint32_t)(p0 >> 32) ^ x[3] ^ k1, (uint32_t)p0};
    memcpy(x, y, sizeof x);
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  memcpy(out, x, sizeof x);
}

/* Stores the low `bits` of v as element i of t (a float takes the bit pattern). */
static void store_bits(cxla_type t, void *data, int64_t i, uint64_t v) {
  size_t es = cxla_type_size(t);
  memcpy((char *)data + (size_t)i * es, &v, es); /* little-endian: the low bytes */
}

/* The dimension XLA's SplitShapeIntoHalves splits: the first even one, else the first largest. */
static int split_dim(const cx_shape *s) {
  for (int d = 0; d < s->rank; d++)
    if (s->dims[d] % 2 == 0) return d;
  int best = 0;
  for (int d = 1; d < s->rank; d++)
    if (s->dims[d] > s->dims[best]) best = d;
  return best;
}

static uint64_t threefry_bits(const cx_shape *ds, uint64_t key, uint64_t ctr, void *out) {
  int64_t n = cx_shape_elems(ds);
  uint32_t w[2];
  if (cx_type_bits(ds->type) == 64) {
    for (int64_t i = 0; i < n; i++) {
      threefry(key, ctr + (uint64_t)i, w);
      store_bits(ds->type, out, i, w[0] | (uint64_t)w[1] << 32);
    }
    return ctr + (uint64_t)n;
  }
  if (ds->rank == 0) {
    threefry(key, ctr, w);
    store_bits(ds->type, out, 0, w[0]);
    return ctr + 1;
  }
  int sd = split_dim(ds);
  cx_shape half = *ds;
  half.dims[sd] = (ds->dims[sd] + 1) / 2;
  int64_t hstr[CXLA_MAX_RANK], idx[CXLA_MAX_RANK] = {0};
  cx_shape_strides(&half, hstr);
  for (int64_t i = 0; i < n; i++, cx_idx_next(ds->rank, ds->dims, idx)) {
    int64_t h = 0;
    for (int d = 0; d < ds->rank; d++) h += (d == sd ? idx[d] / 2 : idx[d]) * hstr[d];
    threefry(key, ctr + (uint64_t)h, w);
    store_bits(ds->type, out, i, w[idx[sd] % 2]);
  }
  return ctr + (uint64_t)cx_shape_elems(&half);
}

/* *lo, *hi += v (128 bits). */
static void add128(uint64_t *lo, uint64_t *hi, uint64_t v) {
  uint64_t l = *lo + v;
  *hi += l < *lo;
  *lo = l;
}

static void philox_bits(const cx_shape *ds, uint64_t key, uint64_t *lo, uint64_t *hi, void *out) {
  int64_t n = cx_shape_elems(ds);
  int wide = cx_type_bits(ds->type) == 64, per = wide ? 2 : 4;
  int64_t blocks = (n + per - 1) / per;
  for (int64_t b = 0; b < blocks; b++) {
    uint64_t l = *lo, h = *hi;
    add128(&l, &h, (uint64_t)b);
    uint32_t c[4] = {(uint32_t)l, (uint32_t)(l >> 32), (uint32_t)h, (uint32_t)(h >> 32)}, w[4];
    cx_philox4x32(c, (uint32_t)key, (uint32_t)(key >> 32), w);
    for (int j = 0; j < per && b * per + j < n; j++)
      store_bits(ds->type, out, b * per + j, wide ? w[2 * j] | (uint64_t)w[2 * j + 1] << 32 : w[j]);
  }
  add128(lo, hi, (uint64_t)blocks);
}

CX_INTERP_EVALUATOR(cx_interp_rng_bit_generator) {
  *out = NULL;
  CX_TRY(cx_hv_check_array(st, in, ops[0], 1, "state"));
  const cx_shape *ss = &ops[0]->shape;
  if (ss->type != CXLA_U64 || ss->dims[0] < 2 || ss->dims[0] > 3 || in->shape.type != CXLA_TUPLE ||
      in->shape.ntuple != 2)
    return cx_hv_bad(st, in, "needs a u64[2] or u64[3] state and a (state, bits) result");
  const uint64_t *s = ops[0]->data;
  const cx_shape *ds = &in->shape.tuple[1];
  cx_shape plain = *ds;
  plain.has_layout = 0;
  cxla_literal *res[2] = {cx_hv_literal(st, in, ss), NULL};
  res[1] = res[0] ? cx_hv_literal(st, in, &plain) : NULL;
  if (!res[1]) {
    cxla_literal_destroy(res[0]);
    return CXLA_ERR_OUT_OF_MEMORY;
  }
  uint64_t *ns = res[0]->data;
  ns[0] = s[0];
  if (in->a.rng_algorithm == CX_RNG_THREE_FRY) {
    ns[1] = threefry_bits(&plain, s[0], s[1], res[1]->data);
    if (ss->dims[0] == 3) ns[2] = s[2];
  } else {
    uint64_t lo = s[1], hi = ss->dims[0] == 3 ? s[2] : s[0];
    philox_bits(&plain, s[0], &lo, &hi, res[1]->data);
    ns[1] = lo;
    if (ss->dims[0] == 3) ns[2] = hi;
  }
  return cx_hv_finish(st, in, 2, res, out);
}
