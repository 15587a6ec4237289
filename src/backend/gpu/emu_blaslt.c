/* emu_blaslt.c — cuBLASLt's matmul on the host for gpu-emu (see blaslt.h): what the gpu
 * backend's GEMM steps ask cuBLASLt for, computed as the library documents it — column-major
 * D = alpha op(A) op(B) + beta C with per-matrix leading dimensions and strided batches — in
 * plain loops summing in double (complex
 * matrices in pairs of doubles, with complex alpha and beta); f16/bf16 matrices are read as f32 and D rounded once, and the
 * FAST_TF32 compute type rounds f32 inputs to TF32 (10-bit mantissas) as tensor cores do. Descriptors keep their attributes; a shape, type or pointer
 * that cuBLASLt would reject is CUBLAS_STATUS_INVALID_VALUE here too. */
#include <stdlib.h>
#include <string.h>
#include "backend/gpu/blaslt.h"
#include "backend/gpu/emu.h"
#include "ir/types.h"

enum { S_OK = 0, S_NOT_INITIALIZED = 1, S_ALLOC_FAILED = 3, S_INVALID_VALUE = 7, S_NOT_SUPPORTED = 15 };

typedef struct desc { int compute, scale, trans[2]; } desc;
typedef struct layout { int type; uint64_t rows, cols; int64_t ld, stride; int32_t batch; } layout;
typedef struct pref { uint64_t max_workspace; } pref;
static int g_handle;

static int lt_create(void **h) { return *h = &g_handle, S_OK; }
static int lt_destroy(void *h) { return h == &g_handle ? S_OK : S_NOT_INITIALIZED; }

static int desc_create(void **d, int compute, int scale) {
  if (!((compute == CX_LT_COMPUTE_32F || compute == CX_LT_COMPUTE_32F_FAST_TF32) && scale == CX_LT_R_32F) &&
      !(compute == CX_LT_COMPUTE_64F && scale == CX_LT_R_64F) && !(compute == CX_LT_COMPUTE_32F && scale == CX_LT_C_32F) &&
      !(compute == CX_LT_COMPUTE_64F && scale == CX_LT_C_64F))
    return S_NOT_SUPPORTED;
  desc *x = calloc(1, sizeof *x);
  if (!x) return S_ALLOC_FAILED;
  x->compute = compute, x->scale = scale;
  *d = x;
  return S_OK;
}
static int desc_destroy(void *d) { return free(d), S_OK; }
static int desc_set(void *d, int attr, const void *buf, size_t size) {
  desc *x = d;
  int32_t v;
  if (!x || (attr != CX_LT_DESC_TRANSA && attr != CX_LT_DESC_TRANSB) || size != sizeof v) return S_INVALID_VALUE;
  memcpy(&v, buf, sizeof v);
  if (v != CX_LT_OP_N && v != CX_LT_OP_T) return S_INVALID_VALUE;
  x->trans[attr == CX_LT_DESC_TRANSB] = v;
  return S_OK;
}

static int layout_create(void **l, int type, uint64_t rows, uint64_t cols, int64_t ld) {
  if ((type != CX_LT_R_32F && type != CX_LT_R_64F && type != CX_LT_R_16F && type != CX_LT_R_16BF &&
       type != CX_LT_C_32F && type != CX_LT_C_64F) ||
      ld < (int64_t)(rows ? rows : 1))
    return S_INVALID_VALUE;
  layout *x = calloc(1, sizeof *x);
  if (!x) return S_ALLOC_FAILED;
  *x = (layout){.type = type, .rows = rows, .cols = cols, .ld = ld, .batch = 1};
  *l = x;
  return S_OK;
}
static int layout_destroy(void *l) { return free(l), S_OK; }
static int layout_set(void *l, int attr, const void *buf, size_t size) {
  layout *x = l;
  if (x && attr == CX_LT_LAYOUT_BATCH_COUNT && size == sizeof x->batch) memcpy(&x->batch, buf, size);
  else if (x && attr == CX_LT_LAYOUT_STRIDED_BATCH_OFFSET && size == sizeof x->stride) memcpy(&x->stride, buf, size);
  else return S_INVALID_VALUE;
  return x->batch >= 1 ? S_OK : S_INVALID_VALUE;
}

static int pref_create(void **p) {
  pref *x = calloc(1, sizeof *x);
  return x ? (*p = x, S_OK) : S_ALLOC_FAILED;
}
static int pref_destroy(void *p) { return free(p), S_OK; }
static int pref_set(void *p, int attr, const void *buf, size_t size) {
  pref *x = p;
  if (!x || attr != CX_LT_PREF_MAX_WORKSPACE_BYTES || size != sizeof x->max_workspace) return S_INVALID_VALUE;
  memcpy(&x->max_workspace, buf, size);
  return S_OK;
}

/* op(X)'s rows and columns */
static void op_dims(const layout *x, int trans, uint64_t *r, uint64_t *c) {
  *r = trans ? x->cols : x->rows;
  *c = trans ? x->rows : x->cols;
}

static int shapes_ok(const desc *d, const layout *a, const layout *b, const layout *c, const layout *o) {
  uint64_t ar, ac, br, bc;
  op_dims(a, d->trans[0], &ar, &ac);
  op_dims(b, d->trans[1], &br, &bc);
  int type = o->type, f64 = d->compute == CX_LT_COMPUTE_64F, cplx = type == CX_LT_C_32F || type == CX_LT_C_64F;
  return ar == o->rows && bc == o->cols && ac == br && c->rows == o->rows && c->cols == o->cols && a->type == type &&
         b->type == type && c->type == type && f64 == (type == CX_LT_R_64F || type == CX_LT_C_64F) &&
         (cplx ? d->scale == type : d->scale != CX_LT_C_32F && d->scale != CX_LT_C_64F) &&
         (d->compute != CX_LT_COMPUTE_32F_FAST_TF32 || type == CX_LT_R_32F) && a->batch == o->batch &&
         b->batch == o->batch && c->batch == o->batch;
}

static int heuristic(void *h, void *dd, void *a, void *b, void *c, void *d, void *p, int want, cx_lt_heuristic *res,
                     int *got) {
  if (h != &g_handle || !p || want < 1) return S_INVALID_VALUE;
  if (!shapes_ok(dd, a, b, c, d)) return S_NOT_SUPPORTED;
  memset(res, 0, sizeof *res);
  *got = 1;
  return S_OK;
}

/* every byte matrix x's batches touch lies in device memory */
static int in_device(const void *p, const layout *x, size_t esize) {
  if (!x->rows || !x->cols) return 1;
  uint64_t last = (uint64_t)x->ld * (x->cols - 1) + x->rows + (uint64_t)(x->batch - 1) * (uint64_t)x->stride;
  return cx_emu_device_ok((CUdeviceptr)(uintptr_t)p, (size_t)(last * esize));
}

static size_t elem_size(int type) {
  return type == CX_LT_C_64F ? 16 : type == CX_LT_R_64F || type == CX_LT_C_32F ? 8 : type == CX_LT_R_32F ? 4 : 2;
}

/* a number as (re, im): im 0 for the real types */
typedef struct num { double re, im; } num;

static num load(const void *p, int type, uint64_t i) {
  switch (type) {
  case CX_LT_R_64F: return (num){((const double *)p)[i], 0};
  case CX_LT_R_16F: return (num){cx_f16_to_f32(((const uint16_t *)p)[i]), 0};
  case CX_LT_R_16BF: return (num){cx_bf16_to_f32(((const uint16_t *)p)[i]), 0};
  case CX_LT_C_32F: return (num){((const float *)p)[2 * i], ((const float *)p)[2 * i + 1]};
  case CX_LT_C_64F: return (num){((const double *)p)[2 * i], ((const double *)p)[2 * i + 1]};
  default: return (num){((const float *)p)[i], 0};
  }
}

static void store(void *p, int type, uint64_t i, num v) {
  switch (type) {
  case CX_LT_R_64F: ((double *)p)[i] = v.re; break;
  case CX_LT_R_16F: ((uint16_t *)p)[i] = cx_f32_to_f16((float)v.re); break;
  case CX_LT_R_16BF: ((uint16_t *)p)[i] = cx_f32_to_bf16((float)v.re); break;
  case CX_LT_C_32F: ((float *)p)[2 * i] = (float)v.re, ((float *)p)[2 * i + 1] = (float)v.im; break;
  case CX_LT_C_64F: ((double *)p)[2 * i] = v.re, ((double *)p)[2 * i + 1] = v.im; break;
  default: ((float *)p)[i] = (float)v.re; break;
  }
}

/* a b; real numbers stay real (no 0 * inf in a part that is not there) */
static num mul(num a, num b, int cplx) {
  return cplx ? (num){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re} : (num){a.re * b.re, 0};
}

/* an f32 rounded to TF32's 10 mantissa bits, to nearest with ties away (cvt.rna.tf32.f32) */
static double tf32(double x) {
  float f = (float)x;
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & ~0x1fffu;
  memcpy(&f, &u, sizeof f);
  return f;
}

static int matmul(void *h, void *dd, const void *alpha, const void *A, void *ad, const void *B, void *bd,
                  const void *beta, const void *C, void *cd, void *D, void *od, const cx_lt_algo *algo, void *ws,
                  size_t wss, CUstream s) {
  (void)algo, (void)ws, (void)wss, (void)s;
  const desc *d = dd;
  const layout *a = ad, *b = bd, *c = cd, *o = od;
  if (h != &g_handle || !d || !a || !b || !c || !o || !shapes_ok(d, a, b, c, o)) return S_INVALID_VALUE;
  int t = o->type, round = d->compute == CX_LT_COMPUTE_32F_FAST_TF32, cplx = t == CX_LT_C_32F || t == CX_LT_C_64F;
  size_t es = elem_size(t);
  if (!in_device(A, a, es) || !in_device(B, b, es) || !in_device(C, c, es) || !in_device(D, o, es)) return S_INVALID_VALUE;
  /* alpha and beta: the scale type's, complex when it is */
  num al = load(alpha, d->scale, 0), be = load(beta, d->scale, 0);
  uint64_t m = o->rows, n = o->cols, k = d->trans[0] ? a->rows : a->cols;
  for (int32_t q = 0; q < o->batch; q++)
    for (uint64_t j = 0; j < n; j++)
      for (uint64_t i = 0; i < m; i++) {
        num acc = {0, 0};
        for (uint64_t p = 0; p < k; p++) { /* op(A)(i,p) * op(B)(p,j), each stored column-major */
          uint64_t ia = d->trans[0] ? p + i * (uint64_t)a->ld : i + p * (uint64_t)a->ld;
          uint64_t ib = d->trans[1] ? j + p * (uint64_t)b->ld : p + j * (uint64_t)b->ld;
          num x = load(A, t, ia + (uint64_t)q * (uint64_t)a->stride), y = load(B, t, ib + (uint64_t)q * (uint64_t)b->stride);
          if (round) x.re = tf32(x.re), y.re = tf32(y.re);
          num xy = mul(x, y, cplx);
          acc.re += xy.re, acc.im += xy.im;
        }
        num v = mul(al, acc, cplx);
        if (be.re != 0 || be.im != 0) {
          num w = mul(be, load(C, t, i + j * (uint64_t)c->ld + (uint64_t)q * (uint64_t)c->stride), cplx);
          v.re += w.re, v.im += w.im;
        }
        store(D, t, i + j * (uint64_t)o->ld + (uint64_t)q * (uint64_t)o->stride, v);
      }
  return S_OK;
}

static const char *status_string(int s) {
  return s == S_OK ? "the operation completed successfully" : s == S_INVALID_VALUE ? "an invalid value was used as an argument"
         : s == S_NOT_SUPPORTED ? "the functionality requested is not supported" : "cuBLASLt emulation error";
}

static const cx_blaslt g_emu_lt = {
  .lib = (void *)&g_emu_lt, .Create = lt_create, .Destroy = lt_destroy, .MatmulDescCreate = desc_create,
  .MatmulDescDestroy = desc_destroy, .MatmulDescSetAttribute = desc_set, .MatrixLayoutCreate = layout_create,
  .MatrixLayoutDestroy = layout_destroy, .MatrixLayoutSetAttribute = layout_set, .MatmulPreferenceCreate = pref_create,
  .MatmulPreferenceDestroy = pref_destroy, .MatmulPreferenceSetAttribute = pref_set,
  .MatmulAlgoGetHeuristic = heuristic, .Matmul = matmul, .GetStatusString = status_string,
};

const cx_blaslt *cx_blaslt_emu(void) { return &g_emu_lt; }
