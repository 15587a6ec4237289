/* sort.c — sort on the cpu: every 1-D slice along the sort dimension is sorted on its own,
 * slices in parallel on the pool. A slice sorts a permutation of indices with a bottom-up
 * merge sort whose comparisons call the emitted comparator on the operands' elements in
 * place (lhs_0, rhs_0, lhs_1, rhs_1, ...); then every operand is permuted into its result.
 * The merge sort is stable, so it serves is_stable=false too (any order of equivalent
 * elements is allowed there): both give the interpreter's answer exactly. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "rt/sort_scatter.h"
#include "rt/threadpool.h"
#include "core/trace.h"

#define SORT_CHUNK_ELEMS 16384

typedef struct sort_job {
  const sort_desc *d;
  cx_scalar_fn cmp;
  char *res[SORT_MAX_OPS];
  const char *op[SORT_MAX_OPS];
  _Atomic int oom;
} sort_job;

/* comparator(a, b): element a of the slice sorts before element b */
static int less(const sort_job *j, void **p, int64_t base, int64_t a, int64_t b) {
  const sort_desc *d = j->d;
  unsigned char r = 0;
  p[0] = &r;
  for (int k = 0; k < d->n; k++) {
    if (k < 64 && !((d->used >> k) & 1)) continue;
    p[1 + 2 * k] = (void *)(j->op[k] + (size_t)(base + a * d->inner) * d->esize[k]);
    p[2 + 2 * k] = (void *)(j->op[k] + (size_t)(base + b * d->inner) * d->esize[k]);
  }
  j->cmp(p);
  return r != 0;
}

/* An element of the right run moves ahead only if strictly less: equal elements keep order.
 * Exactly the interpreter's comparisons, so that a comparator that is no strict weak order
 * (a FLOAT compare over NaNs) still gives its answer. */
static int64_t *merge_sort(const sort_job *j, void **p, int64_t base, int64_t *a, int64_t *tmp) {
  int64_t n = j->d->len, *src = a, *dst = tmp;
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      int64_t mid = lo + width < n ? lo + width : n, hi = mid + width < n ? mid + width : n;
      int64_t i = lo, k = mid, o = lo;
      while (i < mid && k < hi) dst[o++] = less(j, p, base, src[k], src[i]) ? src[k++] : src[i++];
      while (i < mid) dst[o++] = src[i++];
      while (k < hi) dst[o++] = src[k++];
    }
    int64_t *t = src;
    src = dst;
    dst = t;
  }
  return src;
}

typedef struct kv {
  int32_t key; /* the float's bits (merge sort), or its unsigned order key (radix sort) */
  int32_t at;
} kv;

static inline float kv_f(const kv *x) {
  float f;
  memcpy(&f, &x->key, 4);
  return f;
}

/* The pair merge sort, one per fast comparator (LESS(a, b): a sorts before b). */
#define KV_SORT(NAME, LESS)                                                                      \
  static kv *NAME(kv *a, kv *tmp, int64_t n) {                                                   \
    kv *src = a, *dst = tmp;                                                                     \
    for (int64_t width = 1; width < n; width *= 2) {                                             \
      for (int64_t lo = 0; lo < n; lo += 2 * width) {                                            \
        int64_t mid = lo + width < n ? lo + width : n, hi = mid + width < n ? mid + width : n;   \
        int64_t i = lo, k = mid, o = lo;                                                         \
        while (i < mid && k < hi) { /* branch-free: random keys mispredict every other step */ \
          int t = LESS(&src[k], &src[i]);                                                        \
          dst[o++] = t ? src[k] : src[i];                                                        \
          k += t;                                                                                \
          i += !t;                                                                               \
        }                                                                                        \
        while (i < mid) dst[o++] = src[i++];                                                     \
        while (k < hi) dst[o++] = src[k++];                                                      \
      }                                                                                          \
      kv *t = src;                                                                               \
      src = dst;                                                                                 \
      dst = t;                                                                                   \
    }                                                                                            \
    return src;                                                                                  \
  }
#define F_LT(x, y) (kv_f(x) < kv_f(y))
#define F_GT(x, y) (kv_f(x) > kv_f(y))
KV_SORT(sort_f_lt, F_LT)
KV_SORT(sort_f_gt, F_GT)

typedef kv *(*kv_sort_fn)(kv *a, kv *tmp, int64_t n);
static const kv_sort_fn k_kv_sort[] = {[SORT_F32_LT] = sort_f_lt, [SORT_F32_GT] = sort_f_gt};

/* Stable LSD radix sort of pairs by their unsigned key, a byte at a time (a byte every key
 * shares is skipped). Stable, so equal keys keep their order as in the merge sort. */
static kv *radix_sort(kv *a, kv *tmp, int64_t n) {
  kv *src = a, *dst = tmp;
  for (int shift = 0; shift < 32; shift += 8) {
    int64_t cnt[257] = {0};
    for (int64_t i = 0; i < n; i++) cnt[(((uint32_t)src[i].key >> shift) & 255) + 1]++;
    int one = 0;
    for (int b = 1; b <= 256; b++) one |= cnt[b] == n;
    if (one) continue;
    for (int b = 0; b < 256; b++) cnt[b + 1] += cnt[b];
    for (int64_t i = 0; i < n; i++) dst[cnt[((uint32_t)src[i].key >> shift) & 255]++] = src[i];
    kv *t = src;
    src = dst;
    dst = t;
  }
  return src;
}

/* The order of the slice's elements by the fast comparator, into perm. A TOTALORDER compare,
 * or a FLOAT one on a slice without NaN (then -0 and +0 are the only unequal equivalents), is
 * a strict weak order on one unsigned key, and a stable sort by that key is the merge sort's
 * answer: radix sort it. A FLOAT compare over NaNs is no such order; the merge sort makes
 * the comparisons the emitted comparator would. */
static void fast_order(const sort_job *j, int64_t base, kv *pairs, int64_t *perm) {
  const sort_desc *d = j->d;
  const char *x = j->op[0];
  int total = d->fast == SORT_F32_TOTAL_LT || d->fast == SORT_F32_TOTAL_GT;
  int desc = d->fast == SORT_F32_GT || d->fast == SORT_F32_TOTAL_GT, nan = 0;
  for (int64_t i = 0; i < d->len; i++) {
    int32_t b;
    memcpy(&b, x + (size_t)(base + i * d->inner) * 4, 4);
    nan |= (b & INT32_MAX) > 0x7f800000;
    pairs[i] = (kv){b, (int32_t)i};
  }
  const kv *o;
  if (total || !nan) {
    for (int64_t i = 0; i < d->len; i++) {
      uint32_t u = (uint32_t)pairs[i].key;
      if (!total && u == 0x80000000u) u = 0; /* -0 == +0 */
      u = u >> 31 ? ~u : u | 0x80000000u;   /* unsigned, in the float's total order */
      pairs[i].key = (int32_t)(desc ? ~u : u);
    }
    o = radix_sort(pairs, pairs + d->len, d->len);
  } else {
    o = k_kv_sort[d->fast](pairs, pairs + d->len, d->len);
  }
  for (int64_t i = 0; i < d->len; i++) perm[i] = o[i].at;
}

/* Kernel ABI: args[0] is the job, the range is slices. */
static void sort_slices(void **args, int64_t begin, int64_t end) {
  sort_job *j = args[0];
  const sort_desc *d = j->d;
  size_t emax = 1;
  for (int k = 0; k < d->n; k++)
    if (d->esize[k] > emax) emax = d->esize[k];
  int64_t *perm = cx_malloc(sizeof *perm * (size_t)(2 * d->len));
  char *row = cx_malloc(emax * (size_t)d->len);
  kv *pairs = d->fast ? cx_malloc(sizeof *pairs * (size_t)(2 * d->len)) : NULL;
  void *p[1 + 2 * SORT_MAX_OPS];
  if (!perm || !row || (d->fast && !pairs)) {
    j->oom = 1;
    cx_free(perm);
    cx_free(row);
    cx_free(pairs);
    return;
  }
  for (int64_t sl = begin; sl < end; sl++) {
    int64_t base = (sl / d->inner) * d->len * d->inner + sl % d->inner;
    const int64_t *order = perm;
    if (d->fast) {
      fast_order(j, base, pairs, perm);
    } else {
      for (int64_t i = 0; i < d->len; i++) perm[i] = i;
      order = merge_sort(j, p, base, perm, perm + d->len);
    }
    /* through a row buffer: a result may be its operand's memory */
    for (int k = 0; k < d->n; k++) {
      size_t es = d->esize[k];
      for (int64_t i = 0; i < d->len; i++)
        memcpy(row + (size_t)i * es, j->op[k] + (size_t)(base + order[i] * d->inner) * es, es);
      for (int64_t i = 0; i < d->len; i++)
        memcpy(j->res[k] + (size_t)(base + i * d->inner) * es, row + (size_t)i * es, es);
    }
  }
  cx_free(perm);
  cx_free(row);
  cx_free(pairs);
}

void cx_rt_sort(cx_rt *rt, const void *desc, cx_scalar_fn cmp, void **bufs, int32_t id) {
  if (rt->status != CXLA_OK) return;
  const sort_desc *d = desc;
  int64_t t0 = rt->trace ? cx_trace_now() : 0;
  sort_job job = {.d = d, .cmp = cmp};
  for (int k = 0; k < d->n; k++) {
    job.res[k] = bufs[k];
    job.op[k] = bufs[d->n + k];
  }
  int64_t slices = d->outer * d->inner;
  if (slices > 0 && d->len > 0) {
    void *args[1] = {&job};
    int64_t grain = SORT_CHUNK_ELEMS / d->len;
    cx_threadpool_parallel_for(rt->pool, sort_slices, args, slices, grain > 1 ? grain : 1);
  }
  const char *name = rt->names && id >= 0 && rt->names[id] ? rt->names[id] : "sort";
  if (job.oom) {
    snprintf(rt->errmsg, sizeof rt->errmsg, "%s: out of memory for the sort's scratch", name);
    rt->status = CXLA_ERR_OUT_OF_MEMORY;
  }
  if (rt->trace) {
    cx_trace_args a = cx_rt_origin_args(rt, id);
    a.n = 2, a.key[0] = "slices", a.key[1] = "len";
    a.val[0] = slices, a.val[1] = d->len;
    cx_trace_add(rt->trace, name, "library", t0, cx_trace_now(), &a);
  }
}
