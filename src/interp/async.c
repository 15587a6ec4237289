/* async.c — the async chain and copy-start/copy-done on one device. Nothing runs beside the
 * program, so the chain runs its computation at its first op that has bound all parameters
 * and the whole result (usually async-start): its value is ((operands), result, context...)
 * with zeroed context elements, async-update binds more operands or passes it on and
 * async-done takes the result (or runs the computation, if no op before it could).
 * copy-start is (copy, operand, u32[] 0) and copy-done the copy. */
#include "interp/internal.h"
#include "ir/verify.h"

/* The tuple of the n elements in el (taken; el is freed), or an error if one is missing. */
static cxla_status make_tuple(cx_interp *st, int n, cxla_literal **el, cxla_literal **out) {
  for (int i = 0; i < n; i++)
    if (!el[i]) {
      for (int k = 0; k < n; k++) cxla_literal_destroy(el[k]);
      cx_free(el);
      return cx_oom(st->ctx);
    }
  *out = cxla_literal_tuple(st->ctx, n, el); /* owns the elements even when it fails */
  cx_free(el);
  return *out ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
}

/* Element k of a tuple operand, copied. */
static cxla_status element(cx_interp *st, cx_instr *in, const cxla_literal *t, int k, cxla_literal **out) {
  if (t->shape.type != CXLA_TUPLE || t->nelems <= k) return cx_interp_bad(st, in, "operand is not the tuple it needs");
  *out = cxla_literal_clone(st->ctx, t->elems[k]);
  return *out ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
}

static cxla_status one_operand(cx_interp *st, cx_instr *in, cxla_literal **out) {
  *out = NULL;
  return in->nops != 1 ? cx_interp_bad(st, in, "takes one operand") : CXLA_OK;
}

/* The value of an async-start or async-update: ((bound...), result, context...). `bound` are
 * the n bound parameters (borrowed); prev is the chain's previous value (NULL for
 * async-start). The computation runs here if this op is the chain's first fully bound one
 * (XLA's evaluator: HandleAsyncStart, HandleAsyncUpdate); other elements that keep their shape
 * are the previous value's, the rest zeros, as in XLA's evaluator. */
static cxla_status chain_value(cx_interp *st, cx_instr *in, int n, cxla_literal *const *bound, const cxla_literal *prev,
                               int prev_fully_bound, cxla_literal **out) {
  *out = NULL;
  const cx_shape *s = &in->shape;
  if (in->ncalled != 1 || !in->called[0] || s->type != CXLA_TUPLE || s->ntuple < 2)
    return cx_interp_bad(st, in, "needs a computation and a shape ((operands), result, context...)");
  if (prev && (prev->shape.type != CXLA_TUPLE || prev->nelems < 2)) return cx_interp_bad(st, in, "operand is not an async value");
  for (int i = 2; i < s->ntuple; i++)
    if (s->tuple[i].type == CXLA_TOKEN) return cx_interp_unsupported(st, in, "a token in the async context");
  cxla_literal **el = cx_calloc((size_t)s->ntuple, sizeof *el);
  cxla_literal **args = cx_calloc((size_t)(n ? n : 1), sizeof *args);
  if (!el || !args) {
    cx_free(el);
    cx_free(args);
    return cx_oom(st->ctx);
  }
  cxla_status r = CXLA_OK;
  if (cx_async_fully_bound(in) && !prev_fully_bound) r = cx_interp_call(st, in->called[0], n, bound, &el[1]);
  for (int i = 1; i < s->ntuple && r == CXLA_OK; i++) {
    if (el[i]) continue;
    if (prev && i < prev->nelems && cx_shape_equal(&prev->elems[i]->shape, &s->tuple[i]))
      el[i] = cxla_literal_clone(st->ctx, prev->elems[i]);
    else el[i] = cx_literal_new(&s->tuple[i]);
    if (!el[i]) r = cx_oom(st->ctx);
  }
  if (r != CXLA_OK) {
    for (int i = 0; i < s->ntuple; i++) cxla_literal_destroy(el[i]);
    cx_free(el);
    cx_free(args);
    return r;
  }
  for (int i = 0; i < n; i++) args[i] = cxla_literal_clone(st->ctx, bound[i]);
  r = make_tuple(st, n, args, &el[0]);
  if (r != CXLA_OK) {
    for (int i = 1; i < s->ntuple; i++) cxla_literal_destroy(el[i]);
    cx_free(el);
    return r;
  }
  return make_tuple(st, s->ntuple, el, out);
}

cxla_status cx_interp_async_start(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out) {
  return chain_value(st, in, in->nops, ops, NULL, 0, out);
}

/* The parameters bound before an async-update (element {0} of its operand) and its new
 * operands, in order. */
cxla_status cx_interp_async_update(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out) {
  *out = NULL;
  if (in->nops < 1) return cx_interp_bad(st, in, "takes the async value it follows");
  const cxla_literal *prev = ops[0];
  if (prev->shape.type != CXLA_TUPLE || prev->nelems < 2 || prev->elems[0]->shape.type != CXLA_TUPLE)
    return cx_interp_bad(st, in, "operand is not an async value");
  const cxla_literal *b = prev->elems[0];
  int n = b->nelems + in->nops - 1;
  cxla_literal **bound = cx_calloc((size_t)(n ? n : 1), sizeof *bound);
  if (!bound) return cx_oom(st->ctx);
  for (int i = 0; i < b->nelems; i++) bound[i] = b->elems[i];
  for (int i = 1; i < in->nops; i++) bound[b->nelems + i - 1] = ops[i];
  cxla_status r = chain_value(st, in, n, bound, prev, cx_async_fully_bound(in->ops[0]), out);
  cx_free(bound);
  return r;
}

/* The result, or (when the chain's ops bound all parameters but not the whole result, XLA's
 * IsFirstFullyBound of async-done) the computation run on the bound parameters here. */
cxla_status cx_interp_async_done(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out) {
  CX_TRY(one_operand(st, in, out));
  if (cx_async_fully_bound(in->ops[0])) return element(st, in, ops[0], 1, out);
  const cxla_literal *t = ops[0];
  if (t->shape.type != CXLA_TUPLE || t->nelems < 1 || t->elems[0]->shape.type != CXLA_TUPLE || in->ncalled != 1)
    return cx_interp_bad(st, in, "operand is not an async value");
  return cx_interp_call(st, in->called[0], t->elems[0]->nelems, t->elems[0]->elems, out);
}

cxla_status cx_interp_copy_start(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out) {
  CX_TRY(one_operand(st, in, out));
  cxla_literal **el = cx_calloc(3, sizeof *el);
  if (!el) return cx_oom(st->ctx);
  cx_shape u32 = cx_shape_scalar(CXLA_U32);
  el[0] = cxla_literal_clone(st->ctx, ops[0]);
  el[1] = cxla_literal_clone(st->ctx, ops[0]);
  el[2] = cx_literal_new(&u32);
  return make_tuple(st, 3, el, out);
}

cxla_status cx_interp_copy_done(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out) {
  CX_TRY(one_operand(st, in, out));
  return element(st, in, ops[0], 0, out);
}
