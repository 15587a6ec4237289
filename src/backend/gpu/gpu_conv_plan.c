/* gpu_conv_plan.c — an HLO convolution as one call of cuDNN's legacy API (cudnn_lib.h), or
 * why not; decided when compiling, so that what cuDNN declines is compiled by the emitter.
 *
 * cuDNN's convolution (cross-correlation mode) is y[n,k,o] = sum_{c,r} x[n,c, o*s - p + r*d]
 * w[k,c,r] with one padding p for both sides of a spatial dim; XLA's is the same sum over
 * dims named by dim_labels, with low and high padding, base (lhs) dilation, window reversal
 * and batch groups. Three of cuDNN's calls cover the forms autodiff writes:
 *   Forward: no base dilation or batch groups; the high padding may differ from the low one
 *     only where it does not change the output size (cuDNN's floor absorbs it).
 *   BackwardData (the data gradient, a transposed convolution): XLA's base dilation s over
 *     the lhs dy with padding a and window k, d is cuDNN's dx = BackwardData(dy) of a forward
 *     convolution with stride s, dilation d and padding p = (k - 1) d - a: the sums match tap
 *     for tap with the filter flipped, which cuDNN's CONVOLUTION mode does (a window
 *     reversed in the HLO, as JAX's rev() of the kernel folds into, is CROSS_CORRELATION).
 *     The kernel's input-feature dim is cuDNN's k (dy's channels), its output-feature dim c.
 *   BackwardFilter (the weight gradient): XLA's lhs is x with batch and feature swapped, its
 *     rhs dy (window = dy's spatial dims), window stride = the forward dilation, window
 *     dilation = the forward stride, batch_group_count = the forward feature groups.
 * Every tensor is described by the element strides its buffer has (any layout: NCHW, NHWC,
 * JAX's HWIO...), so transposes cost nothing, except the filter, which a cuDNN filter
 * descriptor takes packed only: a filter in another layout is transposed through scratch
 * (cudnnTransformTensor). Which form, when more than one applies: see cx_gpu_conv_plan. Declined: other element types, mixed types, more than three
 * spatial dims, negative padding, a padding no symmetric one reproduces, partial window
 * reversal, and groups in the backward-data form. */
#include <string.h>
#include "backend/gpu/cudnn_lib.h"
#include "backend/gpu/gpu_conv_plan.h"

/* dims and strides of a cuDNN tensor from the HLO shape's dims d0, d1 and spatial sp[];
 * spatial dims past ns (up to nb - 2) are unit dims; 0 when a size does not fit an int or
 * is 0 */
static int tensor(const cx_shape *s, int64_t d0, int64_t d1, const int64_t *sp, int ns, int nb, int *dims,
                  int *strides) {
  int64_t st[CXLA_MAX_RANK], all = cx_shape_elems(s);
  cx_shape_strides(s, st);
  int64_t dd[5], ss[5];
  dd[0] = s->dims[d0], ss[0] = st[d0], dd[1] = s->dims[d1], ss[1] = st[d1];
  for (int j = 0; j < nb - 2; j++) {
    dd[2 + j] = j < ns ? s->dims[sp[j]] : 1;
    /* a unit dim after the last spatial one, strided as if it were there (NCHW- or NHWC-like) */
    ss[2 + j] = j < ns ? st[sp[j]] : ns ? st[sp[ns - 1]] : 1;
  }
  if (all < 1 || all > INT32_MAX) return 0;
  for (int i = 0; i < nb; i++) {
    if (dd[i] < 1 || dd[i] > INT32_MAX || ss[i] > INT32_MAX) return 0;
    dims[i] = (int)dd[i], strides[i] = (int)ss[i];
  }
  return 1;
}

/* the strides of a packed filter of dims w in format f */
static void packed(const int *w, int nb, int f, int *st) {
  if (f == CX_DNN_TENSOR_NCHW) {
    st[nb - 1] = 1;
    for (int i = nb - 2; i >= 0; i--) st[i] = st[i + 1] * w[i + 1];
    return;
  }
  st[1] = 1;
  int at = w[1];
  for (int i = nb - 1; i >= 2; i--) st[i] = at, at *= w[i];
  st[0] = at;
}

static int same_strides(const int *w, const int *a, const int *b, int nb) {
  for (int i = 0; i < nb; i++)
    if (w[i] > 1 && a[i] != b[i]) return 0;
  return 1;
}

/* the filter's packed format: the one its buffer has, else the data's (channels minor or not) */
static void filter_format(cx_gpu_conv *c) {
  int p[5];
  for (int f = CX_DNN_TENSOR_NHWC; f >= CX_DNN_TENSOR_NCHW; f--) {
    packed(c->w, c->nb, f, p);
    if (same_strides(c->w, c->ws, p, c->nb)) {
      c->format = f, c->repack = 0;
      return;
    }
  }
  c->format = c->xs[1] == 1 && c->x[1] > 1 ? CX_DNN_TENSOR_NHWC : CX_DNN_TENSOR_NCHW;
  c->repack = 1;
}

/* window reversal on all spatial dims (1), none (0) or some (-1) */
static int reversal(const cx_window *w) {
  int n = 0;
  for (int j = 0; j < w->rank; j++) n += w->d[j].reversal != 0;
  return n == 0 ? 0 : n == w->rank ? 1 : -1;
}

/* cuDNN's forward output size for input i, filter taps k, padding p, stride s, dilation d
 * equals o */
static int out_size_is(int64_t o, int64_t i, int64_t k, int64_t p, int64_t s, int64_t d) {
  int64_t num = i + 2 * p - d * (k - 1) - 1;
  return p >= 0 && s >= 1 && d >= 1 && num >= 0 && num / s + 1 == o && p <= INT32_MAX && s <= INT32_MAX && d <= INT32_MAX;
}

typedef struct conv_in {
  const cx_shape *is, *ks, *os;
  const cx_conv_dims *cd;
  const cx_window *win;
  int64_t fgroups, bgroups;
  int ns, nb;
} conv_in;

static int forward(const conv_in *v, cx_gpu_conv *c, const char **why) {
  const cx_conv_dims *cd = v->cd;
  int rev = reversal(v->win);
  if (v->bgroups != 1) return *why = "batch groups in a convolution that is no weight gradient", 0;
  if (rev < 0) return *why = "window reversal on some spatial dims only", 0;
  for (int j = 0; j < v->ns; j++) {
    const cx_window_dim *w = &v->win->d[j];
    if (w->lhs_dilate != 1) return *why = "base dilation (a transposed convolution)", 0;
    if (!out_size_is(v->os->dims[cd->out_spatial[j]], v->is->dims[cd->in_spatial[j]], w->size, w->pad_lo, w->stride,
                     w->rhs_dilate))
      return *why = "a padding no symmetric one gives (cuDNN pads both sides alike)", 0;
    c->pad[j] = (int)w->pad_lo, c->stride[j] = (int)w->stride, c->dil[j] = (int)w->rhs_dilate;
  }
  if (!tensor(v->is, cd->in_batch, cd->in_feature, cd->in_spatial, v->ns, v->nb, c->x, c->xs) ||
      !tensor(v->os, cd->out_batch, cd->out_feature, cd->out_spatial, v->ns, v->nb, c->y, c->ys) ||
      !tensor(v->ks, cd->k_out, cd->k_in, cd->k_spatial, v->ns, v->nb, c->w, c->ws))
    return *why = "an empty tensor or one over 2^31 - 1 elements", 0;
  c->kind = CX_CONV_FORWARD, c->groups = (int)v->fgroups, c->x_arg = 1, c->w_arg = 2, c->y_arg = 0;
  c->mode = rev ? CX_DNN_CONVOLUTION : CX_DNN_CROSS_CORRELATION;
  return 1;
}

static int backward_data(const conv_in *v, cx_gpu_conv *c, const char **why) {
  const cx_conv_dims *cd = v->cd;
  int rev = reversal(v->win);
  if (v->bgroups != 1 || v->fgroups != 1) return *why = "groups in a transposed convolution", 0;
  if (rev < 0) return *why = "window reversal on some spatial dims only", 0;
  for (int j = 0; j < v->ns; j++) {
    const cx_window_dim *w = &v->win->d[j];
    int64_t p = (w->size - 1) * w->rhs_dilate - w->pad_lo;
    if (w->stride != 1) return *why = "a window stride in a transposed convolution", 0;
    if (!out_size_is(v->is->dims[cd->in_spatial[j]], v->os->dims[cd->out_spatial[j]], w->size, p, w->lhs_dilate,
                     w->rhs_dilate))
      return *why = "a transposed convolution whose padding no symmetric forward one gives", 0;
    c->pad[j] = (int)p, c->stride[j] = (int)w->lhs_dilate, c->dil[j] = (int)w->rhs_dilate;
  }
  if (!tensor(v->os, cd->out_batch, cd->out_feature, cd->out_spatial, v->ns, v->nb, c->x, c->xs) ||
      !tensor(v->is, cd->in_batch, cd->in_feature, cd->in_spatial, v->ns, v->nb, c->y, c->ys) ||
      !tensor(v->ks, cd->k_in, cd->k_out, cd->k_spatial, v->ns, v->nb, c->w, c->ws))
    return *why = "an empty tensor or one over 2^31 - 1 elements", 0;
  c->kind = CX_CONV_BACKWARD_DATA, c->groups = 1, c->x_arg = 0, c->y_arg = 1, c->w_arg = 2;
  c->mode = rev ? CX_DNN_CROSS_CORRELATION : CX_DNN_CONVOLUTION;
  return 1;
}

static int backward_filter(const conv_in *v, cx_gpu_conv *c, const char **why) {
  const cx_conv_dims *cd = v->cd;
  if (v->fgroups != 1) return *why = "feature groups in a weight gradient", 0;
  if (reversal(v->win)) return *why = "window reversal in a weight gradient", 0;
  for (int j = 0; j < v->ns; j++) {
    const cx_window_dim *w = &v->win->d[j];
    if (w->lhs_dilate != 1) return *why = "base dilation in a weight gradient", 0;
    /* dy's spatial size is the window; the forward stride is the window dilation */
    if (!out_size_is(w->size, v->is->dims[cd->in_spatial[j]], v->os->dims[cd->out_spatial[j]], w->pad_lo,
                     w->rhs_dilate, w->stride))
      return *why = "a weight gradient whose padding no symmetric forward one gives", 0;
    c->pad[j] = (int)w->pad_lo, c->stride[j] = (int)w->rhs_dilate, c->dil[j] = (int)w->stride;
  }
  if (!tensor(v->is, cd->in_feature, cd->in_batch, cd->in_spatial, v->ns, v->nb, c->x, c->xs) ||
      !tensor(v->ks, cd->k_in, cd->k_out, cd->k_spatial, v->ns, v->nb, c->y, c->ys) ||
      !tensor(v->os, cd->out_feature, cd->out_batch, cd->out_spatial, v->ns, v->nb, c->w, c->ws))
    return *why = "an empty tensor or one over 2^31 - 1 elements", 0;
  c->kind = CX_CONV_BACKWARD_FILTER, c->groups = (int)v->bgroups, c->x_arg = 1, c->y_arg = 2, c->w_arg = 0;
  c->mode = CX_DNN_CROSS_CORRELATION;
  return 1;
}

static int data_type(cxla_type t, int tf32, cx_gpu_conv *c) {
  switch (t) {
  case CXLA_F32: c->dtype = CX_DNN_DATA_FLOAT, c->math = tf32 ? CX_DNN_DEFAULT_MATH : CX_DNN_FMA_MATH; break;
  case CXLA_F64: c->dtype = CX_DNN_DATA_DOUBLE, c->math = CX_DNN_DEFAULT_MATH; break; /* no TF32 for f64 */
  case CXLA_F16: c->dtype = CX_DNN_DATA_HALF, c->math = CX_DNN_TENSOR_OP_MATH; break;
  case CXLA_BF16: c->dtype = CX_DNN_DATA_BFLOAT16, c->math = CX_DNN_TENSOR_OP_MATH; break;
  default: return 0;
  }
  c->compute = t == CXLA_F64 ? CX_DNN_DATA_DOUBLE : CX_DNN_DATA_FLOAT;
  return 1;
}

int cx_gpu_conv_plan(const cx_instr *conv, int tf32, cx_gpu_conv *out, const char **why) {
  const cx_attrs *a = &conv->a;
  conv_in v = {.is = &conv->ops[0]->shape, .ks = &conv->ops[1]->shape, .os = &conv->shape, .cd = a->conv,
               .win = &a->window, .fgroups = a->feature_group_count, .bgroups = a->batch_group_count};
  memset(out, 0, sizeof *out);
  if (v.is->type != v.os->type || v.ks->type != v.os->type || !data_type(v.os->type, tf32, out))
    return *why = "cuDNN convolutions here are f32, f64, f16 and bf16, with operands of the result's type", 0;
  if (!v.cd || v.cd->nspatial > 3 || v.win->rank != v.cd->nspatial)
    return *why = "more than three spatial dims", 0;
  if (v.fgroups < 1 || v.bgroups < 1 || v.fgroups > INT32_MAX || v.bgroups > INT32_MAX)
    return *why = "bad group counts", 0;
  v.ns = v.cd->nspatial, v.nb = v.ns == 3 ? 5 : 4;
  int (*const forms[3])(const conv_in *, cx_gpu_conv *, const char **) = {forward, backward_data, backward_filter};
  cx_gpu_conv c[3];
  int ok[3];
  int64_t cost[3];
  for (int f = 0; f < 3; f++) {
    const char *w = NULL;
    memset(&c[f], 0, sizeof c[f]);
    c[f].dtype = out->dtype, c[f].compute = out->compute, c[f].math = out->math, c[f].nb = v.nb;
    if (!(ok[f] = forms[f](&v, &c[f], &w))) {
      if (f == 0) *why = w; /* the forward form's reason names what is unusual */
      continue;
    }
    for (int j = v.ns; j < v.nb - 2; j++) c[f].pad[j] = 0, c[f].stride[j] = c[f].dil[j] = 1;
    filter_format(&c[f]);
    cost[f] = c[f].repack;
    for (int i = 0; c[f].repack && i < c[f].nb; i++) cost[f] *= c[f].w[i];
  }
  /* A weight gradient's window (dy) is larger than its result (dw) in every spatial dim, a
   * forward convolution's is not: such a convolution is BackwardFilter's even where Forward
   * could compute it (with dy as a filter, repacked). Otherwise Forward or BackwardData,
   * whichever repacks less (a stride-1 convolution is both), Forward on a tie. */
  int wgrad = v.ns > 0;
  for (int j = 0; j < v.ns; j++) wgrad &= v.win->d[j].size > v.os->dims[v.cd->out_spatial[j]];
  int best = wgrad && ok[2] ? 2 : ok[0] && (!ok[1] || cost[0] <= cost[1]) ? 0 : ok[1] ? 1 : ok[2] ? 2 : -1;
  if (best >= 0) *out = c[best];
  return best >= 0;
}
