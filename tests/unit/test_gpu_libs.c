/* test_gpu_libs.c — the CUDA libraries the gpu backend opens with dlopen (cuSOLVER, cuBLAS,
 * cuFFT, cuDNN) and the driver's graph API: the enum values solver.h, cufft_lib.h, cudnn_lib.h
 * and cuda.h declare against the toolkit's own headers,
 * every symbol the tables name found in the toolkit's libraries, and a library that is not
 * there refused with a message naming it. The headers and libraries are the CUDA toolkit's,
 * under /usr/local/cuda; on a machine without it the checks against them say so and pass. */
#include <stdlib.h>
#include <string.h>
#include "backend/gpu/cuda.h"
#include "backend/gpu/cudnn_lib.h"
#include "backend/gpu/cufft_lib.h"
#include "backend/gpu/dl_table.h"
#include "backend/gpu/emu.h"
#include "backend/gpu/solver.h"
#include "core/context.h"
#include "test.h"

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  cx_sb sb;
  cx_sb_init(&sb);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) cx_sb_putn(&sb, buf, n);
  fclose(f);
  return cx_sb_take(&sb);
}

/* the value `name = V` or `#define name V` gives in the header text, or LONG_MIN */
static long header_value(const char *text, const char *name) {
  size_t len = strlen(name);
  for (const char *p = text; (p = strstr(p, name)); p += len) {
    char after = p[len], before = p > text ? p[-1] : ' ';
    if ((after >= 'A' && after <= 'Z') || (after >= 'a' && after <= 'z') || (after >= '0' && after <= '9') ||
        after == '_' || before == '_' || (before >= 'A' && before <= 'Z'))
      continue;
    const char *q = p + len;
    while (*q == ' ' || *q == '\t') q++;
    int define = p >= text + 8 && !strncmp(p - 8, "#define ", 8);
    if (*q == '=') q++;
    else if (!define) continue;
    char *end;
    long v = strtol(q, &end, 0);
    if (end != q) return v;
  }
  return -2147483647L - 1;
}

typedef struct known { const char *name; long value; } known;

static void check_header(const char *file, const known *k, int n) {
  char path[256];
  snprintf(path, sizeof path, "/usr/local/cuda/include/%s", file);
  char *text = slurp(path);
  if (!text) {
    printf("  %s: not installed, values not checked against it\n", path);
    return;
  }
  for (int i = 0; i < n; i++) {
    long v = header_value(text, k[i].name);
    CHECK_MSG(v == k[i].value, "%s: %s is %ld there, cxla declares %ld", file, k[i].name, v, k[i].value);
  }
  cx_free(text);
}

TEST(gpu_libs_enums_match_the_headers) {
  static const known blas[] = {
    {"CUBLAS_FILL_MODE_LOWER", CX_BLAS_FILL_LOWER}, {"CUBLAS_FILL_MODE_UPPER", CX_BLAS_FILL_UPPER},
    {"CUBLAS_OP_N", CX_BLAS_OP_N}, {"CUBLAS_OP_T", CX_BLAS_OP_T}, {"CUBLAS_OP_C", CX_BLAS_OP_C},
    {"CUBLAS_SIDE_LEFT", CX_BLAS_SIDE_LEFT}, {"CUBLAS_SIDE_RIGHT", CX_BLAS_SIDE_RIGHT},
    {"CUBLAS_DIAG_NON_UNIT", CX_BLAS_DIAG_NON_UNIT}, {"CUBLAS_DIAG_UNIT", CX_BLAS_DIAG_UNIT},
  };
  static const known solver[] = {
    {"CUSOLVER_EIG_MODE_NOVECTOR", CX_SOLVER_EIG_NOVECTOR}, {"CUSOLVER_EIG_MODE_VECTOR", CX_SOLVER_EIG_VECTOR}};
  static const known fft[] = {
    {"CUFFT_R2C", CX_FFT_R2C}, {"CUFFT_C2R", CX_FFT_C2R}, {"CUFFT_C2C", CX_FFT_C2C}, {"CUFFT_D2Z", CX_FFT_D2Z},
    {"CUFFT_Z2D", CX_FFT_Z2D}, {"CUFFT_Z2Z", CX_FFT_Z2Z}, {"CUFFT_FORWARD", CX_FFT_FORWARD},
    {"CUFFT_INVERSE", CX_FFT_INVERSE}};
  check_header("cublas_api.h", blas, (int)(sizeof blas / sizeof *blas));
  check_header("cusolver_common.h", solver, (int)(sizeof solver / sizeof *solver));
  check_header("cufft.h", fft, (int)(sizeof fft / sizeof *fft));
  static const known driver[] = { /* cuda.h's graph values (gpu_graph.c) */
    {"CU_GRAPH_NODE_TYPE_CONDITIONAL", CX_CU_GRAPH_NODE_CONDITIONAL}, {"CU_GRAPH_COND_TYPE_IF", CX_CU_COND_IF},
    {"CU_GRAPH_COND_TYPE_WHILE", CX_CU_COND_WHILE}, {"CU_GRAPH_COND_TYPE_SWITCH", CX_CU_COND_SWITCH},
    {"CU_STREAM_CAPTURE_MODE_THREAD_LOCAL", CX_CU_CAPTURE_THREAD_LOCAL},
    {"CU_STREAM_CAPTURE_STATUS_ACTIVE", CX_CU_CAPTURE_ACTIVE}};
  check_header("cuda.h", driver, (int)(sizeof driver / sizeof *driver));
  static const known dnn[] = {
    {"CUDNN_STATUS_SUCCESS", CX_DNN_STATUS_SUCCESS}, {"CUDNN_STATUS_NOT_INITIALIZED", CX_DNN_STATUS_NOT_INITIALIZED},
    {"CUDNN_STATUS_BAD_PARAM", CX_DNN_STATUS_BAD_PARAM}, {"CUDNN_STATUS_NOT_SUPPORTED", CX_DNN_STATUS_NOT_SUPPORTED},
    {"CUDNN_DATA_FLOAT", CX_DNN_DATA_FLOAT}, {"CUDNN_DATA_DOUBLE", CX_DNN_DATA_DOUBLE},
    {"CUDNN_DATA_HALF", CX_DNN_DATA_HALF}, {"CUDNN_DATA_BFLOAT16", CX_DNN_DATA_BFLOAT16},
    {"CUDNN_TENSOR_NCHW", CX_DNN_TENSOR_NCHW}, {"CUDNN_TENSOR_NHWC", CX_DNN_TENSOR_NHWC},
    {"CUDNN_CONVOLUTION", CX_DNN_CONVOLUTION}, {"CUDNN_CROSS_CORRELATION", CX_DNN_CROSS_CORRELATION},
    {"CUDNN_DEFAULT_MATH", CX_DNN_DEFAULT_MATH}, {"CUDNN_TENSOR_OP_MATH", CX_DNN_TENSOR_OP_MATH},
    {"CUDNN_FMA_MATH", CX_DNN_FMA_MATH}};
  check_header("cudnn_graph_v9.h", dnn, (int)(sizeof dnn / sizeof *dnn));
  /* the algorithm-perf structs: algo, status, time, memory, determinism, mathType,
   * reserved[3], as cudnn_cnn_v9.h lays out all three */
  char *cnn = slurp("/usr/local/cuda/include/cudnn_cnn_v9.h");
  if (cnn) {
    static const char *const perf[] = {"cudnnConvolutionFwdAlgoPerfStruct", "cudnnConvolutionBwdDataAlgoPerfStruct",
                                       "cudnnConvolutionBwdFilterAlgoPerfStruct"};
    for (int i = 0; i < 3; i++) {
      const char *p = strstr(cnn, perf[i]);
      const char *f[] = {"algo;", "cudnnStatus_t status;", "float time;", "size_t memory;", "determinism;", "mathType;",
                         "int reserved[3];", "}"};
      for (int k = 0; p && k < 8; k++) p = strstr(p, f[k]);
      CHECK_MSG(p != NULL, "cudnn_cnn_v9.h: %s is not laid out as cx_dnn_perf", perf[i]);
    }
    cx_free(cnn);
  }
  CHECK_EQ_INT((int)sizeof(cx_dnn_perf), 48);
  /* the reader itself, on text of both spellings */
  CHECK_EQ_INT((int)header_value("typedef enum { X_A = 0, X_B = 0x2a } t;", "X_B"), 0x2a);
  CHECK_EQ_INT((int)header_value("#define X_C -1 // c\n", "X_C"), -1);
}

/* The parameters of function `name` as the header declares it, one letter each: h the
 * cuSOLVER handle, o another opaque handle (syevjInfo_t: a pointer), i an int or enum (passed
 * as int), c a signed char, p a pointer; NULL when not declared. */
static char *params_of(const char *text, const char *name) {
  char key[96];
  snprintf(key, sizeof key, "%s(", name);
  const char *p = strstr(text, key);
  if (!p) return NULL;
  p += strlen(key);
  const char *end = strchr(p, ')');
  if (!end) return NULL;
  cx_sb sb;
  cx_sb_init(&sb);
  while (p < end) {
    const char *q = memchr(p, ',', (size_t)(end - p));
    if (!q) q = end;
    char one[128];
    snprintf(one, sizeof one, "%.*s", (int)(q - p), p);
    cx_sb_putc(&sb, memchr(one, '*', strlen(one))   ? 'p'
                    : strstr(one, "Handle_t")      ? 'h'
                    : strstr(one, "Info_t")        ? 'o'
                    : strstr(one, "signed char")   ? 'c'
                                                   : 'i');
    p = q + 1;
  }
  return cx_sb_take(&sb);
}

/* solver.h's prototypes against cusolverDn.h's: the same parameters in the same order (an
 * enum is an int in the C ABI). The letters are solver.h's declarations written out. */
TEST(gpu_libs_solver_prototypes_match_the_header) {
  char *text = slurp("/usr/local/cuda/include/cusolverDn.h");
  if (!text) {
    printf("  /usr/local/cuda/include/cusolverDn.h: not installed, prototypes not checked against it\n");
    return;
  }
  static const struct { const char *name, *params; } k[] = {
    {"cusolverDnDpotrf_bufferSize", "hiipip"}, {"cusolverDnDpotrf", "hiipipip"},
    {"cusolverDnDgetrf_bufferSize", "hiipip"}, {"cusolverDnDgetrf", "hiipippp"},
    {"cusolverDnDgeqrf_bufferSize", "hiipip"}, {"cusolverDnDgeqrf", "hiipippip"},
    {"cusolverDnDorgqr_bufferSize", "hiiipipp"}, {"cusolverDnZungqr", "hiiipippip"},
    {"cusolverDnDsyevd_bufferSize", "hiiipipp"}, {"cusolverDnZheevd", "hiiipippip"},
    {"cusolverDnDgesvd_bufferSize", "hiip"}, {"cusolverDnZgesvd", "hcciipippipipipp"},
    {"cusolverDnDsytrd_bufferSize", "hiipipppp"}, {"cusolverDnDsytrd", "hiipippppip"},
    {"cusolverDnChetrd_bufferSize", "hiipipppp"}, {"cusolverDnZhetrd", "hiipippppip"},
    {"cusolverDnDormqr_bufferSize", "hiiiiipippip"}, {"cusolverDnDormqr", "hiiiiipippipip"},
    {"cusolverDnCunmqr_bufferSize", "hiiiiipippip"}, {"cusolverDnZunmqr", "hiiiiipippipip"},
    {"cusolverDnSpotrfBatched", "hiipipi"}, {"cusolverDnZpotrfBatched", "hiipipi"},
    {"cusolverDnDsyevjBatched_bufferSize", "hiiipippoi"}, {"cusolverDnZheevjBatched", "hiiipippipoi"},
    {"cusolverDnCreateSyevjInfo", "p"}, {"cusolverDnDestroySyevjInfo", "o"},
  };
  for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
    char *got = params_of(text, k[i].name);
    CHECK_MSG(got && !strcmp(got, k[i].params), "%s: the header's parameters are %s, solver.h declares %s", k[i].name,
              got ? got : "(not declared)", k[i].params);
    cx_free(got);
  }
  cx_free(text);
  if (!(text = slurp("/usr/local/cuda/include/cublas_api.h"))) return;
  static const char *const getrf[2] = {"cublasDgetrfBatched", "cublasZgetrfBatched"};
  for (int i = 0; i < 2; i++) { /* handle, n, A[], lda, P, info, batchSize */
    char *got = params_of(text, getrf[i]);
    CHECK_MSG(got && !strcmp(got, "hipippi"), "%s: the header's parameters are %s", getrf[i], got ? got : "(none)");
    cx_free(got);
  }
  cx_free(text);
}

/* The emulated cuSOLVER and cuBLAS (emu_solver.c) check sytrd's, ormqr's and the batched
 * routines' arguments as the libraries do: a bad handle, size, side, transpose (C on a real
 * type) or a matrix outside device memory is refused (NOT_INITIALIZED 1, INVALID_VALUE 3,
 * cuBLAS's INVALID_VALUE 7) before anything is computed. */
TEST(gpu_emu_solver_refuses_bad_arguments) {
  const cx_cuda *cu = cx_cuda_emu();
  const cx_solver *sv = cx_solver_emu();
  void *h = NULL;
  CUdeviceptr mem = 0;
  CHECK_EQ_INT(sv->Create(&h), 0);
  CHECK_EQ_INT(cu->MemAlloc(&mem, 4096), 0);
  if (!mem) return;
  double *a = (double *)(uintptr_t)mem, *d = a + 16, *e = d + 4, *tau = e + 4, *work = tau + 4;
  int *info = (int *)(work + 256), lwork = 0;
  double host[16];
  CHECK_EQ_INT(sv->sytrd_bs[1](h, CX_BLAS_FILL_LOWER, 4, a, 4, d, e, tau, &lwork), 0);
  CHECK(lwork >= 1 && lwork <= 256);
  CHECK_EQ_INT(sv->sytrd_bs[1](h, CX_BLAS_FILL_LOWER, 4, a, 3, d, e, tau, &lwork), 3); /* lda < n */
  CHECK_EQ_INT(sv->sytrd_bs[1](h, 7, 4, a, 4, d, e, tau, &lwork), 3);                  /* no such uplo */
  CHECK_EQ_INT(sv->sytrd[1](&lwork, CX_BLAS_FILL_LOWER, 4, a, 4, d, e, tau, work, 256, info), 1);
  CHECK_EQ_INT(sv->sytrd[1](h, CX_BLAS_FILL_LOWER, 4, host, 4, d, e, tau, work, 256, info), 3); /* a on the host */
  CHECK_EQ_INT(sv->sytrd[1](h, CX_BLAS_FILL_LOWER, 4, a, 4, d, e, tau, work, 0, info), 3);      /* no workspace */
  for (int i = 0; i < 16; i++) a[i] = i % 5 == 0 ? 4 : 1; /* symmetric: 4 on the diagonal, 1 elsewhere */
  CHECK_EQ_INT(sv->sytrd[1](h, CX_BLAS_FILL_LOWER, 4, a, 4, d, e, tau, work, 256, info), 0);
  CHECK_EQ_INT(*info, 0);
  CHECK_MSG(d[0] == 4, "sytrd's d[0] is %g", d[0]); /* the lower triangle's first reflector leaves a(0,0) */
  /* ormqr: c 4 x 3, Q from 2 reflectors of a 4 x 2 a */
  double *c = work + 260; /* past the info word */
  CHECK_EQ_INT(sv->ormqr_bs[1](h, CX_BLAS_SIDE_LEFT, CX_BLAS_OP_T, 4, 3, 2, a, 4, tau, c, 4, &lwork), 0);
  CHECK_EQ_INT(sv->ormqr_bs[1](h, CX_BLAS_SIDE_LEFT, CX_BLAS_OP_T, 4, 3, 5, a, 4, tau, c, 4, &lwork), 3); /* k > m */
  CHECK_EQ_INT(sv->ormqr_bs[1](h, CX_BLAS_SIDE_LEFT, CX_BLAS_OP_C, 4, 3, 2, a, 4, tau, c, 4, &lwork), 3); /* C, real */
  CHECK_EQ_INT(sv->ormqr_bs[3](h, CX_BLAS_SIDE_LEFT, CX_BLAS_OP_T, 4, 3, 2, a, 4, tau, c, 4, &lwork), 3); /* T, complex */
  CHECK_EQ_INT(sv->ormqr_bs[1](h, 9, CX_BLAS_OP_T, 4, 3, 2, a, 4, tau, c, 4, &lwork), 3);                 /* no such side */
  CHECK_EQ_INT(sv->ormqr[1](h, CX_BLAS_SIDE_RIGHT, CX_BLAS_OP_N, 4, 3, 2, a, 2, tau, c, 4, work, 256, info), 3); /* lda < nq 3 */
  CHECK_EQ_INT(sv->ormqr[1](h, CX_BLAS_SIDE_LEFT, CX_BLAS_OP_N, 4, 3, 2, a, 4, tau, c, 2, work, 256, info), 3); /* ldc < m */
  CHECK_EQ_INT(sv->ormqr[1](h, CX_BLAS_SIDE_LEFT, CX_BLAS_OP_N, 4, 3, 2, a, 4, tau, host, 4, work, 256, info), 3);
  for (int i = 0; i < 12; i++) c[i] = i;
  for (int i = 0; i < 2; i++) tau[i] = 0; /* tau 0: every reflector the identity, c unchanged */
  CHECK_EQ_INT(sv->ormqr[1](h, CX_BLAS_SIDE_LEFT, CX_BLAS_OP_T, 4, 3, 2, a, 4, tau, c, 4, work, 256, info), 0);
  int same = 1;
  for (int i = 0; i < 12; i++) same &= c[i] == i;
  CHECK_MSG(same, "ormqr with tau 0 changed c");
  /* the batched routines: the array of matrix addresses must itself be device memory */
  void **ptrs = (void **)(c + 16), *host_ptrs[2] = {a, a + 16};
  ptrs[0] = a, ptrs[1] = a + 16;
  void *bh = NULL;
  CHECK_EQ_INT(sv->BlasCreate(&bh), 0);
  CHECK_EQ_INT(sv->potrf_batched[1](h, CX_BLAS_FILL_LOWER, 4, host_ptrs, 4, info, 2), 3);
  CHECK_EQ_INT(sv->potrf_batched[1](h, CX_BLAS_FILL_LOWER, 4, ptrs, 3, info, 2), 3);  /* lda < n */
  CHECK_EQ_INT(sv->potrf_batched[1](h, CX_BLAS_FILL_LOWER, 4, ptrs, 4, info, -1), 3); /* a negative batch */
  CHECK_EQ_INT(sv->getrf_batched[1](h, 4, ptrs, 4, info + 2, info, 2), 1);            /* cuSOLVER's handle */
  CHECK_EQ_INT(sv->getrf_batched[1](bh, 4, ptrs, 3, info + 2, info, 2), 7);           /* lda < n */
  CHECK_EQ_INT(sv->getrf_batched[1](bh, 4, ptrs, 4, (int *)host, info, 2), 7);        /* pivots on the host */
  CHECK_EQ_INT(sv->BlasDestroy(bh), 0);
  CHECK_EQ_INT(cu->MemFree(mem), 0);
  CHECK_EQ_INT(sv->Destroy(h), 0);
}

/* The toolkit's libraries (when installed) have every symbol the tables name: opening them
 * needs no GPU. */
TEST(gpu_libs_tables_resolve_in_the_toolkit) {
  cxla_context *ctx = test_ctx();
  const cx_solver *sv = NULL;
  const cx_cufft *fft = NULL;
  if (cx_solver_get(ctx, &sv) == CXLA_OK) {
    CHECK(sv->potrf[3] && sv->gesvd[2] && sv->geam[1] && sv->trsm[0] && sv->scal[1] && sv->sytrd[3] && sv->ormqr_bs[2] &&
          sv->potrf_batched[1] && sv->getrf_batched[2] && sv->syevj_batched[3] && sv->CreateSyevjInfo);
  } else {
    const char *m = cxla_context_errmsg(ctx);
    CHECK_MSG(strstr(m, "not found"), "cuSOLVER or cuBLAS is there but unusable: %s", m);
    printf("  %s\n", m);
  }
  char err[768];
  const cx_cudnn *dnn = cx_cudnn_get(NULL, err, sizeof err);
  if (dnn) {
    CHECK(dnn->Forward && dnn->BackwardData && dnn->BackwardFilter && dnn->TransformTensor &&
          dnn->GetBackwardFilterAlgorithm && dnn->SetConvolutionGroupCount);
  } else {
    CHECK_MSG(strstr(err, "not found"), "cuDNN is there but unusable: %s", err);
    printf("  %s\n", err);
  }
  if (cx_cufft_get(ctx, &fft) == CXLA_OK) {
    CHECK(fft->MakePlanMany && fft->ExecZ2D);
  } else {
    const char *m = cxla_context_errmsg(ctx);
    CHECK_MSG(strstr(m, "not found"), "cuFFT is there but unusable: %s", m);
    printf("  %s\n", m);
  }
}

/* A library that is not there: the message names it, what was tried and what to do. */
TEST(gpu_libs_missing_library_is_named) {
  static const char *const names[] = {"/nonexistent/libcusolver.so.12", "/nonexistent/libcusolver.so.11"};
  static const cx_dl_sym syms[] = {{0, "cusolverDnCreate"}};
  void *table[1];
  char err[512];
  CHECK(!cx_dl_open_first("CXLA_TEST_NO_SUCH_VARIABLE", names, 2, table, syms, 1, "cuSOLVER", "install it", err,
                          sizeof err));
  CHECK_MSG(strstr(err, "cuSOLVER not found (tried /nonexistent/libcusolver.so.12, /nonexistent/libcusolver.so.11)") &&
                strstr(err, "install it"),
            "%s", err);
  /* a library without the symbol: named as not usable */
  static const cx_dl_sym missing[] = {{0, "cusolverDnNoSuchRoutine"}};
  static const char *const libc[] = {"libc.so.6"};
  CHECK(!cx_dl_open_first("CXLA_TEST_NO_SUCH_VARIABLE", libc, 1, table, missing, 1, "cuSOLVER", "install it", err,
                          sizeof err));
  CHECK_MSG(strstr(err, "libc.so.6 is not a usable cuSOLVER: it has no cusolverDnNoSuchRoutine"), "%s", err);
  /* cuDNN by path: not there, then a library that is not cuDNN; nothing kept of either */
  cx_cudnn t;
  CHECK(!cx_cudnn_open("/nonexistent/libcudnn.so.9", &t, err, sizeof err));
  CHECK_MSG(strstr(err, "cuDNN not found (tried /nonexistent/libcudnn.so.9)") && strstr(err, "CXLA_CUDNN"), "%s", err);
  CHECK(!cx_cudnn_get("libc.so.6", err, sizeof err));
  CHECK_MSG(strstr(err, "libc.so.6 is not a usable cuDNN: it has no cudnnCreate"), "%s", err);
}
