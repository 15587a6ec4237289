/* emu_cudnn.c — cuDNN's legacy convolutions on the host for gpu-emu (see cudnn_lib.h): what
 * the gpu backend's CONV steps ask cuDNN for, computed from cuDNN's own definitions in plain
 * loops summing in double (f16 and bf16 read as floats, each result rounded once), over
 * tensors of any element strides and filters packed NCHW (k, c, spatial) or NHWC (k,
 * spatial, c); the CONVOLUTION mode flips the filter, groups split c and k alike. It checks
 * what cuDNN checks — descriptors set and consistent (cuDNN's output size for the forward
 * shape, channels per group), BAD_PARAM otherwise — and that every tensor, filter and
 * workspace lies in the emulated device's allocations; the workspace it asks for (one packed
 * filter) is scribbled over, so that nothing may expect it to keep anything. */
#include <stdlib.h>
#include <string.h>
#include "backend/gpu/cudnn_lib.h"
#include "backend/gpu/emu.h"
#include "ir/types.h"

enum { S_OK = CX_DNN_STATUS_SUCCESS, S_NOT_INIT = CX_DNN_STATUS_NOT_INITIALIZED, S_BAD = CX_DNN_STATUS_BAD_PARAM,
       S_NOT_SUPPORTED = CX_DNN_STATUS_NOT_SUPPORTED, S_ALLOC = 4000, MAX_NB = 8 };
enum { K_TENSOR = 0x7e45, K_FILTER = 0xf117, K_CONV = 0xc09f }; /* which create made a descriptor */

typedef struct desc {
  int kind, set;
  int type, nb, dims[MAX_NB], strides[MAX_NB]; /* tensors; filters: format in strides[0] */
  int n, pad[3], stride[3], dil[3], mode, compute, groups, math; /* convolutions */
} desc;

static int g_handle;

static int create(void **h) { return *h = &g_handle, S_OK; }
static int destroy(void *h) { return h == &g_handle ? S_OK : S_NOT_INIT; }
static int set_stream(void *h, CUstream s) { return h == &g_handle && s ? S_OK : S_BAD; }
static const char *error_string(int s) {
  return s == S_OK ? "CUDNN_STATUS_SUCCESS" : s == S_BAD ? "CUDNN_STATUS_BAD_PARAM" : s == S_NOT_INIT ? "CUDNN_STATUS_NOT_INITIALIZED"
         : s == S_NOT_SUPPORTED ? "CUDNN_STATUS_NOT_SUPPORTED" : "CUDNN_STATUS_INTERNAL_ERROR";
}

static int make(void **d, int kind) {
  desc *x = calloc(1, sizeof *x);
  if (!x) return S_ALLOC;
  x->kind = kind, x->groups = 1;
  *d = x;
  return S_OK;
}
static int unmake(void *d, int kind) {
  desc *x = d;
  if (!x || x->kind != kind) return S_BAD;
  free(x);
  return S_OK;
}
static desc *get(void *d, int kind) {
  desc *x = d;
  return x && x->kind == kind && x->set ? x : NULL;
}

static int create_tensor(void **d) { return make(d, K_TENSOR); }
static int destroy_tensor(void *d) { return unmake(d, K_TENSOR); }
static int create_filter(void **d) { return make(d, K_FILTER); }
static int destroy_filter(void *d) { return unmake(d, K_FILTER); }
static int create_conv(void **d) { return make(d, K_CONV); }
static int destroy_conv(void *d) { return unmake(d, K_CONV); }

static int type_ok(int t) {
  return t == CX_DNN_DATA_FLOAT || t == CX_DNN_DATA_DOUBLE || t == CX_DNN_DATA_HALF || t == CX_DNN_DATA_BFLOAT16;
}
static size_t type_size(int t) { return t == CX_DNN_DATA_DOUBLE ? 8 : t == CX_DNN_DATA_FLOAT ? 4 : 2; }

static int set_tensor(void *d, int type, int nb, const int *dims, const int *strides) {
  desc *x = d;
  if (!x || x->kind != K_TENSOR || !type_ok(type) || nb < 3 || nb > MAX_NB || !dims || !strides) return S_BAD;
  for (int i = 0; i < nb; i++)
    if (dims[i] < 1 || strides[i] < 1) return S_BAD;
  x->type = type, x->nb = nb, x->set = 1;
  memcpy(x->dims, dims, sizeof *dims * (size_t)nb);
  memcpy(x->strides, strides, sizeof *strides * (size_t)nb);
  return S_OK;
}

static int set_filter(void *d, int type, int format, int nb, const int *dims) {
  desc *x = d;
  if (!x || x->kind != K_FILTER || !type_ok(type) || nb < 3 || nb > MAX_NB || !dims ||
      (format != CX_DNN_TENSOR_NCHW && format != CX_DNN_TENSOR_NHWC))
    return S_BAD;
  for (int i = 0; i < nb; i++)
    if (dims[i] < 1) return S_BAD;
  x->type = type, x->nb = nb, x->strides[0] = format, x->set = 1;
  memcpy(x->dims, dims, sizeof *dims * (size_t)nb);
  return S_OK;
}

static int set_conv(void *d, int n, const int *pad, const int *stride, const int *dil, int mode, int compute) {
  desc *x = d;
  if (!x || x->kind != K_CONV || n < 1 || n > 3 || !pad || !stride || !dil ||
      (mode != CX_DNN_CONVOLUTION && mode != CX_DNN_CROSS_CORRELATION) ||
      (compute != CX_DNN_DATA_FLOAT && compute != CX_DNN_DATA_DOUBLE))
    return S_BAD;
  for (int i = 0; i < n; i++)
    if (pad[i] < 0 || stride[i] < 1 || dil[i] < 1) return S_BAD;
  x->n = n, x->mode = mode, x->compute = compute, x->set = 1;
  memcpy(x->pad, pad, sizeof *pad * (size_t)n);
  memcpy(x->stride, stride, sizeof *stride * (size_t)n);
  memcpy(x->dil, dil, sizeof *dil * (size_t)n);
  return S_OK;
}
static int set_groups(void *d, int g) {
  desc *x = d;
  return x && x->kind == K_CONV && g >= 1 ? (x->groups = g, S_OK) : S_BAD;
}
static int set_math(void *d, int m) {
  desc *x = d;
  return x && x->kind == K_CONV && m >= CX_DNN_DEFAULT_MATH && m <= CX_DNN_FMA_MATH ? (x->math = m, S_OK) : S_BAD;
}

/* the problem: x, filter, convolution and y descriptors that belong together */
typedef struct prob { desc *x, *w, *c, *y; } prob;

static int check(void *xd, void *wd, void *cd, void *yd, prob *p) {
  p->x = get(xd, K_TENSOR), p->w = get(wd, K_FILTER), p->c = get(cd, K_CONV), p->y = get(yd, K_TENSOR);
  if (!p->x || !p->w || !p->c || !p->y) return S_BAD;
  const desc *x = p->x, *w = p->w, *c = p->c, *y = p->y;
  int nb = x->nb, g = c->groups;
  if (w->nb != nb || y->nb != nb || c->n != nb - 2 || w->type != x->type || y->type != x->type) return S_BAD;
  if ((x->type == CX_DNN_DATA_DOUBLE) != (c->compute == CX_DNN_DATA_DOUBLE)) return S_NOT_SUPPORTED;
  if (y->dims[0] != x->dims[0] || x->dims[1] != w->dims[1] * g || w->dims[0] % g || y->dims[1] != w->dims[0])
    return S_BAD;
  for (int j = 0; j < c->n; j++) {
    long num = (long)x->dims[2 + j] + 2L * c->pad[j] - (long)c->dil[j] * (w->dims[2 + j] - 1) - 1;
    if (num < 0 || num / c->stride[j] + 1 != y->dims[2 + j]) return S_BAD;
  }
  return S_OK;
}

static size_t filter_elems(const desc *w) {
  size_t n = 1;
  for (int i = 0; i < w->nb; i++) n *= (size_t)w->dims[i];
  return n;
}
/* bytes from a tensor's first element past its last one */
static size_t span(const desc *t) {
  size_t last = 0;
  for (int i = 0; i < t->nb; i++) last += (size_t)(t->dims[i] - 1) * (size_t)t->strides[i];
  return (last + 1) * type_size(t->type);
}
static int on_device(const void *p, size_t bytes) { return cx_emu_device_ok((CUdeviceptr)(uintptr_t)p, bytes); }

static int algorithm(void *h, void *xd, void *wd, void *cd, void *yd, int want, int *got, cx_dnn_perf *perf) {
  prob p;
  int r = h == &g_handle ? check(xd, wd, cd, yd, &p) : S_NOT_INIT;
  if (r) return r;
  if (want < 1 || !got || !perf) return S_BAD;
  memset(perf, 0, sizeof *perf);
  perf->status = S_OK, perf->memory = filter_elems(p.w) * type_size(p.w->type), perf->math_type = p.c->math;
  *got = 1;
  return S_OK;
}
static int fwd_algo(void *h, void *x, void *w, void *c, void *y, int want, int *got, cx_dnn_perf *perf) {
  return algorithm(h, x, w, c, y, want, got, perf);
}
static int bwd_data_algo(void *h, void *w, void *dy, void *c, void *dx, int want, int *got, cx_dnn_perf *perf) {
  return algorithm(h, dx, w, c, dy, want, got, perf);
}
static int bwd_filter_algo(void *h, void *x, void *dy, void *c, void *dw, int want, int *got, cx_dnn_perf *perf) {
  return algorithm(h, x, dw, c, dy, want, got, perf);
}

static int workspace(void *h, void *xd, void *wd, void *cd, void *yd, int algo, size_t *bytes) {
  prob p;
  int r = h == &g_handle ? check(xd, wd, cd, yd, &p) : S_NOT_INIT;
  if (r) return r;
  if (algo != 0 || !bytes) return S_BAD;
  *bytes = filter_elems(p.w) * type_size(p.w->type);
  return S_OK;
}
static int fwd_ws(void *h, void *x, void *w, void *c, void *y, int algo, size_t *b) { return workspace(h, x, w, c, y, algo, b); }
static int bwd_data_ws(void *h, void *w, void *dy, void *c, void *dx, int algo, size_t *b) {
  return workspace(h, dx, w, c, dy, algo, b);
}
static int bwd_filter_ws(void *h, void *x, void *dy, void *c, void *dw, int algo, size_t *b) {
  return workspace(h, x, dw, c, dy, algo, b);
}

/* ---- element access ---- */

static double load(const void *base, size_t i, int type) {
  switch (type) {
  case CX_DNN_DATA_FLOAT: { float v; memcpy(&v, (const char *)base + 4 * i, 4); return v; }
  case CX_DNN_DATA_DOUBLE: { double v; memcpy(&v, (const char *)base + 8 * i, 8); return v; }
  default: {
    uint16_t v;
    memcpy(&v, (const char *)base + 2 * i, 2);
    return type == CX_DNN_DATA_HALF ? cx_f16_to_f32(v) : cx_bf16_to_f32(v);
  }
  }
}
static void store(void *base, size_t i, int type, double v) {
  switch (type) {
  case CX_DNN_DATA_FLOAT: { float f = (float)v; memcpy((char *)base + 4 * i, &f, 4); break; }
  case CX_DNN_DATA_DOUBLE: memcpy((char *)base + 8 * i, &v, 8); break;
  default: {
    uint16_t h = type == CX_DNN_DATA_HALF ? cx_f32_to_f16((float)v) : cx_f32_to_bf16((float)v);
    memcpy((char *)base + 2 * i, &h, 2);
  }
  }
}
static double scalar(const void *p, int compute) {
  if (compute == CX_DNN_DATA_DOUBLE) { double v; memcpy(&v, p, 8); return v; }
  float v;
  memcpy(&v, p, 4);
  return v;
}

/* a tensor element's index; spatial coords s[0..n) */
static size_t at(const desc *t, int n0, int c, const int *s) {
  size_t i = (size_t)n0 * (size_t)t->strides[0] + (size_t)c * (size_t)t->strides[1];
  for (int j = 2; j < t->nb; j++) i += (size_t)s[j - 2] * (size_t)t->strides[j];
  return i;
}
/* a packed filter element's index */
static size_t wat(const desc *w, int k, int c, const int *r) {
  int nb = w->nb;
  size_t i = (size_t)k;
  if (w->strides[0] == CX_DNN_TENSOR_NCHW) {
    i = i * (size_t)w->dims[1] + (size_t)c;
    for (int j = 2; j < nb; j++) i = i * (size_t)w->dims[j] + (size_t)r[j - 2];
  } else {
    for (int j = 2; j < nb; j++) i = i * (size_t)w->dims[j] + (size_t)r[j - 2];
    i = i * (size_t)w->dims[1] + (size_t)c;
  }
  return i;
}
/* the next multi-index of dims[0..n) in row-major order; 0 after the last */
static int next(int *idx, const int *dims, int n) {
  for (int j = n - 1; j >= 0; j--) {
    if (++idx[j] < dims[j]) return 1;
    idx[j] = 0;
  }
  return 0;
}
/* the input coordinates filter tap r reads for output o; 0 when one is in the padding */
static int input_at(const prob *p, const int *o, const int *r, int *xi) {
  const desc *c = p->c;
  for (int j = 0; j < c->n; j++) {
    int R = p->w->dims[2 + j], t = c->mode == CX_DNN_CONVOLUTION ? R - 1 - r[j] : r[j];
    long v = (long)o[j] * c->stride[j] - c->pad[j] + (long)t * c->dil[j];
    if (v < 0 || v >= p->x->dims[2 + j]) return 0;
    xi[j] = (int)v;
  }
  return 1;
}

/* the data arguments on the device, and the workspace (algorithm 0's) */
static int usable(const prob *p, const void *x, const void *w, const void *y, int algo, void *ws, size_t ws_bytes) {
  size_t need = filter_elems(p->w) * type_size(p->w->type);
  if (algo != 0 || ws_bytes < need || (need && !ws)) return 0;
  if (!on_device(x, span(p->x)) || !on_device(w, need) || !on_device(y, span(p->y))) return 0;
  if (need && !on_device(ws, ws_bytes)) return 0;
  if (ws) memset(ws, 0xa5, ws_bytes);
  return 1;
}

/* out = alpha * sum + beta * out, out not read when beta is 0 (as cuDNN) */
static void put(void *base, size_t i, int type, double sum, double alpha, double beta) {
  store(base, i, type, alpha * sum + (beta != 0 ? beta * load(base, i, type) : 0));
}

static int forward(void *h, const void *alpha, void *xd, const void *x, void *wd, const void *w, void *cd, int algo,
                   void *ws, size_t ws_bytes, const void *beta, void *yd, void *y) {
  prob p;
  int r = h == &g_handle ? check(xd, wd, cd, yd, &p) : S_NOT_INIT;
  if (r) return r;
  if (!alpha || !beta || !usable(&p, x, w, y, algo, ws, ws_bytes)) return S_BAD;
  double a = scalar(alpha, p.c->compute), b = scalar(beta, p.c->compute);
  int ns = p.c->n, t = p.x->type, G = p.c->groups, Kg = p.w->dims[0] / G, Cg = p.w->dims[1];
  int o[3] = {0}, rr[3] = {0}, xi[3] = {0};
  for (int n = 0; n < p.y->dims[0]; n++)
    for (int k = 0; k < p.y->dims[1]; k++) {
      memset(o, 0, sizeof o);
      do {
        double sum = 0;
        for (int c = 0; c < Cg; c++) {
          memset(rr, 0, sizeof rr);
          do
            if (input_at(&p, o, rr, xi)) sum += load(x, at(p.x, n, k / Kg * Cg + c, xi), t) * load(w, wat(p.w, k, c, rr), t);
          while (next(rr, p.w->dims + 2, ns));
        }
        put(y, at(p.y, n, k, o), t, sum, a, b);
      } while (next(o, p.y->dims + 2, ns));
    }
  return S_OK;
}

static int backward_data(void *h, const void *alpha, void *wd, const void *w, void *dyd, const void *dy, void *cd,
                         int algo, void *ws, size_t ws_bytes, const void *beta, void *dxd, void *dx) {
  prob p;
  int r = h == &g_handle ? check(dxd, wd, cd, dyd, &p) : S_NOT_INIT;
  if (r) return r;
  if (!alpha || !beta || !usable(&p, dx, w, dy, algo, ws, ws_bytes)) return S_BAD;
  double a = scalar(alpha, p.c->compute), b = scalar(beta, p.c->compute);
  int ns = p.c->n, t = p.x->type, G = p.c->groups, Kg = p.w->dims[0] / G, Cg = p.w->dims[1];
  int i[3] = {0}, rr[3] = {0}, o[3] = {0};
  for (int n = 0; n < p.x->dims[0]; n++)
    for (int c = 0; c < p.x->dims[1]; c++) {
      int g = c / Cg;
      memset(i, 0, sizeof i);
      do {
        double sum = 0;
        memset(rr, 0, sizeof rr);
        do { /* the outputs o this tap reads i for: o*s = i + pad - tap*dil */
          int ok = 1;
          for (int j = 0; j < ns && ok; j++) {
            int R = p.w->dims[2 + j], tap = p.c->mode == CX_DNN_CONVOLUTION ? R - 1 - rr[j] : rr[j];
            long v = (long)i[j] + p.c->pad[j] - (long)tap * p.c->dil[j];
            ok = v >= 0 && v % p.c->stride[j] == 0 && v / p.c->stride[j] < p.y->dims[2 + j];
            if (ok) o[j] = (int)(v / p.c->stride[j]);
          }
          for (int k = g * Kg; ok && k < (g + 1) * Kg; k++)
            sum += load(dy, at(p.y, n, k, o), t) * load(w, wat(p.w, k, c - g * Cg, rr), t);
        } while (next(rr, p.w->dims + 2, ns));
        put(dx, at(p.x, n, c, i), t, sum, a, b);
      } while (next(i, p.x->dims + 2, ns));
    }
  return S_OK;
}

static int backward_filter(void *h, const void *alpha, void *xd, const void *x, void *dyd, const void *dy, void *cd,
                           int algo, void *ws, size_t ws_bytes, const void *beta, void *dwd, void *dw) {
  prob p;
  int r = h == &g_handle ? check(xd, dwd, cd, dyd, &p) : S_NOT_INIT;
  if (r) return r;
  if (!alpha || !beta || !usable(&p, x, dw, dy, algo, ws, ws_bytes)) return S_BAD;
  double a = scalar(alpha, p.c->compute), b = scalar(beta, p.c->compute);
  int ns = p.c->n, t = p.x->type, G = p.c->groups, Kg = p.w->dims[0] / G, Cg = p.w->dims[1];
  int rr[3] = {0}, o[3] = {0}, xi[3] = {0};
  for (int k = 0; k < p.w->dims[0]; k++)
    for (int c = 0; c < Cg; c++) {
      memset(rr, 0, sizeof rr);
      do {
        double sum = 0;
        for (int n = 0; n < p.x->dims[0]; n++) {
          memset(o, 0, sizeof o);
          do
            if (input_at(&p, o, rr, xi)) sum += load(x, at(p.x, n, k / Kg * Cg + c, xi), t) * load(dy, at(p.y, n, k, o), t);
          while (next(o, p.y->dims + 2, ns));
        }
        put(dw, wat(p.w, k, c, rr), t, sum, a, b);
      } while (next(rr, p.w->dims + 2, ns));
    }
  return S_OK;
}

static int transform(void *h, const void *alpha, void *xd, const void *x, const void *beta, void *yd, void *y) {
  desc *s = get(xd, K_TENSOR), *d = get(yd, K_TENSOR);
  if (h != &g_handle) return S_NOT_INIT;
  if (!s || !d || s->nb != d->nb || s->type != d->type || !alpha || !beta) return S_BAD;
  for (int i = 0; i < s->nb; i++)
    if (s->dims[i] != d->dims[i]) return S_BAD;
  if (!on_device(x, span(s)) || !on_device(y, span(d))) return S_BAD;
  int compute = s->type == CX_DNN_DATA_DOUBLE ? CX_DNN_DATA_DOUBLE : CX_DNN_DATA_FLOAT;
  double a = scalar(alpha, compute), b = scalar(beta, compute);
  int idx[MAX_NB] = {0};
  do {
    size_t si = 0, di = 0;
    for (int i = 0; i < s->nb; i++) si += (size_t)idx[i] * (size_t)s->strides[i], di += (size_t)idx[i] * (size_t)d->strides[i];
    put(y, di, d->type, load(x, si, s->type), a, b);
  } while (next(idx, s->dims, s->nb));
  return S_OK;
}

static const cx_cudnn g_emu_dnn = {
  .lib = (void *)&g_emu_dnn, .Create = create, .Destroy = destroy, .SetStream = set_stream,
  .GetErrorString = error_string, .CreateTensorDescriptor = create_tensor, .SetTensorNdDescriptor = set_tensor,
  .DestroyTensorDescriptor = destroy_tensor, .CreateFilterDescriptor = create_filter,
  .SetFilterNdDescriptor = set_filter, .DestroyFilterDescriptor = destroy_filter,
  .CreateConvolutionDescriptor = create_conv, .SetConvolutionNdDescriptor = set_conv,
  .SetConvolutionGroupCount = set_groups, .SetConvolutionMathType = set_math,
  .DestroyConvolutionDescriptor = destroy_conv, .GetForwardAlgorithm = fwd_algo,
  .GetBackwardDataAlgorithm = bwd_data_algo, .GetBackwardFilterAlgorithm = bwd_filter_algo,
  .GetForwardWorkspaceSize = fwd_ws, .GetBackwardDataWorkspaceSize = bwd_data_ws,
  .GetBackwardFilterWorkspaceSize = bwd_filter_ws, .Forward = forward, .BackwardData = backward_data,
  .BackwardFilter = backward_filter, .TransformTensor = transform,
};

const cx_cudnn *cx_cudnn_emu(void) { return &g_emu_dnn; }
