/* gpu_conv.c — convolutions on cuDNN (the CONV steps gpu_conv_plan.c maps): one handle per
 * executable, each step's descriptors and algorithm (the v7 heuristics' first choice, which
 * needs no trial runs) made when the executable is loaded, and one workspace for all the
 * steps (they run one at a time) from the device's caching allocator: the largest
 * algorithm's workspace, then room for the largest filter a step repacks. */
#include <string.h>
#include "backend/gpu/gpu_state.h"

enum { MAX_ALGOS = 8 };

static size_t elem_size(int dtype) {
  return dtype == CX_DNN_DATA_DOUBLE ? 8 : dtype == CX_DNN_DATA_FLOAT ? 4 : 2;
}
static size_t filter_bytes(const cx_gpu_conv *c) {
  size_t n = elem_size(c->dtype);
  for (int i = 0; i < c->nb; i++) n *= (size_t)c->w[i];
  return n;
}

/* the step's descriptors, its algorithm and that algorithm's workspace */
static cxla_status describe(cxla_context *ctx, gpu_state *st, const cx_gpu_step *s, cx_gpu_conv_rt *rt) {
  const cx_cudnn *d = st->dnn;
  const cx_gpu_conv *c = &s->conv;
  const char *what = s->in->name ? s->in->name : "convolution";
  int r = d->CreateTensorDescriptor(&rt->x);
  if (!r) r = d->CreateTensorDescriptor(&rt->y);
  if (!r) r = d->CreateFilterDescriptor(&rt->w);
  if (!r) r = d->CreateConvolutionDescriptor(&rt->conv);
  if (!r && c->repack) r = d->CreateTensorDescriptor(&rt->w_buf);
  if (!r && c->repack) r = d->CreateTensorDescriptor(&rt->w_packed);
  if (r) return cx_cudnn_error(ctx, d, r, "creating cuDNN descriptors");
  int packed[5];
  if (c->repack) { /* the filter's buffer and its packed copy, as plain tensors of one shape */
    if (c->format == CX_DNN_TENSOR_NCHW) {
      packed[c->nb - 1] = 1;
      for (int i = c->nb - 2; i >= 0; i--) packed[i] = packed[i + 1] * c->w[i + 1];
    } else {
      int at = c->w[1];
      packed[1] = 1;
      for (int i = c->nb - 1; i >= 2; i--) packed[i] = at, at *= c->w[i];
      packed[0] = at;
    }
    if ((r = d->SetTensorNdDescriptor(rt->w_buf, c->dtype, c->nb, c->w, c->ws)) ||
        (r = d->SetTensorNdDescriptor(rt->w_packed, c->dtype, c->nb, c->w, packed)))
      return cx_cudnn_error(ctx, d, r, what);
  }
  if ((r = d->SetTensorNdDescriptor(rt->x, c->dtype, c->nb, c->x, c->xs)) ||
      (r = d->SetTensorNdDescriptor(rt->y, c->dtype, c->nb, c->y, c->ys)) ||
      (r = d->SetFilterNdDescriptor(rt->w, c->dtype, c->format, c->nb, c->w)) ||
      (r = d->SetConvolutionNdDescriptor(rt->conv, c->nb - 2, c->pad, c->stride, c->dil, c->mode, c->compute)) ||
      (r = d->SetConvolutionGroupCount(rt->conv, c->groups)) || (r = d->SetConvolutionMathType(rt->conv, c->math)))
    return cx_cudnn_error(ctx, d, r, what);
  cx_dnn_perf perf[MAX_ALGOS];
  int got = 0;
  memset(perf, 0, sizeof perf);
  void *h = st->dnn_handle;
  switch ((cx_gpu_conv_kind)c->kind) {
  case CX_CONV_FORWARD: r = d->GetForwardAlgorithm(h, rt->x, rt->w, rt->conv, rt->y, MAX_ALGOS, &got, perf); break;
  case CX_CONV_BACKWARD_DATA:
    r = d->GetBackwardDataAlgorithm(h, rt->w, rt->y, rt->conv, rt->x, MAX_ALGOS, &got, perf);
    break;
  case CX_CONV_BACKWARD_FILTER:
    r = d->GetBackwardFilterAlgorithm(h, rt->x, rt->y, rt->conv, rt->w, MAX_ALGOS, &got, perf);
    break;
  }
  if (r) return cx_cudnn_error(ctx, d, r, what);
  int k = 0;
  while (k < got && k < MAX_ALGOS && perf[k].status != CX_DNN_STATUS_SUCCESS) k++;
  if (k >= got || k >= MAX_ALGOS)
    return cx_error(ctx, CXLA_ERR_DEVICE, "gpu backend: %s: cuDNN has no algorithm for this convolution", what);
  rt->algo = perf[k].algo;
  switch ((cx_gpu_conv_kind)c->kind) {
  case CX_CONV_FORWARD: r = d->GetForwardWorkspaceSize(h, rt->x, rt->w, rt->conv, rt->y, rt->algo, &rt->ws); break;
  case CX_CONV_BACKWARD_DATA:
    r = d->GetBackwardDataWorkspaceSize(h, rt->w, rt->y, rt->conv, rt->x, rt->algo, &rt->ws);
    break;
  case CX_CONV_BACKWARD_FILTER:
    r = d->GetBackwardFilterWorkspaceSize(h, rt->x, rt->y, rt->conv, rt->w, rt->algo, &rt->ws);
    break;
  }
  return r ? cx_cudnn_error(ctx, d, r, what) : CXLA_OK;
}

cxla_status cx_gpu_conv_load(cxla_context *ctx, gpu_state *st) {
  const cx_gpu_prog *p = &st->prog;
  if (!p->nconvs_dnn) return CXLA_OK;
  if (!p->dnn) return cx_error(ctx, CXLA_ERR_INTERNAL, "gpu backend: convolution steps without cuDNN");
  st->dnn = p->dnn;
  int r = st->dnn->Create(&st->dnn_handle);
  if (r) return cx_cudnn_error(ctx, st->dnn, r, "cudnnCreate");
  if (!(st->convs = cx_calloc((size_t)p->nsteps, sizeof *st->convs))) return cx_oom(ctx);
  size_t algo_ws = 0, filt = 0;
  for (int i = 0; i < p->nsteps; i++) {
    const cx_gpu_step *s = &p->steps[i];
    if (s->kind != CX_GPU_CONV) continue;
    CX_TRY(describe(ctx, st, s, &st->convs[i]));
    if (st->convs[i].ws > algo_ws) algo_ws = st->convs[i].ws;
    if (s->conv.repack && filter_bytes(&s->conv) > filt) filt = filter_bytes(&s->conv);
  }
  st->dnn_algo_ws = (algo_ws + 255) / 256 * 256;
  st->dnn_ws_size = st->dnn_algo_ws + filt;
  if (!st->dnn_ws_size) return CXLA_OK;
  return cx_gpu_alloc(ctx, st->device, st->dnn_ws_size, &st->dnn_ws, &st->dnn_ws_got);
}

void cx_gpu_conv_unload(gpu_state *st) {
  const cx_cudnn *d = st->dnn;
  for (int i = 0; d && st->convs && i < st->prog.nsteps; i++) {
    cx_gpu_conv_rt *rt = &st->convs[i];
    if (rt->x) d->DestroyTensorDescriptor(rt->x);
    if (rt->y) d->DestroyTensorDescriptor(rt->y);
    if (rt->w_buf) d->DestroyTensorDescriptor(rt->w_buf);
    if (rt->w_packed) d->DestroyTensorDescriptor(rt->w_packed);
    if (rt->w) d->DestroyFilterDescriptor(rt->w);
    if (rt->conv) d->DestroyConvolutionDescriptor(rt->conv);
  }
  if (d && st->dnn_handle) d->Destroy(st->dnn_handle);
  if (st->dnn_ws) cx_gpu_free(st->device, st->dnn_ws, st->dnn_ws_got);
  cx_free(st->convs);
  st->convs = NULL, st->dnn_handle = NULL, st->dnn_ws = 0, st->dnn_ws_size = st->dnn_ws_got = st->dnn_algo_ws = 0;
}

static void *dev(CUdeviceptr p) { return (void *)(uintptr_t)p; }

cxla_status cx_gpu_conv_run(cxla_context *ctx, gpu_state *st, int step, CUstream stream, const CUdeviceptr *ptrs) {
  const cx_gpu_step *s = &st->prog.steps[step];
  const cx_gpu_conv *c = &s->conv;
  const cx_gpu_conv_rt *rt = &st->convs[step];
  const cx_cudnn *d = st->dnn;
  const char *what = s->in->name ? s->in->name : "convolution";
  /* alpha and beta in the computation's type (float also for f16 and bf16 data) */
  float one_f = 1, zero_f = 0;
  double one_d = 1, zero_d = 0;
  const void *one = c->compute == CX_DNN_DATA_DOUBLE ? (const void *)&one_d : &one_f;
  const void *zero = c->compute == CX_DNN_DATA_DOUBLE ? (const void *)&zero_d : &zero_f;
  void *h = st->dnn_handle, *ws = rt->ws ? dev(st->dnn_ws) : NULL;
  void *x = dev(ptrs[c->x_arg]), *y = dev(ptrs[c->y_arg]), *w = dev(ptrs[c->w_arg]);
  void *packed = dev(st->dnn_ws + st->dnn_algo_ws);
  int r = d->SetStream(h, stream);
  if (r) return cx_cudnn_error(ctx, d, r, "cudnnSetStream");
  if (c->repack && c->kind != CX_CONV_BACKWARD_FILTER) { /* the filter into its packed layout */
    if ((r = d->TransformTensor(h, one, rt->w_buf, w, zero, rt->w_packed, packed)))
      return cx_cudnn_error(ctx, d, r, "cudnnTransformTensor (the filter's repacking)");
    w = packed;
  }
  switch ((cx_gpu_conv_kind)c->kind) {
  case CX_CONV_FORWARD:
    r = d->Forward(h, one, rt->x, x, rt->w, w, rt->conv, rt->algo, ws, rt->ws, zero, rt->y, y);
    break;
  case CX_CONV_BACKWARD_DATA:
    r = d->BackwardData(h, one, rt->w, w, rt->y, y, rt->conv, rt->algo, ws, rt->ws, zero, rt->x, x);
    break;
  case CX_CONV_BACKWARD_FILTER:
    r = d->BackwardFilter(h, one, rt->x, x, rt->y, y, rt->conv, rt->algo, ws, rt->ws, zero, rt->w,
                          c->repack ? packed : w);
    if (!r && c->repack) r = d->TransformTensor(h, one, rt->w_packed, packed, zero, rt->w_buf, w);
    break;
  }
  return r ? cx_cudnn_error(ctx, d, r, what) : CXLA_OK;
}
