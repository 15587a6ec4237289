/* gpu_device.h — a context's GPU: the device, its primary context, the one stream every
 * executable and transfer of the context runs on (so work is ordered without events, and a
 * block given back to the cache is reused only after the work that read it), and a caching
 * allocator (as XLA's BFC allocator): device memory given back is kept by size class and
 * handed out again, so a training loop asks the driver for nothing after its first step. */
#ifndef CX_GPU_DEVICE_H
#define CX_GPU_DEVICE_H
#include <pthread.h>
#include <stdatomic.h>
#include "backend/backend.h"
#include "backend/gpu/cuda.h"

typedef struct cx_gpu_block {
  CUdeviceptr addr;
  size_t size;
} cx_gpu_block;

typedef struct cx_gpu_device {
  _Atomic int refs;         /* the context's slot, each executable and each device value */
  const cx_cuda *cu;
  const cx_device_mem *mem; /* the backend's (gpu or gpu-emu) */
  CUdevice dev;
  CUcontext cuctx;          /* device 0's primary context (retained) */
  CUstream stream;
  pthread_mutex_t mu;       /* the cache and the counts */
  cx_gpu_block *cache;      /* blocks given back, sorted by size */
  int ncache, capcache;
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
/* Gives a block back to the cache (work on the device's stream that uses it may still run:
 * the next user of the block is ordered after it on the same stream). */
void cx_gpu_free(cx_gpu_device *d, CUdeviceptr addr, size_t size);

/* A value of `shape` with its leaves allocated (contents undefined), except leaf k where
 * skip && skip[k] (addr 0: the caller places memory there). */
cxla_status cx_gpu_value_new(cxla_context *ctx, cx_gpu_device *d, const cx_shape *shape, const unsigned char *skip,
                             cx_dev_value **out);
/* The value's leaves (addr[k] 0 where a leaf is moved out or empty) back to the cache. */
void cx_gpu_value_release(cx_dev_value *v);

/* cx_device_mem's upload, download, clone and stats, for both backends' tables. */
cxla_status cx_gpu_upload(cxla_context *ctx, void *device, const cxla_literal *host, cx_dev_value **out);
cxla_status cx_gpu_download(cxla_context *ctx, const cx_dev_value *v, cxla_literal *out);
cxla_status cx_gpu_clone(cxla_context *ctx, const cx_dev_value *v, cx_dev_value **out);
cxla_status cx_gpu_mem_stats(cxla_context *ctx, const cx_cuda *cu, const cx_device_mem *mem, cx_mem_stats *out);

#endif
