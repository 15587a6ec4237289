/* rng.c — the random-number routines compiled code calls: rng-bit-generator (cx_rt_rng_bits;
 * backend/cpu/rng_bits.c emits the call), bit-exact with XLA's RngBitGeneratorExpander (the
 * interpreter's rng_bits.c states the definition), and rng (cx_rt_rng), with the values
 * interp/rng.c defines.
 *
 * The routine runs the generator's invocations in parallel on the pool, each writing the
 * elements it feeds: a Philox block its 4 (or 2 64-bit) elements; a Threefry counter of a
 * narrow type its two elements, j and j + 1 along the dimension XLA splits in halves (outer x
 * d x inner around it, which the sequencer works out once); a 64-bit Threefry counter its one
 * element. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/trace.h"
#include "ir/ir.h"
#include "ir/rng_dist.h"
#include "ir/types.h"
#include "rt/rt.h"
#include "rt/threadpool.h"
#include "util/util.h"

static inline uint32_t rotl32(uint32_t v, int d) { return (v << d) | (v >> (32 - d)); }

#define TF_ROUND(r) (x0 += x1, x1 = rotl32(x1, r) ^ x0)
#define TF_FOUR(a, b, c, d) (TF_ROUND(a), TF_ROUND(b), TF_ROUND(c), TF_ROUND(d))

/* Threefry2x32-20 of the 64-bit counter c, unrolled; k holds the key words and their parity. */
static inline void threefry2x32(const uint32_t k[3], uint64_t c, uint32_t *o0, uint32_t *o1) {
  uint32_t x0 = (uint32_t)c + k[0], x1 = (uint32_t)(c >> 32) + k[1];
  TF_FOUR(13, 15, 26, 6);
  x0 += k[1], x1 += k[2] + 1;
  TF_FOUR(17, 29, 16, 24);
  x0 += k[2], x1 += k[0] + 2;
  TF_FOUR(13, 15, 26, 6);
  x0 += k[0], x1 += k[1] + 3;
  TF_FOUR(17, 29, 16, 24);
  x0 += k[1], x1 += k[2] + 4;
  TF_FOUR(13, 15, 26, 6);
  x0 += k[2], x1 += k[0] + 5;
  *o0 = x0, *o1 = x1;
}

/* Philox4x32-10 of the 128-bit counter (lo, hi) with key words k0, k1. */
static inline void philox4x32(uint64_t lo, uint64_t hi, uint32_t k0, uint32_t k1, uint32_t o[4]) {
  uint32_t x0 = (uint32_t)lo, x1 = (uint32_t)(lo >> 32), x2 = (uint32_t)hi, x3 = (uint32_t)(hi >> 32);
  for (int r = 0; r < 10; r++, k0 += 0x9E3779B9u, k1 += 0xBB67AE85u) {
    uint64_t a = (uint64_t)0xD2511F53u * x0, b = (uint64_t)0xCD9E8D57u * x2;
    uint32_t n0 = (uint32_t)(b >> 32) ^ x1 ^ k0, n2 = (uint32_t)(a >> 32) ^ x3 ^ k1;
    x0 = n0, x1 = (uint32_t)b, x2 = n2, x3 = (uint32_t)a;
  }
  o[0] = x0, o[1] = x1, o[2] = x2, o[3] = x3;
}

typedef struct rng_job {
  int philox;
  int width;                  /* element bytes */
  int64_t n, outer, d, inner; /* elements; the Threefry split (outer x d x inner) */
  uint64_t key, lo, hi;       /* the counter: Threefry uses lo */
  char *out;
} rng_job;

static inline void put(const rng_job *t, int64_t i, uint64_t v) {
  memcpy(t->out + (size_t)i * (size_t)t->width, &v, (size_t)t->width); /* little-endian: low bytes */
}

/* Kernel ABI: args[0] is the job, the range is generator invocations. */
static void rng_range(void **args, int64_t begin, int64_t end) {
  const rng_job *t = args[0];
  uint32_t w[4];
  if (t->philox) {
    int per = t->width == 8 ? 2 : 4;
    for (int64_t b = begin; b < end; b++) {
      uint64_t lo = t->lo + (uint64_t)b, hi = t->hi + (lo < t->lo);
      philox4x32(lo, hi, (uint32_t)t->key, (uint32_t)(t->key >> 32), w);
      int64_t i = b * per;
      for (int j = 0; j < per && i + j < t->n; j++)
        put(t, i + j, per == 2 ? w[2 * j] | (uint64_t)w[2 * j + 1] << 32 : w[j]);
    }
    return;
  }
  uint32_t k[3] = {(uint32_t)t->key, (uint32_t)(t->key >> 32), 0};
  k[2] = 0x1BD11BDA ^ k[0] ^ k[1];
  if (t->width == 8) {
    for (int64_t i = begin; i < end; i++) {
      threefry2x32(k, t->lo + (uint64_t)i, &w[0], &w[1]);
      put(t, i, w[0] | (uint64_t)w[1] << 32);
    }
    return;
  }
  int64_t half = (t->d + 1) / 2;
  for (int64_t h = begin; h < end; h++) {
    threefry2x32(k, t->lo + (uint64_t)h, &w[0], &w[1]);
    int64_t r = h % t->inner, jh = h / t->inner % half, o = h / t->inner / half;
    int64_t i = (o * t->d + 2 * jh) * t->inner + r;
    put(t, i, w[0]);
    if (2 * jh + 1 < t->d) put(t, i + t->inner, w[1]);
  }
}

/* Invocations per hand-off. */
#define RNG_CHUNK 2048

void cx_rt_rng_bits(cx_rt *rt, int32_t algorithm, int32_t width, int64_t outer, int64_t d, int64_t inner,
                    const uint64_t *state, int64_t nstate, uint64_t *new_state, void *out, int32_t id) {
  if (rt->status != CXLA_OK) return;
  const char *name = rt->names && id >= 0 && rt->names[id] ? rt->names[id] : "rng-bit-generator";
  int philox = algorithm != CX_RNG_THREE_FRY; /* the default is Philox */
  if (!(width == 1 || width == 2 || width == 4 || width == 8) || outer < 0 || d < 0 || inner < 0 ||
      nstate < 2 || nstate > 2 + philox) {
    snprintf(rt->errmsg, sizeof rt->errmsg, "%s: bad rng-bit-generator arguments", name);
    rt->status = CXLA_ERR_INTERNAL;
    return;
  }
  int64_t t0 = rt->trace ? cx_trace_now() : 0;
  rng_job job = {.philox = philox, .width = width, .n = outer * d * inner, .outer = outer, .d = d,
                 .inner = inner, .key = state[0], .lo = state[1], .out = out};
  job.hi = nstate == 3 ? state[2] : state[0];
  int64_t calls = philox ? (job.n + (width == 8 ? 1 : 3)) / (width == 8 ? 2 : 4)
                  : width == 8 ? job.n : outer * ((d + 1) / 2) * inner;
  void *args[1] = {&job};
  if (calls > 0) cx_threadpool_parallel_for(rt->pool, rng_range, args, calls, RNG_CHUNK);
  /* the state after: the key, then the counter advanced by the invocations (state may be
   * new_state's memory: job holds the old values) */
  uint64_t lo = job.lo + (uint64_t)calls, hi = job.hi + (lo < job.lo);
  new_state[0] = job.key;
  new_state[1] = lo;
  if (nstate == 3) new_state[2] = philox ? hi : state[2];
  if (rt->trace) {
    cx_trace_args a = cx_rt_origin_args(rt, id);
    a.n = 2, a.key[0] = "elements", a.key[1] = "calls";
    a.val[0] = job.n, a.val[1] = calls;
    cx_trace_add(rt->trace, name, "library", t0, cx_trace_now(), &a);
  }
}

/* ---- rng(a, b): the values interp/rng.c defines (Philox words keyed by the instruction's
 * name hash, counter (block, run)), elements in parallel, each chunk with its own block ---- */

typedef struct rng_dist_job {
  int32_t type, normal, wide;
  uint64_t key, run;
  const void *a, *b;
  char *out;
} rng_dist_job;

typedef struct {
  int64_t block;
  uint32_t w[4];
} block_cache;

static inline uint32_t rng_word(const rng_dist_job *t, block_cache *c, int64_t j) {
  if (j >> 2 != c->block) {
    c->block = j >> 2;
    philox4x32((uint64_t)c->block, t->run, (uint32_t)t->key, (uint32_t)(t->key >> 32), c->w);
  }
  return c->w[j & 3];
}

static inline uint64_t rng_bits_at(const rng_dist_job *t, block_cache *c, int64_t i) {
  return t->wide ? rng_word(t, c, 2 * i) | (uint64_t)rng_word(t, c, 2 * i + 1) << 32 : rng_word(t, c, i);
}

/* An integer uniform in [a, b) from w (the difference of the bounds taken unsigned). */
static void uniform_int(const rng_dist_job *t, int64_t i, uint64_t w) {
  size_t es = cxla_type_size((cxla_type)t->type);
  int64_t a = cx_load_i64((cxla_type)t->type, t->a, 0), b = cx_load_i64((cxla_type)t->type, t->b, 0);
  uint64_t mask = es == 8 ? ~0ull : (1ull << (8 * es)) - 1, ua = (uint64_t)a & mask, ub = (uint64_t)b & mask;
  int above = cx_type_kind((cxla_type)t->type) == CX_KIND_SINT ? b > a : ub > ua;
  uint64_t v = (uint64_t)a;
  if (t->type == CXLA_PRED) v = !a && b ? (w & 1) : (uint64_t)a;
  else if (above) v = (uint64_t)a + w % ((ub - ua) & mask);
  memcpy(t->out + (size_t)i * es, &v, es); /* little-endian: the low bytes */
}

static void rng_dist_range(void **args, int64_t begin, int64_t end) {
  const rng_dist_job *t = args[0];
  cxla_type ty = (cxla_type)t->type;
  block_cache c = {.block = -1};
  double a = cx_type_is_float(ty) ? cx_load_f64(ty, t->a, 0) : 0, b = cx_type_is_float(ty) ? cx_load_f64(ty, t->b, 0) : 0;
  for (int64_t i = begin; i < end; i++) {
    if (t->normal) {
      int64_t p = i >> 1;
      double first, second;
      cx_rng_box_muller(cx_rng_unit(rng_bits_at(t, &c, 2 * p), t->wide), cx_rng_unit(rng_bits_at(t, &c, 2 * p + 1), t->wide),
                        &first, &second);
      cx_store_f64(ty, t->out, i, cx_rng_scale(a, b, i & 1 ? second : first));
    } else if (cx_type_is_float(ty)) {
      cx_store_f64(ty, t->out, i, cx_rng_between(a, b, cx_rng_unit(rng_bits_at(t, &c, i), t->wide)));
    } else {
      uniform_int(t, i, rng_bits_at(t, &c, i));
    }
  }
}

void cx_rt_rng(cx_rt *rt, int32_t distribution, int32_t type, int64_t n, const void *a, const void *b, uint64_t key,
               int64_t *runs, void *out, int32_t id) {
  if (rt->status != CXLA_OK) return;
  const char *name = rt->names && id >= 0 && rt->names[id] ? rt->names[id] : "rng";
  int64_t t0 = rt->trace ? cx_trace_now() : 0;
  rng_dist_job job = {.type = type, .normal = distribution == CX_RNG_NORMAL, .wide = cxla_type_size((cxla_type)type) == 8,
                      .key = key, .run = (uint64_t)(*runs)++, .a = a, .b = b, .out = out};
  void *args[1] = {&job};
  if (n > 0) cx_threadpool_parallel_for(rt->pool, rng_dist_range, args, n, 4 * RNG_CHUNK);
  if (rt->trace) {
    cx_trace_args ta = cx_rt_origin_args(rt, id);
    ta.n = 1, ta.key[0] = "elements", ta.val[0] = n;
    cx_trace_add(rt->trace, name, "library", t0, cx_trace_now(), &ta);
  }
}
