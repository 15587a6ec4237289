/* scaled_dot.h — what a verified scaled-dot or __op$block_scaled_dot custom-call computes,
 * shared by their shape rules (ir/infer_scaled_dot.c), the interpreter (interp/scaled_dot.c) and
 * the cpu pipeline's expansion (passes/scaled_dot_expand.c). docs/scaled_dot.md has the same
 * with examples.
 *
 * scaled-dot(lhs, rhs, lhs_scale, rhs_scale), XLA's kScaledDot (MX/NVFP4 matmuls), with dot's
 * dimension numbers. Each operand x has a scale s of the same rank whose every dimension divides
 * x's: x's dimension d falls into blocks of x.dims[d] / s.dims[d] elements, and element i of x
 * is scaled by s[i / block] (the division per dimension). Only one contracting dimension is
 * allowed (XLA's ShapeVerifier::HandleScaledDot); a scale may also have blocks along the
 * batch and free dimensions. The result is
 *   result[...] = sum_k deq(lhs)[.., k, ..] * deq(rhs)[.., k, ..],
 *   deq(x)[i] = convert_T(x[i]) * convert_T(s[i / block])
 * with T the result's element type (any integer or float type: XLA's evaluator converts every
 * operand and scale to it first). The scaled operands and the sum are computed in `deq`: f32
 * when T is a float narrower than 32 bits (XLA's evaluator does its arithmetic for those in
 * f32), otherwise T; the sum is converted to T once. The dot's shape is XLA's InferDotOpShape
 * of lhs and rhs with T as preferred type; written without a result shape, T is the more
 * precise of the operand types (XLA's parser infers it from lhs and lhs_scale instead, which
 * fails for any real scale: cxla reads the rule its verifier applies).
 * A scalar scale is no scale (its value is never read, by XLA's evaluator and its
 * ScaledDotRewriter alike); the verifier allows one only as XLA's "no-op scale": a bf16 scalar
 * of a bf16 operand that is not all ones, and not both scales at once. Element types: XLA puts
 * no rule on them; f8e4m3fn, f8e5m2 and f4e2m1fn data with f8e8m0fnu or f8e4m3fn scales are
 * the MX and NVFP4 formats, bf16 and f32 scales occur too. cxla refuses complex operands and
 * pred or complex results.
 *
 * custom-call(lhs, rhs, lhs_scale[, rhs_scale[, global_scale]]),
 * custom_call_target="__op$block_scaled_dot": XLA:GPU's BlockScalingRewriter form. lhs and rhs
 * have rank 2 ([M,K], [N,K]) or 3 ([B,M,K], [B,N,K]): contracting dimension the last, batch
 * dimension 0 at rank 3; the result is the dot's [M,N] or [B,M,N] in the declared type T.
 * Scales have the operand's rank and its batch size, may be padded along the free dimension
 * (rows past the operand's are ignored), and block the contracting dimension: block K/S for
 * a scale of S columns, or with backend_config {"block_scaled_dot_backend_config":
 * {block_size:B}} the first ceil(K/B) columns of a possibly padded scale, block K/ceil(K/B)
 * (B when B divides K; XLA's expander slices and reshapes so). Without rhs_scale the rhs is
 * not scaled; global_scale, a scalar of type T, multiplies the result. Here deq is T itself
 * (the expander converts to T and multiplies there), and the dot is a dot of T. */
#ifndef CX_SCALED_DOT_H
#define CX_SCALED_DOT_H
#include "ir/ir.h"

#define CX_BLOCK_SCALED_DOT_TARGET "__op$block_scaled_dot"

typedef struct cx_sdot_side {
  int scaled;                   /* 0: no scale */
  int64_t used[CXLA_MAX_RANK];  /* the scale's dims that are read (fewer than it has where padded) */
  int64_t block[CXLA_MAX_RANK]; /* operand elements per scale element, per dimension */
} cx_sdot_side;

typedef struct cx_sdot {
  cxla_type type;   /* T, the result's element type */
  cxla_type deq;    /* the scaled operands and the sum */
  cx_dot_dims dims; /* for the custom-call its lists point into dimv */
  int64_t dimv[4];
  cx_sdot_side side[2];
  int global;       /* the global scale's operand index, or -1 */
} cx_sdot;

/* Whether in is a custom-call to __op$block_scaled_dot. */
int cx_is_block_scaled_dot(const cx_instr *in);
/* The block_size of a block_scaled_dot's backend_config ({..., block_size:32} or
 * "block_size": 32): 1 and *b, or 0 when absent. */
int cx_block_scaled_dot_block_size(const cx_instr *in, int64_t *b);
/* The type deq for result type t (see above). */
cxla_type cx_scaled_dot_deq_type(cxla_type t);
/* Fills *d for a scaled-dot or block_scaled_dot whose shapes follow the rules above; returns 0
 * (and fills nothing useful) when they do not, so that callers never index out of bounds. */
int cx_sdot_of(const cx_instr *in, cx_sdot *d);

#endif
