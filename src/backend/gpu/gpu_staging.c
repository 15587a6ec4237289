/* gpu_staging.c — transfers between host memory and a device value, asynchronous as the
 * driver allows:
 *   - an upload copies the host leaves into a block of pinned host memory (cuMemHostAlloc,
 *     from a cache of such blocks, so a loop pins nothing after its first step), queues
 *     cuMemcpyHtoDAsync from it on the device's upload stream, records the block's event
 *     there and makes the compute stream wait for that event (cuStreamWaitEvent). It returns
 *     without waiting: the caller's memory is free again once its bytes are in the block, and
 *     the copy runs while the compute stream runs what it was given before (the previous
 *     execution's kernels), so uploading the next batch overlaps the current step. A block is
 *     handed out again only when its event says the copy is done.
 *   - a download queues cuMemcpyDtoHAsync of every leaf into one pinned block on the compute
 *     stream, after the work that makes the value, waits once (cuEventSynchronize of the
 *     block's event) and copies out to the caller's literal.
 *   - a leaf whose host memory is pinned already (cuPointerGetAttribute says host memory the
 *     driver knows: the caller's own cuMemHostAlloc'd or registered buffers, a framework's
 *     pinned tensors) is copied straight from or into it, without the staging copy. Such an
 *     upload must still finish before the call returns, since cxla's API gives the caller
 *     its memory back then (cxla_buffer_from_data copies "once", an execute's array argument
 *     must only stay valid during the call): it waits for the upload stream alone, not the
 *     kernels. Registering the caller's pageable memory instead (cuMemHostRegister) is not
 *     done: pinning pages costs more than the copy it saves unless kept, and a registration
 *     cannot be kept — cxla does not know when the caller frees or reuses that memory. */
#include <string.h>
#include "backend/gpu/gpu_device.h"
#include "core/context.h"
#include "ir/literal.h"

/* Staging blocks come in classes of 64 KiB; a transfer takes a block at most twice its class.
 * Past STAGING_KEEP bytes of pinned memory, idle blocks go back to the driver before another
 * is pinned (pinned memory is the host's, locked: it should not grow without bound). Leaves
 * of at least DIRECT_MIN bytes are checked for being pinned already (a driver call each). */
enum { STAGING_CLASS = 64 << 10, DIRECT_MIN = 64 << 10 };
static const size_t STAGING_KEEP = (size_t)256 << 20;

static size_t staging_class(size_t n) { return (n + STAGING_CLASS - 1) / STAGING_CLASS * STAGING_CLASS; }
static size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }

/* A staging block of at least `bytes`, marked busy (under mu, with the context current). */
static cxla_status pinned_get(cxla_context *ctx, cx_gpu_device *d, size_t bytes, cx_gpu_pinned **out) {
  const cx_cuda *cu = d->cu;
  size_t n = staging_class(bytes);
  *out = NULL;
  for (int i = 0; i < d->npinned; i++) {
    cx_gpu_pinned *p = d->pinned[i];
    if (p->busy || p->size < n || p->size > 2 * n) continue;
    CUresult e = p->recorded ? cu->EventQuery(p->done) : 0;
    if (e == CX_CU_NOT_READY) continue; /* its copy may still read or write it */
    if (e) return cx_cuda_error(ctx, cu, e, "cuEventQuery (a staging block's last copy)");
    p->busy = 1;
    d->stats.pinned_hits++;
    *out = p;
    return CXLA_OK;
  }
  if (d->npinned == d->cappinned) {
    int cap = d->cappinned ? 2 * d->cappinned : 8;
    cx_gpu_pinned **t = cx_realloc(d->pinned, sizeof *t * (size_t)cap);
    if (!t) return cx_oom(ctx);
    d->pinned = t, d->cappinned = cap;
  }
  if ((size_t)d->stats.pinned + n > STAGING_KEEP) cx_gpu_pinned_release_idle(d);
  cx_gpu_pinned *p = cx_calloc(1, sizeof *p);
  if (!p) return cx_oom(ctx);
  CUresult e = cu->MemHostAlloc(&p->host, n, 0);
  if (e == 2 && d->npinned) { /* CUDA_ERROR_OUT_OF_MEMORY: the idle blocks may make room */
    cx_gpu_pinned_release_idle(d);
    e = cu->MemHostAlloc(&p->host, n, 0);
  }
  if (e) {
    cx_free(p);
    const char *why = NULL;
    if (cu->GetErrorString(e, &why)) why = NULL;
    return cx_error(ctx, e == 2 ? CXLA_ERR_OUT_OF_MEMORY : CXLA_ERR_DEVICE,
                    "gpu backend: cuMemHostAlloc of %zu bytes (pinned host memory staging a transfer, %lld bytes "
                    "pinned already) failed: CUDA error %d (%s)", n, (long long)d->stats.pinned, e, why ? why : "unknown");
  }
  if ((e = cu->EventCreate(&p->done, CX_CU_EVENT_DISABLE_TIMING))) {
    cu->MemFreeHost(p->host);
    cx_free(p);
    return cx_cuda_error(ctx, cu, e, "cuEventCreate (a staging block)");
  }
  p->size = n;
  p->busy = 1;
  d->pinned[d->npinned++] = p;
  d->stats.pinned += (int64_t)n;
  d->stats.pinned_allocs++;
  *out = p;
  return CXLA_OK;
}

/* 1 if the driver knows host memory [p, p+bytes) as pinned (both ends: a registration is one
 * range of pages) */
static int is_pinned(const cx_cuda *cu, const void *p, size_t bytes) {
  unsigned t0 = 0, t1 = 0;
  return bytes >= DIRECT_MIN && !cu->PointerGetAttribute(&t0, CX_CU_POINTER_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)p) &&
         t0 == CX_CU_MEMORYTYPE_HOST &&
         !cu->PointerGetAttribute(&t1, CX_CU_POINTER_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)p + bytes - 1) &&
         t1 == CX_CU_MEMORYTYPE_HOST;
}

typedef struct xfer {
  cxla_context *ctx;
  cx_gpu_device *d;
  const cx_dev_value *v;
  const cxla_literal **leaves;
  size_t *off;            /* per leaf: its place in the staging block, or SIZE_MAX when direct */
  size_t staged, direct;  /* bytes */
  cx_gpu_pinned *block;
} xfer;

/* The leaves of host against v's and where each goes (under nothing; makes no driver call but
 * cuPointerGetAttribute). */
static cxla_status plan(xfer *x, const cxla_literal *host) {
  const cx_dev_value *v = x->v;
  int n = 0;
  if (!cx_literal_leaves(host, x->leaves, &n, v->nleaves) || n != v->nleaves)
    return cx_error(x->ctx, CXLA_ERR_INTERNAL, "gpu backend: a host value's leaves do not match");
  for (int k = 0; k < n; k++) {
    size_t bytes = (size_t)cx_shape_bytes(&x->leaves[k]->shape);
    if (bytes && !v->addr[k]) return cx_error(x->ctx, CXLA_ERR_INTERNAL, "gpu backend: a transfer of a moved leaf");
    if (bytes && is_pinned(x->d->cu, x->leaves[k]->data, bytes)) {
      x->off[k] = SIZE_MAX;
      x->direct += bytes;
    } else {
      x->off[k] = x->staged;
      x->staged += align256(bytes);
    }
  }
  return CXLA_OK;
}

/* Takes a staging block for x (context current). */
static cxla_status stage(xfer *x) {
  if (!x->staged) return CXLA_OK;
  pthread_mutex_lock(&x->d->mu);
  cxla_status s = pinned_get(x->ctx, x->d, x->staged, &x->block);
  pthread_mutex_unlock(&x->d->mu);
  return s;
}

/* Gives the block back; its event was recorded after its copies unless they failed (then the
 * stream finishes what was queued on the block first). */
static void unstage(xfer *x, CUstream stream, int recorded) {
  if (!x->block) return;
  if (!recorded) x->d->cu->StreamSynchronize(stream);
  pthread_mutex_lock(&x->d->mu);
  x->block->busy = 0;
  x->block->recorded |= recorded;
  x->d->stats.staged_bytes += recorded ? (int64_t)x->staged : 0;
  x->d->stats.direct_bytes += recorded ? (int64_t)x->direct : 0;
  pthread_mutex_unlock(&x->d->mu);
  x->block = NULL;
}

static void count_direct(xfer *x) {
  pthread_mutex_lock(&x->d->mu);
  x->d->stats.direct_bytes += (int64_t)x->direct;
  pthread_mutex_unlock(&x->d->mu);
}

/* The copies of an upload (context current); *recorded: the block's event was recorded. */
static cxla_status queue_upload(xfer *x, uint64_t wait, int *recorded) {
  cx_gpu_device *d = x->d;
  const cx_cuda *cu = d->cu;
  *recorded = 0;
  if (wait) CX_TRY(cx_gpu_wait_mark(x->ctx, d, wait));
  for (int k = 0; k < x->v->nleaves; k++) {
    size_t bytes = (size_t)cx_shape_bytes(&x->leaves[k]->shape);
    if (!bytes) continue;
    const void *src = x->off[k] == SIZE_MAX ? x->leaves[k]->data : (char *)x->block->host + x->off[k];
    if (x->off[k] != SIZE_MAX) memcpy((char *)x->block->host + x->off[k], x->leaves[k]->data, bytes);
    CUresult e = cu->MemcpyHtoDAsync(x->v->addr[k], src, bytes, d->upload);
    if (e) return cx_cuda_error(x->ctx, cu, e, "copying to the device (cuMemcpyHtoDAsync)");
  }
  CUevent ev = x->block ? x->block->done : d->direct[0];
  CUresult e = cu->EventRecord(ev, d->upload);
  if (e) return cx_cuda_error(x->ctx, cu, e, "cuEventRecord (after an upload)");
  *recorded = 1;
  /* the compute stream's later work (the kernels reading the value) comes after the copies */
  if ((e = cu->StreamWaitEvent(d->stream, ev, 0)))
    return cx_cuda_error(x->ctx, cu, e, "cuStreamWaitEvent (the kernels after an upload)");
  /* the caller's own pinned memory is theirs again when this returns */
  if (x->direct && (e = cu->EventSynchronize(ev)))
    return cx_cuda_error(x->ctx, cu, e, "copying to the device (cuEventSynchronize)");
  return CXLA_OK;
}

/* The copies of a download and the one wait (context current). */
static cxla_status queue_download(xfer *x, int *recorded) {
  cx_gpu_device *d = x->d;
  const cx_cuda *cu = d->cu;
  *recorded = 0;
  for (int k = 0; k < x->v->nleaves; k++) {
    size_t bytes = (size_t)cx_shape_bytes(&x->leaves[k]->shape);
    if (!bytes) continue;
    void *dst = x->off[k] == SIZE_MAX ? x->leaves[k]->data : (char *)x->block->host + x->off[k];
    CUresult e = cu->MemcpyDtoHAsync(dst, x->v->addr[k], bytes, d->stream);
    if (e) return cx_cuda_error(x->ctx, cu, e, "copying from the device (cuMemcpyDtoHAsync)");
  }
  CUevent ev = x->block ? x->block->done : d->direct[1];
  CUresult e = cu->EventRecord(ev, d->stream);
  if (e) return cx_cuda_error(x->ctx, cu, e, "cuEventRecord (after a download)");
  *recorded = 1;
  if ((e = cu->EventSynchronize(ev))) return cx_cuda_error(x->ctx, cu, e, "copying from the device (cuEventSynchronize)");
  for (int k = 0; x->block && k < x->v->nleaves; k++) {
    size_t bytes = (size_t)cx_shape_bytes(&x->leaves[k]->shape);
    if (bytes && x->off[k] != SIZE_MAX) memcpy(x->leaves[k]->data, (char *)x->block->host + x->off[k], bytes);
  }
  return CXLA_OK;
}

/* One upload (host to v, after device mark `wait`) or download (v to host): plans the leaves,
 * takes a staging block where one is needed, queues the copies with v's context current and
 * gives the block back, on the stream that copied. */
static cxla_status transfer(cxla_context *ctx, const cx_dev_value *v, const cxla_literal *host, int upload,
                            uint64_t wait) {
  cx_gpu_device *d = v->device;
  int n = v->nleaves;
  xfer x = {.ctx = ctx, .d = d, .v = v};
  const cxla_literal *lstack[16];
  size_t ostack[16];
  x.leaves = n <= 16 ? lstack : cx_calloc((size_t)n, sizeof *x.leaves);
  x.off = n <= 16 ? ostack : cx_calloc((size_t)n, sizeof *x.off);
  CUcontext c;
  cxla_status s = x.leaves && x.off ? plan(&x, host) : cx_oom(ctx);
  CUresult e = s == CXLA_OK ? d->cu->CtxPushCurrent(d->cuctx) : 0;
  if (e) s = cx_cuda_error(ctx, d->cu, e, "cuCtxPushCurrent");
  else if (s == CXLA_OK) {
    int recorded = 0;
    s = stage(&x);
    if (s == CXLA_OK) s = upload ? queue_upload(&x, wait, &recorded) : queue_download(&x, &recorded);
    if (x.block) unstage(&x, upload ? d->upload : d->stream, recorded);
    else if (s == CXLA_OK) count_direct(&x);
    d->cu->CtxPopCurrent(&c);
  }
  if (x.leaves != lstack) cx_free(x.leaves);
  if (x.off != ostack) cx_free(x.off);
  return s;
}

cxla_status cx_gpu_upload(cxla_context *ctx, void *device, const cxla_literal *host, cx_dev_value **out) {
  cx_gpu_device *d = device;
  uint64_t wait = 0;
  *out = NULL;
  CX_TRY(cx_gpu_value_new_upload(ctx, d, &host->shape, &wait, out));
  cxla_status s = transfer(ctx, *out, host, 1, wait);
  if (s != CXLA_OK) {
    cx_gpu_value_release(*out);
    *out = NULL;
  }
  return s;
}

cxla_status cx_gpu_download(cxla_context *ctx, const cx_dev_value *v, cxla_literal *out) {
  return transfer(ctx, v, out, 0, 0);
}
