/* check.c — what the interpreter refuses, known before anything runs. Every backend compiles
 * through this check (the cpu backend runs on the interpreter what it does not compile), so
 * an instruction cxla cannot run is refused when compiling, with its location, never half
 * way through a run; every such instruction, so that one compile says all a module lacks.
 * The evaluator keeps its own checks: they guard the API's direct calls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
      (cx_shape_moves_bytes(&in->shape) || cx_shape_moves_bytes(&in->ops[0]->shape)) &&
      !cx_bitcast_tiles_stay(&in->ops[0]->shape, &in->shape))
    return "bitcast with tiled layouts";
  return NULL;
}

/* The interpreter's convolution sums real products (XLA's takes complex ones too). */
static const char *complex_convolution(const cx_instr *in) {
  return cx_type_is_complex(in->shape.type) ? "convolution of complex numbers" : NULL;
}

/* XLA's in-place collective-permute: dynamic slices of an output buffer (slice_sizes=). */
static const char *in_place_permute(const cx_instr *in) {
  for (int i = 0; i < in->a.nraw; i++)
    if (!strcmp(in->a.raw[i].key, "slice_sizes")) return "the in-place form of collective-permute (slice_sizes=)";
  return NULL;
}

/* send/recv move data to or from the host or another program, which a run here has not got. */
static const char *host_transfer(const cx_instr *in) {
  (void)in;
  return "a host transfer (send, recv and their -done): cxla runs one program, with no host or peer to exchange with";
}

/* An all-reduce or reduce-scatter whose to_apply takes another element type than its
 * operands: XLA's verifier lets it through (ir/infer_collective.c), and what XLA's runtimes
 * then compute is their own reading of the reducer, not the computation. */
static const char *reducer_type(const cx_instr *in) {
  const cx_comp *c = in->ncalled == 1 ? in->called[0] : NULL;
  if (!c || c->nparams < 1 || !c->params || !c->params[0] || in->nops < 1) return NULL;
  if (c->params[0]->shape.type == in->ops[0]->shape.type) return NULL;
  return "a to_apply of another element type than the operands (XLA's verifier allows it)";
}

static const refusal k_refusals[CX_OP_COUNT] = {
  [CX_OP_ALL_REDUCE] = reducer_type, [CX_OP_ALL_REDUCE_START] = reducer_type, [CX_OP_REDUCE_SCATTER] = reducer_type,
  [CX_OP_SEND] = host_transfer, [CX_OP_SEND_DONE] = host_transfer,
  [CX_OP_RECV] = host_transfer, [CX_OP_RECV_DONE] = host_transfer,
  [CX_OP_COLLECTIVE_PERMUTE] = in_place_permute,
  [CX_OP_COLLECTIVE_PERMUTE_START] = in_place_permute,
  [CX_OP_CONVOLUTION] = complex_convolution,
  [CX_OP_REDUCE_WINDOW] = window_reversal,
  [CX_OP_SELECT_AND_SCATTER] = window_reversal,
  [CX_OP_MAP] = map_subset,
  [CX_OP_BITCAST] = tiled_bitcast,
};

const char *cx_interp_cannot_run(const cx_instr *in, char *buf, size_t n) {
  if (cx_shape_is_dynamic(&in->shape)) return "dynamic dimensions";
  if (in->op == CX_OP_CUSTOM_CALL) return cx_interp_custom_call_refusal(in, buf, n); /* by target */
  if (!cx_interp_runs_op(in->op)) {
    const char *why = k_refusals[in->op] ? k_refusals[in->op](in) : NULL;
    return why ? why : "cxla does not run this op yet";
  }
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

/* One instruction refused, with why (copied: cx_interp_cannot_run may format into a buffer). */
typedef struct {
  const cx_instr *in;
  char why[200];
} refusal_at;

static int by_location(const void *pa, const void *pb) {
  const cx_loc *a = &((const refusal_at *)pa)->in->loc, *b = &((const refusal_at *)pb)->in->loc;
  if (a->line != b->line) return a->line < b->line ? -1 : 1;
  return (a->col > b->col) - (a->col < b->col);
}

/* "custom-call 'x' (target lapack_sgeqrf_ffi: why)": a custom-call says which target. */
static void describe(cx_sb *sb, const refusal_at *r) {
  const cx_instr *in = r->in;
  cx_sb_printf(sb, "%s '%s' (", cx_op_name(in->op), in->name ? in->name : "?");
  if (in->op == CX_OP_CUSTOM_CALL)
    cx_sb_printf(sb, "target %s: ", in->a.custom_call_target ? in->a.custom_call_target : "(none)");
  cx_sb_printf(sb, "%s)", r->why);
}

/* Room the list may take in the message (the error sink holds about 2000 characters). */
#define LIST_CHARS 1400

/* Every refused instruction in file order: one is described on its own; several are counted
 * and listed with their locations ("not supported: 3 instructions: t.hlo:7:3 custom-call 'x'
 * (target ...: why), ..."), as many as fit, then how many more. The error is at the first. */
static cxla_status report(cx_module *m, refusal_at *r, int n) {
  qsort(r, (size_t)n, sizeof *r, by_location);
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_puts(&sb, "not supported: ");
  if (n > 1) cx_sb_printf(&sb, "%d instructions: ", n);
  int shown = 0;
  for (; shown < n && (shown == 0 || sb.len < LIST_CHARS); shown++) {
    if (shown) cx_sb_puts(&sb, ", ");
    if (n > 1 && r[shown].in->loc.line > 0)
      cx_sb_printf(&sb, "%s:%d:%d ", m->filename, r[shown].in->loc.line, r[shown].in->loc.col);
    describe(&sb, &r[shown]);
  }
  if (shown < n) cx_sb_printf(&sb, ", and %d more", n - shown);
  cxla_status s = sb.oom ? cx_oom(m->ctx) : cx_error_at(m, r[0].in->loc, CXLA_ERR_UNSUPPORTED, "%s", sb.buf);
  cx_sb_free(&sb);
  return s;
}

cxla_status cx_interp_check_module(cx_module *m) {
  if (!m->entry) return CXLA_OK;
  for (int i = 0; i < m->ncomps; i++) m->comps[i]->aux = NULL;
  reach(m->entry);
  refusal_at *r = NULL;
  int64_t cap = 0;
  int n = 0, oom = 0;
  for (int i = 0; i < m->ncomps && !oom; i++) {
    if (!m->comps[i]->aux) continue;
    for (int k = 0; k < m->comps[i]->ninstrs && !oom; k++) {
      char buf[sizeof r->why];
      const char *why = cx_interp_cannot_run(m->comps[i]->instrs[k], buf, sizeof buf);
      if (!why) continue;
      if (!cx_vec_reserve((void **)&r, &cap, n + 1, sizeof *r)) {
        oom = 1;
        break;
      }
      r[n].in = m->comps[i]->instrs[k];
      snprintf(r[n].why, sizeof r[n].why, "%s", why);
      n++;
    }
  }
  for (int i = 0; i < m->ncomps; i++) m->comps[i]->aux = NULL;
  cxla_status s = oom ? cx_oom(m->ctx) : n ? report(m, r, n) : CXLA_OK;
  cx_free(r);
  return s;
}
