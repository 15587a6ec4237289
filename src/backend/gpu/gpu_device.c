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
  if ((a->err = cu->DeviceGet(&d->dev, 0))) a->what = "cuDeviceGet";
  else if ((a->err = cu->DevicePrimaryCtxRetain(&d->cuctx, d->dev))) a->what = "cuDevicePrimaryCtxRetain";
  else if ((a->err = cu->CtxPushCurrent(d->cuctx))) a->what = "cuCtxPushCurrent";
  else {
    if ((a->err = cu->StreamCreate(&d->stream, 0))) a->what = "cuStreamCreate";
    cu->CtxPopCurrent(&c);
  }
  if (!a->err) return d;
  if (d->cuctx) cu->DevicePrimaryCtxRelease(d->dev);
  pthread_mutex_destroy(&d->mu);
  cx_free(d);
  return NULL;
}

/* The device's cached blocks back to the driver (the stream first finishes what reads them). */
static void trim(cx_gpu_device *d) {
  if (!d->ncache) return;
  d->cu->StreamSynchronize(d->stream);
  for (int i = 0; i < d->ncache; i++) {
    if (d->cu->MemFree(d->cache[i].addr) == 0) d->stats.driver_frees++;
    d->stats.cached -= (int64_t)d->cache[i].size;
  }
  d->ncache = 0;
}

void cx_gpu_device_ref(cx_gpu_device *d) { atomic_fetch_add(&d->refs, 1); }

void cx_gpu_device_unref(cx_gpu_device *d) {
  if (!d || atomic_fetch_sub(&d->refs, 1) != 1) return;
  CUcontext c;
  if (d->cu->CtxPushCurrent(d->cuctx) == 0) {
    trim(d);
    d->cu->StreamDestroy(d->stream);
    d->cu->CtxPopCurrent(&c);
  }
  d->cu->DevicePrimaryCtxRelease(d->dev);
  pthread_mutex_destroy(&d->mu);
  cx_free(d->cache);
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

cxla_status cx_gpu_alloc(cxla_context *ctx, cx_gpu_device *d, size_t size, CUdeviceptr *addr, size_t *got) {
  *addr = 0;
  *got = 0;
  if (!size) return CXLA_OK;
  size_t n = size_class(size);
  pthread_mutex_lock(&d->mu);
  int i = cache_find(d, n);
  /* a block at most twice the class: a small request does not pin a large block */
  if (i < d->ncache && d->cache[i].size <= 2 * n) {
    *addr = d->cache[i].addr;
    *got = d->cache[i].size;
    memmove(&d->cache[i], &d->cache[i + 1], sizeof *d->cache * (size_t)(d->ncache - i - 1));
    d->ncache--;
    d->stats.cached -= (int64_t)*got;
  } else {
    CUcontext c;
    CUresult e = d->cu->CtxPushCurrent(d->cuctx);
    if (!e) {
      e = d->cu->MemAlloc(addr, n);
      if (e == 2 && d->ncache) { /* CUDA_ERROR_OUT_OF_MEMORY: what the cache holds may be enough */
        trim(d);
        e = d->cu->MemAlloc(addr, n);
      }
      d->cu->CtxPopCurrent(&c);
    }
    if (e) {
      long long in_use = (long long)d->stats.in_use;
      pthread_mutex_unlock(&d->mu);
      *addr = 0;
      const char *why = NULL;
      if (d->cu->GetErrorString(e, &why)) why = NULL;
      return cx_error(ctx, e == 2 ? CXLA_ERR_OUT_OF_MEMORY : CXLA_ERR_DEVICE,
                      "gpu backend: cuMemAlloc of %zu bytes failed (%lld bytes in use): CUDA error %d (%s)", size,
                      in_use, e, why ? why : "unknown");
    }
    *got = n;
    d->stats.driver_allocs++;
  }
  d->stats.in_use += (int64_t)*got;
  if (d->stats.in_use > d->stats.peak) d->stats.peak = d->stats.in_use;
  pthread_mutex_unlock(&d->mu);
  return CXLA_OK;
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
    d->cache[i] = (cx_gpu_block){addr, size};
    d->ncache++;
    d->stats.cached += (int64_t)size;
  } else { /* no room to remember it: back to the driver */
    CUcontext cc;
    if (d->cu->CtxPushCurrent(d->cuctx) == 0) {
      d->cu->StreamSynchronize(d->stream);
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

cxla_status cx_gpu_value_new(cxla_context *ctx, cx_gpu_device *d, const cx_shape *shape, const unsigned char *skip,
                             cx_dev_value **out) {
  *out = NULL;
  cx_dev_value *v = cx_dev_value_new(shape, d, d->mem);
  if (!v) return cx_oom(ctx);
  cx_gpu_device_ref(d);
  for (int k = 0; k < v->nleaves; k++) {
    if (skip && skip[k]) continue;
    cxla_status s = cx_gpu_alloc(ctx, d, (size_t)cx_shape_bytes(cx_shape_leaf(shape, k)), &v->addr[k], &v->size[k]);
    if (s != CXLA_OK) {
      cx_gpu_value_release(v);
      return s;
    }
  }
  *out = v;
  return CXLA_OK;
}

/* The array leaves of l, depth first, into out[*k...] (at most cap); 0 when there are more. */
static int literal_leaves(const cxla_literal *l, const cxla_literal **out, int *k, int cap) {
  if (l->shape.type == CXLA_TUPLE) {
    for (int i = 0; i < l->nelems; i++)
      if (!literal_leaves(l->elems[i], out, k, cap)) return 0;
    return 1;
  }
  if (!cx_type_is_array(l->shape.type)) return 1;
  if (*k >= cap) return 0;
  out[(*k)++] = l;
  return 1;
}

/* Copies between v's leaves and the host literal's, in either direction, on the stream. */
static cxla_status copy_leaves(cxla_context *ctx, const cx_dev_value *v, const cxla_literal *host, int up) {
  cx_gpu_device *d = v->device;
  const cx_cuda *cu = d->cu;
  const cxla_literal *stack[16], **leaves = v->nleaves <= 16 ? stack : cx_calloc((size_t)v->nleaves, sizeof *leaves);
  if (!leaves) return cx_oom(ctx);
  int n = 0;
  cxla_status s = literal_leaves(host, leaves, &n, v->nleaves) && n == v->nleaves
                    ? CXLA_OK : cx_error(ctx, CXLA_ERR_INTERNAL, "gpu backend: a host value's leaves do not match");
  CUcontext c;
  CUresult e = s == CXLA_OK ? cu->CtxPushCurrent(d->cuctx) : 0;
  if (e) s = cx_cuda_error(ctx, cu, e, "cuCtxPushCurrent");
  else if (s == CXLA_OK) {
    for (int k = 0; k < n && !e; k++) {
      size_t bytes = (size_t)cx_shape_bytes(&leaves[k]->shape);
      if (!bytes) continue;
      if (!v->addr[k]) e = 1; /* CUDA_ERROR_INVALID_VALUE: a leaf moved out */
      else if (up) e = cu->MemcpyHtoDAsync(v->addr[k], leaves[k]->data, bytes, d->stream);
      else e = cu->MemcpyDtoHAsync(leaves[k]->data, v->addr[k], bytes, d->stream);
    }
    /* a download is done when it returns; an upload from pageable memory is staged by then */
    if (!e && !up) e = cu->StreamSynchronize(d->stream);
    if (e) s = cx_cuda_error(ctx, cu, e, up ? "copying to the device (cuMemcpyHtoDAsync)"
                                            : "copying from the device (cuMemcpyDtoHAsync)");
    cu->CtxPopCurrent(&c);
  }
  if (leaves != stack) cx_free(leaves);
  return s;
}

cxla_status cx_gpu_upload(cxla_context *ctx, void *device, const cxla_literal *host, cx_dev_value **out) {
  CX_TRY(cx_gpu_value_new(ctx, device, &host->shape, NULL, out));
  cxla_status s = copy_leaves(ctx, *out, host, 1);
  if (s != CXLA_OK) {
    cx_gpu_value_release(*out);
    *out = NULL;
  }
  return s;
}

cxla_status cx_gpu_download(cxla_context *ctx, const cx_dev_value *v, cxla_literal *out) {
  return copy_leaves(ctx, v, out, 0);
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
