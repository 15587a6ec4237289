/* async.c — the async chain and copy-start/copy-done on one device. Nothing runs beside the
 * program, so async-start runs its computation at once: its value is ((operands), result,
 * context...) with zeroed context elements, async-update passes it on and async-done takes the
 * result. copy-start is (copy, operand, u32[] 0) and copy-done the copy. */
#include "interp/internal.h"

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

cxla_status cx_interp_async_start(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out) {
  *out = NULL;
  const cx_shape *s = &in->shape;
  if (in->ncalled != 1 || !in->called[0] || s->type != CXLA_TUPLE || s->ntuple < 2)
    return cx_interp_bad(st, in, "needs a computation and a shape ((operands), result, context...)");
  for (int i = 2; i < s->ntuple; i++)
    if (s->tuple[i].type == CXLA_TOKEN) return cx_interp_unsupported(st, in, "a token in the async context");
  cxla_literal *result = NULL;
  CX_TRY(cx_interp_call(st, in->called[0], in->nops, ops, &result));
  cxla_literal **args = cx_calloc((size_t)(in->nops ? in->nops : 1), sizeof *args);
  cxla_literal **el = cx_calloc((size_t)s->ntuple, sizeof *el);
  if (!args || !el) {
    cx_free(args);
    cx_free(el);
    cxla_literal_destroy(result);
    return cx_oom(st->ctx);
  }
  el[1] = result;
  for (int i = 2; i < s->ntuple; i++) el[i] = cx_literal_new(&s->tuple[i]);
  for (int i = 0; i < in->nops; i++) args[i] = cxla_literal_clone(st->ctx, ops[i]);
  cxla_status r = make_tuple(st, in->nops, args, &el[0]);
  if (r != CXLA_OK) {
    for (int i = 1; i < s->ntuple; i++) cxla_literal_destroy(el[i]);
    cx_free(el);
    return r;
  }
  return make_tuple(st, s->ntuple, el, out);
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

cxla_status cx_interp_async_update(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out) {
  CX_TRY(one_operand(st, in, out));
  *out = cxla_literal_clone(st->ctx, ops[0]);
  return *out ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
}

cxla_status cx_interp_async_done(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out) {
  CX_TRY(one_operand(st, in, out));
  return element(st, in, ops[0], 1, out);
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
