/* control.c — calls into computations: call, fusion, while, conditional. */
#include <stdatomic.h>
#include "core/context.h"
#include "interp/internal.h"

static cxla_status need_called(cx_interp *st, cx_instr *in, int n) {
  for (int i = 0; i < in->ncalled; i++)
    if (!in->called[i]) return cx_interp_bad(st, in, "called computation %d is missing", i);
  if (in->ncalled != n) return cx_interp_bad(st, in, "calls %d computations, expected %d", in->ncalled, n);
  return CXLA_OK;
}

/* Reads a scalar pred result of a condition computation. */
static cxla_status read_pred(cx_interp *st, cx_instr *in, const cxla_literal *p, int *v) {
  if (p->shape.type != CXLA_PRED || p->shape.rank != 0)
    return cx_interp_bad(st, in, "condition must return pred[]");
  *v = ((const uint8_t *)p->data)[0] != 0;
  return CXLA_OK;
}

/* while: the condition, then the body, as long as the condition holds. The state literal is
 * replaced by each body result; --max-loop-iterations bounds the number of body runs. */
cxla_status cx_interp_while(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out) {
  *out = NULL;
  CX_TRY(need_called(st, in, 2));
  if (in->nops != 1) return cx_interp_bad(st, in, "takes one operand");
  cx_comp *cond = in->called[0], *body = in->called[1];
  cxla_literal *state = cxla_literal_clone(st->ctx, ops[0]);
  if (!state) return CXLA_ERR_OUT_OF_MEMORY;
  cxla_status s = CXLA_OK;
  for (int64_t iter = 0;; iter++) {
    cxla_literal *p = NULL, *next = NULL;
    int go = 0;
    s = cx_interp_call(st, cond, 1, &state, &p);
    if (s == CXLA_OK) s = read_pred(st, in, p, &go);
    cxla_literal_destroy(p);
    if (s != CXLA_OK || !go) break;
    if (st->max_loop_iterations > 0 && iter >= st->max_loop_iterations) {
      s = cx_error_at(st->m, in->loc, CXLA_ERR_RUNTIME, "while loop exceeded --max-loop-iterations=%lld",
                      (long long)st->max_loop_iterations);
      break;
    }
    if (st->m->ctx) atomic_fetch_add_explicit(&st->m->ctx->loop_trips, 1, memory_order_relaxed);
    if ((s = cx_interp_call(st, body, 1, &state, &next)) != CXLA_OK) break;
    cxla_literal_destroy(state);
    state = next;
  }
  if (s != CXLA_OK) {
    cxla_literal_destroy(state);
    return s;
  }
  *out = state;
  return CXLA_OK;
}

/* conditional: a pred index picks branch 0 (true) or 1 (false); an integer index picks that
 * branch, and any index outside [0, N) picks the last one, as XLA specifies. */
cxla_status cx_interp_conditional(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out) {
  *out = NULL;
  int n = in->ncalled;
  if (n < 1) return cx_interp_bad(st, in, "has no branches");
  CX_TRY(need_called(st, in, n));
  if (in->nops != n + 1) return cx_interp_bad(st, in, "%d operands for %d branches", in->nops, n);
  const cxla_literal *ix = ops[0];
  if (ix->shape.rank != 0 || !(ix->shape.type == CXLA_PRED || cx_type_is_int(ix->shape.type)))
    return cx_interp_bad(st, in, "branch index must be a pred or integer scalar");
  int64_t b;
  if (ix->shape.type == CXLA_PRED) {
    if (n != 2) return cx_interp_bad(st, in, "a pred index needs 2 branches");
    b = ((const uint8_t *)ix->data)[0] ? 0 : 1;
  } else {
    int64_t v = cx_load_i64(ix->shape.type, ix->data, 0);
    int neg = v < 0 && ix->shape.type != CXLA_U64; /* u64 above INT64_MAX is just large */
    b = neg || (uint64_t)v >= (uint64_t)n ? n - 1 : v;
  }
  return cx_interp_call(st, in->called[b], 1, &ops[1 + b], out);
}

/* call, and fusion: a fusion computes exactly what its fused computation computes. */
cxla_status cx_interp_call_op(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out) {
  *out = NULL;
  CX_TRY(need_called(st, in, 1));
  return cx_interp_call(st, in->called[0], in->nops, ops, out);
}
