/* custom_call.c — custom-calls on the interpreter: the hook of each kind of target cxla knows
 * (ir/custom_calls.def), in a table indexed by kind. A target without a hook is refused when
 * compiling (check.c asks cx_interp_custom_call_refusal), and so are the particular
 * instructions of a kind that its refusal names. */
#include "interp/index_util.h"
#include "interp/internal.h"
#include "ir/custom_call.h"

/* Sharding, SPMD, Shardy and host-offloading marks: on one device, the operand itself (the
 * tuple of the operands, for several). */
static CX_INTERP_EVALUATOR(annotation) {
  if (in->nops == 1) {
    *out = cxla_literal_clone(st->ctx, ops[0]);
    return *out ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
  }
  int n = in->nops, k = 0;
  cxla_literal **el = cx_calloc((size_t)n, sizeof *el);
  if (!el) return cx_hv_oom(st, in);
  for (; k < n && (el[k] = cxla_literal_clone(st->ctx, ops[k])); k++) {}
  cxla_status s = k == n ? cx_hv_finish(st, in, n, el, out) : cx_hv_oom(st, in);
  if (k < n)
    while (k-- > 0) cxla_literal_destroy(el[k]);
  cx_free(el);
  return s;
}

/* jax's dce_sink: nothing to compute, its result the empty tuple. */
static CX_INTERP_EVALUATOR(sink) {
  (void)ops;
  return cx_hv_finish(st, in, 0, NULL, out);
}

static int same_shape(const cx_shape *x, const cx_shape *y) {
  return x->type == CXLA_TUPLE ? cx_shape_equal(x, y) : x->type == y->type && cx_shape_same_dims(x, y);
}

/* An annotation that changes the shape belongs to a program partitioned over devices. */
static const char *reshards(const cx_instr *in, char *buf, size_t n) {
  (void)buf;
  (void)n;
  const cx_shape *y = &in->shape;
  int same = in->nops == 1 ? same_shape(&in->ops[0]->shape, y) : y->type == CXLA_TUPLE && y->ntuple == in->nops;
  for (int i = 0; same && in->nops > 1 && i < in->nops; i++) same = same_shape(&in->ops[i]->shape, &y->tuple[i]);
  return same ? NULL : "its result is not its operand's shape: a program for several devices needs XLA's SPMD partitioner";
}

/* The instructions of a kind that it refuses (NULL: every one of that kind runs). */
static const char *(*const k_refusals[CX_CC_KIND_COUNT])(const cx_instr *in, char *buf, size_t n) = {
  [CX_CC_ANNOTATION] = reshards,
  [CX_CC_HOST_CALLBACK] = cx_interp_host_callback_refusal,
};

static const cx_interp_fn k_kinds[CX_CC_KIND_COUNT] = {
  [CX_CC_POTRF] = cx_interp_lapack_potrf,
  [CX_CC_TRSM] = cx_interp_lapack_trsm,
  [CX_CC_GETRF] = cx_interp_lapack_getrf,
  [CX_CC_GEQRF] = cx_interp_lapack_geqrf,
  [CX_CC_ORGQR] = cx_interp_lapack_orgqr,
  [CX_CC_SYEVD] = cx_interp_lapack_syevd,
  [CX_CC_GESDD] = cx_interp_lapack_gesvd,
  [CX_CC_GESVD] = cx_interp_lapack_gesvd,
  [CX_CC_GEEV] = cx_interp_lapack_geev,
  [CX_CC_ANNOTATION] = annotation,
  [CX_CC_SINK] = sink,
  [CX_CC_TOPK] = cx_interp_topk_custom_call,
  [CX_CC_HOST_CALLBACK] = cx_interp_host_callback,
  [CX_CC_BLOCK_SCALED_DOT] = cx_interp_block_scaled_dot,
  [CX_CC_GTSV] = cx_interp_lapack_gtsv,
  [CX_CC_GEQP3] = cx_interp_lapack_geqp3,
  [CX_CC_GEHRD] = cx_interp_lapack_gehrd,
  [CX_CC_SYTRD] = cx_interp_lapack_sytrd,
  [CX_CC_GEES] = cx_interp_lapack_gees,
  [CX_CC_GTSV_PERTURBED] = cx_interp_gtsv_perturbed,
  [CX_CC_ORMQR] = cx_interp_lapack_ormqr,
};

static cx_interp_fn hook_of(const cx_instr *in) {
  int t = cx_cc_target_of(in);
  return t < 0 ? NULL : k_kinds[cx_cc_info_of((cx_cc_target)t)->kind];
}

const char *cx_interp_custom_call_refusal(const cx_instr *in, char *buf, size_t n) {
  int t = cx_cc_target_of(in);
  const char *(*refuse)(const cx_instr *, char *, size_t) = t < 0 ? NULL : k_refusals[cx_cc_info_of((cx_cc_target)t)->kind];
  const char *why = refuse ? refuse(in, buf, n) : NULL;
  if (!why && !hook_of(in)) return "cxla does not know this custom-call target";
  return why;
}

CX_INTERP_EVALUATOR(cx_interp_custom_call) {
  cx_interp_fn f = hook_of(in);
  if (!f)
    return cx_error_at(st->m, in->loc, CXLA_ERR_UNSUPPORTED, "not supported: custom-call '%s' (target \"%s\")",
                       in->name ? in->name : "?", in->a.custom_call_target ? in->a.custom_call_target : "");
  return f(st, in, ops, out);
}
