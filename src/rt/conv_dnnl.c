/* conv_dnnl.c — f32 and bf16 2-D convolutions through oneDNN (Debian's libdnnl), which the
 * sequencer picks over im2col + OpenBLAS where it applies (bench/bench_libs.c measured it 1.4-2.8×
 * faster on the training steps' f32 convolutions on one thread, and bf16 ones, which im2col does
 * not take, hundreds of times faster than the emitter's loop nest: it has AVX-512 BF16 and AMX
 * kernels; docs/design/cpu-backend.md).
 *
 * Two mappings of XLA's convolution onto oneDNN's primitives, with every tensor described by
 * its strides (any dim_labels order):
 *  - forward: out[b, o, y, x] = sum in[b, i, y*s + ky*d - p, ...] * filt[o, i, ky, kx], as is;
 *  - weight-gradient-shaped ones (fewer output pixels than patch elements, as jax lowers the
 *    filter gradient: dim_labels=f01b_i01o->01bf, a window as big as the image) are oneDNN's
 *    backward-weights primitive: the input's feature dim is oneDNN's batch, its batch dim the
 *    input features, the filter (the output gradient) has the window, and the output has the
 *    filter's size; XLA's window stride is oneDNN's dilation and XLA's window dilation its stride.
 * Base dilation, window reversal and feature or batch groups stay with im2col.
 *
 * oneDNN runs on cxla's own threads, not on its OpenMP team: each pool task sets OpenMP to one
 * thread and runs the primitive on a slice of oneDNN's batch (an OpenMP team next to cxla's
 * spinning pool and OpenBLAS's threads would oversubscribe the cores). Forward slices write
 * their own output rows; weight-gradient slices each sum a part of the batch into f32 partial
 * filters, added up here. Each slice's primitive descriptor, primitive and filter reorder are
 * made once per shape and slice size and kept in a small cache here (dn_acquire; oneDNN's own
 * primitive cache comes after the descriptor, the costly part), with a user scratchpad per
 * task. The filter (or filter gradient) is reordered between its XLA layout and the blocked one
 * the primitive wants inside each task: it is small next to the activations. */
#include <oneapi/dnnl/dnnl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/trace.h"
#include "rt/rt.h"
#include "rt/threadpool.h"

/* OpenMP's runtime (libgomp, which Debian's oneDNN runs on), declared here: omp.h belongs to
 * the compiler, and clang has none without libomp-dev. */
int omp_get_max_threads(void);
void omp_set_num_threads(int n);

/* One convolution as oneDNN sees it: a (src), b (weights, or the output gradient when wgrad)
 * and c (dst, or the filter gradient), dims and element strides in oneDNN's order. */
typedef struct dn_conv {
  int wgrad;
  dnnl_data_type_t dt;
  int64_t es;
  dnnl_dims_t a_dims, a_str, b_dims, b_str, c_dims, c_str;
  dnnl_dims_t strides, dilates, pad_l, pad_r;
} dn_conv;

static const char *dn_map(int32_t type, const cx_conv2d_desc *d, dn_conv *m) {
  if (type != CXLA_F32 && type != CXLA_BF16) return "oneDNN takes f32 and bf16 here";
  if (d->groups != 1 || d->batch_groups != 1) return "feature or batch groups";
  for (int j = 0; j < 2; j++) {
    if (d->lhs_dil[j] != 1) return "base dilation";
    if (d->reverse[j]) return "window reversal";
    if (d->pad_lo[j] < 0) return "negative padding";
  }
  if (d->batch <= 0 || d->in_feat <= 0 || d->out_feat <= 0 || d->out_h <= 0 || d->out_w <= 0 || d->k_h <= 0 ||
      d->k_w <= 0 || d->in_h <= 0 || d->in_w <= 0)
    return "an empty dimension";
  memset(m, 0, sizeof *m);
  m->dt = type == CXLA_F32 ? dnnl_f32 : dnnl_bf16;
  m->es = type == CXLA_F32 ? 4 : 2;
  int64_t ins[2] = {d->in_h, d->in_w}, ks[2] = {d->k_h, d->k_w}, os[2] = {d->out_h, d->out_w};
  m->wgrad = d->batch * d->out_h * d->out_w < d->in_feat * d->k_h * d->k_w;
  const int64_t *is = d->in_stride, *fs = d->filt_stride, *ost = d->out_stride;
  for (int j = 0; j < 2; j++) {
    int64_t s = d->stride[j], rd = d->rhs_dil[j];
    if (!m->wgrad) {
      m->strides[j] = s, m->dilates[j] = rd - 1;
      m->pad_r[j] = (os[j] - 1) * s + (ks[j] - 1) * rd + 1 - ins[j] - d->pad_lo[j];
    } else { /* window = the output gradient's image, output = the filter's window */
      m->strides[j] = rd, m->dilates[j] = s - 1;
      m->pad_r[j] = (ks[j] - 1) * rd + (os[j] - 1) * s + 1 - ins[j] - d->pad_lo[j];
    }
    m->pad_l[j] = d->pad_lo[j];
    if (m->pad_r[j] < 0) return "the window stops short of the input's end";
  }
  if (!m->wgrad) {
    int64_t a[4] = {d->batch, d->in_feat, d->in_h, d->in_w}, b[4] = {d->out_feat, d->in_feat, d->k_h, d->k_w},
            c[4] = {d->batch, d->out_feat, d->out_h, d->out_w};
    for (int k = 0; k < 4; k++) {
      m->a_dims[k] = a[k], m->b_dims[k] = b[k], m->c_dims[k] = c[k];
      m->a_str[k] = is[k], m->b_str[k] = fs[k], m->c_str[k] = ost[k];
    }
  } else {
    int64_t a[4] = {d->in_feat, d->batch, d->in_h, d->in_w}, b[4] = {d->in_feat, d->out_feat, d->k_h, d->k_w},
            c[4] = {d->out_feat, d->batch, d->out_h, d->out_w};
    int64_t as[4] = {is[1], is[0], is[2], is[3]}, bs[4] = {fs[1], fs[0], fs[2], fs[3]},
            cs[4] = {ost[1], ost[0], ost[2], ost[3]};
    for (int k = 0; k < 4; k++) {
      m->a_dims[k] = a[k], m->b_dims[k] = b[k], m->c_dims[k] = c[k];
      m->a_str[k] = as[k], m->b_str[k] = bs[k], m->c_str[k] = cs[k];
    }
  }
  return NULL;
}

static dnnl_engine_t g_engine;
static dnnl_status_t g_engine_status = dnnl_runtime_error;
static pthread_once_t g_engine_once = PTHREAD_ONCE_INIT;
static void make_engine(void) { g_engine_status = dnnl_engine_create(&g_engine, dnnl_cpu, 0); }

/* Whether md (oneDNN's choice) puts every element of a dims-shaped tensor where element strides
 * str do: plain strides, or one inner block that spans its whole dim (nChw16c over 16 channels is
 * nhwc). Dims of one element have no stride to compare. */
static int same_layout(const dnnl_memory_desc_t *md, const int64_t *dims, const int64_t *str) {
  if (md->format_kind != dnnl_blocked || md->ndims != 4 || md->offset0 != 0) return 0;
  const dnnl_blocking_desc_t *b = &md->format_desc.blocking;
  int inner = -1;
  if (b->inner_nblks > 1) return 0;
  if (b->inner_nblks == 1) {
    inner = (int)b->inner_idxs[0];
    if (b->inner_blks[0] != dims[inner] || str[inner] != 1) return 0;
  }
  for (int k = 0; k < 4; k++) {
    if (md->dims[k] != dims[k] || md->padded_dims[k] != dims[k] || md->padded_offsets[k] != 0) return 0;
    if (k != inner && dims[k] > 1 && b->strides[k] != str[k]) return 0;
  }
  return 1;
}

/* The primitive descriptor for n rows of m's oneDNN batch (a slice: the strides stay, the batch
 * dim shrinks), the weights (or filter gradient) in the layout oneDNN prefers, a user
 * scratchpad. A forward convolution's output may take a layout oneDNN chose when it is XLA's
 * in other words: then a first-layer kernel (one input channel, 16 outputs: LeNet's conv1,
 * 300 -> 164 us on one thread) runs instead of brgconv, which wants the plain layout. The
 * caller destroys *pd. */
static dnnl_status_t dn_pd(const dn_conv *m, int64_t n, dnnl_primitive_desc_t *pd) {
  pthread_once(&g_engine_once, make_engine);
  if (g_engine_status != dnnl_success) return g_engine_status;
  dnnl_dims_t ad, bd, cd;
  memcpy(ad, m->a_dims, sizeof ad), memcpy(bd, m->b_dims, sizeof bd), memcpy(cd, m->c_dims, sizeof cd);
  ad[0] = n;
  if (m->wgrad) bd[0] = n;
  else cd[0] = n;
  dnnl_memory_desc_t a, b, c, any, hint_any;
  dnnl_dims_t as;
  memcpy(as, m->a_str, sizeof as);
  /* one input channel: its stride is free, and the one that makes nhwc read as nchw lets oneDNN
   * pick its first-layer kernel (below) */
  if (!m->wgrad && ad[1] == 1) as[1] = as[2] * ad[2] > as[3] * ad[3] ? as[2] * ad[2] : as[3] * ad[3];
  dnnl_status_t s = dnnl_memory_desc_init_by_strides(&a, 4, ad, m->dt, as);
  if (s == dnnl_success && !m->wgrad) s = dnnl_memory_desc_init_by_tag(&any, 4, bd, m->dt, dnnl_format_tag_any);
  if (s == dnnl_success && !m->wgrad) s = dnnl_memory_desc_init_by_strides(&c, 4, cd, m->dt, m->c_str);
  if (s == dnnl_success && m->wgrad) s = dnnl_memory_desc_init_by_strides(&b, 4, bd, m->dt, m->b_str);
  if (s == dnnl_success && m->wgrad) s = dnnl_memory_desc_init_by_tag(&any, 4, cd, dnnl_f32, dnnl_format_tag_any);
  dnnl_primitive_attr_t attr = NULL;
  if (s == dnnl_success) s = dnnl_primitive_attr_create(&attr);
  if (s == dnnl_success) s = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
  dnnl_convolution_desc_t cv, fwd;
  dnnl_primitive_desc_t hint = NULL;
  if (s == dnnl_success && !m->wgrad)
    s = dnnl_dilated_convolution_forward_desc_init(&cv, dnnl_forward_training, dnnl_convolution_direct, &a, &any, NULL,
                                                   &c, m->strides, m->dilates, m->pad_l, m->pad_r);
  if (s == dnnl_success && m->wgrad) { /* the backward primitive wants its forward one as a hint; its
                                         weights are of the data's type (oneDNN has no bf16 forward
                                         with f32 weights), the gradient's are f32 (summed here) */
    s = dnnl_memory_desc_init_by_tag(&hint_any, 4, cd, m->dt, dnnl_format_tag_any);
    if (s == dnnl_success)
      s = dnnl_dilated_convolution_forward_desc_init(&fwd, dnnl_forward_training, dnnl_convolution_direct, &a,
                                                     &hint_any, NULL, &b, m->strides, m->dilates, m->pad_l, m->pad_r);
    if (s == dnnl_success) s = dnnl_primitive_desc_create(&hint, &fwd, NULL, g_engine, NULL);
    if (s == dnnl_success)
      s = dnnl_dilated_convolution_backward_weights_desc_init(&cv, dnnl_convolution_direct, &a, &any, NULL, &b,
                                                              m->strides, m->dilates, m->pad_l, m->pad_r);
  }
  if (s == dnnl_success && !m->wgrad) { /* first with the output's layout left to oneDNN */
    dnnl_memory_desc_t c_any;
    dnnl_convolution_desc_t cv_any;
    *pd = NULL;
    if (dnnl_memory_desc_init_by_tag(&c_any, 4, cd, m->dt, dnnl_format_tag_any) == dnnl_success &&
        dnnl_dilated_convolution_forward_desc_init(&cv_any, dnnl_forward_training, dnnl_convolution_direct, &a, &any,
                                                   NULL, &c_any, m->strides, m->dilates, m->pad_l,
                                                   m->pad_r) == dnnl_success &&
        dnnl_primitive_desc_create(pd, &cv_any, attr, g_engine, NULL) == dnnl_success) {
      const dnnl_memory_desc_t *got = dnnl_primitive_desc_query_md(*pd, dnnl_query_dst_md, 0);
      const char *impl = NULL;
      int ref = dnnl_primitive_desc_query(*pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success || !impl ||
                !strncmp(impl, "ref", 3);
      if (!ref && got && same_layout(got, cd, m->c_str)) {
        dnnl_primitive_attr_destroy(attr);
        return dnnl_success;
      }
      dnnl_primitive_desc_destroy(*pd);
      *pd = NULL;
    }
  }
  if (s == dnnl_success) s = dnnl_primitive_desc_create(pd, &cv, attr, g_engine, hint);
  if (hint) dnnl_primitive_desc_destroy(hint);
  if (attr) dnnl_primitive_attr_destroy(attr);
  return s;
}

int cx_rt_conv_dnnl_applies(int32_t type, const cx_conv2d_desc *d, const char **why) {
  dn_conv m;
  const char *w = dn_map(type, d, &m);
  if (w) {
    *why = w;
    return 0;
  }
  dnnl_primitive_desc_t pd = NULL;
  if (dn_pd(&m, m.a_dims[0], &pd) != dnnl_success) {
    *why = "oneDNN has no primitive for it";
    return 0;
  }
  const char *impl = NULL;
  int ref = dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl &&
            !strncmp(impl, "ref", 3);
  dnnl_primitive_desc_destroy(pd);
  if (ref) { /* oneDNN's reference loops: im2col + BLAS is faster */
    *why = "oneDNN has only its reference implementation for it";
    return 0;
  }
  return 1;
}

typedef struct dn_run {
  const dn_conv *m;
  const char *a, *b;
  char *c;
  float *partial;    /* wgrad: one f32 filter gradient per task, dense in c_dims order */
  int64_t wsize;     /* elements of one filter (gradient) */
  int64_t n, ntasks; /* oneDNN batch, tasks it is split into */
  _Atomic int failed;
  char why[96];
} dn_run;

static void dn_fail(dn_run *r, const char *what, dnnl_status_t s) {
  int expect = 0;
  if (atomic_compare_exchange_strong(&r->failed, &expect, 1))
    snprintf(r->why, sizeof r->why, "oneDNN %s failed (status %d)", what, (int)s);
}

/* A memory object over ptr (DNNL_MEMORY_ALLOCATE: its own) with md. */
static dnnl_status_t mem(dnnl_memory_t *out, const dnnl_memory_desc_t *md, void *ptr) {
  return dnnl_memory_create(out, md, g_engine, ptr);
}

/* Made once per (convolution, slice size) and kept: a primitive descriptor costs 15-130 us to
 * make (oneDNN's primitive cache answers only the primitive, after the descriptor; the
 * backward-weights one, with its forward hint, is the dearest), several per call and task, a
 * tenth of the LeNet step's convolution time when made anew each call. The reorder is the
 * filter's (XLA layout to the primitive's) or, for a weight gradient, the partial filter
 * gradient's (the primitive's layout to dense f32). A primitive may run on several threads at
 * once (each task brings its own scratchpad and memory objects). */
typedef struct dn_entry {
  dn_conv m; /* the key, with n (memset before it is filled: padding compares equal) */
  int64_t n;
  dnnl_primitive_desc_t pd;
  dnnl_primitive_t prim, reorder;
  const dnnl_memory_desc_t *a_md, *w_md, *o_md, *scr_md; /* owned by pd */
  dnnl_memory_desc_t user_md;                            /* the reorder's other end */
  size_t scr_bytes, w_bytes;
  int users, cached;
  uint64_t last_use;
} dn_entry;

/* Entries kept at most; the least recently used one not in use makes room. */
#define DN_CACHE_SIZE 64
static dn_entry *g_cache[DN_CACHE_SIZE];
static uint64_t g_cache_tick;
static pthread_mutex_t g_cache_mu = PTHREAD_MUTEX_INITIALIZER;

static void dn_entry_free(dn_entry *e) {
  if (e->reorder) dnnl_primitive_destroy(e->reorder);
  if (e->prim) dnnl_primitive_destroy(e->prim);
  if (e->pd) dnnl_primitive_desc_destroy(e->pd);
  free(e);
}

/* A new entry for m's slices of n rows, or NULL with *s (and *what) saying why. */
static dn_entry *dn_entry_make(const dn_conv *m, int64_t n, dnnl_status_t *s, const char **what) {
  dn_entry *e = calloc(1, sizeof *e);
  dnnl_primitive_desc_t rpd = NULL;
  *what = "allocation", *s = e ? dnnl_success : dnnl_out_of_memory;
  if (*s == dnnl_success) {
    memcpy(&e->m, m, sizeof *m);
    e->n = n;
    *what = "primitive", *s = dn_pd(m, n, &e->pd);
  }
  if (*s == dnnl_success) *s = dnnl_primitive_create(&e->prim, e->pd);
  if (*s == dnnl_success) {
    e->a_md = dnnl_primitive_desc_query_md(e->pd, dnnl_query_src_md, 0);
    e->scr_md = dnnl_primitive_desc_query_md(e->pd, dnnl_query_scratchpad_md, 0);
    e->w_md = dnnl_primitive_desc_query_md(e->pd, m->wgrad ? dnnl_query_diff_weights_md : dnnl_query_weights_md, 0);
    e->o_md = dnnl_primitive_desc_query_md(e->pd, m->wgrad ? dnnl_query_diff_dst_md : dnnl_query_dst_md, 0);
    e->scr_bytes = e->scr_md ? dnnl_memory_desc_get_size(e->scr_md) : 0;
    e->w_bytes = e->w_md ? dnnl_memory_desc_get_size(e->w_md) : 0;
    if (!e->a_md || !e->w_md || !e->o_md) *what = "query", *s = dnnl_runtime_error;
  }
  if (*s == dnnl_success) { /* the filter from its XLA layout, or the gradient to dense f32 */
    *what = m->wgrad ? "filter-gradient reorder" : "filter reorder";
    *s = m->wgrad ? dnnl_memory_desc_init_by_tag(&e->user_md, 4, m->c_dims, dnnl_f32, dnnl_abcd)
                  : dnnl_memory_desc_init_by_strides(&e->user_md, 4, m->b_dims, m->dt, m->b_str);
  }
  if (*s == dnnl_success)
    *s = m->wgrad ? dnnl_reorder_primitive_desc_create(&rpd, e->w_md, g_engine, &e->user_md, g_engine, NULL)
                  : dnnl_reorder_primitive_desc_create(&rpd, &e->user_md, g_engine, e->w_md, g_engine, NULL);
  if (*s == dnnl_success) *s = dnnl_primitive_create(&e->reorder, rpd);
  if (rpd) dnnl_primitive_desc_destroy(rpd);
  if (*s != dnnl_success && e) {
    dn_entry_free(e);
    e = NULL;
  }
  return e;
}

/* The entry for m's slices of n rows, in use by the caller until dn_release. */
static dn_entry *dn_acquire(const dn_conv *m, int64_t n, dnnl_status_t *s, const char **what) {
  pthread_mutex_lock(&g_cache_mu);
  for (int i = 0; i < DN_CACHE_SIZE; i++) {
    dn_entry *e = g_cache[i];
    if (e && e->n == n && !memcmp(&e->m, m, sizeof *m)) {
      e->users++, e->last_use = ++g_cache_tick;
      pthread_mutex_unlock(&g_cache_mu);
      *s = dnnl_success;
      return e;
    }
  }
  pthread_mutex_unlock(&g_cache_mu);
  dn_entry *e = dn_entry_make(m, n, s, what); /* outside the lock: the slow part */
  if (!e) return NULL;
  e->users = 1;
  pthread_mutex_lock(&g_cache_mu);
  int slot = -1, dup = 0; /* an empty slot, else the least recently used entry not in use */
  for (int i = 0; i < DN_CACHE_SIZE && !dup; i++) {
    dn_entry *o = g_cache[i];
    if (o && o->n == n && !memcmp(&o->m, m, sizeof *m)) dup = 1; /* another task made it meanwhile */
    else if (!o) slot = slot < 0 || g_cache[slot] ? i : slot;
    else if (!o->users && (slot < 0 || (g_cache[slot] && o->last_use < g_cache[slot]->last_use))) slot = i;
  }
  if (!dup && slot >= 0) { /* else it is freed when released */
    if (g_cache[slot]) dn_entry_free(g_cache[slot]);
    g_cache[slot] = e;
    e->cached = 1, e->last_use = ++g_cache_tick;
  }
  pthread_mutex_unlock(&g_cache_mu);
  return e;
}

static void dn_release(dn_entry *e) {
  pthread_mutex_lock(&g_cache_mu);
  int drop = --e->users == 0 && !e->cached;
  pthread_mutex_unlock(&g_cache_mu);
  if (drop) dn_entry_free(e);
}

/* Runs reorder primitive p from src to dst (memory descriptors src_md, dst_md) on stream st. */
static dnnl_status_t run_reorder(dnnl_stream_t st, dnnl_primitive_t p, const dnnl_memory_desc_t *src_md, void *src,
                                 const dnnl_memory_desc_t *dst_md, void *dst) {
  dnnl_memory_t ms = NULL, md = NULL;
  dnnl_status_t s = mem(&ms, src_md, src);
  if (s == dnnl_success) s = mem(&md, dst_md, dst);
  if (s == dnnl_success) {
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, ms}, {DNNL_ARG_TO, md}};
    s = dnnl_primitive_execute(p, st, 2, args);
  }
  if (ms) dnnl_memory_destroy(ms);
  if (md) dnnl_memory_destroy(md);
  return s;
}

/* One task: oneDNN batch rows [n0, n1) on this thread. */
static void dn_slice(dn_run *r, int64_t task) {
  const dn_conv *m = r->m;
  int64_t n0 = r->n * task / r->ntasks, n1 = r->n * (task + 1) / r->ntasks, n = n1 - n0;
  if (n <= 0) return;
  dnnl_stream_t st = NULL;
  dnnl_memory_t ma = NULL, mb = NULL, mc = NULL, mw = NULL, mscr = NULL;
  void *scratch = NULL, *wbuf = NULL;
  const char *what = "primitive";
  dnnl_status_t s;
  dn_entry *e = dn_acquire(m, n, &s, &what);
  if (s == dnnl_success) what = "stream", s = dnnl_stream_create(&st, g_engine, dnnl_stream_default_flags);
  if (s == dnnl_success &&
      ((e->scr_bytes && !(scratch = malloc(e->scr_bytes))) || !(wbuf = malloc(e->w_bytes ? e->w_bytes : 1))))
    what = "allocation", s = dnnl_out_of_memory;
  if (s == dnnl_success) what = "memory", s = mem(&ma, e->a_md, (void *)(r->a + n0 * m->a_str[0] * m->es));
  if (s == dnnl_success) s = mem(&mw, e->w_md, wbuf);
  if (s == dnnl_success && e->scr_bytes) s = mem(&mscr, e->scr_md, scratch);
  if (s == dnnl_success && !m->wgrad) { /* the filter, from its XLA layout */
    what = "filter reorder", s = run_reorder(st, e->reorder, &e->user_md, (void *)r->b, e->w_md, wbuf);
    if (s == dnnl_success) what = "memory", s = mem(&mc, e->o_md, r->c + n0 * m->c_str[0] * m->es);
  } else if (s == dnnl_success) {
    s = mem(&mb, e->o_md, (void *)(r->b + n0 * m->b_str[0] * m->es));
  }
  if (s == dnnl_success) {
    dnnl_exec_arg_t args[4];
    if (!m->wgrad) {
      args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, ma};
      args[1] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, mw};
      args[2] = (dnnl_exec_arg_t){DNNL_ARG_DST, mc};
    } else {
      args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, ma};
      args[1] = (dnnl_exec_arg_t){DNNL_ARG_DIFF_DST, mb};
      args[2] = (dnnl_exec_arg_t){DNNL_ARG_DIFF_WEIGHTS, mw};
    }
    args[3] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, mscr};
    what = "convolution";
    s = dnnl_primitive_execute(e->prim, st, mscr ? 4 : 3, args);
  }
  if (s == dnnl_success && m->wgrad) /* this task's partial filter gradient, dense f32 */
    what = "filter-gradient reorder",
    s = run_reorder(st, e->reorder, e->w_md, wbuf, &e->user_md, r->partial + task * r->wsize);
  if (s == dnnl_success) what = "stream wait", s = dnnl_stream_wait(st);
  if (s != dnnl_success) dn_fail(r, what, s);
  dnnl_memory_t ms[5] = {ma, mb, mc, mw, mscr};
  for (int i = 0; i < 5; i++)
    if (ms[i]) dnnl_memory_destroy(ms[i]);
  if (st) dnnl_stream_destroy(st);
  if (e) dn_release(e);
  free(scratch);
  free(wbuf);
}

/* Kernel-ABI adapter: args[0] is the dn_run, the range is tasks. */
static void dn_tasks(void **args, int64_t begin, int64_t end) {
  /* oneDNN on this thread alone (its OpenMP team would be one more pool); the thread may be the
   * user's: its OpenMP setting is put back */
  int omp_was = omp_get_max_threads();
  omp_set_num_threads(1);
  for (int64_t t = begin; t < end; t++) dn_slice(args[0], t);
  omp_set_num_threads(omp_was);
}

static uint16_t to_bf16(float f) { /* round to nearest even; NaN stays NaN */
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* The tasks' partial filter gradients added up into c (its XLA layout and type). */
static void dn_sum_partials(const dn_run *r) {
  const dn_conv *m = r->m;
  int64_t D1 = m->c_dims[1], D2 = m->c_dims[2], D3 = m->c_dims[3], i = 0;
  for (int64_t o = 0; o < m->c_dims[0]; o++)
    for (int64_t c = 0; c < D1; c++)
      for (int64_t y = 0; y < D2; y++)
        for (int64_t x = 0; x < D3; x++, i++) {
          float v = 0;
          for (int64_t t = 0; t < r->ntasks; t++) v += r->partial[t * r->wsize + i];
          int64_t at = o * m->c_str[0] + c * m->c_str[1] + y * m->c_str[2] + x * m->c_str[3];
          if (m->dt == dnnl_f32) memcpy(r->c + at * 4, &v, 4);
          else {
            uint16_t h = to_bf16(v);
            memcpy(r->c + at * 2, &h, 2);
          }
        }
}

/* Below this many multiply-adds per task, splitting the batch costs more than it gains. */
#define DNNL_TASK_MACS 2000000.0

void cx_rt_conv_dnnl(cx_rt *rt, int32_t type, const cx_conv2d_desc *d, const void *in, const void *filt, void *out,
                     int32_t id) {
  if (rt->status != CXLA_OK) return;
  const char *name = cx_rt_name(rt, id, "convolution");
  dn_conv m;
  const char *why = dn_map(type, d, &m);
  if (why) {
    cx_rt_fail(rt, CXLA_ERR_INTERNAL, "%s: oneDNN convolution: %s", name, why);
    return;
  }
  int64_t t0 = rt->trace ? cx_trace_now() : 0;
  double macs = (double)d->batch * d->out_feat * d->out_h * d->out_w * d->in_feat * d->k_h * d->k_w;
  int64_t threads = cx_threadpool_size(rt->pool), by_work = (int64_t)(macs / DNNL_TASK_MACS);
  dn_run r = {.m = &m, .a = in, .b = filt, .c = out, .n = m.a_dims[0]};
  r.ntasks = threads < by_work ? threads : by_work;
  if (r.ntasks > r.n) r.ntasks = r.n;
  if (r.ntasks < 1) r.ntasks = 1;
  r.wsize = m.c_dims[0] * m.c_dims[1] * m.c_dims[2] * m.c_dims[3];
  if (m.wgrad && !(r.partial = malloc((size_t)(r.ntasks * r.wsize) * sizeof(float)))) {
    cx_rt_fail(rt, CXLA_ERR_OUT_OF_MEMORY, "%s: oneDNN convolution: out of memory", name);
    return;
  }
  void *args[1] = {&r};
  if (r.ntasks > 1) cx_threadpool_parallel_for(rt->pool, dn_tasks, args, r.ntasks, 1);
  else dn_tasks(args, 0, 1);
  if (!r.failed && m.wgrad) dn_sum_partials(&r);
  free(r.partial);
  if (r.failed) cx_rt_fail(rt, CXLA_ERR_INTERNAL, "%s: %s", name, r.why);
  if (rt->trace) {
    cx_trace_args a = cx_rt_origin_args(rt, id);
    a.n = 3, a.key[0] = "macs", a.key[1] = "tasks", a.key[2] = "weight_gradient";
    a.val[0] = (int64_t)macs, a.val[1] = r.ntasks, a.val[2] = m.wgrad;
    cx_trace_add(rt->trace, name, "library", t0, cx_trace_now(), &a);
  }
}
