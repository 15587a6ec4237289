/* emu_driver.c — the emulated CUDA driver (see emu.h): the same table of entry points that
 * cuda.c fills from libcuda, implemented on the host so that the gpu backend's runtime and
 * kernels run unchanged without a GPU. Device memory is plain heap blocks (posix_memalign, so
 * ASan and valgrind see them as such); every pointer handed to a copy or to a kernel access
 * must lie inside one of them, as on a GPU where anything else faults. */
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "backend/gpu/emu.h"

enum { /* the CUresult codes the emulation returns (the driver's values) */
  E_OK = 0, E_INVALID_VALUE = 1, E_OUT_OF_MEMORY = 2, E_INVALID_IMAGE = 200, E_INVALID_HANDLE = 400,
  E_NOT_FOUND = 500, E_ILLEGAL_ADDRESS = 700, E_CAPTURE_UNSUPPORTED = 900,
};

typedef struct range { uintptr_t base; size_t bytes; } range;

/* the live allocations and module globals, sorted by base */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static range *g_ranges;
static int g_nranges, g_cap;

int cx_emu_range_add(const void *base, size_t bytes) {
  pthread_mutex_lock(&g_mu);
  int ok = 1;
  if (g_nranges == g_cap) {
    int cap = g_cap ? 2 * g_cap : 64;
    range *r = realloc(g_ranges, sizeof *r * (size_t)cap);
    if (r) g_ranges = r, g_cap = cap;
    else ok = 0;
  }
  if (ok) {
    int i = g_nranges;
    while (i > 0 && g_ranges[i - 1].base > (uintptr_t)base) g_ranges[i] = g_ranges[i - 1], i--;
    g_ranges[i] = (range){(uintptr_t)base, bytes};
    g_nranges++;
  }
  pthread_mutex_unlock(&g_mu);
  return ok ? 0 : -1;
}

static int find_base(const void *base) { /* under g_mu */
  for (int i = 0; i < g_nranges; i++)
    if (g_ranges[i].base == (uintptr_t)base) return i;
  return -1;
}

void cx_emu_range_remove(const void *base) {
  pthread_mutex_lock(&g_mu);
  int i = find_base(base);
  if (i >= 0) {
    memmove(&g_ranges[i], &g_ranges[i + 1], sizeof *g_ranges * (size_t)(g_nranges - i - 1));
    g_nranges--;
  }
  if (!g_nranges) { /* the last one gone: free the table, which a library unloaded later (the
                     * PJRT plugin, dlclose'd) could no longer reach */
    free(g_ranges);
    g_ranges = NULL;
    g_cap = 0;
  }
  pthread_mutex_unlock(&g_mu);
}

/* the range holding [p, p+n), or NULL; *before: the nearest range below p (messages) */
static const range *containing(const range *rs, int n, uintptr_t p, uint64_t bytes, const range **before) {
  int lo = 0, hi = n; /* first range with base > p */
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (rs[mid].base <= p) lo = mid + 1;
    else hi = mid;
  }
  const range *r = lo ? &rs[lo - 1] : NULL;
  if (before) *before = r;
  return r && p - r->base <= r->bytes && bytes <= r->bytes - (p - r->base) ? r : NULL;
}

static int host_range_ok(CUdeviceptr p, size_t bytes) {
  pthread_mutex_lock(&g_mu);
  int ok = containing(g_ranges, g_nranges, (uintptr_t)p, bytes, NULL) != NULL;
  pthread_mutex_unlock(&g_mu);
  return ok;
}

int cx_emu_device_live(CUdeviceptr p, size_t bytes) { return host_range_ok(p, bytes); }
/* The emulated libraries compute at the call: the copies queued before it are done by then. */
int cx_emu_device_ok(CUdeviceptr p, size_t bytes) {
  cx_emu_streams_settle();
  return host_range_ok(p, bytes);
}

/* ---- the emulated thread, and what a kernel calls ---- */

typedef struct emu_thread {
  uint32_t sreg[14];        /* per cx_emu_sreg_names */
  const char *kernel;
  const range *ranges;      /* the launch's snapshot of g_ranges */
  int nranges;
  jmp_buf *trap;            /* where a faulting access returns to */
} emu_thread;

static _Thread_local emu_thread t_cur;
static _Thread_local char t_fault[512]; /* the last fault on this thread (cuGetErrorString) */

const char *const cx_emu_sreg_names[] = {"tid.x", "tid.y", "tid.z", "ntid.x", "ntid.y", "ntid.z", "ctaid.x",
                                         "ctaid.y", "ctaid.z", "nctaid.x", "nctaid.y", "nctaid.z", "warpsize",
                                         "laneid", NULL};

uint32_t cx_emu_sreg(uint32_t which) { return which < 14 ? t_cur.sreg[which] : 0; }

void cx_emu_access(const void *p, uint64_t bytes, uint32_t store) {
  const range *before = NULL;
  if (containing(t_cur.ranges, t_cur.nranges, (uintptr_t)p, bytes, &before)) return;
  int n = snprintf(t_fault, sizeof t_fault,
                   "an illegal memory access was encountered (emulated GPU: kernel %s, block (%u,%u,%u), thread (%u,%u,%u): a %llu-byte %s at %p "
                   "is outside every device allocation",
                   t_cur.kernel, t_cur.sreg[6], t_cur.sreg[7], t_cur.sreg[8], t_cur.sreg[0], t_cur.sreg[1], t_cur.sreg[2],
                   (unsigned long long)bytes, store ? "store" : "load", p);
  if (before && n > 0 && (size_t)n < sizeof t_fault)
    snprintf(t_fault + n, sizeof t_fault - (size_t)n, "; it starts %llu bytes after the start of a %zu-byte block)",
             (unsigned long long)((uintptr_t)p - before->base), before->bytes);
  else if (n > 0 && (size_t)n < sizeof t_fault) snprintf(t_fault + n, sizeof t_fault - (size_t)n, ")");
  if (cx_emu_warp_fault()) return; /* a lane of a warp run: parked for good (not reached) */
  longjmp(*t_cur.trap, 1); /* the access does not happen */
}

/* ---- the driver table ---- */

static int g_ctx_token; /* the context is only a handle here (streams: emu_stream.c) */

static CUresult emu_init(unsigned flags) { return flags ? E_INVALID_VALUE : E_OK; }
static cx_cuda g_emu;
static CUresult emu_version(int *v) { return *v = g_emu.driver_version, E_OK; } /* 12040: PTX ISA 8.4 */
static CUresult emu_count(int *n) { return *n = 1, E_OK; }
static CUresult emu_device(CUdevice *d, int ordinal) { return ordinal ? E_INVALID_VALUE : (*d = 0, E_OK); }
static CUresult emu_attribute(int *v, int attr, CUdevice d) {
  if (d) return E_INVALID_VALUE;
  if (attr == CX_CU_ATTR_CC_MAJOR) return *v = 9, E_OK; /* an sm_90 target: any works, the IR is what runs */
  if (attr == CX_CU_ATTR_CC_MINOR) return *v = 0, E_OK;
  return E_INVALID_VALUE;
}
static CUresult emu_name(char *name, int len, CUdevice d) {
  if (d || len < 1) return E_INVALID_VALUE;
  snprintf(name, (size_t)len, "cxla grid emulation (no GPU)");
  return E_OK;
}
static CUresult emu_retain(CUcontext *c, CUdevice d) { return d ? E_INVALID_VALUE : (*c = (CUcontext)&g_ctx_token, E_OK); }
static CUresult emu_release(CUdevice d) { return d ? E_INVALID_VALUE : E_OK; }
static CUresult emu_push(CUcontext c) { return c == (CUcontext)&g_ctx_token ? E_OK : E_INVALID_HANDLE; }
static CUresult emu_pop(CUcontext *c) { return *c = (CUcontext)&g_ctx_token, E_OK; }

static CUresult emu_load(CUmodule *m, const void *image, unsigned n, int *options, void **values) {
  char *log = NULL;
  size_t loglen = 0;
  for (unsigned i = 0; i < n; i++) {
    if (options[i] == CX_CU_JIT_ERROR_LOG_BUFFER) log = values[i];
    if (options[i] == CX_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) loglen = (size_t)(uintptr_t)values[i];
  }
  char dummy[256];
  if (!log || !loglen) log = dummy, loglen = sizeof dummy;
  if (!image) return E_INVALID_VALUE;
  cx_emu_module *em = NULL;
  if (cx_emu_module_load(image, &em, log, loglen)) return E_INVALID_IMAGE;
  *m = (CUmodule)em;
  return E_OK;
}
static CUresult emu_unload(CUmodule m) {
  cx_emu_module_free((cx_emu_module *)m);
  return E_OK;
}

static CUresult emu_function(CUfunction *f, CUmodule m, const char *name) {
  const cx_emu_fn *fn = m && name ? cx_emu_module_function((const cx_emu_module *)m, name) : NULL;
  if (!fn) return E_NOT_FOUND;
  *f = (CUfunction)fn;
  return E_OK;
}

/* device memory in use by cuMemAlloc, and the emulated device's size (0: the host's) */
static size_t g_allocated, g_memory_limit;

void cx_emu_set_memory_limit(size_t bytes) {
  pthread_mutex_lock(&g_mu);
  g_memory_limit = bytes;
  pthread_mutex_unlock(&g_mu);
}

size_t cx_emu_memory_allocated(void) {
  pthread_mutex_lock(&g_mu);
  size_t n = g_allocated;
  pthread_mutex_unlock(&g_mu);
  return n;
}

static CUresult emu_alloc(CUdeviceptr *p, size_t bytes) {
  void *b = NULL;
  if (!bytes) return E_INVALID_VALUE; /* as cuMemAlloc */
  pthread_mutex_lock(&g_mu);
  int full = g_memory_limit && bytes > g_memory_limit - (g_allocated < g_memory_limit ? g_allocated : g_memory_limit);
  if (!full) g_allocated += bytes;
  pthread_mutex_unlock(&g_mu);
  if (full) return E_OUT_OF_MEMORY;
  if (posix_memalign(&b, 256, bytes) || cx_emu_range_add(b, bytes)) { /* cuMemAlloc's alignment */
    free(b);
    pthread_mutex_lock(&g_mu);
    g_allocated -= bytes;
    pthread_mutex_unlock(&g_mu);
    return E_OUT_OF_MEMORY;
  }
  *p = (CUdeviceptr)(uintptr_t)b;
  return E_OK;
}

static CUresult emu_free(CUdeviceptr p) {
  pthread_mutex_lock(&g_mu);
  int i = find_base((void *)(uintptr_t)p);
  if (i >= 0) g_allocated -= g_ranges[i].bytes;
  pthread_mutex_unlock(&g_mu);
  if (i < 0) return E_INVALID_VALUE; /* not an allocation's start */
  cx_emu_range_remove((void *)(uintptr_t)p);
  free((void *)(uintptr_t)p);
  return E_OK;
}

/* what waits for the stream or touches host memory cannot be captured (emu_graph.c) */
/* synchronous copies: the legacy default stream's, so what every stream queued runs first */
static CUresult emu_htod(CUdeviceptr dst, const void *src, size_t bytes) {
  if (cx_emu_capturing()) return E_CAPTURE_UNSUPPORTED;
  cx_emu_streams_settle();
  if (!host_range_ok(dst, bytes)) return E_INVALID_VALUE;
  memcpy((void *)(uintptr_t)dst, src, bytes);
  return E_OK;
}
static CUresult emu_dtoh(void *dst, CUdeviceptr src, size_t bytes) {
  if (cx_emu_capturing()) return E_CAPTURE_UNSUPPORTED;
  cx_emu_streams_settle();
  if (!host_range_ok(src, bytes)) return E_INVALID_VALUE;
  memcpy(dst, (const void *)(uintptr_t)src, bytes);
  return E_OK;
}
/* what runs at once on a stream first runs what the stream queued (emu_stream.c) */
static CUresult emu_dtod(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s) {
  CUresult r = cx_emu_stream_begin(s);
  if (r) return r;
  if (!host_range_ok(dst, bytes) || !host_range_ok(src, bytes)) return E_INVALID_VALUE;
  if (cx_emu_capturing()) return cx_emu_capture_copy(dst, src, bytes);
  memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
  return E_OK;
}
static CUresult emu_memset8(CUdeviceptr dst, unsigned char v, size_t n, CUstream s) {
  CUresult r = cx_emu_stream_begin(s);
  if (r) return r;
  if (!host_range_ok(dst, n)) return E_INVALID_VALUE;
  if (cx_emu_capturing()) return cx_emu_capture_memset(dst, v, n);
  memset((void *)(uintptr_t)dst, v, n);
  return E_OK;
}
static CUresult emu_memset2d32(CUdeviceptr dst, size_t pitch, unsigned v, size_t width, size_t height, CUstream s) {
  CUresult r = cx_emu_stream_begin(s);
  if (r) return r;
  if (cx_emu_capturing()) return E_CAPTURE_UNSUPPORTED;
  if (!width || !height) return E_OK;
  if (dst % 4 || pitch % 4 || pitch < 4 * width || height > SIZE_MAX / pitch ||
      !host_range_ok(dst, pitch * (height - 1) + 4 * width))
    return E_INVALID_VALUE;
  for (size_t r = 0; r < height; r++)
    for (size_t i = 0; i < width; i++) memcpy((char *)(uintptr_t)dst + r * pitch + 4 * i, &v, 4);
  return E_OK;
}
/* A permutation of [0, n) that is neither the natural order nor its reverse: i -> (i*step +
 * n/3) mod n with step coprime to n. Kernels that assume threads or blocks run in order (or
 * that a thread sees another's writes) give wrong results here. */
static uint64_t gcd(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b, b = t;
  }
  return a;
}
static uint64_t scramble_step(uint64_t n) {
  uint64_t s = n * 5 / 8 + 1;
  while (n > 1 && gcd(s, n) != 1) s++;
  return s;
}

/* a lane's coordinates in its block: tid from the lane's thread number in the block */
typedef struct warp_at { uint32_t first, bx, by; } warp_at;
static void enter_lane(void *arg, int lane) {
  const warp_at *a = arg;
  uint32_t t = a->first + (uint32_t)lane, *r = t_cur.sreg;
  r[0] = t % a->bx, r[1] = t / a->bx % a->by, r[2] = t / a->bx / a->by, r[13] = (uint32_t)lane;
}

/* A kernel that shuffles: blocks in scrambled order, each block's warps in turn, each warp's
 * lanes as cooperating contexts (emu_warp.c). */
static CUresult launch_warps(const cx_emu_fn *fn, void **params, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                             unsigned by, unsigned bz) {
  cx_emu_warp *w = cx_emu_warp_new();
  if (!w) return E_OUT_OF_MEMORY;
  uint64_t nblocks = (uint64_t)gx * gy * gz, nthreads = (uint64_t)bx * by * bz, bstep = scramble_step(nblocks);
  uint32_t *r = t_cur.sreg;
  CUresult res = E_OK;
  for (uint64_t i = 0; i < nblocks && res == E_OK; i++) {
    uint64_t b = (i * bstep + nblocks / 3) % nblocks;
    r[6] = (uint32_t)(b % gx), r[7] = (uint32_t)(b / gx % gy), r[8] = (uint32_t)(b / gx / gy);
    for (uint64_t first = 0; first < nthreads && res == E_OK; first += 32) {
      warp_at at = {(uint32_t)first, bx, by};
      char why[256];
      int rc = cx_emu_warp_run(w, fn, params, (int)(nthreads - first < 32 ? nthreads - first : 32), enter_lane, &at, why,
                               sizeof why);
      if (rc < 0) snprintf(t_fault, sizeof t_fault, "emulated GPU: kernel %s, block (%u,%u,%u): %s", fn->name, r[6], r[7], r[8], why);
      if (rc) res = E_ILLEGAL_ADDRESS;
    }
  }
  cx_emu_warp_free(w);
  return res;
}

static CUresult emu_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                           unsigned shared, CUstream s, void **params, void **extra) {
  const cx_emu_fn *fn = (const cx_emu_fn *)f;
  if (!fn) return E_INVALID_HANDLE;
  CUresult qr = cx_emu_stream_begin(s);
  if (qr) return qr;
  /* the limits of every GPU cxla targets (compute capability 7.5 and newer) */
  if (!gx || !gy || !gz || !bx || !by || !bz || gy > 65535 || gz > 65535 || gx > 2147483647u || bx > 1024 ||
      by > 1024 || bz > 64 || (uint64_t)bx * by * bz > 1024 || extra || !params)
    return E_INVALID_VALUE;
  if (shared) return E_INVALID_VALUE; /* no kernel uses dynamic shared memory, and it is not emulated */
  if (cx_emu_capturing()) {
    unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    return cx_emu_capture_kernel(fn, grid, block, params);
  }
  pthread_mutex_lock(&g_mu);
  range *snap = malloc(sizeof *snap * (size_t)(g_nranges ? g_nranges : 1));
  int nsnap = g_nranges;
  if (snap) memcpy(snap, g_ranges, sizeof *snap * (size_t)nsnap);
  pthread_mutex_unlock(&g_mu);
  if (!snap) return E_OUT_OF_MEMORY;
  emu_thread saved = t_cur; /* a kernel never launches another, but keep the thread's state */
  jmp_buf trap;
  memset(&t_cur, 0, sizeof t_cur);
  t_cur.kernel = fn->name;
  t_cur.ranges = snap;
  t_cur.nranges = nsnap;
  t_cur.trap = &trap;
  uint32_t *r = t_cur.sreg;
  r[3] = bx, r[4] = by, r[5] = bz, r[9] = gx, r[10] = gy, r[11] = gz, r[12] = 32;
  CUresult res = E_OK;
  if (fn->warp) res = launch_warps(fn, params, gx, gy, gz, bx, by, bz);
  else if (setjmp(trap)) res = E_ILLEGAL_ADDRESS;
  else {
    uint64_t nblocks = (uint64_t)gx * gy * gz, nthreads = (uint64_t)bx * by * bz;
    uint64_t bstep = scramble_step(nblocks), tstep = scramble_step(nthreads);
    for (uint64_t i = 0; i < nblocks; i++) {
      uint64_t b = (i * bstep + nblocks / 3) % nblocks;
      r[6] = (uint32_t)(b % gx), r[7] = (uint32_t)(b / gx % gy), r[8] = (uint32_t)(b / gx / gy);
      for (uint64_t j = 0; j < nthreads; j++) {
        uint64_t t = (j * tstep + nthreads / 3) % nthreads;
        r[0] = (uint32_t)(t % bx), r[1] = (uint32_t)(t / bx % by), r[2] = (uint32_t)(t / bx / by);
        r[13] = (uint32_t)(t % 32);
        fn->entry(params);
      }
    }
  }
  t_cur = saved;
  free(snap);
  return res;
}

static CUresult emu_error_string(CUresult r, const char **s) {
  static const struct { CUresult r; const char *s; } k[] = {
    {E_OK, "no error"}, {E_INVALID_VALUE, "invalid argument"}, {E_OUT_OF_MEMORY, "out of memory"},
    {E_INVALID_IMAGE, "device kernel image is invalid"}, {E_INVALID_HANDLE, "invalid resource handle"},
    {E_NOT_FOUND, "named symbol not found"}, {401, "the operation is not permitted in this state"},
    {E_CAPTURE_UNSUPPORTED, "operation not permitted when stream is capturing"},
    {903, "the capture was not initiated in this stream"}, {600, "device not ready"},
  };
  if (r == E_ILLEGAL_ADDRESS) return *s = t_fault[0] ? t_fault : "an illegal memory access was encountered", E_OK;
  for (size_t i = 0; i < sizeof k / sizeof *k; i++)
    if (k[i].r == r) return *s = k[i].s, E_OK;
  *s = NULL;
  return E_INVALID_VALUE;
}

static cx_cuda g_emu = {
  .lib = (void *)&g_emu, .driver_version = 12040,
  .Init = emu_init, .DriverGetVersion = emu_version, .DeviceGetCount = emu_count, .DeviceGet = emu_device,
  .DeviceGetAttribute = emu_attribute, .DeviceGetName = emu_name, .DevicePrimaryCtxRetain = emu_retain,
  .DevicePrimaryCtxRelease = emu_release, .CtxPushCurrent = emu_push, .CtxPopCurrent = emu_pop,
  .ModuleLoadDataEx = emu_load, .ModuleUnload = emu_unload, .ModuleGetFunction = emu_function,
  .MemAlloc = emu_alloc, .MemFree = emu_free, .MemcpyHtoD = emu_htod, .MemcpyDtoH = emu_dtoh,
  .MemcpyDtoDAsync = emu_dtod, .LaunchKernel = emu_launch, .StreamCreate = cx_emu_stream_create,
  .StreamDestroy = cx_emu_stream_destroy, .StreamSynchronize = cx_emu_stream_sync, .GetErrorString = emu_error_string,
  .EventCreate = cx_emu_event_create, .EventRecord = cx_emu_event_record, .EventElapsedTime = cx_emu_event_elapsed,
  .EventDestroy = cx_emu_event_destroy, .MemsetD8Async = emu_memset8, .MemcpyHtoDAsync = cx_emu_htod_async,
  .MemcpyDtoHAsync = cx_emu_dtoh_async, .MemsetD2D32Async = emu_memset2d32,
  .MemHostAlloc = cx_emu_mem_host_alloc, .MemFreeHost = cx_emu_mem_free_host,
  .PointerGetAttribute = cx_emu_pointer_attribute, .StreamWaitEvent = cx_emu_stream_wait_event,
  .EventQuery = cx_emu_event_query, .EventSynchronize = cx_emu_event_sync,
  .GraphCreate = cx_emu_graph_create, .GraphDestroy = cx_emu_graph_destroy, .GraphInstantiate = cx_emu_graph_instantiate,
  .GraphExecDestroy = cx_emu_graph_exec_destroy, .GraphLaunch = cx_emu_graph_launch,
  .GraphConditionalHandleCreate = cx_emu_graph_handle_create, .GraphAddNode = cx_emu_graph_add_node,
  .StreamBeginCaptureToGraph = cx_emu_capture_begin, .StreamEndCapture = cx_emu_capture_end,
  .StreamGetCaptureInfo = cx_emu_capture_info, .GraphExecUpdate = cx_emu_graph_exec_update,
};

void cx_emu_fault(const char *why) { snprintf(t_fault, sizeof t_fault, "%s", why); }

void cx_emu_set_driver_version(int version) { g_emu.driver_version = version; }

const cx_cuda *cx_cuda_emu(void) { return &g_emu; }
