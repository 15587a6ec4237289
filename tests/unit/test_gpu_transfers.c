/* test_gpu_transfers.c — host<->device copies on gpu-emu: uploads staged through pinned
 * host memory on the device's upload stream (the kernels wait for their event), downloads
 * through pinned memory with one wait, a loop that pins and allocates nothing after its first
 * step, copies straight from the caller's pinned memory, a failed pin as a clear error; and
 * the emulated driver's rules for streams, events and pinned memory that make a wrong
 * ordering fail here (emu_stream.c runs a host copy only when something waits for it). */
#include <stdint.h>
#include <string.h>
#include "backend/gpu/emu.h"
#include "runtime/buffer.h"
#include "test.h"

static const char *const EMU = "gpu-emu";

static const char affine_text[] = /* y = 2x + w, s = sum(x) */
    "HloModule affine\n"
    "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
    "ENTRY main {\n"
    "  x = f32[8192] parameter(0)\n"
    "  w = f32[8192] parameter(1)\n"
    "  two = f32[] constant(2)\n"
    "  tb = f32[8192] broadcast(two), dimensions={}\n"
    "  xx = f32[8192] multiply(x, tb)\n"
    "  y = f32[8192] add(xx, w)\n"
    "  z = f32[] constant(0)\n"
    "  s = f32[] reduce(x, z), dimensions={0}, to_apply=add\n"
    "  ROOT t = (f32[8192], f32[]) tuple(y, s)\n"
    "}\n";

enum { N = 8192, STEPS = 8 };

static cxla_executable *compile_on(cxla_context *ctx, const char *text) {
  cxla_module *m = NULL;
  cxla_executable *e = NULL;
  CHECK_OK(cxla_module_parse(ctx, text, strlen(text), "affine.hlo", &m));
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = EMU;
  if (m) CHECK_OK(cxla_compile(m, &o, &e));
  cxla_module_destroy(m);
  return e;
}

static void fill_batch(float *x, int k) {
  for (int i = 0; i < N; i++) x[i] = (float)((i * 7 + k * 13) % 101) - 50.0f;
}

/* Each step's batch is uploaded before the previous step runs (the next batch's copy overlaps
 * the current kernels), from one host array that is overwritten as soon as the upload
 * returns; one argument is the caller's array given to the execute. Results match the host's
 * arithmetic, and after the first step nothing is pinned or allocated again. */
TEST(gpu_transfers_loop_stages_and_reuses) {
  size_t pinned_before = cx_emu_pinned_allocated(); /* other contexts' staging */
  cxla_context *ctx = NULL;
  CHECK_OK(cxla_context_create(&ctx));
  if (!ctx) return;
  cxla_executable *e = compile_on(ctx, affine_text);
  static float x[N], w[N];
  for (int i = 0; i < N; i++) w[i] = (float)(i % 9) * 0.5f;
  int64_t dims[1] = {N};
  cxla_buffer *next = NULL;
  fill_batch(x, 0);
  CHECK_OK(cxla_buffer_from_data(ctx, EMU, CXLA_F32, 1, dims, x, sizeof x, &next));
  cxla_memory_stats st[STEPS];
  memset(st, 0, sizeof st);
  for (int k = 0; e && next && k < STEPS; k++) {
    cxla_buffer *cur = next, *r = NULL;
    next = NULL;
    fill_batch(x, k + 1); /* the host array changes: the staged copy of batch k is what counts */
    if (k + 1 < STEPS) CHECK_OK(cxla_buffer_from_data(ctx, EMU, CXLA_F32, 1, dims, x, sizeof x, &next));
    memset(x, 0xff, sizeof x); /* NaNs: a copy still reading the caller's memory would see them */
    cxla_arg args[2] = {{.buffer = cur}, {.data = w, .nbytes = sizeof w, .type = CXLA_F32, .rank = 1, .dims = dims}};
    CHECK_OK(cxla_executable_execute_args(e, 2, args, &r));
    cxla_buffer_destroy(cur);
    cxla_literal *got = NULL;
    if (r) CHECK_OK(cxla_buffer_to_literal(r, &got));
    cxla_buffer_destroy(r);
    if (!got) break;
    float want[N];
    fill_batch(want, k);
    double sum = 0;
    int bad = -1;
    for (int i = 0; i < N; i++) {
      sum += want[i];
      if (((const float *)got->elems[0]->data)[i] != 2 * want[i] + w[i] && bad < 0) bad = i;
    }
    CHECK_MSG(bad < 0, "step %d: y[%d] = %g, want %g", k, bad, bad < 0 ? 0.0 : ((const float *)got->elems[0]->data)[bad],
              bad < 0 ? 0.0 : 2 * want[bad] + w[bad]);
    CHECK_NEAR(cxla_literal_get_f64(got->elems[1], 0), sum, 1e-3);
    cxla_literal_destroy(got);
    CHECK_OK(cxla_context_memory_stats(ctx, EMU, &st[k]));
  }
  cxla_buffer_destroy(next);
  const cxla_memory_stats *a = &st[0], *z = &st[STEPS - 1];
  /* each step stages its batch and w up and y, s down; the first step's blocks serve them all */
  CHECK_MSG(z->pinned_allocs == a->pinned_allocs && a->pinned_allocs > 0, "pinned allocations: %lld after step 1, "
            "%lld after the last", (long long)a->pinned_allocs, (long long)z->pinned_allocs);
  CHECK(z->pinned_hits >= a->pinned_hits + 2 * (STEPS - 1));
  CHECK_MSG(z->driver_allocs == a->driver_allocs, "device allocations grew from %lld to %lld",
            (long long)a->driver_allocs, (long long)z->driver_allocs);
  /* after step 0: the next batch up in all but the last step; w up, y and s down (s in a
   * 256-byte slot) in every one */
  int64_t X = (int64_t)sizeof x, want = (STEPS - 2) * X + (STEPS - 1) * (X + X + 256);
  CHECK_MSG(z->staged_bytes - a->staged_bytes == want, "staged %lld bytes after step 0, want %lld",
            (long long)(z->staged_bytes - a->staged_bytes), (long long)want);
  CHECK(z->direct_bytes == 0 && z->pinned > 0 && z->upload_waits == 0);
  cxla_executable_destroy(e);
  cxla_context_destroy(ctx);
  CHECK(cx_emu_pinned_allocated() == pinned_before); /* the context gave its staging back */
}

/* The caller's own pinned memory (here from the emulated driver's cuMemHostAlloc) is copied
 * from and into directly, without staging. */
TEST(gpu_transfers_direct_from_pinned_memory) {
  cxla_context *ctx = NULL;
  CHECK_OK(cxla_context_create(&ctx));
  if (!ctx) return;
  enum { M = 4 * N }; /* 128 KiB: leaves under 64 KiB are staged whatever their memory */
  const cx_cuda *cu = cx_cuda_emu();
  float *p = NULL;
  CHECK_EQ_INT(cu->MemHostAlloc((void **)&p, sizeof(float) * M, 0), 0);
  if (!p) {
    cxla_context_destroy(ctx);
    return;
  }
  for (int i = 0; i < M; i++) p[i] = (float)i;
  int64_t dims[1] = {M};
  cxla_buffer *b = NULL;
  CHECK_OK(cxla_buffer_from_data(ctx, EMU, CXLA_F32, 1, dims, p, sizeof(float) * M, &b));
  memset(p, 0, sizeof(float) * M); /* the call returned: the copy is done */
  cxla_memory_stats st;
  CHECK_OK(cxla_context_memory_stats(ctx, EMU, &st));
  CHECK_MSG(st.direct_bytes == (int64_t)sizeof(float) * M && st.staged_bytes == 0 && st.pinned_allocs == 0, "direct %lld staged %lld pinned_allocs %lld", (long long)st.direct_bytes, (long long)st.staged_bytes, (long long)st.pinned_allocs);
  const float *got = b ? cxla_buffer_data(b) : NULL; /* staged down: cxla's own host copy */
  int ok = got != NULL;
  for (int i = 0; got && i < M; i++) ok &= got[i] == (float)i;
  CHECK(ok);
  CHECK_OK(cxla_context_memory_stats(ctx, EMU, &st));
  CHECK(st.staged_bytes == (int64_t)sizeof(float) * M && st.pinned_allocs == 1);
  cxla_buffer_destroy(b);
  CHECK_EQ_INT(cu->MemFreeHost(p), 0);
  cxla_context_destroy(ctx);
}

/* The driver cannot pin: CXLA_ERR_OUT_OF_MEMORY naming cuMemHostAlloc, nothing leaked, and
 * the next transfer works once it can. */
TEST(gpu_transfers_pinning_fails_cleanly) {
  cxla_context *ctx = NULL;
  CHECK_OK(cxla_context_create(&ctx));
  if (!ctx) return;
  static float data[N];
  int64_t dims[1] = {N};
  cxla_buffer *b = NULL;
  size_t in_use = cx_emu_memory_allocated();
  cx_emu_set_pinned_limit(cx_emu_pinned_allocated() + 4096);
  CHECK_EQ_INT(cxla_buffer_from_data(ctx, EMU, CXLA_F32, 1, dims, data, sizeof data, &b), CXLA_ERR_OUT_OF_MEMORY);
  CHECK(b == NULL);
  CHECK_STR_CONTAINS(cxla_context_errmsg(ctx), "cuMemHostAlloc of 65536 bytes (pinned host memory staging a transfer");
  cxla_memory_stats st;
  CHECK_OK(cxla_context_memory_stats(ctx, EMU, &st));
  CHECK(st.in_use == 0); /* the device memory taken for the value went back */
  cx_emu_set_pinned_limit(0);
  CHECK_OK(cxla_buffer_from_data(ctx, EMU, CXLA_F32, 1, dims, data, sizeof data, &b));
  cxla_buffer_destroy(b);
  cxla_context_destroy(ctx);
  CHECK(cx_emu_memory_allocated() == in_use);
}

/* The emulated driver's rules: a host copy from or into pinned memory runs when something
 * waits for it, one with pageable memory at the call; freed memory, dead streams and events
 * never recorded are refused. */
TEST(gpu_emu_transfer_rules) {
  const cx_cuda *cu = cx_cuda_emu();
  CUstream up = NULL, comp = NULL, dead = NULL;
  CUevent ev = NULL, never = NULL;
  CUdeviceptr a = 0, b = 0;
  uint32_t *pin = NULL, pageable[4] = {0};
  CHECK_EQ_INT(cu->StreamCreate(&up, CX_CU_STREAM_NON_BLOCKING), 0);
  CHECK_EQ_INT(cu->StreamCreate(&comp, 0), 0);
  CHECK_EQ_INT(cu->StreamCreate(&dead, 0), 0);
  CHECK_EQ_INT(cu->StreamDestroy(dead), 0);
  CHECK_EQ_INT(cu->EventCreate(&ev, CX_CU_EVENT_DISABLE_TIMING), 0);
  CHECK_EQ_INT(cu->EventCreate(&never, CX_CU_EVENT_DISABLE_TIMING), 0);
  CHECK_EQ_INT(cu->MemAlloc(&a, 16), 0);
  CHECK_EQ_INT(cu->MemAlloc(&b, 16), 0);
  CHECK_EQ_INT(cu->MemHostAlloc((void **)&pin, 4096, 0), 0);
  if (!up || !comp || !ev || !never || !a || !b || !pin) return;
  unsigned type = 0;
  CHECK_EQ_INT(cu->PointerGetAttribute(&type, CX_CU_POINTER_MEMORY_TYPE, a), 0);
  CHECK_EQ_INT(type, CX_CU_MEMORYTYPE_DEVICE);
  CHECK_EQ_INT(cu->PointerGetAttribute(&type, CX_CU_POINTER_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)(pin + 3)), 0);
  CHECK_EQ_INT(type, CX_CU_MEMORYTYPE_HOST);
  CHECK_EQ_INT(cu->PointerGetAttribute(&type, CX_CU_POINTER_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)pageable), 1);
  /* pageable memory as the driver documents it: an upload takes the bytes before returning,
   * a download returns with them there */
  for (int i = 0; i < 4; i++) pageable[i] = 40u + (uint32_t)i;
  CHECK_EQ_INT(cu->MemcpyHtoDAsync(a, pageable, 16, up), 0);
  memset(pageable, 0, sizeof pageable);
  CHECK_EQ_INT(cu->StreamSynchronize(up), 0);
  CHECK_EQ_INT(cu->MemcpyDtoHAsync(pageable, a, 16, up), 0);
  CHECK_EQ_INT(pageable[0], 40);
  CHECK_EQ_INT(pageable[3], 43);
  /* asynchronous copies need a live stream and device memory */
  CHECK_EQ_INT(cu->MemcpyHtoDAsync(a, pin, 16, dead), 400);
  CHECK_EQ_INT(cu->MemcpyHtoDAsync(a + 8, pin, 16, up), 1);
  /* an upload runs when waited for: the compute stream sees it only after waiting */
  CHECK_EQ_INT(cu->MemsetD8Async(a, 0, 16, comp), 0);
  for (int i = 0; i < 4; i++) pin[i] = 100u + (uint32_t)i;
  CHECK_EQ_INT(cu->MemcpyHtoDAsync(a, pin, 16, up), 0);
  CHECK_EQ_INT(cu->EventRecord(ev, up), 0);
  CHECK_EQ_INT(cu->EventQuery(ev), 600); /* CUDA_ERROR_NOT_READY: nothing waited yet */
  CHECK_EQ_INT(cu->MemcpyDtoDAsync(b, a, 16, comp), 0); /* without a wait: the old bytes */
  uint32_t *back = pin + 512;
  CHECK_EQ_INT(cu->MemcpyDtoHAsync(back, b, 16, comp), 0);
  CHECK_EQ_INT(cu->StreamSynchronize(comp), 0);
  CHECK_EQ_INT(back[0], 0);
  CHECK_EQ_INT(cu->StreamWaitEvent(comp, ev, 0), 0);
  CHECK_EQ_INT(cu->MemcpyDtoDAsync(b, a, 16, comp), 0); /* after the wait: the upload's */
  back[1] = 7;
  CHECK_EQ_INT(cu->MemcpyDtoHAsync(back, b, 16, comp), 0);
  CHECK_EQ_INT(back[1], 7); /* a download lands at the synchronisation, not before */
  CHECK_EQ_INT(cu->EventRecord(ev, comp), 0);
  CHECK_EQ_INT(cu->EventSynchronize(ev), 0);
  CHECK_EQ_INT(back[0], 100);
  CHECK_EQ_INT(back[3], 103);
  CHECK_EQ_INT(cu->EventQuery(ev), 0);
  /* events never recorded cannot be waited for, queried or synchronised */
  CHECK_EQ_INT(cu->StreamWaitEvent(comp, never, 0), 400);
  CHECK_EQ_INT(cu->EventQuery(never), 400);
  CHECK_EQ_INT(cu->EventSynchronize(never), 400);
  /* a queued copy whose device memory is freed before it runs: a sticky error on its stream */
  CHECK_EQ_INT(cu->MemcpyHtoDAsync(b, pin, 16, up), 0);
  CHECK_EQ_INT(cu->MemFree(b), 0);
  CUresult r = cu->StreamSynchronize(up);
  CHECK_EQ_INT(r, 700);
  const char *msg = NULL;
  CHECK_EQ_INT(cu->GetErrorString(r, &msg), 0);
  CHECK_STR_CONTAINS(msg, "found its device memory freed");
  CHECK_EQ_INT(cu->StreamDestroy(up), 0);
  /* and one whose pinned memory is freed */
  CHECK_EQ_INT(cu->StreamCreate(&up, CX_CU_STREAM_NON_BLOCKING), 0);
  CHECK_EQ_INT(cu->MemcpyHtoDAsync(a, pin, 16, up), 0);
  CHECK_EQ_INT(cu->MemFreeHost(pin), 0);
  CHECK_EQ_INT(cu->MemFreeHost(pin), 1); /* not pinned any more */
  r = cu->StreamSynchronize(up);
  CHECK_EQ_INT(r, 700);
  CHECK_EQ_INT(cu->GetErrorString(r, &msg), 0);
  CHECK_STR_CONTAINS(msg, "found its pinned host memory freed");
  CHECK_EQ_INT(cu->StreamDestroy(up), 0);
  CHECK_EQ_INT(cu->StreamDestroy(comp), 0);
  CHECK_EQ_INT(cu->EventDestroy(ev), 0);
  CHECK_EQ_INT(cu->EventDestroy(never), 0);
  CHECK_EQ_INT(cu->MemFree(a), 0);
}
