/* gpu_device.c — a context's GPU, its stream and its caching allocator (gpu_device.h), and
 * values in its memory (the cx_dev_value of a device-resident cxla_buffer). */
#include <string.h>
#include "backend/gpu/emu.h"
#include "backend/gpu/gpu_device.h"
#include "core/context.h"
#include "ir/literal.h"

/* Classes of 512 bytes: the sizes a program asks for repeat exactly from step to step. */
static size_t size_class(size_t n) { return (n + 511) & ~(size_t)511; }

typedef struct make_arg {
  const cx_cuda *cu;
  const cx_device_mem *mem;
  CUresult err;
  const char *what;
} make_arg;

static void *make_device(void *p) {
  make_arg *a = p;
  const cx_cuda *cu = a->cu;
  cx_gpu_device *d = cx_calloc(1, sizeof *d);
  if (!d) return NULL;
  atomic_init(&d->refs, 1);
  d->cu = cu;
  d->mem = a->mem;
  pthread_mutex_init(&d->mu, NULL);
  CUcontext c;
  int pushed = 0;
  if ((a->err = cu->DeviceGet(&d->dev, 0))) a->what = "cuDeviceGet";
  else if ((a->err = cu->DevicePrimaryCtxRetain(&d->cuctx, d->dev))) a->what = "cuDevicePrimaryCtxRetain";
  else if ((a->err = cu->CtxPushCurrent(d->cuctx))) a->what = "cuCtxPushCurrent";
  else {
    pushed = 1;
    if ((a->err = cu->StreamCreate(&d->stream, 0))) a->what = "cuStreamCreate";
    else if ((a->err = cu->StreamCreate(&d->upload, CX_CU_STREAM_NON_BLOCKING))) a->what = "cuStreamCreate (uploads)";
    else if ((a->err = cu->EventCreate(&d->direct[0], CX_CU_EVENT_DISABLE_TIMING)) ||
             (a->err = cu->EventCreate(&d->direct[1], CX_CU_EVENT_DISABLE_TIMING)))
      a->what = "cuEventCreate";
    for (int i = 0; i < CX_GPU_MARKS && !a->err; i++)
      if ((a->err = cu->EventCreate(&d->marks[i], CX_CU_EVENT_DISABLE_TIMING))) a->what = "cuEventCreate";
  }
  if (!a->err) {
    cu->CtxPopCurrent(&c);
    return d;
  }
  if (pushed) {
    for (int i = 0; i < CX_GPU_MARKS; i++)
      if (d->marks[i]) cu->EventDestroy(d->marks[i]);
    for (int i = 0; i < 2; i++)
      if (d->direct[i]) cu->EventDestroy(d->direct[i]);
    if (d->upload) cu->StreamDestroy(d->upload);
    if (d->stream) cu->StreamDestroy(d->stream);
    cu->CtxPopCurrent(&c);
  }
  if (d->cuctx) cu->DevicePrimaryCtxRelease(d->dev);
  pthread_mutex_destroy(&d->mu);
  cx_free(d);
  return NULL;
}

/* Both streams finished (what is cached may still be read or written by queued work). */
static void settle(cx_gpu_device *d) {
  d->cu->StreamSynchronize(d->upload);
  d->cu->StreamSynchronize(d->stream);
}

/* The device's cached blocks back to the driver (the streams first finish what uses them). */
static void trim(cx_gpu_device *d) {
  if (!d->ncache) return;
  settle(d);
  for (int i = 0; i < d->ncache; i++) {
    if (d->cu->MemFree(d->cache[i].addr) == 0) d->stats.driver_frees++;
    d->stats.cached -= (int64_t)d->cache[i].size;
  }
  d->ncache = 0;
}

void cx_gpu_pinned_release_idle(cx_gpu_device *d) {
  int kept = 0;
  for (int i = 0; i < d->npinned; i++) {
    cx_gpu_pinned *p = d->pinned[i];
    if (p->busy || (p->recorded && d->cu->EventSynchronize(p->done))) {
      d->pinned[kept++] = p;
      continue;
    }
    if (d->cu->MemFreeHost(p->host) == 0) d->stats.pinned -= (int64_t)p->size;
    d->cu->EventDestroy(p->done);
    cx_free(p);
  }
  d->npinned = kept;
}

void cx_gpu_device_ref(cx_gpu_device *d) { atomic_fetch_add(&d->refs, 1); }

void cx_gpu_device_unref(cx_gpu_device *d) {
  if (!d || atomic_fetch_sub(&d->refs, 1) != 1) return;
  CUcontext c;
  if (d->cu->CtxPushCurrent(d->cuctx) == 0) {
    settle(d);
    trim(d);
    cx_gpu_pinned_release_idle(d); /* every block is idle now */
    for (int i = 0; i < CX_GPU_MARKS; i++) d->cu->EventDestroy(d->marks[i]);
    d->cu->EventDestroy(d->direct[0]);
    d->cu->EventDestroy(d->direct[1]);
    d->cu->StreamDestroy(d->upload);
    d->cu->StreamDestroy(d->stream);
    d->cu->CtxPopCurrent(&c);
  }
  d->cu->DevicePrimaryCtxRelease(d->dev);
  pthread_mutex_destroy(&d->mu);
  cx_free(d->cache);
  cx_free(d->pinned);
  cx_free(d);
}

static void unref_slot(void *p) { cx_gpu_device_unref(p); }

cxla_status cx_gpu_device_get(cxla_context *ctx, const cx_cuda *cu, const cx_device_mem *mem, cx_gpu_device **out) {
  make_arg a = {.cu = cu, .mem = mem};
  cx_context_slot_id slot = cu == cx_cuda_emu() ? CX_SLOT_GPU_EMU : CX_SLOT_GPU;
  cx_gpu_device *d = cx_context_slot(ctx, slot, make_device, &a, unref_slot);
  *out = d;
  if (!d) return a.err ? cx_cuda_error(ctx, cu, a.err, a.what) : cx_oom(ctx);
  cx_gpu_device_ref(d);
  return CXLA_OK;
}

/* the first cached block of at least n bytes, or ncache */
static int cache_find(const cx_gpu_device *d, size_t n) {
  int lo = 0, hi = d->ncache;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (d->cache[mid].size < n) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* ---- compute markers (under mu, with the context current) ---- */

static CUresult record_mark(cx_gpu_device *d) {
  CUresult e = d->cu->EventRecord(d->marks[(d->nmarks + 1) % CX_GPU_MARKS], d->stream);
  if (!e) d->nmarks++;
  return e;
}

/* *done: the compute stream is past marker t (recorded now if it is not yet). */
static CUresult mark_reached(cx_gpu_device *d, uint64_t t, int *done) {
  *done = 1;
  if (t <= d->marks_done) return 0;
  CUresult e = t > d->nmarks ? record_mark(d) : 0;
  /* the slot holds marker t or a later one (t' = t mod CX_GPU_MARKS): past it, past t */
  if (!e) e = d->cu->EventQuery(d->marks[t % CX_GPU_MARKS]);
  if (e == CX_CU_NOT_READY) return *done = 0, 0;
  if (!e) d->marks_done = t;
  return e;
}

cxla_status cx_gpu_mark(cxla_context *ctx, cx_gpu_device *d) {
  pthread_mutex_lock(&d->mu);
  CUresult e = record_mark(d);
  pthread_mutex_unlock(&d->mu);
  return e ? cx_cuda_error(ctx, d->cu, e, "cuEventRecord (a compute marker)") : CXLA_OK;
}

cxla_status cx_gpu_wait_mark(cxla_context *ctx, cx_gpu_device *d, uint64_t t) {
  pthread_mutex_lock(&d->mu);
  int done = 1;
  CUresult e = mark_reached(d, t, &done);
  if (!e && !done) {
    e = d->cu->StreamWaitEvent(d->upload, d->marks[t % CX_GPU_MARKS], 0);
    d->stats.upload_waits++;
  }
  pthread_mutex_unlock(&d->mu);
  return e ? cx_cuda_error(ctx, d->cu, e, "cuStreamWaitEvent (an upload after the kernels using its memory)") : CXLA_OK;
}

/* A cached block for an upload of class n (under mu): the oldest of those that fit, taken when
 * its users are done or were queued before the latest execution (waiting for them then does
 * not wait for the kernels just queued); -1 to ask the driver instead. *wait: its stamp when
 * the upload must wait. */
static int pick_for_upload(cx_gpu_device *d, size_t n, uint64_t *wait, CUresult *err) {
  int best = -1;
  for (int j = cache_find(d, n); j < d->ncache && d->cache[j].size <= 2 * n; j++)
    if (best < 0 || d->cache[j].stamp < d->cache[best].stamp) best = j;
  *wait = 0;
  if (best < 0) return -1;
  uint64_t t = d->cache[best].stamp;
  int done = 1;
  if ((*err = mark_reached(d, t, &done))) return -1;
  if (done) return best;
  if (t < d->nmarks) return *wait = t, best;
  return -1;
}

static void take(cx_gpu_device *d, int i, CUdeviceptr *addr, size_t *got) {
  *addr = d->cache[i].addr;
  *got = d->cache[i].size;
  memmove(&d->cache[i], &d->cache[i + 1], sizeof *d->cache * (size_t)(d->ncache - i - 1));
  d->ncache--;
  d->stats.cached -= (int64_t)*got;
}

/* upload: the block is for an upload (pick_for_upload); *wait as there */
static cxla_status alloc_block(cxla_context *ctx, cx_gpu_device *d, size_t size, int upload, CUdeviceptr *addr,
                               size_t *got, uint64_t *wait) {
  *addr = 0;
  *got = 0;
  *wait = 0;
  if (!size) return CXLA_OK;
  size_t n = size_class(size);
  pthread_mutex_lock(&d->mu);
  CUcontext c;
  CUresult e = d->cu->CtxPushCurrent(d->cuctx);
  if (e) {
    pthread_mutex_unlock(&d->mu);
    return cx_cuda_error(ctx, d->cu, e, "cuCtxPushCurrent");
  }
  int i = -1;
  if (upload) i = pick_for_upload(d, n, wait, &e);
  else {
    i = cache_find(d, n);
    /* a block at most twice the class: a small request does not pin a large block */
    if (i >= d->ncache || d->cache[i].size > 2 * n) i = -1;
  }
  if (!e && i >= 0) take(d, i, addr, got);
  else if (!e) {
    e = d->cu->MemAlloc(addr, n);
    if (e == 2 && upload) { /* CUDA_ERROR_OUT_OF_MEMORY: a cached block after all, waiting for its users */
      int j = cache_find(d, n);
      if (j < d->ncache && d->cache[j].size <= 2 * n) {
        *wait = d->cache[j].stamp;
        take(d, j, addr, got);
        e = 0;
      }
    }
    if (e == 2 && d->ncache) { /* what the cache holds may be enough */
      trim(d);
      e = d->cu->MemAlloc(addr, n);
    }
    if (!e && !*got) {
      *got = n;
      d->stats.driver_allocs++;
    }
  }
  d->cu->CtxPopCurrent(&c);
  if (e) {
    long long in_use = (long long)d->stats.in_use;
    pthread_mutex_unlock(&d->mu);
    *addr = 0;
    *got = 0;
    const char *why = NULL;
    if (d->cu->GetErrorString(e, &why)) why = NULL;
    return cx_error(ctx, e == 2 ? CXLA_ERR_OUT_OF_MEMORY : CXLA_ERR_DEVICE,
                    "gpu backend: cuMemAlloc of %zu bytes failed (%lld bytes in use): CUDA error %d (%s)", size,
                    in_use, e, why ? why : "unknown");
  }
  d->stats.in_use += (int64_t)*got;
  if (d->stats.in_use > d->stats.peak) d->stats.peak = d->stats.in_use;
  pthread_mutex_unlock(&d->mu);
  return CXLA_OK;
}

cxla_status cx_gpu_alloc(cxla_context *ctx, cx_gpu_device *d, size_t size, CUdeviceptr *addr, size_t *got) {
  uint64_t wait;
  return alloc_block(ctx, d, size, 0, addr, got, &wait);
}

void cx_gpu_free(cx_gpu_device *d, CUdeviceptr addr, size_t size) {
  if (!addr) return;
  pthread_mutex_lock(&d->mu);
  d->stats.in_use -= (int64_t)size;
  cx_gpu_block *c = d->cache;
  if (d->ncache == d->capcache) {
    int cap = d->capcache ? 2 * d->capcache : 16;
    c = cx_realloc(d->cache, sizeof *c * (size_t)cap);
    if (c) d->cache = c, d->capcache = cap;
  }
  if (c && d->ncache < d->capcache) {
    int i = cache_find(d, size);
    memmove(&d->cache[i + 1], &d->cache[i], sizeof *d->cache * (size_t)(d->ncache - i));
    d->cache[i] = (cx_gpu_block){addr, size, d->nmarks + 1}; /* its users are before the next marker */
    d->ncache++;
    d->stats.cached += (int64_t)size;
  } else { /* no room to remember it: back to the driver */
    CUcontext cc;
    if (d->cu->CtxPushCurrent(d->cuctx) == 0) {
      settle(d);
      if (d->cu->MemFree(addr) == 0) d->stats.driver_frees++;
      d->cu->CtxPopCurrent(&cc);
    }
  }
  pthread_mutex_unlock(&d->mu);
}

/* ---- values ---- */

void cx_gpu_value_release(cx_dev_value *v) {
  if (!v) return;
  cx_gpu_device *d = v->device;
  for (int i = 0; d && i < v->nleaves; i++) cx_gpu_free(d, v->addr[i], v->size[i]);
  cx_dev_value_free(v);
  cx_gpu_device_unref(d);
}

static cxla_status value_new(cxla_context *ctx, cx_gpu_device *d, const cx_shape *shape, const unsigned char *skip,
                             int upload, uint64_t *wait, cx_dev_value **out) {
  *out = NULL;
  *wait = 0;
  cx_dev_value *v = cx_dev_value_new(shape, d, d->mem);
  if (!v) return cx_oom(ctx);
  cx_gpu_device_ref(d);
  for (int k = 0; k < v->nleaves; k++) {
    if (skip && skip[k]) continue;
    uint64_t w;
    cxla_status s = alloc_block(ctx, d, (size_t)cx_shape_bytes(cx_shape_leaf(shape, k)), upload, &v->addr[k],
                                &v->size[k], &w);
    if (s != CXLA_OK) {
      cx_gpu_value_release(v);
      return s;
    }
    if (w > *wait) *wait = w; /* markers are in stream order: the last one covers the others */
  }
  *out = v;
  return CXLA_OK;
}

cxla_status cx_gpu_value_new(cxla_context *ctx, cx_gpu_device *d, const cx_shape *shape, const unsigned char *skip,
                             cx_dev_value **out) {
  uint64_t wait;
  return value_new(ctx, d, shape, skip, 0, &wait, out);
}

cxla_status cx_gpu_value_new_upload(cxla_context *ctx, cx_gpu_device *d, const cx_shape *shape, uint64_t *wait,
                                    cx_dev_value **out) {
  return value_new(ctx, d, shape, NULL, 1, wait, out);
}

cxla_status cx_gpu_clone(cxla_context *ctx, const cx_dev_value *v, cx_dev_value **out) {
  cx_gpu_device *d = v->device;
  CX_TRY(cx_gpu_value_new(ctx, d, &v->shape, NULL, out));
  CUcontext c;
  CUresult e = d->cu->CtxPushCurrent(d->cuctx);
  int pushed = !e;
  for (int k = 0; k < v->nleaves && !e; k++) {
    size_t bytes = (size_t)cx_shape_bytes(cx_shape_leaf(&v->shape, k));
    if (bytes) e = d->cu->MemcpyDtoDAsync((*out)->addr[k], v->addr[k], bytes, d->stream);
  }
  if (pushed) d->cu->CtxPopCurrent(&c);
  if (!e) return CXLA_OK;
  cx_gpu_value_release(*out);
  *out = NULL;
  return cx_cuda_error(ctx, d->cu, e, "copying on the device (cuMemcpyDtoDAsync)");
}

cxla_status cx_gpu_mem_stats(cxla_context *ctx, const cx_cuda *cu, const cx_device_mem *mem, cx_mem_stats *out) {
  cx_gpu_device *d;
  CX_TRY(cx_gpu_device_get(ctx, cu, mem, &d));
  pthread_mutex_lock(&d->mu);
  *out = d->stats;
  pthread_mutex_unlock(&d->mu);
  cx_gpu_device_unref(d);
  return CXLA_OK;
}
