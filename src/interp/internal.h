/* internal.h — what the interpreter's files share beyond the interp.h contract: the per-op
 * hooks (an evaluator per op, a scalar rule per elementwise op) and small helpers. */
#ifndef CX_INTERP_INTERNAL_H
#define CX_INTERP_INTERNAL_H
#include <math.h>
#include "interp/interp.h"

/* Nesting limit for computation calls: each level costs a few hundred bytes of C stack, so
 * this stays far from any stack limit while no real module nests this deep. */
#define CX_INTERP_MAX_DEPTH 256

/* A zero-filled array literal of s's type and dims (layout dropped: literals are row-major),
 * for instruction in. Fails on OOM or on a shape that is not a valid array. */
cxla_status cx_interp_new_array(cx_interp *st, cx_instr *in, const cx_shape *s, cxla_literal **out);
/* An ill-formed instruction the verifier should have caught: CXLA_ERR_VERIFY at in->loc. */
cxla_status cx_interp_bad(cx_interp *st, cx_instr *in, const char *fmt, ...) CX_PRINTF(3, 4);

/* ---- per-op hooks ---- */

/* A complex number in double precision (the interpreter's working form of c64 and c128). */
typedef struct cx_cplx {
  double re, im;
} cx_cplx;

/* The scalar rule of an elementwise op (ew_rules.c), by the kind of the op's element type:
 * floats in double (rounded to the type by the caller), complex numbers in double parts (c,
 * rounded part by part), integers (signed s, unsigned u) and pred on 64-bit values. Unary ops
 * fill the *1 fields, binary ops the *2 fields; an op whose value needs the instruction
 * (attributes, operands of other types) has eval instead. A kind the op is not defined on
 * stays NULL: cx_op_valid_for_type is asked before any is called. */
typedef struct cx_ew_rule {
  double (*f1)(double x);
  int64_t (*fp1)(double x); /* float operand, pred result (is-finite) */
  int64_t (*s1)(cxla_type t, int64_t x), (*u1)(cxla_type t, int64_t x), (*p1)(cxla_type t, int64_t x);
  cx_cplx (*c1)(cx_cplx x);
  double (*cr1)(cx_cplx x); /* complex operand, result of its component type (abs, real, imag) */
  cx_cplx (*c2)(cx_cplx a, cx_cplx b);
  double (*f2)(double a, double b);
  int64_t (*s2)(cxla_type t, int64_t a, int64_t b), (*u2)(cxla_type t, int64_t a, int64_t b),
      (*p2)(cxla_type t, int64_t a, int64_t b);
  /* t: the element type of operand type_operand */
  cx_scalar (*eval)(const cx_instr *in, cxla_type t, const cx_scalar *args);
  /* Whether the operands have the types the rule reads (NULL: all of the result's type, which
   * the op is defined on). Elementwise arrays of other types take the general path. */
  int (*types_ok)(const cx_instr *in);
  /* Why the instruction is ill-formed, given its operand element types, or NULL. */
  const char *(*ill_formed)(const cx_instr *in, const cxla_type *types);
  int type_operand; /* whose element type is the op's (select: on-true, clamp: the operand) */
} cx_ew_rule;

/* The complex rules (ew_complex.c), in double; XLA's semantics, see there. */
cx_cplx cx_c_copy(cx_cplx x);
cx_cplx cx_c_negate(cx_cplx x);
double cx_c_abs(cx_cplx x);
double cx_c_real(cx_cplx x);
double cx_c_imag(cx_cplx x);
cx_cplx cx_c_sign(cx_cplx x);
cx_cplx cx_c_add(cx_cplx a, cx_cplx b);
cx_cplx cx_c_sub(cx_cplx a, cx_cplx b);
cx_cplx cx_c_mul(cx_cplx a, cx_cplx b);
cx_cplx cx_c_div(cx_cplx a, cx_cplx b);
cx_cplx cx_c_pow(cx_cplx a, cx_cplx b);
cx_cplx cx_c_exp(cx_cplx x);
cx_cplx cx_c_expm1(cx_cplx x);
cx_cplx cx_c_log(cx_cplx x);
cx_cplx cx_c_log1p(cx_cplx x);
cx_cplx cx_c_sqrt(cx_cplx x);
cx_cplx cx_c_rsqrt(cx_cplx x);
cx_cplx cx_c_cbrt(cx_cplx x);
cx_cplx cx_c_sin(cx_cplx x);
cx_cplx cx_c_cos(cx_cplx x);
cx_cplx cx_c_tanh(cx_cplx x);
cx_cplx cx_c_tan(cx_cplx x);
cx_cplx cx_c_atan2(cx_cplx y, cx_cplx x);
cx_cplx cx_c_logistic(cx_cplx x);

/* op's rule, or NULL: the interpreter does not run op as an elementwise op. */
const cx_ew_rule *cx_ew_rule_of(cx_op op);
int cx_ew_types_ok(const cx_ew_rule *r, const cx_instr *in);
/* r (in's rule) bound to in, once for the loops over many elements, and applied to scalar
 * operand values. */
typedef struct cx_ew_bound {
  const cx_ew_rule *r;
  const cx_instr *in;
  cxla_type t; /* the element type of operand r->type_operand */
  cx_kind kind;
} cx_ew_bound;
static inline void cx_ew_bind(cx_ew_bound *b, const cx_ew_rule *r, const cx_instr *in) {
  int k = r->type_operand < in->nops ? r->type_operand : 0;
  b->r = r;
  b->in = in;
  b->t = in->nops ? in->ops[k]->shape.type : in->shape.type;
  b->kind = cx_type_kind(b->t);
}
cx_scalar cx_ew_call(const cx_ew_bound *b, const cx_scalar *args);
static inline cx_scalar cx_ew_apply(const cx_ew_rule *r, const cx_instr *in, const cx_scalar *args) {
  cx_ew_bound b;
  cx_ew_bind(&b, r, in);
  return cx_ew_call(&b, args);
}

/* The evaluator of an op (eval_table.c): either a frame hook, for the driver's own ops that
 * borrow or move values (parameter, constant, tuple, get-tuple-element, copy, opt-barrier), or
 * an evaluator of borrowed operand values. Neither: the interpreter does not run the op. */
struct cx_frame;
typedef cxla_status (*cx_frame_fn)(cx_interp *st, struct cx_frame *f, cx_instr *in, int i);
typedef struct cx_interp_hook {
  cx_frame_fn frame;
  cx_interp_fn eval;
} cx_interp_hook;
cx_interp_hook cx_interp_hook_of(cx_op op);

/* Frame hooks (interp.c): each leaves instruction i's value in the frame. */
cxla_status cx_frame_parameter(cx_interp *st, struct cx_frame *f, cx_instr *in, int i);
cxla_status cx_frame_constant(cx_interp *st, struct cx_frame *f, cx_instr *in, int i);
cxla_status cx_frame_tuple(cx_interp *st, struct cx_frame *f, cx_instr *in, int i);
cxla_status cx_frame_get_tuple_element(cx_interp *st, struct cx_frame *f, cx_instr *in, int i);
cxla_status cx_frame_identity(cx_interp *st, struct cx_frame *f, cx_instr *in, int i);

/* Evaluators of interp.h's cx_interp_fn type beyond its public ones. */
#define CX_INTERP_EVALUATOR(name) \
  cxla_status name(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out)
CX_INTERP_EVALUATOR(cx_interp_bitcast_convert);   /* elementwise.c */
CX_INTERP_EVALUATOR(cx_interp_iota);              /* shape_ops.c */
CX_INTERP_EVALUATOR(cx_interp_broadcast);
CX_INTERP_EVALUATOR(cx_interp_reshape);
CX_INTERP_EVALUATOR(cx_interp_bitcast);
CX_INTERP_EVALUATOR(cx_interp_transpose);
CX_INTERP_EVALUATOR(cx_interp_slice);
CX_INTERP_EVALUATOR(cx_interp_dynamic_slice);
CX_INTERP_EVALUATOR(cx_interp_dynamic_update_slice);
CX_INTERP_EVALUATOR(cx_interp_concatenate);
CX_INTERP_EVALUATOR(cx_interp_pad);
CX_INTERP_EVALUATOR(cx_interp_reverse);
CX_INTERP_EVALUATOR(cx_interp_call_op);           /* control.c: call and fusion */
CX_INTERP_EVALUATOR(cx_interp_while);
CX_INTERP_EVALUATOR(cx_interp_conditional);
CX_INTERP_EVALUATOR(cx_interp_async_start);       /* async.c */
CX_INTERP_EVALUATOR(cx_interp_async_update);
CX_INTERP_EVALUATOR(cx_interp_async_done);
CX_INTERP_EVALUATOR(cx_interp_copy_start);
CX_INTERP_EVALUATOR(cx_interp_copy_done);
CX_INTERP_EVALUATOR(cx_interp_cholesky);         /* linalg_ops.c */
CX_INTERP_EVALUATOR(cx_interp_triangular_solve);
CX_INTERP_EVALUATOR(cx_interp_custom_call);      /* custom_call.c: by target */
/* Why the interpreter would refuse custom-call in (its target unknown, or a case of its kind
 * it does not run), or NULL. */
const char *cx_interp_custom_call_refusal(const cx_instr *in, char *buf, size_t n);
/* host_callback.c: why a host callback cannot run (formatted into buf), or NULL. */
const char *cx_interp_host_callback_refusal(const cx_instr *in, char *buf, size_t n);
CX_INTERP_EVALUATOR(cx_interp_topk_custom_call); /* topk.c: XLA:CPU's "TopK" */
CX_INTERP_EVALUATOR(cx_interp_host_callback);    /* host_callback.c: cxla_host_callback */
CX_INTERP_EVALUATOR(cx_interp_lapack_potrf);     /* lapack_eval.c */
CX_INTERP_EVALUATOR(cx_interp_lapack_trsm);
CX_INTERP_EVALUATOR(cx_interp_lapack_getrf);
CX_INTERP_EVALUATOR(cx_interp_lapack_geqrf);
CX_INTERP_EVALUATOR(cx_interp_lapack_gtsv);
CX_INTERP_EVALUATOR(cx_interp_lapack_geqp3);
CX_INTERP_EVALUATOR(cx_interp_lapack_gehrd);
CX_INTERP_EVALUATOR(cx_interp_lapack_sytrd);
CX_INTERP_EVALUATOR(cx_interp_lapack_gees);
CX_INTERP_EVALUATOR(cx_interp_gtsv_perturbed);
CX_INTERP_EVALUATOR(cx_interp_lapack_ormqr);
CX_INTERP_EVALUATOR(cx_interp_lapack_orgqr);
CX_INTERP_EVALUATOR(cx_interp_lapack_syevd);
CX_INTERP_EVALUATOR(cx_interp_lapack_geev);
CX_INTERP_EVALUATOR(cx_interp_lapack_gesvd);
CX_INTERP_EVALUATOR(cx_interp_batch_norm_training); /* batch_norm.c */
CX_INTERP_EVALUATOR(cx_interp_batch_norm_inference);
CX_INTERP_EVALUATOR(cx_interp_batch_norm_grad);
CX_INTERP_EVALUATOR(cx_interp_topk);              /* topk.c */
CX_INTERP_EVALUATOR(cx_interp_scan);              /* scan.c */
CX_INTERP_EVALUATOR(cx_interp_ragged_dot);        /* ragged_dot.c */
CX_INTERP_EVALUATOR(cx_interp_scaled_dot);        /* scaled_dot.c */
CX_INTERP_EVALUATOR(cx_interp_block_scaled_dot);  /* scaled_dot.c: the __op$block_scaled_dot custom-call */
CX_INTERP_EVALUATOR(cx_interp_all_reduce);        /* collectives.c */
CX_INTERP_EVALUATOR(cx_interp_reduce_scatter);
CX_INTERP_EVALUATOR(cx_interp_all_gather);
CX_INTERP_EVALUATOR(cx_interp_all_gather_start);
CX_INTERP_EVALUATOR(cx_interp_collective_broadcast);
CX_INTERP_EVALUATOR(cx_interp_collective_done);
CX_INTERP_EVALUATOR(cx_interp_device_id);
CX_INTERP_EVALUATOR(cx_interp_all_to_all);        /* collectives_move.c */
CX_INTERP_EVALUATOR(cx_interp_collective_permute);
CX_INTERP_EVALUATOR(cx_interp_collective_permute_start);
CX_INTERP_EVALUATOR(cx_interp_fft);               /* fft.c */
CX_INTERP_EVALUATOR(cx_interp_after_all);         /* host_feed.c */
CX_INTERP_EVALUATOR(cx_interp_add_dependency);
CX_INTERP_EVALUATOR(cx_interp_infeed);
CX_INTERP_EVALUATOR(cx_interp_outfeed);
CX_INTERP_EVALUATOR(cx_interp_rng_bit_generator); /* rng_bits.c */
CX_INTERP_EVALUATOR(cx_interp_rng);               /* rng.c */
/* Philox4x32-10 of the counter words c (low first) under the key words k0, k1 (rng_bits.c). */
void cx_philox4x32(const uint32_t c[4], uint32_t k0, uint32_t k1, uint32_t out[4]);

/* Copies a box of n[0] x ... x n[rank-1] elements of esize bytes: for every index i < n,
 * dst[dbase + sum i_k*dstr_k] = src[sbase + sum i_k*sstr_k] (offsets in elements; strides may
 * be 0 or negative). Every re-indexing op is one or two of these. */
void cx_box_copy(void *dst, const void *src, size_t esize, int rank, const int64_t *n,
                 int64_t dbase, const int64_t *dstr, int64_t sbase, const int64_t *sstr);


/* reduce-precision on the raw bits of a float with nbits total and src_mbits mantissa bits,
 * exactly as XLA's EmitReducePrecisionIR with quiet_nans=false. */
uint64_t cx_reduce_precision_bits(uint64_t x, int nbits, int src_mbits, int ebits, int mbits);

/* Sign-extends / zero-extends the low bits of v as a width-`bits` integer. */
static inline int64_t cx_sext(int bits, int64_t v) {
  switch (bits) {
  case 4: return (int64_t)((uint64_t)v << 60) >> 60; /* s4, u4 */
  case 2: return (int64_t)((uint64_t)v << 62) >> 62; /* s2, u2 */
  case 8: return (int8_t)v;
  case 16: return (int16_t)v;
  case 32: return (int32_t)v;
  default: return v;
  }
}
static inline uint64_t cx_zext(int bits, int64_t v) {
  return bits >= 64 ? (uint64_t)v : (uint64_t)v & ((UINT64_C(1) << bits) - 1);
}

#endif
