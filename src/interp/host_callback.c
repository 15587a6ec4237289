/* host_callback.c — the cxla_host_callback custom-call on the interpreter (and, through its
 * fallback, on the cpu backend): the operands go to the process's dispatcher as they are, the
 * results are made with the instruction's declared shapes for it to fill. jax's own callback
 * targets name a callable of the lowering that made them by its position (index=), which only
 * that lowering's process knows: cxla.jit and the PJRT plugin's lowering turn them into
 * cxla_host_callback with an id of the process's registry (docs/python.md), so the rest are
 * refused when compiling. */
#include <stdio.h>
#include <string.h>
#include "core/host_callbacks.h"
#include "interp/index_util.h"
#include "interp/internal.h"
#include "ir/custom_call.h"

/* Arrays and tokens only: what a callback's arguments and results can be. */
static int flat_leaf(const cx_shape *s) { return s->type == CXLA_TOKEN || cx_type_is_array(s->type); }

const char *cx_interp_host_callback_refusal(const cx_instr *in, char *buf, size_t n) {
  if (cx_cc_target_of(in) != CX_CCT_CXLA_HOST_CALLBACK)
    return "a callback by index= into its lowering's host_callbacks (cxla.jit and the PJRT plugin lower it "
           "for cxla)";
  int64_t id;
  if (!cx_cc_config_int(in, "callback_id", &id) || id < 0) return "no callback_id = N in its backend_config";
  for (int i = 0; i < in->nops; i++)
    if (!flat_leaf(&in->ops[i]->shape)) return "a tuple operand (a callback takes arrays and tokens)";
  const cx_shape *y = &in->shape;
  for (int i = 0; y->type == CXLA_TUPLE && i < y->ntuple; i++)
    if (!flat_leaf(&y->tuple[i])) return "a nested tuple result (a callback returns arrays and tokens)";
  return cx_host_callback_known((uint64_t)id, buf, n) ? NULL : buf;
}

static void value_of(cxla_literal *l, cxla_host_value *v) {
  v->type = l->shape.type;
  v->rank = l->shape.type == CXLA_TOKEN ? 0 : l->shape.rank;
  v->dims = l->shape.dims;
  v->data = l->shape.type == CXLA_TOKEN ? NULL : l->data;
  int64_t bytes = l->shape.type == CXLA_TOKEN ? 0 : cx_shape_bytes(&l->shape);
  v->nbytes = (size_t)(bytes > 0 ? bytes : 0);
}

CX_INTERP_EVALUATOR(cx_interp_host_callback) {
  int64_t id = 0;
  cx_cc_config_int(in, "callback_id", &id); /* checked when compiling */
  const cx_shape *y = &in->shape;
  int nres = y->type == CXLA_TUPLE ? y->ntuple : 1, nargs = in->nops;
  cxla_literal **res = cx_calloc((size_t)(nres ? nres : 1), sizeof *res);
  cxla_host_value *vals = cx_calloc((size_t)(nargs + nres ? nargs + nres : 1), sizeof *vals);
  cxla_status s = res && vals ? CXLA_OK : cx_hv_oom(st, in);
  for (int i = 0; s == CXLA_OK && i < nres; i++)
    if (!(res[i] = cx_hv_literal(st, in, y->type == CXLA_TUPLE ? &y->tuple[i] : y))) s = CXLA_ERR_OUT_OF_MEMORY;
  if (s == CXLA_OK) {
    for (int i = 0; i < nargs; i++) value_of(ops[i], &vals[i]);
    for (int i = 0; i < nres; i++) value_of(res[i], &vals[nargs + i]);
    char err[1024];
    if (cx_host_callback_run((uint64_t)id, nargs, vals, nres, vals + nargs, err, sizeof err) != CXLA_OK)
      s = cx_error_at(st->m, in->loc, CXLA_ERR_RUNTIME, "custom-call '%s' (host callback %lld): %s",
                      in->name ? in->name : "?", (long long)id, err);
  }
  cx_free(vals);
  if (s == CXLA_OK) {
    s = cx_hv_finish(st, in, nres, res, out); /* takes res's literals */
    cx_free(res);
    return s;
  }
  for (int i = 0; res && i < nres; i++) cxla_literal_destroy(res[i]);
  cx_free(res);
  return s;
}
