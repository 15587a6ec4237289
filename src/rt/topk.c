/* topk.c — the top-k routine compiled code calls (cx_rt_topk; backend/cpu/topk.c emits the
 * call for every topk instruction): rows of the last dimension in
 * parallel on the pool, each by one pass that keeps the K best elements seen so far in a
 * binary heap whose root is the worst of them, so most elements cost one comparison with the
 * root; the heap is then emptied into order.
 *
 * The order is XLA's (a stable sort with a TOTALORDER comparison, ir/infer_reduce.c): an
 * element's key is an integer whose order is TOTALORDER (floats by their bits), and equal
 * keys keep the lower index first, which the scan gives for free: a later element never
 * displaces an equal one. Values are copied bit for bit from the operand.
 *
 * Types of 32 bits or fewer pack key and index into one 64-bit word (key above, the index
 * reversed below), so heap entries are single integers whose order is the output's: the
 * sift's comparisons become conditional moves instead of mispredicted branches on two fields
 * (top-64 of 4096 floats: 14.6 -> 8.9 us a row, bench/README.md). 64-bit types keep a key
 * and an index per entry. */
#include <stdio.h>
#include <string.h>
#include "core/trace.h"
#include "ir/ir.h"
#include "ir/types.h"
#include "rt/rt.h"
#include "rt/threadpool.h"
#include "util/util.h"

/* ---- 8 to 32-bit types: packed words, larger first ---- */

/* Restores the min-heap below position i (the root is the worst of the K kept). */
static void sift_packed(uint64_t *h, int64_t n, int64_t i) {
  uint64_t x = h[i];
  for (;;) {
    int64_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n) c += h[c + 1] < h[c]; /* the worse child */
    if (h[c] >= x) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = x;
}

/* An element's TOTALORDER key as an unsigned 32-bit number of the same order. */
static inline uint32_t ukey_f16(const char *p, int64_t j, const uint32_t *tab) {
  (void)tab;
  int16_t v;
  memcpy(&v, p + j * 2, 2);
  return (uint32_t)(int32_t)(v < 0 ? v ^ INT16_MAX : v) ^ 0x80000000u;
}
static inline uint32_t ukey_f32(const char *p, int64_t j, const uint32_t *tab) {
  (void)tab;
  int32_t v;
  memcpy(&v, p + j * 4, 4);
  return (uint32_t)(v < 0 ? v ^ INT32_MAX : v) ^ 0x80000000u;
}
static inline uint32_t ukey_s8(const char *p, int64_t j, const uint32_t *tab) {
  (void)tab;
  return (uint32_t)(int32_t)((const int8_t *)p)[j] ^ 0x80000000u;
}
static inline uint32_t ukey_s16(const char *p, int64_t j, const uint32_t *tab) {
  (void)tab;
  int16_t v;
  memcpy(&v, p + j * 2, 2);
  return (uint32_t)(int32_t)v ^ 0x80000000u;
}
static inline uint32_t ukey_s32(const char *p, int64_t j, const uint32_t *tab) {
  (void)tab;
  int32_t v;
  memcpy(&v, p + j * 4, 4);
  return (uint32_t)v ^ 0x80000000u;
}
static inline uint32_t ukey_u8(const char *p, int64_t j, const uint32_t *tab) {
  (void)tab;
  return ((const uint8_t *)p)[j];
}
static inline uint32_t ukey_u16(const char *p, int64_t j, const uint32_t *tab) {
  (void)tab;
  uint16_t v;
  memcpy(&v, p + j * 2, 2);
  return v;
}
static inline uint32_t ukey_u32(const char *p, int64_t j, const uint32_t *tab) {
  (void)tab;
  uint32_t v;
  memcpy(&v, p + j * 4, 4);
  return v;
}

static inline uint32_t ukey_s4(const char *p, int64_t j, const uint32_t *tab) {
  (void)tab;
  return (uint32_t)(int32_t)cx_wrap_int(CXLA_S4, ((const uint8_t *)p)[j]) ^ 0x80000000u;
}
static inline uint32_t ukey_u4(const char *p, int64_t j, const uint32_t *tab) {
  (void)tab;
  return ((const uint8_t *)p)[j] & 15u;
}
static inline uint32_t ukey_s2(const char *p, int64_t j, const uint32_t *tab) {
  (void)tab;
  return (uint32_t)(int32_t)cx_wrap_int(CXLA_S2, ((const uint8_t *)p)[j]) ^ 0x80000000u;
}
static inline uint32_t ukey_u2(const char *p, int64_t j, const uint32_t *tab) {
  (void)tab;
  return ((const uint8_t *)p)[j] & 3u;
}
/* 8- and 4-bit floats: the key of each code, from a table of the codes' f32 keys. */
static inline uint32_t ukey_tab(const char *p, int64_t j, const uint32_t *tab) { return tab[((const uint8_t *)p)[j]]; }

/* One row: the indices of the K best of row[0..n) into at[0..k), best first; h holds k words.
 * flip is 0 for the largest, all ones for the smallest (it reverses the key order, not the
 * index order: the lower index still wins a tie). n < 2^32 (cx_rt_topk checks). */
#define PACKED_ROW(T)                                                                         \
  static void row_##T(const char *row, int64_t n, int64_t k, int largest, void *hv, int32_t *at, \
                      const uint32_t *tab) {                                                  \
    uint64_t *h = hv;                                                                         \
    uint32_t flip = largest ? 0 : UINT32_MAX;                                                 \
    for (int64_t j = 0; j < k; j++) h[j] = (uint64_t)(ukey_##T(row, j, tab) ^ flip) << 32 | (UINT32_MAX - (uint32_t)j); \
    for (int64_t i = k / 2 - 1; i >= 0; i--) sift_packed(h, k, i);                           \
    uint64_t root = h[0];                                                                     \
    for (int64_t j = k; j < n; j++) {                                                         \
      uint64_t c = (uint64_t)(ukey_##T(row, j, tab) ^ flip) << 32 | (UINT32_MAX - (uint32_t)j);    \
      if (c > root) {                                                                         \
        h[0] = c;                                                                             \
        sift_packed(h, k, 0);                                                                 \
        root = h[0];                                                                          \
      }                                                                                       \
    }                                                                                         \
    for (int64_t m = k - 1; m > 0; m--) { /* the worst goes last */                           \
      uint64_t w = h[0];                                                                      \
      h[0] = h[m];                                                                            \
      sift_packed(h, m, 0);                                                                   \
      h[m] = w;                                                                               \
    }                                                                                         \
    for (int64_t j = 0; j < k; j++) at[j] = (int32_t)(UINT32_MAX - (uint32_t)h[j]);          \
  }
PACKED_ROW(f16)
PACKED_ROW(f32)
PACKED_ROW(s8)
PACKED_ROW(s16)
PACKED_ROW(s32)
PACKED_ROW(u8)
PACKED_ROW(u16)
PACKED_ROW(u32)
PACKED_ROW(s4)
PACKED_ROW(u4)
PACKED_ROW(s2)
PACKED_ROW(u2)
PACKED_ROW(tab)

/* ---- 64-bit types: a key and an index per entry ---- */

typedef struct {
  int64_t key;
  int64_t at;
} cand;

/* Whether a comes before b in the output: dir > 0 puts larger keys first, dir < 0 smaller
 * ones; equal keys keep the lower index first either way. */
static inline int before(int64_t dir, const cand *a, const cand *b) {
  if (a->key != b->key) return dir > 0 ? a->key > b->key : a->key < b->key;
  return a->at < b->at;
}

/* Restores the heap below position i: every parent comes after (is worse than) its children. */
static void sift_down(cand *h, int64_t n, int64_t i, int64_t dir) {
  cand x = h[i];
  for (;;) {
    int64_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && before(dir, &h[c], &h[c + 1])) c++; /* the worse child */
    if (!before(dir, &x, &h[c])) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = x;
}

static inline int64_t key_f64(const char *p, int64_t j) {
  int64_t v;
  memcpy(&v, p + j * 8, 8);
  return v < 0 ? v ^ INT64_MAX : v;
}
static inline int64_t key_s64(const char *p, int64_t j) {
  int64_t v;
  memcpy(&v, p + j * 8, 8);
  return v;
}
static inline int64_t key_u64(const char *p, int64_t j) { /* unsigned order as signed: flip the top bit */
  uint64_t v;
  memcpy(&v, p + j * 8, 8);
  return (int64_t)(v ^ (UINT64_C(1) << 63));
}

/* One row: as PACKED_ROW, h holding k cands. */
#define WIDE_ROW(T)                                                                          \
  static void row_##T(const char *row, int64_t n, int64_t k, int largest, void *hv, int32_t *at, \
                      const uint32_t *tab) {                                                 \
    (void)tab;                                                                               \
    cand *h = hv;                                                                            \
    int64_t dir = largest ? 1 : -1;                                                          \
    for (int64_t j = 0; j < k; j++) h[j] = (cand){key_##T(row, j), j};                      \
    for (int64_t i = k / 2 - 1; i >= 0; i--) sift_down(h, k, i, dir);                       \
    for (int64_t j = k; j < n; j++) {                                                       \
      cand c = {key_##T(row, j), j};                                                        \
      if (before(dir, &c, &h[0])) {                                                         \
        h[0] = c;                                                                           \
        sift_down(h, k, 0, dir);                                                            \
      }                                                                                     \
    }                                                                                       \
    for (int64_t m = k - 1; m > 0; m--) {                                                   \
      cand w = h[0];                                                                        \
      h[0] = h[m];                                                                          \
      sift_down(h, m, 0, dir);                                                              \
      h[m] = w;                                                                             \
    }                                                                                       \
    for (int64_t j = 0; j < k; j++) at[j] = (int32_t)h[j].at;                              \
  }
WIDE_ROW(f64)
WIDE_ROW(s64)
WIDE_ROW(u64)

typedef void (*row_fn)(const char *row, int64_t n, int64_t k, int largest, void *h, int32_t *at, const uint32_t *tab);

/* pred orders as u8 (0 < 1); bf16 and f16 alike by their 16 bits. */
static row_fn row_fn_of(int32_t type) {
  switch ((cxla_type)type) {
  case CXLA_F16: case CXLA_BF16: return row_f16;
  case CXLA_F32: return row_f32;
  case CXLA_F64: return row_f64;
  case CXLA_S8: return row_s8;
  case CXLA_S16: return row_s16;
  case CXLA_S32: return row_s32;
  case CXLA_S64: return row_s64;
  case CXLA_PRED: case CXLA_U8: return row_u8;
  case CXLA_U16: return row_u16;
  case CXLA_U32: return row_u32;
  case CXLA_U64: return row_u64;
  case CXLA_S4: return row_s4;
  case CXLA_U4: return row_u4;
  case CXLA_S2: return row_s2;
  case CXLA_U2: return row_u2;
  default: return cx_type_is_float((cxla_type)type) && cxla_type_size((cxla_type)type) == 1 ? row_tab : NULL;
  }
}

typedef struct topk_job {
  int32_t type, largest;
  int64_t n, k;
  const char *in;
  char *values;
  int32_t *indices;
  size_t esize;
  uint32_t tab[256]; /* 8- and 4-bit floats: the TOTALORDER key of every code */
  _Atomic int oom;
} topk_job;

/* Kernel ABI: args[0] is the job, the range is rows. */
static void topk_rows(void **args, int64_t begin, int64_t end) {
  topk_job *t = args[0];
  void *h = cx_malloc(sizeof(cand) * (size_t)t->k); /* a cand is as large as a packed word or larger */
  if (!h) {
    t->oom = 1;
    return;
  }
  row_fn f = row_fn_of(t->type);
  for (int64_t r = begin; r < end; r++) {
    const char *row = t->in + (size_t)(r * t->n) * t->esize;
    int32_t *io = t->indices + r * t->k;
    f(row, t->n, t->k, t->largest, h, io, t->tab);
    char *vo = t->values + (size_t)(r * t->k) * t->esize;
    for (int64_t j = 0; j < t->k; j++) memcpy(vo + (size_t)j * t->esize, row + (size_t)io[j] * t->esize, t->esize);
  }
  cx_free(h);
}

/* Rows per chunk: about this many elements scanned per hand-off. */
#define TOPK_CHUNK_ELEMS 32768

void cx_rt_topk(cx_rt *rt, int32_t type, int32_t largest, int64_t rows, int64_t n, int64_t k, const void *in,
                void *values, void *indices, int32_t id) {
  if (rt->status != CXLA_OK) return;
  const char *name = rt->names && id >= 0 && rt->names[id] ? rt->names[id] : "topk";
  if (!row_fn_of(type) || rows < 0 || n < 0 || k < 0 || k > n || n > INT32_MAX) {
    snprintf(rt->errmsg, sizeof rt->errmsg, "%s: bad top-k arguments (type %d, %lld rows of %lld, k=%lld)", name,
             (int)type, (long long)rows, (long long)n, (long long)k);
    rt->status = CXLA_ERR_INTERNAL;
    return;
  }
  int64_t t0 = rt->trace ? cx_trace_now() : 0;
  topk_job job = {.type = type, .largest = largest, .n = n, .k = k, .in = in, .values = values,
                  .indices = indices, .esize = cxla_type_size((cxla_type)type)};
  if (cx_type_is_float((cxla_type)type) && job.esize == 1)
    for (uint32_t c = 0; c < 256; c++) {
      float f = (float)cx_load_f64((cxla_type)type, &(uint8_t){(uint8_t)c}, 0);
      job.tab[c] = ukey_f32((const char *)&f, 0, NULL);
    }
  if (k > 0 && rows > 0) {
    void *args[1] = {&job};
    int64_t grain = TOPK_CHUNK_ELEMS / n;
    cx_threadpool_parallel_for(rt->pool, topk_rows, args, rows, grain > 1 ? grain : 1);
  }
  if (job.oom) {
    snprintf(rt->errmsg, sizeof rt->errmsg, "%s: out of memory for the top-k heap", name);
    rt->status = CXLA_ERR_OUT_OF_MEMORY;
  }
  if (rt->trace) {
    cx_trace_args a = cx_rt_origin_args(rt, id);
    a.n = 3, a.key[0] = "rows", a.key[1] = "n", a.key[2] = "k";
    a.val[0] = rows, a.val[1] = n, a.val[2] = k;
    cx_trace_add(rt->trace, name, "library", t0, cx_trace_now(), &a);
  }
}
