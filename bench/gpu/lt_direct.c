/* lt_direct.c — the baseline of the GEMM benchmark: cuBLASLt called directly, as an
 * application would, on an M x N x K f32 (or f64) GEMM with the same 32 MiB workspace and the
 * heuristic's first algorithm; the time of one GEMM is the median of 10 after 3 warm-ups,
 * measured with CUDA events. Opens libcuda and cuBLASLt with dlopen (nothing to link).
 * Usage: lt_direct M N K [f32|f64|bf16] (bf16: f32 accumulation, as cxla asks); prints
 * "us TFLOP/s". */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *sym(void *lib, const char *name) {
  void *f = dlsym(lib, name);
  if (!f) fprintf(stderr, "lt_direct: no %s\n", name), exit(2);
  return f;
}
#define CK(call) do { int r_ = (call); if (r_) { fprintf(stderr, "lt_direct: %s: %d\n", #call, r_); exit(1); } } while (0)

static int cmp(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc < 4) return fprintf(stderr, "usage: lt_direct M N K [f32|f64|bf16]\n"), 2;
  long long M = atoll(argv[1]), N = atoll(argv[2]), K = atoll(argv[3]);
  int f64 = argc > 4 && !strcmp(argv[4], "f64"), bf16 = argc > 4 && !strcmp(argv[4], "bf16");
  void *cu = dlopen("libcuda.so.1", RTLD_NOW), *lt = dlopen("libcublasLt.so.13", RTLD_NOW);
  if (!lt) lt = dlopen("/usr/local/cuda/lib64/libcublasLt.so.13", RTLD_NOW);
  if (!cu || !lt) return fprintf(stderr, "lt_direct: %s\n", dlerror()), 2;
  int dev = 0;
  void *ctx = NULL, *a = NULL, *b = NULL, *c = NULL;
  unsigned long long da, db, dc, dws;
  CK(((int (*)(unsigned))sym(cu, "cuInit"))(0));
  CK(((int (*)(int *, int))sym(cu, "cuDeviceGet"))(&dev, 0));
  CK(((int (*)(void **, int))sym(cu, "cuDevicePrimaryCtxRetain"))(&ctx, dev));
  CK(((int (*)(void *))sym(cu, "cuCtxPushCurrent_v2"))(ctx));
  int (*alloc)(unsigned long long *, size_t) = (int (*)(unsigned long long *, size_t))sym(cu, "cuMemAlloc_v2");
  size_t es = f64 ? 8 : bf16 ? 2 : 4, wsz = 32 << 20;
  CK(alloc(&da, (size_t)(M * K) * es));
  CK(alloc(&db, (size_t)(K * N) * es));
  CK(alloc(&dc, (size_t)(M * N) * es));
  CK(alloc(&dws, wsz));
  /* random values in [-1, 1), as cxla's --random-inputs: tensor cores draw less power (and
   * clock higher) on constant data */
  int (*htod)(unsigned long long, const void *, size_t) = (int (*)(unsigned long long, const void *, size_t))sym(cu, "cuMemcpyHtoD_v2");
  size_t most = (size_t)(M * K > K * N ? M * K : K * N);
  unsigned char *host = malloc(most * es);
  if (!host) return fprintf(stderr, "lt_direct: out of memory\n"), 1;
  uint64_t state = 12345;
  for (size_t i = 0; i < most; i++) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    float f = (float)((double)(state >> 40) / 16777216.0 * 2 - 1);
    double d = f;
    uint32_t u;
    memcpy(&u, &f, 4);
    uint16_t h = (uint16_t)(u >> 16);
    if (f64) memcpy(host + i * 8, &d, 8);
    else if (bf16) memcpy(host + i * 2, &h, 2);
    else memcpy(host + i * 4, &f, 4);
  }
  CK(htod(da, host, (size_t)(M * K) * es));
  CK(htod(db, host, (size_t)(K * N) * es));
  free(host);
  void *h = NULL, *desc = NULL, *pref = NULL;
  int type = f64 ? 1 : bf16 ? 14 : 0, compute = f64 ? 70 : 68, scale = f64 ? 1 : 0;
  CK(((int (*)(void **))sym(lt, "cublasLtCreate"))(&h));
  CK(((int (*)(void **, int, int))sym(lt, "cublasLtMatmulDescCreate"))(&desc, compute, scale));
  int (*layout)(void **, int, uint64_t, uint64_t, int64_t) = (int (*)(void **, int, uint64_t, uint64_t, int64_t))sym(lt, "cublasLtMatrixLayoutCreate");
  CK(layout(&a, type, (uint64_t)M, (uint64_t)K, M));
  CK(layout(&b, type, (uint64_t)K, (uint64_t)N, K));
  CK(layout(&c, type, (uint64_t)M, (uint64_t)N, M));
  CK(((int (*)(void **))sym(lt, "cublasLtMatmulPreferenceCreate"))(&pref));
  uint64_t w = wsz;
  CK(((int (*)(void *, int, const void *, size_t))sym(lt, "cublasLtMatmulPreferenceSetAttribute"))(pref, 1, &w, sizeof w));
  struct { uint64_t algo[8]; size_t ws; int state; float waves; int reserved[4]; } heur;
  int got = 0;
  CK(((int (*)(void *, void *, void *, void *, void *, void *, void *, int, void *, int *))sym(lt, "cublasLtMatmulAlgoGetHeuristic"))(
      h, desc, a, b, c, c, pref, 1, &heur, &got));
  if (got < 1) return fprintf(stderr, "lt_direct: no algorithm\n"), 1;
  int (*matmul)(void *, void *, const void *, const void *, void *, const void *, void *, const void *, const void *, void *,
                void *, void *, const void *, void *, size_t, void *) =
    (int (*)(void *, void *, const void *, const void *, void *, const void *, void *, const void *, const void *, void *,
             void *, void *, const void *, void *, size_t, void *))sym(lt, "cublasLtMatmul");
  double one64 = 1, zero64 = 0;
  float one32 = 1, zero32 = 0;
  const void *one = f64 ? (void *)&one64 : (void *)&one32, *zero = f64 ? (void *)&zero64 : (void *)&zero32;
  void *e0, *e1;
  CK(((int (*)(void **, unsigned))sym(cu, "cuEventCreate"))(&e0, 0));
  CK(((int (*)(void **, unsigned))sym(cu, "cuEventCreate"))(&e1, 0));
  int (*record)(void *, void *) = (int (*)(void *, void *))sym(cu, "cuEventRecord");
  int (*sync)(void *) = (int (*)(void *))sym(cu, "cuEventSynchronize");
  int (*elapsed)(float *, void *, void *) = (int (*)(float *, void *, void *))sym(cu, "cuEventElapsedTime");
  float ms[10];
  for (int i = 0; i < 13; i++) {
    CK(record(e0, NULL));
    CK(matmul(h, desc, one, (void *)(uintptr_t)da, a, (void *)(uintptr_t)db, b, zero, (void *)(uintptr_t)dc, c,
              (void *)(uintptr_t)dc, c, heur.algo, (void *)(uintptr_t)dws, wsz, NULL));
    CK(record(e1, NULL));
    CK(sync(e1));
    if (i >= 3) CK(elapsed(&ms[i - 3], e0, e1));
  }
  qsort(ms, 10, sizeof *ms, cmp);
  double us = (ms[4] + ms[5]) / 2 * 1e3;
  printf("%.1f us  %.1f TFLOP/s\n", us, 2.0 * (double)M * (double)N * (double)K / us / 1e6);
  return 0;
}
