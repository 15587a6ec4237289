/* interp.c — the interpreter's driver: runs a computation's instructions in order, keeps each
 * value only until its last user has run, and hands every instruction to its op's hook
 * (eval_table.c); the hooks for parameters, constants, tuples and identities are here, since
 * they borrow or move the frame's values.
 *
 * Thread safety: compiled executables run from many threads at once, so evaluation never
 * writes to the IR (no instr->aux or comp->aux). What a call needs beyond the IR — the
 * position of each operand, liveness, last uses — is computed per call into memory the call
 * owns; it is linear in the computation's size, small next to the literals themselves. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "core/context.h"
#include "interp/internal.h"
#include "ir/custom_call.h"

void cx_interp_init(cx_interp *st, cx_module *m) {
  st->m = m;
  st->ctx = m->ctx;
  st->max_loop_iterations = m->ctx ? m->ctx->flags.max_loop_iterations : 0;
  st->depth = 0;
  st->rng_counts = NULL;
  st->nrng_counts = 0;
  st->rep = NULL;
}

cxla_status cx_interp_unsupported(cx_interp *st, cx_instr *in, const char *why) {
  return cx_error_at(st->m, in->loc, CXLA_ERR_UNSUPPORTED, "not supported: %s: %s", cx_op_name(in->op), why);
}

cxla_status cx_interp_bad(cx_interp *st, cx_instr *in, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return cx_error_at(st->m, in->loc, CXLA_ERR_VERIFY, "%s: %s", cx_op_name(in->op), msg);
}

cxla_status cx_interp_new_array(cx_interp *st, cx_instr *in, const cx_shape *s, cxla_literal **out) {
  cx_shape a = cx_shape_array(s->type, s->rank, s->dims);
  *out = NULL;
  if (!cx_type_is_array(s->type) || s->rank < 0 || s->rank > CXLA_MAX_RANK || cx_shape_bytes(&a) < 0)
    return cx_interp_bad(st, in, "result shape is not a valid array shape");
  if (!(*out = cx_literal_new(&a))) return cx_oom(st->ctx);
  return CXLA_OK;
}

/* ---- per-call frame ---- */

typedef struct cx_frame {
  int n, root;
  int nargs;
  cxla_literal *const *args; /* the call's arguments (borrowed) */
  cxla_literal **vals;  /* value of instruction i (NULL before it runs / after its last use) */
  uint8_t *owned;       /* vals[i] is ours to free (parameters and constants are borrowed) */
  int *last;            /* position of the last instruction that reads value i; -1: none */
  int *opos_start;      /* operand k of instruction i sits at opos[opos_start[i] + k] */
  int *opos;
} frame;

/* Positions by pointer: an open-addressing table built once per call. */
/* Instructions with effects outside the program: they run even when nothing reads them. */
static int always_runs(const cx_instr *in) {
  if (in->op == CX_OP_INFEED || in->op == CX_OP_OUTFEED) return 1;
  int t = in->op == CX_OP_CUSTOM_CALL ? cx_cc_target_of(in) : -1;
  return t >= 0 && cx_cc_info_of((cx_cc_target)t)->kind == CX_CC_HOST_CALLBACK;
}

static int pos_lookup(cx_instr **keys, int *vals, size_t mask, const cx_instr *x) {
  size_t h = (size_t)(((uintptr_t)x >> 4) * 0x9E3779B97F4A7C15ull) & mask;
  while (keys[h]) {
    if (keys[h] == x) return vals[h];
    h = (h + 1) & mask;
  }
  return -1;
}

static cxla_status frame_init(cx_interp *st, cx_comp *c, frame *f) {
  int n = c->ninstrs;
  int64_t nops = 0;
  for (int i = 0; i < n; i++) nops += c->instrs[i]->nops;
  size_t cap = 16;
  while (cap < 2 * (size_t)n) cap *= 2;
  memset(f, 0, sizeof *f);
  f->n = n;
  f->vals = cx_calloc((size_t)n + 1, sizeof *f->vals);
  f->owned = cx_calloc((size_t)n + 1, 1);
  f->last = cx_malloc(((size_t)n + 1) * sizeof *f->last);
  f->opos_start = cx_malloc(((size_t)n + 1) * sizeof *f->opos_start);
  f->opos = cx_malloc(((size_t)nops + 1) * sizeof *f->opos);
  cx_instr **keys = cx_calloc(cap, sizeof *keys);
  int *kv = cx_malloc(cap * sizeof *kv);
  cxla_status s = CXLA_OK;
  if (!f->vals || !f->owned || !f->last || !f->opos_start || !f->opos || !keys || !kv) {
    s = cx_oom(st->ctx);
    goto done;
  }
  for (int i = 0; i < n; i++) {
    size_t h = (size_t)(((uintptr_t)c->instrs[i] >> 4) * 0x9E3779B97F4A7C15ull) & (cap - 1);
    while (keys[h]) h = (h + 1) & (cap - 1);
    keys[h] = c->instrs[i];
    kv[h] = i;
  }
  int64_t k = 0;
  for (int i = 0; i < n; i++) {
    cx_instr *in = c->instrs[i];
    f->opos_start[i] = (int)k;
    f->last[i] = -1;
    for (int j = 0; j < in->nops; j++) {
      int p = pos_lookup(keys, kv, cap - 1, in->ops[j]);
      if (p < 0 || p >= i) {
        s = cx_error_at(st->m, in->loc, CXLA_ERR_INTERNAL,
                        "%s: operand %d is not an earlier instruction of computation %s",
                        cx_op_name(in->op), j, c->name);
        goto done;
      }
      f->opos[k++] = p;
    }
  }
  /* Liveness: only what the root needs runs (like XLA, dead code is never evaluated). In
   * topological order one backward sweep finds it; `last` doubles as the live mark. */
  int root = pos_lookup(keys, kv, cap - 1, c->root);
  if (root < 0) {
    s = cx_error(st->ctx, CXLA_ERR_INTERNAL, "computation %s: root is not one of its instructions", c->name);
    goto done;
  }
  f->root = root;
  f->last[root] = n; /* the root outlives the loop: it becomes the result */
  /* except host transfers and host callbacks: an infeed, outfeed or callback (jax.debug.print
   * returns nothing anyone reads) runs whether or not its value is used, as XLA never removes
   * them (the compiled backends run them too) */
  for (int i = 0; i < n; i++)
    if (i != root && always_runs(c->instrs[i])) f->last[i] = i;
  for (int i = n - 1; i >= 0; i--) {
    if (f->last[i] < 0) continue;
    for (int j = 0; j < c->instrs[i]->nops; j++) {
      int p = f->opos[f->opos_start[i] + j];
      if (f->last[p] < i) f->last[p] = i;
    }
  }
done:
  cx_free(keys);
  cx_free(kv);
  return s;
}

static void frame_free(frame *f) {
  if (f->vals && f->owned)
    for (int i = 0; i < f->n; i++)
      if (f->owned[i]) cxla_literal_destroy(f->vals[i]);
  cx_free(f->vals);
  cx_free(f->owned);
  cx_free(f->last);
  cx_free(f->opos_start);
  cx_free(f->opos);
}

/* An owned copy of operand j of instruction i: moved out of the frame when this is its last
 * use and it appears only once among i's operands, else cloned. */
static cxla_literal *take_operand(cx_interp *st, frame *f, cx_instr *in, int i, int j) {
  const int *op = f->opos + f->opos_start[i];
  int p = op[j], once = 1;
  for (int k = 0; k < in->nops; k++)
    if (k != j && op[k] == p) once = 0;
  if (f->owned[p] && f->last[p] == i && once) {
    cxla_literal *l = f->vals[p];
    f->vals[p] = NULL;
    f->owned[p] = 0;
    return l;
  }
  return cxla_literal_clone(st->ctx, f->vals[p]);
}

/* Makes r instruction i's value once it is checked against the instruction's shape. */
static cxla_status set_value(cx_interp *st, frame *f, cx_instr *in, int i, cxla_status s, cxla_literal *r) {
  if (s == CXLA_OK && !r)
    s = cx_error_at(st->m, in->loc, CXLA_ERR_INTERNAL, "%s produced no value", cx_op_name(in->op));
  if (s == CXLA_OK && !cx_shape_equal(&r->shape, &in->shape)) {
    char a[256], b[256];
    s = cx_error_at(st->m, in->loc, CXLA_ERR_INTERNAL, "%s produced %s, expected %s",
                    cx_op_name(in->op), cx_shape_str(&r->shape, a, sizeof a),
                    cx_shape_str(&in->shape, b, sizeof b));
  }
  if (s != CXLA_OK) {
    cxla_literal_destroy(r);
    return s;
  }
  f->vals[i] = r;
  f->owned[i] = 1;
  return CXLA_OK;
}

cxla_status cx_frame_parameter(cx_interp *st, frame *f, cx_instr *in, int i) {
  if (in->a.index < 0 || in->a.index >= f->nargs || !f->args[in->a.index])
    return cx_interp_bad(st, in, "parameter %lld without an argument", (long long)in->a.index);
  f->vals[i] = f->args[in->a.index];
  return CXLA_OK;
}

cxla_status cx_frame_constant(cx_interp *st, frame *f, cx_instr *in, int i) {
  if (!in->a.literal) return cx_interp_bad(st, in, "no literal");
  f->vals[i] = in->a.literal;
  return CXLA_OK;
}

/* copy and opt-barrier: the operand itself, moved when this is its last use. */
cxla_status cx_frame_identity(cx_interp *st, frame *f, cx_instr *in, int i) {
  if (in->nops != 1) return cx_interp_bad(st, in, "takes one operand");
  cxla_literal *r = take_operand(st, f, in, i, 0);
  return set_value(st, f, in, i, r ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY, r);
}

cxla_status cx_frame_tuple(cx_interp *st, frame *f, cx_instr *in, int i) {
  int n = in->nops;
  cxla_literal **el = cx_calloc((size_t)(n ? n : 1), sizeof *el);
  if (!el) return cx_oom(st->ctx);
  for (int j = 0; j < n; j++) {
    if (!(el[j] = take_operand(st, f, in, i, j))) {
      for (int k = 0; k < j; k++) cxla_literal_destroy(el[k]);
      cx_free(el);
      return CXLA_ERR_OUT_OF_MEMORY;
    }
  }
  cxla_literal *r = cxla_literal_tuple(st->ctx, n, el); /* owns el's literals even when it fails */
  cx_free(el);
  return set_value(st, f, in, i, r ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY, r);
}

cxla_status cx_frame_get_tuple_element(cx_interp *st, frame *f, cx_instr *in, int i) {
  int p = f->opos[f->opos_start[i]];
  cxla_literal *t = f->vals[p];
  int64_t k = in->a.index;
  if (t->shape.type != CXLA_TUPLE || k < 0 || k >= t->nelems)
    return cx_interp_bad(st, in, "index %lld out of range for %s", (long long)k,
                         t->shape.type == CXLA_TUPLE ? "the tuple" : "a non-tuple");
  cxla_literal *r;
  if (f->owned[p] && f->last[p] == i) { /* the tuple dies here: move the element out */
    r = t->elems[k];
    t->elems[k] = NULL;
  } else {
    r = cxla_literal_clone(st->ctx, t->elems[k]);
  }
  return set_value(st, f, in, i, r ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY, r);
}

/* Runs instruction i, leaving its value in the frame. */
static cxla_status eval_instr(cx_interp *st, frame *f, cx_instr *in, int i) {
  if (cx_shape_is_dynamic(&in->shape)) return cx_interp_unsupported(st, in, "dynamic dimensions");
  /* The one gate: an op cx_interp_runs_op (and so docs/ops.md) calls unsupported never runs */
  if (!cx_interp_runs_op(in->op)) return cx_interp_unsupported(st, in, "the interpreter does not run this op");
  cx_interp_hook h = cx_interp_hook_of(in->op);
  if (h.frame) return h.frame(st, f, in, i);
  cxla_literal *r = NULL, *small[8], **ops = small;
  if (in->nops > (int)CX_ARRAY_LEN(small) && !(ops = cx_malloc(sizeof *ops * (size_t)in->nops)))
    return cx_oom(st->ctx);
  for (int j = 0; j < in->nops; j++) ops[j] = f->vals[f->opos[f->opos_start[i] + j]];
  cxla_status s = h.eval(st, in, ops, &r);
  if (ops != small) cx_free(ops);
  return set_value(st, f, in, i, s, r);
}

cxla_status cx_interp_call(cx_interp *st, cx_comp *c, int nargs, cxla_literal *const *args,
                           cxla_literal **out) {
  *out = NULL;
  if (!c || !c->root) return cx_error(st->ctx, CXLA_ERR_INTERNAL, "call of a computation without a root");
  if (st->depth >= CX_INTERP_MAX_DEPTH)
    return cx_error(st->ctx, CXLA_ERR_RUNTIME, "computation %s: calls nested deeper than %d",
                    c->name, CX_INTERP_MAX_DEPTH);
  frame f;
  cxla_status s = frame_init(st, c, &f);
  f.nargs = nargs;
  f.args = args;
  if (s != CXLA_OK) {
    frame_free(&f);
    return s;
  }
  st->depth++;
  for (int i = 0; i < f.n && s == CXLA_OK; i++) {
    if (f.last[i] < 0) continue; /* dead */
    cx_instr *in = c->instrs[i];
    s = eval_instr(st, &f, in, i);
    /* free the operands whose last reader was this instruction */
    for (int j = 0; j < in->nops; j++) {
      int p = f.opos[f.opos_start[i] + j];
      if (f.last[p] == i && f.owned[p]) {
        cxla_literal_destroy(f.vals[p]);
        f.vals[p] = NULL;
        f.owned[p] = 0;
      }
    }
  }
  st->depth--;
  if (s == CXLA_OK) {
    int root = f.root;
    if (f.owned[root]) {
      *out = f.vals[root];
      f.owned[root] = 0;
      f.vals[root] = NULL;
    } else if (!(*out = cxla_literal_clone(st->ctx, f.vals[root]))) {
      s = CXLA_ERR_OUT_OF_MEMORY;
    }
  }
  frame_free(&f);
  return s;
}

cxla_status cx_interp_run(cx_module *m, int nargs, cxla_literal *const *args, cxla_literal **out) {
  return cx_interp_run_on(m, NULL, nargs, args, out);
}

cxla_status cx_interp_run_on(cx_module *m, const struct cx_replica *rep, int nargs, cxla_literal *const *args,
                             cxla_literal **out) {
  *out = NULL;
  cx_comp *c = m->entry;
  if (!c) return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "module %s has no ENTRY computation", m->name);
  int np = 0;
  for (int i = 0; i < c->ninstrs; i++) np += c->instrs[i]->op == CX_OP_PARAMETER;
  if (nargs != np || (nargs && !args))
    return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "%s takes %d argument%s, %d given", c->name, np,
                    np == 1 ? "" : "s", nargs);
  for (int i = 0; i < c->ninstrs; i++) {
    cx_instr *p = c->instrs[i];
    if (p->op != CX_OP_PARAMETER) continue;
    int64_t k = p->a.index;
    char want[256], got[256];
    if (k < 0 || k >= nargs)
      return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "parameter number %lld out of range", (long long)k);
    if (!args[k])
      return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "parameter %lld: no argument given", (long long)k);
    if (!cx_shape_equal(&p->shape, &args[k]->shape))
      return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "parameter %lld: expected %s, given %s",
                      (long long)k, cx_shape_str(&p->shape, want, sizeof want),
                      cx_shape_str(&args[k]->shape, got, sizeof got));
  }
  cx_interp st;
  cx_interp_init(&st, m);
  st.rep = rep;
  cxla_status s = cx_interp_call(&st, c, nargs, args, out);
  cx_free(st.rng_counts);
  return s;
}
