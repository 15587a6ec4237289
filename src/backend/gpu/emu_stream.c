/* emu_stream.c — the emulated driver's streams, events and pinned host memory (emu.h).
 *
 * Kernels, device-to-device copies and memsets run when they are issued, as on a GPU that is
 * infinitely fast. Copies between the host and the device do not: cuMemcpyHtoDAsync reads
 * the host memory when its stream gets to it, which is only when something needs it — the
 * stream's next operation that runs at once, a synchronisation (cuStreamSynchronize,
 * cuEventSynchronize of an event recorded after it), or a stream that waits for such an event
 * (cuStreamWaitEvent) doing work itself. cuMemcpyDtoHAsync reads the device when its stream
 * gets to it and writes the host memory at the next synchronisation. So a program that
 * reuses pinned staging memory before its copy is known to be done, reads a download before
 * synchronising, or runs kernels that read an upload without waiting for its event, gets
 * wrong numbers here, as it might on a GPU.
 *
 * Checks, as the driver makes them or (marked) stricter:
 *   - a stream or event that is not live is CUDA_ERROR_INVALID_HANDLE;
 *   - the host side of an asynchronous copy may be pageable memory (not from cuMemHostAlloc),
 *     with the driver's documented rules: an upload from it first waits for the stream's
 *     earlier work, then takes the bytes before returning (the host may reuse them at once)
 *     and lands in stream order; a download into it returns once the bytes are there. Only
 *     pinned memory gives the deferred behaviour above, so whether a transfer stayed
 *     asynchronous shows in cxla's transfer counts (memory_stats), not as an error;
 *   - a queued copy whose device or pinned memory was freed before it ran is a sticky error on
 *     its stream (CUDA_ERROR_ILLEGAL_ADDRESS), returned by the stream's next operation;
 *   - waiting for, synchronising or querying an event never recorded is
 *     CUDA_ERROR_INVALID_HANDLE (stricter: the driver treats it as complete; in cxla it would
 *     be a copy whose completion nobody can know). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "backend/gpu/emu.h"

enum { E_OK = 0, E_INVALID_VALUE = 1, E_OUT_OF_MEMORY = 2, E_INVALID_HANDLE = 400, E_NOT_READY = 600,
       E_ILLEGAL_ADDRESS = 700, E_CAPTURE_UNSUPPORTED = 900 };

/* ---- pinned host memory ---- */

typedef struct pinned { uintptr_t base; size_t bytes; } pinned;
static pthread_mutex_t g_pmu = PTHREAD_MUTEX_INITIALIZER;
static pinned *g_pinned;
static int g_npinned, g_pcap;
static size_t g_pinned_bytes, g_pinned_limit;

void cx_emu_set_pinned_limit(size_t bytes) {
  pthread_mutex_lock(&g_pmu);
  g_pinned_limit = bytes;
  pthread_mutex_unlock(&g_pmu);
}

size_t cx_emu_pinned_allocated(void) {
  pthread_mutex_lock(&g_pmu);
  size_t n = g_pinned_bytes;
  pthread_mutex_unlock(&g_pmu);
  return n;
}

int cx_emu_pinned_ok(const void *p, size_t bytes) {
  uintptr_t a = (uintptr_t)p;
  pthread_mutex_lock(&g_pmu);
  int ok = 0;
  for (int i = 0; i < g_npinned && !ok; i++)
    ok = a >= g_pinned[i].base && a - g_pinned[i].base <= g_pinned[i].bytes && bytes <= g_pinned[i].bytes - (a - g_pinned[i].base);
  pthread_mutex_unlock(&g_pmu);
  return ok;
}

CUresult cx_emu_mem_host_alloc(void **pp, size_t bytes, unsigned flags) {
  if (!pp) return E_INVALID_VALUE;
  *pp = NULL;
  if (!bytes || flags & ~7u) return E_INVALID_VALUE; /* PORTABLE, DEVICEMAP, WRITECOMBINED */
  void *b = NULL;
  pthread_mutex_lock(&g_pmu);
  CUresult r = E_OK;
  if (g_pinned_limit && bytes > g_pinned_limit - (g_pinned_bytes < g_pinned_limit ? g_pinned_bytes : g_pinned_limit))
    r = E_OUT_OF_MEMORY; /* the driver cannot pin that much */
  if (!r && g_npinned == g_pcap) {
    int cap = g_pcap ? 2 * g_pcap : 16;
    pinned *t = realloc(g_pinned, sizeof *t * (size_t)cap);
    if (t) g_pinned = t, g_pcap = cap;
    else r = E_OUT_OF_MEMORY;
  }
  if (!r && posix_memalign(&b, 4096, bytes)) r = E_OUT_OF_MEMORY; /* page-aligned, as the driver's */
  if (!r) {
    g_pinned[g_npinned++] = (pinned){(uintptr_t)b, bytes};
    g_pinned_bytes += bytes;
    *pp = b;
  }
  pthread_mutex_unlock(&g_pmu);
  return r;
}

CUresult cx_emu_mem_free_host(void *p) {
  pthread_mutex_lock(&g_pmu);
  int i = 0;
  while (i < g_npinned && g_pinned[i].base != (uintptr_t)p) i++;
  int found = p && i < g_npinned;
  if (found) {
    g_pinned_bytes -= g_pinned[i].bytes;
    g_pinned[i] = g_pinned[--g_npinned];
  }
  if (!g_npinned) { /* as emu_driver.c's ranges: nothing left for a dlclose'd plugin to leak */
    free(g_pinned);
    g_pinned = NULL;
    g_pcap = 0;
  }
  pthread_mutex_unlock(&g_pmu);
  if (!found) return E_INVALID_VALUE; /* not what cuMemHostAlloc returned */
  free(p);
  return E_OK;
}

CUresult cx_emu_pointer_attribute(void *data, int attr, CUdeviceptr p) {
  if (!data || attr != CX_CU_POINTER_MEMORY_TYPE) return E_INVALID_VALUE; /* cxla asks only this */
  unsigned type = cx_emu_device_live(p, 1) ? CX_CU_MEMORYTYPE_DEVICE
                  : cx_emu_pinned_ok((const void *)(uintptr_t)p, 1) ? CX_CU_MEMORYTYPE_HOST : 0;
  if (!type) return E_INVALID_VALUE; /* pageable host memory: the driver does not know it */
  *(unsigned *)data = type;
  return E_OK;
}

/* ---- streams ---- */

enum { Q_HTOD, Q_DELIVER, Q_WAIT };
typedef struct qent {
  int kind;
  CUdeviceptr dev;
  void *host;             /* HTOD: read when run; DELIVER: written when run */
  size_t bytes;
  void *snap;             /* DELIVER: the device bytes as the stream read them; HTOD from
                             pageable memory: the host bytes taken at the call */
  uint64_t stream, pos;   /* WAIT: until that stream has run pos entries */
} qent;

typedef struct estream {
  uint64_t id;
  struct estream *next;
  qent *q;
  size_t head, n, cap;
  uint64_t queued, done;  /* entries ever queued, and run */
  CUresult err;           /* sticky: a queued copy that failed */
  char why[256];
} estream;

static pthread_mutex_t g_smu = PTHREAD_MUTEX_INITIALIZER; /* the streams, their queues, events */
static estream *g_streams;
static uint64_t g_next_id = 1;

static estream *live(CUstream s) { /* under g_smu */
  for (estream *e = g_streams; e; e = e->next)
    if ((CUstream)e == s) return e;
  return NULL;
}
static estream *by_id(uint64_t id) {
  for (estream *e = g_streams; e; e = e->next)
    if (e->id == id) return e;
  return NULL;
}

static void fail(estream *s, const char *why) {
  if (s->err) return;
  s->err = E_ILLEGAL_ADDRESS;
  snprintf(s->why, sizeof s->why, "emulated GPU: %s", why);
}

/* Runs s's queue until it has run `upto` entries (under g_smu). */
static void run_to(estream *s, uint64_t upto) {
  while (s->done < upto && s->head < s->n) {
    qent *e = &s->q[s->head++];
    s->done++;
    char why[200];
    if (e->kind == Q_WAIT) {
      estream *o = by_id(e->stream);
      if (o) run_to(o, e->pos);
    } else if (e->kind == Q_HTOD) {
      if (!cx_emu_device_live(e->dev, e->bytes))
        snprintf(why, sizeof why, "a queued %zu-byte host-to-device copy found its device memory freed", e->bytes), fail(s, why);
      else if (!e->snap && !cx_emu_pinned_ok(e->host, e->bytes))
        snprintf(why, sizeof why, "a queued %zu-byte host-to-device copy found its pinned host memory freed", e->bytes), fail(s, why);
      else memcpy((void *)(uintptr_t)e->dev, e->snap ? e->snap : e->host, e->bytes);
      free(e->snap);
      e->snap = NULL;
    } else {
      if (!cx_emu_pinned_ok(e->host, e->bytes))
        snprintf(why, sizeof why, "a queued %zu-byte device-to-host copy found its pinned host memory freed", e->bytes), fail(s, why);
      else memcpy(e->host, e->snap, e->bytes);
      free(e->snap);
      e->snap = NULL;
    }
  }
  if (s->head == s->n) s->head = s->n = 0;
}

static CUresult sticky(estream *s) {
  if (s->err) cx_emu_fault(s->why);
  return s->err;
}

static CUresult enqueue(estream *s, qent e) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 16;
    qent *q = realloc(s->q, sizeof *q * cap);
    if (!q) return E_OUT_OF_MEMORY;
    s->q = q, s->cap = cap;
  }
  s->q[s->n++] = e;
  s->queued++;
  return E_OK;
}

CUresult cx_emu_stream_create(CUstream *out, unsigned flags) {
  if (!out || flags > 1) return E_INVALID_VALUE; /* CU_STREAM_DEFAULT or CU_STREAM_NON_BLOCKING */
  estream *s = calloc(1, sizeof *s);
  if (!s) return E_OUT_OF_MEMORY;
  pthread_mutex_lock(&g_smu);
  s->id = g_next_id++;
  s->next = g_streams;
  g_streams = s;
  pthread_mutex_unlock(&g_smu);
  *out = (CUstream)s;
  return E_OK;
}

CUresult cx_emu_stream_destroy(CUstream h) {
  pthread_mutex_lock(&g_smu);
  estream *s = live(h);
  if (s) { /* the driver lets queued work finish */
    run_to(s, s->queued);
    estream **p = &g_streams;
    while (*p != s) p = &(*p)->next;
    *p = s->next;
  }
  pthread_mutex_unlock(&g_smu);
  if (!s) return E_INVALID_HANDLE;
  free(s->q);
  free(s);
  return E_OK;
}

CUresult cx_emu_stream_begin(CUstream h) {
  pthread_mutex_lock(&g_smu);
  estream *s = live(h);
  CUresult r = E_INVALID_HANDLE;
  if (s) {
    run_to(s, s->queued);
    r = sticky(s);
  }
  pthread_mutex_unlock(&g_smu);
  return r;
}

CUresult cx_emu_stream_sync(CUstream h) {
  pthread_mutex_lock(&g_smu);
  estream *s = live(h);
  CUresult r = !s ? E_INVALID_HANDLE : cx_emu_capturing() ? E_CAPTURE_UNSUPPORTED : E_OK;
  if (!r) {
    run_to(s, s->queued);
    r = sticky(s);
  }
  pthread_mutex_unlock(&g_smu);
  return r;
}

void cx_emu_streams_settle(void) {
  pthread_mutex_lock(&g_smu);
  for (estream *s = g_streams; s; s = s->next) run_to(s, s->queued);
  pthread_mutex_unlock(&g_smu);
}

CUresult cx_emu_htod_async(CUdeviceptr dst, const void *src, size_t bytes, CUstream h) {
  pthread_mutex_lock(&g_smu);
  estream *s = live(h);
  CUresult r = !s ? E_INVALID_HANDLE : cx_emu_capturing() ? E_CAPTURE_UNSUPPORTED : sticky(s);
  if (!r && bytes && (!src || !cx_emu_device_live(dst, bytes))) r = E_INVALID_VALUE;
  void *snap = NULL;
  if (!r && bytes && !cx_emu_pinned_ok(src, bytes)) { /* pageable: the stream's work first, then the bytes taken */
    run_to(s, s->queued);
    if (!(r = sticky(s)) && !(snap = malloc(bytes))) r = E_OUT_OF_MEMORY;
    if (snap) memcpy(snap, src, bytes);
  }
  if (!r && bytes) r = enqueue(s, (qent){.kind = Q_HTOD, .dev = dst, .host = (void *)(uintptr_t)src, .bytes = bytes, .snap = snap});
  if (r) free(snap);
  pthread_mutex_unlock(&g_smu);
  return r;
}

CUresult cx_emu_dtoh_async(void *dst, CUdeviceptr src, size_t bytes, CUstream h) {
  pthread_mutex_lock(&g_smu);
  estream *s = live(h);
  CUresult r = !s ? E_INVALID_HANDLE : cx_emu_capturing() ? E_CAPTURE_UNSUPPORTED : E_OK;
  if (!r) {
    run_to(s, s->queued); /* the device is read after what the stream had before */
    r = sticky(s);
  }
  if (!r && bytes && (!dst || !cx_emu_device_live(src, bytes))) r = E_INVALID_VALUE;
  if (!r && bytes && !cx_emu_pinned_ok(dst, bytes)) { /* pageable: returns with the bytes there */
    memcpy(dst, (const void *)(uintptr_t)src, bytes);
    pthread_mutex_unlock(&g_smu);
    return E_OK;
  }
  void *snap = !r && bytes ? malloc(bytes) : NULL;
  if (!r && bytes && !snap) r = E_OUT_OF_MEMORY;
  if (snap) {
    memcpy(snap, (const void *)(uintptr_t)src, bytes);
    if ((r = enqueue(s, (qent){.kind = Q_DELIVER, .dev = src, .host = dst, .bytes = bytes, .snap = snap}))) free(snap);
  }
  pthread_mutex_unlock(&g_smu);
  return r;
}

/* ---- events: a position in a stream's queue (and the host time it was recorded at) ---- */

typedef struct eevent {
  int recorded, timing;
  uint64_t stream, pos;
  struct timespec at;
} eevent;

static int complete(const eevent *e) { /* under g_smu; a destroyed stream ran everything */
  const estream *s = by_id(e->stream);
  return !s || s->done >= e->pos;
}

CUresult cx_emu_event_create(CUevent *out, unsigned flags) {
  if (!out || flags & ~2u) return E_INVALID_VALUE; /* CU_EVENT_DEFAULT or CU_EVENT_DISABLE_TIMING */
  eevent *e = calloc(1, sizeof *e);
  if (!e) return E_OUT_OF_MEMORY;
  e->timing = !(flags & 2);
  *out = (CUevent)e;
  return E_OK;
}

CUresult cx_emu_event_record(CUevent h, CUstream sh) {
  eevent *e = (eevent *)h;
  pthread_mutex_lock(&g_smu);
  estream *s = live(sh);
  CUresult r = !e || !s ? E_INVALID_HANDLE : cx_emu_capturing() ? E_CAPTURE_UNSUPPORTED : E_OK;
  if (!r) {
    e->recorded = 1, e->stream = s->id, e->pos = s->queued;
    clock_gettime(CLOCK_MONOTONIC, &e->at);
  }
  pthread_mutex_unlock(&g_smu);
  return r;
}

CUresult cx_emu_event_query(CUevent h) {
  eevent *e = (eevent *)h;
  if (!e || !e->recorded) return E_INVALID_HANDLE;
  pthread_mutex_lock(&g_smu);
  estream *s = by_id(e->stream);
  CUresult r = s && s->err ? sticky(s) : complete(e) ? E_OK : E_NOT_READY;
  pthread_mutex_unlock(&g_smu);
  return r;
}

CUresult cx_emu_event_sync(CUevent h) {
  eevent *e = (eevent *)h;
  if (!e || !e->recorded) return E_INVALID_HANDLE;
  if (cx_emu_capturing()) return E_CAPTURE_UNSUPPORTED;
  pthread_mutex_lock(&g_smu);
  estream *s = by_id(e->stream);
  CUresult r = E_OK;
  if (s) {
    run_to(s, e->pos);
    r = sticky(s);
  }
  pthread_mutex_unlock(&g_smu);
  return r;
}

CUresult cx_emu_stream_wait_event(CUstream sh, CUevent h, unsigned flags) {
  eevent *e = (eevent *)h;
  pthread_mutex_lock(&g_smu);
  estream *s = live(sh);
  CUresult r = !s || !e || !e->recorded ? E_INVALID_HANDLE : flags ? E_INVALID_VALUE
               : cx_emu_capturing() ? E_CAPTURE_UNSUPPORTED : E_OK;
  if (!r && e->stream != s->id && !complete(e))
    r = enqueue(s, (qent){.kind = Q_WAIT, .stream = e->stream, .pos = e->pos});
  pthread_mutex_unlock(&g_smu);
  return r;
}

CUresult cx_emu_event_elapsed(float *ms, CUevent a, CUevent b) {
  const eevent *x = (const eevent *)a, *y = (const eevent *)b;
  if (!ms || !x || !y || !x->recorded || !y->recorded || !x->timing || !y->timing) return E_INVALID_HANDLE;
  pthread_mutex_lock(&g_smu);
  int done = complete(x) && complete(y);
  pthread_mutex_unlock(&g_smu);
  if (!done) return E_NOT_READY;
  *ms = (float)((double)(y->at.tv_sec - x->at.tv_sec) * 1e3 + (double)(y->at.tv_nsec - x->at.tv_nsec) / 1e6);
  return E_OK;
}

CUresult cx_emu_event_destroy(CUevent h) {
  if (!h) return E_INVALID_HANDLE;
  free(h);
  return E_OK;
}
