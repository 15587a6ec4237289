/* gpu_device.h — a context's GPU: the device, its primary context, the compute stream every
 * executable and download of the context runs on (so a block given back to the cache and
 * handed to compute work again is used only after the work that read it), an upload stream
 * for host-to-device copies (gpu_staging.c: the compute stream waits for each upload's event,
 * so uploads overlap the kernels queued before them), and a caching allocator (as XLA's BFC
 * allocator): device memory given back is kept by size class and handed out again, so a
 * training loop asks the driver for nothing after its first step.
 *
 * An upload writes its block from the other stream, so it must not start before the compute
 * work that last used the block is done: every execution ends with a marker event on the
 * compute stream, a block given back is stamped with the next marker (all work queued before
 * the free is before it), and an upload into it makes the upload stream wait for that marker.
 * Uploads prefer blocks whose marker has passed, so they need not wait for the kernels
 * running now. */
#ifndef CX_GPU_DEVICE_H
#define CX_GPU_DEVICE_H
#include <pthread.h>
#include <stdatomic.h>
#include "backend/backend.h"
#include "backend/gpu/cuda.h"

typedef struct cx_gpu_block {
  CUdeviceptr addr;
  size_t size;
  uint64_t stamp;           /* the compute marker its last users are before (0: none) */
} cx_gpu_block;

/* A block of pinned host memory staging transfers (gpu_staging.c). */
typedef struct cx_gpu_pinned {
  void *host;
  size_t size;
  CUevent done;             /* recorded after the last copy that uses it */
  int busy;                 /* a transfer is filling or reading it */
  int recorded;             /* done has been recorded (the driver cannot query it before) */
} cx_gpu_pinned;

enum { CX_GPU_MARKS = 8 };  /* compute markers kept (a slot re-recorded later is a later marker) */

typedef struct cx_gpu_device {
  _Atomic int refs;         /* the context's slot, each executable and each device value */
  const cx_cuda *cu;
  const cx_device_mem *mem; /* the backend's (gpu or gpu-emu) */
  CUdevice dev;
  CUcontext cuctx;          /* device 0's primary context (retained) */
  CUstream stream;          /* compute: executions, device copies, downloads */
  CUstream upload;          /* host-to-device copies (non-blocking) */
  pthread_mutex_t mu;       /* the cache, the markers, the staging blocks and the counts */
  cx_gpu_block *cache;      /* blocks given back, sorted by size */
  int ncache, capcache;
  CUevent marks[CX_GPU_MARKS]; /* marker n is slot n % CX_GPU_MARKS */
  uint64_t nmarks;          /* markers recorded so far */
  uint64_t marks_done;      /* the compute stream is known to be past this marker */
  cx_gpu_pinned **pinned;   /* staging blocks */
  int npinned, cappinned;
  CUevent direct[2];        /* after transfers straight from or to a caller's pinned memory:
                               [0] uploads, [1] downloads (an event re-recorded by another
                               transfer is later on the same stream: a wait for it still covers) */
  cx_mem_stats stats;
} cx_gpu_device;

/* The context's device for this driver (the real one or the emulation), made on first use. */
cxla_status cx_gpu_device_get(cxla_context *ctx, const cx_cuda *cu, const cx_device_mem *mem, cx_gpu_device **out);
void cx_gpu_device_ref(cx_gpu_device *d);
void cx_gpu_device_unref(cx_gpu_device *d);

/* size bytes of device memory (0 bytes: *addr 0), from the cache when it has a block of the
 * size's class; *got is the block's size. When the driver runs out, the cache is emptied and
 * the allocation tried again. Any thread; makes the context current itself. */
cxla_status cx_gpu_alloc(cxla_context *ctx, cx_gpu_device *d, size_t size, CUdeviceptr *addr, size_t *got);
/* Gives a block back to the cache (work on the compute stream that uses it may still run:
 * the next compute user of the block is ordered after it on the same stream; an upload
 * waits for its stamp). */
void cx_gpu_free(cx_gpu_device *d, CUdeviceptr addr, size_t size);
/* Records a compute marker (at the end of every execution); with the context current. */
cxla_status cx_gpu_mark(cxla_context *ctx, cx_gpu_device *d);

/* A value of `shape` with its leaves allocated (contents undefined), except leaf k where
 * skip && skip[k] (addr 0: the caller places memory there). */
cxla_status cx_gpu_value_new(cxla_context *ctx, cx_gpu_device *d, const cx_shape *shape, const unsigned char *skip,
                             cx_dev_value **out);
/* A value an upload will fill: its blocks preferably ones no queued compute work uses; *wait:
 * the marker the upload stream must wait for before writing them (0: none). */
cxla_status cx_gpu_value_new_upload(cxla_context *ctx, cx_gpu_device *d, const cx_shape *shape, uint64_t *wait,
                                    cx_dev_value **out);
/* The upload stream waits for compute marker t (t > 0; recorded first if it is not yet). With
 * the context current. */
cxla_status cx_gpu_wait_mark(cxla_context *ctx, cx_gpu_device *d, uint64_t t);
/* The value's leaves (addr[k] 0 where a leaf is moved out or empty) back to the cache. */
void cx_gpu_value_release(cx_dev_value *v);

/* cx_device_mem's upload, download, clone and stats, for both backends' tables (upload and
 * download: gpu_staging.c). */
cxla_status cx_gpu_upload(cxla_context *ctx, void *device, const cxla_literal *host, cx_dev_value **out);
cxla_status cx_gpu_download(cxla_context *ctx, const cx_dev_value *v, cxla_literal *out);
/* The staging blocks no transfer is using back to the driver, each after its last copy
 * (under mu, with the context current; gpu_staging.c's cache, and the device's end). */
void cx_gpu_pinned_release_idle(cx_gpu_device *d);
cxla_status cx_gpu_clone(cxla_context *ctx, const cx_dev_value *v, cx_dev_value **out);
cxla_status cx_gpu_mem_stats(cxla_context *ctx, const cx_cuda *cu, const cx_device_mem *mem, cx_mem_stats *out);

#endif
