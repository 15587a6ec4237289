/* check.c — what the interpreter refuses, known before anything runs. Every backend compiles
 * through this check (the cpu backend runs on the interpreter what it does not compile), so
 * an instruction cxla cannot run is refused when compiling, with its location, never half
 * way through a run. The evaluator keeps its own checks: they guard the API's direct calls. */
#include <stdio.h>
#include "interp/internal.h"

/* The particular cases of an op the interpreter refuses, by op. */
typedef const char *(*refusal)(const cx_instr *in);

static const char *window_reversal(const cx_instr *in) {
  for (int d = 0; d < in->a.window.rank; d++)
    if (in->a.window.d[d].reversal) return "window reversal";
  return NULL;
}

static const char *map_subset(const cx_instr *in) {
  if (!in->a.dims.n || in->nops < 1) return NULL;
  int ok = in->a.dims.n == in->ops[0]->shape.rank;
  for (int d = 0; ok && d < in->a.dims.n; d++) ok = in->a.dims.v[d] == d;
  return ok ? NULL : "map over a subset of dimensions";
}

static const char *tiled_bitcast(const cx_instr *in) {
  if (in->nops == 1 && (in->shape.layout_extra || in->ops[0]->shape.layout_extra) &&
      !(cx_shape_has_default_layout(&in->shape) && cx_shape_has_default_layout(&in->ops[0]->shape)))
    return "bitcast with tiled layouts";
  return NULL;
}

static const refusal k_refusals[CX_OP_COUNT] = {
  [CX_OP_REDUCE_WINDOW] = window_reversal,
  [CX_OP_SELECT_AND_SCATTER] = window_reversal,
  [CX_OP_MAP] = map_subset,
  [CX_OP_BITCAST] = tiled_bitcast,
};

const char *cx_interp_cannot_run(const cx_instr *in, char *buf, size_t n) {
  if (cx_shape_is_dynamic(&in->shape)) return "dynamic dimensions";
  if (cx_op_is_collective(in->op)) return "collectives need the distributed runtime; cxla runs one device";
  if (!cx_interp_runs_op(in->op)) return "cxla does not run this op yet";
  const cx_ew_rule *r = cx_ew_rule_of(in->op);
  if (r && in->nops > 0) { /* the element types an elementwise op is defined on */
    cxla_type t = in->ops[r->type_operand < in->nops ? r->type_operand : 0]->shape.type;
    if (cx_type_is_array(t) && !cx_op_valid_for_type(in->op, t)) {
      snprintf(buf, n, "not defined on %s", cxla_type_name(t));
      return buf;
    }
  }
  return k_refusals[in->op] ? k_refusals[in->op](in) : NULL;
}

/* Marks (aux) the computations the ENTRY reaches: only they run. */
static void reach(cx_comp *c) {
  if (c->aux) return;
  c->aux = c;
  for (int i = 0; i < c->ninstrs; i++)
    for (int j = 0; j < c->instrs[i]->ncalled; j++)
      if (c->instrs[i]->called[j]) reach(c->instrs[i]->called[j]);
}

cxla_status cx_interp_check_module(cx_module *m) {
  if (!m->entry) return CXLA_OK;
  for (int i = 0; i < m->ncomps; i++) m->comps[i]->aux = NULL;
  reach(m->entry);
  const cx_instr *bad = NULL;
  const char *why = NULL;
  char buf[96];
  for (int i = 0; i < m->ncomps && !bad; i++) {
    if (!m->comps[i]->aux) continue;
    for (int k = 0; k < m->comps[i]->ninstrs && !bad; k++)
      if ((why = cx_interp_cannot_run(m->comps[i]->instrs[k], buf, sizeof buf))) bad = m->comps[i]->instrs[k];
  }
  for (int i = 0; i < m->ncomps; i++) m->comps[i]->aux = NULL;
  if (!bad) return CXLA_OK;
  return cx_error_at(m, bad->loc, CXLA_ERR_UNSUPPORTED, "not supported: %s '%s' (%s)", cx_op_name(bad->op),
                     bad->name ? bad->name : "?", why);
}
