/* fusion.c — producer->consumer fusion (XLA's InstructionFusion with the CPU rules).
 *
 * Consumers are visited from the root towards the parameters (reverse topological order), and
 * each operand (producer) is offered to the consumer; an accepted producer is cloned into the
 * consumer's fused computation and the consumer keeps absorbing until nothing more fits.
 * Producers whose users are all in the fusion are offered first, so a cheap producer is only
 * duplicated when some user outside really needs it.
 *
 *  - loop fusion: elementwise ops, re-indexing ops, scalar constants and kLoop fusions fuse
 *    into elementwise / re-indexing / reduce consumers (a reduce consumer makes a kInput
 *    fusion).
 *  - reduce epilogue: a reduce (or single-output kInput fusion) fuses into a consumer that
 *    reads its result only through elementwise ops at the same index (log(sum(x)), sum(x)/N),
 *    so the epilogue runs when each output element's reduction ends. A reduce never fuses
 *    where its result would be re-read through re-indexing (it would be recomputed).
 *  - window producer: a select-and-scatter whose windows are disjoint (a max-pool's gradient)
 *    fuses into a consumer that reads each of its elements once: the element's one window is
 *    walked where the consumer needs it, so its result is never written (the op table's
 *    DISJOINT). It is EXPENSIVE: never duplicated, never re-read.
 *  - pooling consumer: a reduce-window whose windows are disjoint (a 2x2/2 max-pool) reads
 *    each operand element once, so it absorbs producers as an elementwise op does (a conv's
 *    bias and ReLU), and a kLoop fusion computes it.
 *  - never: dot, convolution, sort, scatter, control flow, custom-call, OTHER ops,
 *    parameters, non-scalar constants (they stay buffers); an EXPENSIVE producer (ops.def) that
 *    has other users; an EXPENSIVE producer read many times per element (broadcast, window:
 *    XLA's ReusesOperandElements); a producer feeding a max-reduce, duplicated (XLA's softmax
 *    numerics guard); concatenates of more than 8 operands; fusions beyond the size limits
 *    (but a full fusion still takes a scalar constant, an iota or a broadcast of a scalar).
 * Dot epilogues (kOutput, fusion_dot.c) are formed first, as XLA's CPU fusion picks kOutput
 * itself, so that a bias or activation is not loop-fused away from its dot. Afterwards every
 * op that still needs a kernel of its own is wrapped in a single-op fusion and scalar
 * constants are fused into their fusions, so the emitter only sees fusions (and library ops).
 * Fusion cannot create cycles here: a producer is only moved when all its users are the
 * consumer, otherwise it is duplicated and stays where it was. */
#include <stdio.h>
#include <string.h>
#include "passes/pass.h"
#include "ir/edit.h"
#include "passes/fusion_util.h"

/* What should_fuse asks about a consumer for each of its operands, kept by grow until the next
 * edit: each answer walks the consumer's whole body (one body analysis tells how every operand
 * is read). */
typedef struct uses_cache {
  fu_param_use *u;
  int cap, valid;     /* u is for the consumer as it is */
  int facts;          /* fusible and big are */
  int fusible, big;   /* consumer_fusible, big_concat */
} uses_cache;

typedef struct decision {
  int ok, dup;
  int explain; /* the reasons are written only for the report: formatting them was a fifth of a compile's fusion time */
  uses_cache *uses; /* NULL: analyse for this question alone */
  cx_fusion_kind kind;
  char why[200];
} decision;

static int no(decision *d, const char *fmt, ...) CX_PRINTF(2, 3);
static int no(decision *d, const char *fmt, ...) {
  d->ok = 0;
  if (!d->explain) return 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->why, sizeof d->why, fmt, ap);
  va_end(ap);
  return 0;
}

/* An update op (the op table's UPDATE: dynamic-update-slice) takes its update's producers, as
 * XLA's in-place DUS fusion: the kernel then computes the update window straight into the
 * operand's memory (codegen/kernel.c), where a scan's step wrote its slice to a temporary and
 * copied it in (compare_jax's scan: 0.87 -> 0.69 ms a run, three kernels a trip now two). The
 * operand written in place is never fused (update_base). */
static int is_update(const cx_instr *x) { return cx_op_fuses_as_update(x->op) && cx_type_is_array(x->shape.type); }

static int overlapping_window(const cx_instr *x) { return x->op == CX_OP_REDUCE_WINDOW && !fu_is_pooling(x); }

/* A variadic reduce (argmax) stays a kernel of its own, wrapped or not: its tuple result does
 * not fit the one-array-per-output shape of fusions. */
static int consumer_fusible(const cx_instr *x) {
  cx_fusion_kind k = fu_kind_of(x);
  if (x->op == CX_OP_FUSION) /* a wrapped reduce-window whose windows overlap stays as wrapped */
    return k != CX_FUSION_NONE && (cx_type_is_array(x->shape.type) || fu_is_multi_output(x)) &&
           !fu_body_any(x, overlapping_window);
  return fu_is_loop_op(x) || fu_is_simple_reduce(x) || fu_is_pooling(x) || is_update(x);
}

/* The operand an update consumer writes in place (its operand 0; in a fusion rooted at one,
 * the fusion operand that feeds it), or -1. */
static int update_base(const cx_instr *x) {
  if (is_update(x)) return 0;
  if (x->op != CX_OP_FUSION || x->ncalled != 1) return -1;
  const cx_instr *r = x->called[0]->root;
  return r && is_update(r) && r->ops[0]->op == CX_OP_PARAMETER ? (int)r->ops[0]->a.index : -1;
}

/* A raw producer feeding a max-reduce: XLA keeps it unduplicated so the max is taken over
 * exactly the values the exp-shift subtracts from (FMA contraction could differ by an ulp). */
static int feeds_max_reduce(const cx_comp *c, const cx_instr *p) {
  /* constants and iotas are exact everywhere (and constants may feed thousands of ops) */
  if (p->op == CX_OP_FUSION || p->op == CX_OP_PARAMETER || p->op == CX_OP_CONSTANT || p->op == CX_OP_IOTA ||
      p->op == CX_OP_BROADCAST)
    return 0;
  cx_instr **users;
  int nu = fu_users(c, p, &users), found = nu < 0; /* OOM: the safe answer */
  for (int i = 0; i < nu && !found; i++) {
    const cx_instr *u = users[i];
    found = fu_is_simple_reduce(u) && u->ops[0] == p && u->ncalled == 1 && u->called[0]->root &&
            u->called[0]->root->op == CX_OP_MAXIMUM;
  }
  cx_free(users);
  return found;
}

/* The name of an EXPENSIVE op in x (x itself or its fused computation), or NULL. */
static const char *expensive_op(const cx_instr *x) {
  if (x->op != CX_OP_FUSION || x->ncalled != 1) return fu_is_expensive(x) ? cx_op_name(x->op) : NULL;
  const cx_comp *b = x->called[0];
  for (int i = 0; i < b->ninstrs; i++)
    if (fu_is_expensive(b->instrs[i])) return cx_op_name(b->instrs[i]->op);
  return NULL;
}

/* A concatenate of many operands, raw or fused: XLA emits it as a tree of selects in the
 * innermost loop, so it stays a plain copy kernel. */
static int is_big_concat(const cx_instr *x) {
  return x->op == CX_OP_CONCATENATE && x->nops > FU_MAX_CONCAT_OPERANDS;
}
static int big_concat(const cx_instr *x) {
  if (x->op != CX_OP_FUSION || x->ncalled != 1) return is_big_concat(x);
  const cx_comp *b = x->called[0];
  for (int i = 0; i < b->ninstrs; i++)
    if (is_big_concat(b->instrs[i])) return 1;
  return 0;
}

/* A value a kernel has for nothing: a scalar constant, an iota (an index), a broadcast of a
 * scalar (one register for the whole loop). A consumer that reached the size limit still takes
 * it (up to twice the limit): left outside, it was a kernel of its own writing an array the
 * consumer read back (a chain of 1100 scaled sines ran 1122 kernels, 35 with them taken in). */
static int costs_nothing(const cx_instr *p) {
  return p->op == CX_OP_IOTA || fu_is_scalar_constant(p) ||
         (p->op == CX_OP_BROADCAST && p->nops == 1 && p->ops[0]->shape.rank == 0);
}

/* Distinct operands of the fusion of p into cons, plus its outputs. */
static int args_after(const cx_instr *cons, const cx_instr *p) {
  int n = fu_nouts(cons);
  for (int pass = 0; pass < 2; pass++) {
    const cx_instr *x = pass ? p : cons;
    for (int j = 0; j < x->nops; j++) {
      const cx_instr *o = x->ops[j];
      if (o == p) continue;
      int seen = 0;
      for (int k = 0; k < j && !seen; k++) seen = x->ops[k] == o;
      for (int k = 0; pass && k < cons->nops && !seen; k++) seen = cons->ops[k] == o;
      n += !seen;
    }
  }
  return n;
}

/* Whether duplicating p costs no more than reading its result: it makes values out of none of
 * the arrays (constants, iotas, broadcasts of them), or out of one array that is a buffer
 * already (a broadcast, a slice or a cast of it: one read either way). An operand that is
 * itself a fusible op would be duplicated along with p, with everything it reads. */
static int free_to_copy(const cx_instr *p) {
  int arrays = 0, computed = 0;
  for (int j = 0; j < p->nops; j++) {
    const cx_instr *o = p->ops[j];
    if (o->op == CX_OP_CONSTANT || o->op == CX_OP_IOTA) continue;
    arrays++;
    computed |= o->op != CX_OP_FUSION && fu_is_loop_op(o) && !(o->op == CX_OP_BROADCAST && o->ops[0]->op == CX_OP_CONSTANT);
  }
  return arrays == 0 || (arrays == 1 && !computed);
}

/* Whether p keeps a buffer of its own whatever cons does: another user never fuses its
 * operands (a dot, a convolution, a custom-call, ...). Then duplicating p into cons computes it
 * twice, and cons re-reads the arrays p reads, where it could read p's result (the gradient of
 * a residual stream, read by two dots and by the layer norm's backward, was computed in four
 * kernels). A result of the computation (a tuple or root user) does not count: multi-output
 * fusion can still compute it in its consumer's kernel. -1 on OOM. */
static int materialized_anyway(cx_comp *c, const cx_instr *p, const cx_instr *cons) {
  cx_instr **us;
  int n = fu_users(c, p, &us), any = 0;
  if (n < 0) return -1;
  for (int i = 0; i < n && !any; i++) any = us[i] != cons && us[i]->op != CX_OP_TUPLE && !consumer_fusible(us[i]);
  cx_free(us);
  return any;
}

static int operand_use(const cx_instr *cons, int i, uses_cache *uc, fu_param_use *u) {
  if (!uc || cons->op != CX_OP_FUSION || cons->ncalled != 1) return fu_analyze_operand(cons, i, u);
  if (!uc->valid) {
    if (uc->cap < cons->nops) {
      fu_param_use *v = cx_realloc(uc->u, sizeof *v * (size_t)cons->nops);
      if (!v) return 0;
      uc->u = v;
      uc->cap = cons->nops;
    }
    if (!fu_analyze_operands(cons, uc->u)) return 0;
    uc->valid = 1;
  }
  *u = uc->u[i];
  return 1;
}

/* Whether operand i of cons should fuse into it, and why not. */
static int should_fuse(cx_comp *c, cx_instr *cons, int i, int allow_dup, decision *d) {
  cx_instr *p = cons->ops[i];
  int explain = d->explain;
  uses_cache *uses = d->uses;
  if (uses && !uses->facts) {
    uses->fusible = consumer_fusible(cons);
    uses->big = big_concat(cons);
    uses->facts = 1;
  }
  memset(d, 0, sizeof *d);
  d->explain = explain;
  d->uses = uses;
  if (!(uses ? uses->fusible : consumer_fusible(cons))) return no(d, "consumer %s is not fusible", cx_op_name(cons->op));
  if (p->op == CX_OP_PARAMETER) return no(d, "parameter");
  if (i == update_base(cons)) return no(d, "the operand an update writes in place");
  cx_fusion_kind pk = fu_kind_of(p), ck = fu_kind_of(cons);
  int scalar_const = fu_is_scalar_constant(p);
  if (p->op == CX_OP_CONSTANT && !scalar_const) return no(d, "non-scalar constant stays a buffer");
  if (scalar_const && cons->op != CX_OP_FUSION) return no(d, "constant waits for a fusion consumer");
  if (p->op == CX_OP_FUSION) {
    if (pk != CX_FUSION_LOOP && pk != CX_FUSION_INPUT)
      return no(d, "producer is a %s fusion", pk == CX_FUSION_NONE ? "foreign" : cx_fusion_kind_names[pk]);
    if (fu_is_multi_output(p)) return no(d, "producer is a multi-output fusion");
  } else if (!scalar_const && !fu_is_loop_op(p) && !fu_is_simple_reduce(p) && !fu_is_window_producer(p)) {
    return no(d, "producer %s is not fusible", cx_op_name(p->op));
  }
  int reduce_like = fu_is_simple_reduce(p) || pk == CX_FUSION_INPUT;
  if (ck == CX_FUSION_OUTPUT && reduce_like) return no(d, "a reduce does not fuse into a dot epilogue");
  if (big_concat(p) || (uses ? uses->big : big_concat(cons)))
    return no(d, "concatenate with more than %d operands stays a copy", FU_MAX_CONCAT_OPERANDS);
  const char *expensive = expensive_op(p);
  if (!fu_only_user_is(c, p, cons)) {
    int nu = fu_nusers(c, p);
    if (expensive && !reduce_like) return no(d, "expensive producer (%s) with %d users is not duplicated", expensive, nu);
    if (reduce_like || p->op == CX_OP_FUSION) return no(d, "%s with %d users is not duplicated", reduce_like ? "reduce" : "fusion", nu);
    if (feeds_max_reduce(c, p)) return no(d, "producer of a max-reduce is not duplicated (softmax numerics)");
    if (!allow_dup) return no(d, "deferred: fusions that need no duplication go first");
    if (!free_to_copy(p)) {
      int kept = materialized_anyway(c, p, cons);
      if (kept < 0) return no(d, "out of memory");
      if (kept) return no(d, "producer keeps its buffer for another user: read, not recomputed");
    }
    d->dup = 1;
  }
  fu_param_use u;
  if (!operand_use(cons, i, uses, &u)) return no(d, "out of memory");
  if (expensive && !reduce_like && u.reused) return no(d, "expensive producer (%s) would be re-read by the consumer", expensive);
  if (u.dot_operand) return no(d, "dot operands are not fused");
  if (reduce_like) {
    if (u.to_reduce) return no(d, "reduce result feeds another reduction (a loop of its own)");
    if (!u.elementwise) return no(d, "reduce result is re-indexed by the consumer (only elementwise epilogues fuse)");
    if (!fu_reduces_compatible(p, cons)) return no(d, "reduces over different shapes or dimensions");
  }
  if ((long)u.emissions * fu_max_emissions(p) > FU_MAX_EMISSIONS) return no(d, "code duplication too high");
  int size = fu_size(cons) + fu_size(p);
  if (size > FU_MAX_INSTRS && !(costs_nothing(p) && size <= 2 * FU_MAX_INSTRS))
    return no(d, "fusion would exceed %d instructions", FU_MAX_INSTRS);
  if (fu_count_reduces(cons) + fu_count_reduces(p) > FU_MAX_REDUCES) return no(d, "more than %d reduces", FU_MAX_REDUCES);
  if (args_after(cons, p) > FU_MAX_ARGS) return no(d, "more than %d operands and outputs", FU_MAX_ARGS);
  d->kind = ck == CX_FUSION_OUTPUT ? CX_FUSION_OUTPUT
          : (reduce_like || fu_count_reduces(cons) || fu_is_simple_reduce(cons)) ? CX_FUSION_INPUT : CX_FUSION_LOOP;
  d->ok = 1;
  return 1;
}

static cxla_status fuse_into(cx_comp *c, cx_instr *cons, int i, const decision *d, cx_instr **out) {
  cx_instr *parts[2] = {cons->ops[i], cons};
  int keep[2] = {d->dup, 0};
  fu_spec s = {.parts = parts, .nparts = 2, .keep = keep, .outs = &cons, .nouts = 1, .kind = d->kind};
  return fu_fuse(c, &s, 1, out);
}

/* Lets consumer x absorb producers until none fits; non-duplicating fusions go first. The
 * first absorption builds a new fusion; its fused computation is x's alone, so the rest edit it
 * in place. */
static cxla_status grow(cx_comp *c, cx_instr *x, int *changed) {
  uses_cache uses = {0};
  cxla_status st = CXLA_OK;
  for (int own = 0; st == CXLA_OK; own = 1) {
    decision d = {.explain = 0, .uses = &uses};
    uses.valid = uses.facts = 0;
    int found = -1;
    for (int pass = 0; pass < 2 && found < 0; pass++)
      for (int i = 0; i < x->nops && found < 0; i++)
        if (should_fuse(c, x, i, pass, &d)) found = i;
    if (found < 0) break;
    int done = 0;
    if (own) st = fu_absorb(c, x, found, d.dup, d.kind, &done);
    if (st == CXLA_OK && !done) st = fuse_into(c, x, found, &d, &x);
    *changed = 1;
  }
  cx_free(uses.u);
  return st;
}

static cxla_status fuse_comp(cx_comp *c, int *changed) {
  /* Dot epilogues first (as XLA's CPU fusion chooses kOutput itself): otherwise the bias and
   * activation would be loop-fused away from the dot, whatever order the pipeline runs in. */
  CX_TRY(fu_dot_epilogues(c, changed));
  int n;
  cx_instr **snap = cx_comp_snapshot(c, &n);
  if (!snap) return cx_oom(c->module->ctx);
  cxla_status st = CXLA_OK;
  for (int i = n - 1; i >= 0 && st == CXLA_OK; i--)
    if (snap[i]->parent == c) st = grow(c, snap[i], changed);
  cx_free(snap);
  if (st == CXLA_OK) st = fu_wrap_all(c, changed);
  /* Scalar constants become immediates inside their fusions. */
  for (int i = 0; i < c->ninstrs && st == CXLA_OK; i++) {
    cx_instr *f = c->instrs[i]; /* the new fusion takes the old one's slot */
    if (f->parent == c && fu_kind_of(f) != CX_FUSION_NONE) st = fu_absorb_constants(c, &f, changed);
  }
  return st;
}

cxla_status cx_pass_fusion(cx_module *m, int *changed) { return fu_each_control_comp(m, changed, fuse_comp); }

/* ---- explanations ---- */

static int is_kernel(const cx_instr *x) {
  return x->op == CX_OP_FUSION || fu_needs_kernel_wrap(x) || cx_op_class_of(x->op) == CX_CLASS_LIBRARY;
}

cxla_status cx_fusion_explain(cx_module *m, cx_sb *sb) {
  cx_comp **cs;
  int n;
  CX_TRY(fu_control_comps(m, &cs, &n));
  for (int k = 0; k < n; k++) {
    cx_comp *c = cs[k];
    cx_sb_printf(sb, "// %s\n", c->name);
    for (int i = 0; i < c->ninstrs; i++) {
      cx_instr *x = c->instrs[i];
      if (!is_kernel(x)) continue;
      for (int j = 0; j < x->nops; j++) {
        cx_instr *p = x->ops[j];
        int dupop = 0;
        for (int q = 0; q < j; q++) dupop |= x->ops[q] == p;
        if (dupop || p->op == CX_OP_PARAMETER || p->op == CX_OP_CONSTANT) continue;
        if (p->op == CX_OP_GET_TUPLE_ELEMENT && p->ops[0]->op == CX_OP_FUSION) {
          cx_sb_printf(sb, "%s <- %s: output %lld of multi-output fusion %s\n", x->name, p->name,
                       (long long)p->a.index, p->ops[0]->name);
          continue;
        }
        decision d = {.explain = 1};
        if (should_fuse(c, x, j, 1, &d)) snprintf(d.why, sizeof d.why, "fusible, but not fused");
        cx_sb_printf(sb, "%s <- %s: %s\n", x->name, p->name, d.why);
      }
    }
  }
  cx_free(cs);
  return sb->oom ? cx_oom(m->ctx) : CXLA_OK;
}
