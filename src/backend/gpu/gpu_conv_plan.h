/* gpu_conv_plan.h — an HLO convolution as one cuDNN call (gpu_conv_plan.c says how each form
 * maps), decided when compiling: a CONV step of gpu_build.h carries the result. */
#ifndef CX_GPU_CONV_PLAN_H
#define CX_GPU_CONV_PLAN_H
#include "ir/ir.h"

/* Which of cuDNN's three calls, its tensors as cuDNN sees them (4 or 5 dims: n, c, then 2 or 3 spatial; 1-D convolutions get a unit dim) with the
 * element strides the HLO buffers have, and the filter, which cuDNN takes packed only
 * (NCHW: k, c, spatial; NHWC: k, spatial, c), with its buffer's strides: a filter not packed
 * goes through scratch memory, transposed there by cudnnTransformTensor. */
typedef enum cx_gpu_conv_kind { CX_CONV_FORWARD, CX_CONV_BACKWARD_DATA, CX_CONV_BACKWARD_FILTER } cx_gpu_conv_kind;
typedef struct cx_gpu_conv {
  int kind;                 /* cx_gpu_conv_kind */
  int dtype, compute, math; /* cudnnDataType_t of the data and the computation; cudnnMathType_t */
  int mode;                 /* CX_DNN_CONVOLUTION (the filter flipped) or CX_DNN_CROSS_CORRELATION */
  int nb, groups;           /* tensor dims (4 or 5); feature groups */
  int x[5], xs[5];          /* the forward input (x or dx): dims, element strides */
  int y[5], ys[5];          /* the forward output (y or dy) */
  int w[5], ws[5];          /* the filter: k, c / groups, spatial; its buffer's strides */
  int format;               /* CX_DNN_TENSOR_NCHW or _NHWC: the filter's packed layout */
  int repack;               /* ws is not that packed layout: the filter goes through scratch */
  int pad[3], stride[3], dil[3];
  int x_arg, y_arg, w_arg;  /* which of the step's slots (0 result, 1 lhs, 2 rhs) each is */
} cx_gpu_conv;

/* 1 and *c when cuDNN computes `conv` (a convolution whose operands are its fusion's
 * parameters) on its buffers as they are laid out; else 0 and why cuDNN declines it. tf32: --gpu-tf32 (f32 convolutions may use TF32 tensor cores). */
int cx_gpu_conv_plan(const cx_instr *conv, int tf32, cx_gpu_conv *c, const char **why);

#endif
