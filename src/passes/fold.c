/* fold.c — constant folding through the reference interpreter. An instruction whose operands
 * are all constants is evaluated once, on its own, and becomes a constant; the interpreter
 * defines the semantics the backends must match, so folding with it cannot change results.
 *
 * Left alone, as XLA's HloConstantFolding does:
 *  - parameters, constants, tuples (a tuple of constants is no simpler);
 *  - broadcast and iota: they only make big literals out of small facts, and fusion computes
 *    them in registers for free;
 *  - ops with side effects or that the backends do not model (the OTHER class);
 *  - control flow (call, while, conditional, fusion): a while may not terminate, calls are
 *    inlined first anyway;
 *  - results of more than CX_FOLD_MAX_ELEMS elements, or tuple-shaped results;
 *  - anything the interpreter refuses (unsupported op, dynamic shapes): the instruction stays
 *    and the error is forgotten. Only running out of memory is an error. */
#include <stdio.h>
#include <string.h>
#include "interp/interp.h"
#include "ir/attrs.h"
#include "ir/clone.h"
#include "passes/pass.h"

#define CX_FOLD_MAX_ELEMS (INT64_C(1) << 20)
/* Multiply-adds the interpreter may spend on one dot / convolution / window op at compile
 * time (about a second at worst). */
#define CX_FOLD_MAX_WORK (INT64_C(1) << 26)

/* Elements each result element reads, for the ops whose cost is not linear in their size
 * (the others read 1). */
static int64_t dot_reads(const cx_instr *in) {
  int64_t k = 1;
  for (int i = 0; i < in->a.dot.lhs_contract.n; i++) {
    int64_t d = in->a.dot.lhs_contract.v[i];
    if (d >= 0 && d < in->ops[0]->shape.rank) k *= in->ops[0]->shape.dims[d];
  }
  return k;
}
static int64_t conv_reads(const cx_instr *in) { return cx_shape_elems(&in->ops[1]->shape); }
static int64_t window_reads(const cx_instr *in) {
  int64_t k = 1;
  for (int i = 0; i < in->a.window.rank; i++) k *= in->a.window.d[i].size;
  return k;
}
static int64_t (*const k_reads[CX_OP_COUNT])(const cx_instr *) = {
  [CX_OP_DOT] = dot_reads, [CX_OP_CONVOLUTION] = conv_reads,
  [CX_OP_REDUCE_WINDOW] = window_reads, [CX_OP_SELECT_AND_SCATTER] = window_reads,
};

/* Ops whose constant result would only be larger than what it is made of, or that are
 * constants already. */
static const unsigned char k_keep[CX_OP_COUNT] = {
  [CX_OP_PARAMETER] = 1, [CX_OP_CONSTANT] = 1, [CX_OP_TUPLE] = 1, [CX_OP_BROADCAST] = 1, [CX_OP_IOTA] = 1,
};

static int foldable(const cx_instr *in) {
  if (k_keep[in->op]) return 0;
  cx_op_class cls = cx_op_class_of(in->op);
  if (cls == CX_CLASS_OTHER || cls == CX_CLASS_CONTROL || in->nops == 0) return 0;
  if (!cx_type_is_array(in->shape.type) || in->shape.dynamic) return 0;
  int64_t n = cx_shape_elems(&in->shape);
  if (n < 0 || n > CX_FOLD_MAX_ELEMS) return 0;
  for (int j = 0; j < in->nops; j++)
    if (in->ops[j]->op != CX_OP_CONSTANT || !in->ops[j]->a.literal) return 0;
  int64_t r = k_reads[in->op] ? k_reads[in->op](in) : 1;
  return r >= 0 && (r == 0 || n <= CX_FOLD_MAX_WORK / r);
}

/* Evaluates `in` on its constant operands: a one-instruction computation in a scratch module
 * whose parameters receive the literals. Called computations (reducers, comparators) are
 * shared with the real module, which the interpreter only reads. *out is NULL when the
 * interpreter declined. */
static cxla_status evaluate(cx_module *scratch, cx_instr *in, cxla_literal **out) {
  cx_instr *params[64], **ps = params;
  cxla_literal *args[64], **as = args;
  cxla_status s = CXLA_ERR_OUT_OF_MEMORY;
  *out = NULL;
  if (in->nops > 64) {
    ps = cx_malloc(sizeof *ps * (size_t)in->nops);
    as = cx_malloc(sizeof *as * (size_t)in->nops);
    if (!ps || !as) goto done;
  }
  cx_comp *c = cx_comp_new(scratch, "fold");
  if (!c) goto done;
  for (int j = 0; j < in->nops; j++) {
    if (!(ps[j] = cx_instr_new(c, CX_OP_PARAMETER, &in->ops[j]->shape, 0, NULL))) goto done;
    ps[j]->a.index = j;
    as[j] = in->ops[j]->a.literal;
  }
  cx_instr *e = cx_instr_clone(c, in, ps);
  if (!e || !cx_comp_index_params(c)) goto done;
  c->root = e;
  /* the context keeps the caller's last message: a declined fold must not overwrite it */
  cxla_context *ctx = scratch->ctx;
  char saved[sizeof ((cx_errsink *)0)->msg];
  snprintf(saved, sizeof saved, "%s", cx_errmsg(ctx));
  cx_interp st;
  cx_interp_init(&st, scratch);
  s = cx_interp_call(&st, c, in->nops, as, out);
  if (s != CXLA_OK && s != CXLA_ERR_OUT_OF_MEMORY) {
    cx_error(ctx, s, "%s", saved);
    s = CXLA_OK;
    *out = NULL;
  }
  if (*out && !cx_shape_equal(&(*out)->shape, &in->shape)) { /* never trust a mismatch */
    cxla_literal_destroy(*out);
    *out = NULL;
  }
done:
  if (ps != params) cx_free(ps);
  if (as != args) cx_free(as);
  if (s == CXLA_ERR_OUT_OF_MEMORY) cx_oom(scratch->ctx);
  return s;
}

/* Turns `in` into a constant in place: its users and position stay valid. */
static cxla_status become_constant(cx_instr *in, cxla_literal *lit) {
  cx_module *m = in->parent->module;
  if (!cx_module_own_literal(m, lit)) return CXLA_ERR_OUT_OF_MEMORY;
  const char *name = cx_module_unique_name(m, "constant");
  if (!name) return CXLA_ERR_OUT_OF_MEMORY;
  in->op = CX_OP_CONSTANT;
  in->nops = 0;
  in->ops = NULL;
  in->ncalled = 0;
  in->called = NULL;
  cx_attrs_init(&in->a);
  in->a.literal = lit;
  in->name = name;
  return CXLA_OK;
}

cxla_status cx_pass_fold_constants(cx_module *m, int *changed) {
  *changed = 0;
  cx_module *scratch = NULL;
  cxla_status s = CXLA_OK;
  for (int i = 0; i < m->ncomps && s == CXLA_OK; i++) {
    cx_comp *c = m->comps[i];
    /* in order, so a folded result feeds the folding of its users in the same sweep */
    for (int k = 0; k < c->ninstrs && s == CXLA_OK; k++) {
      cx_instr *in = c->instrs[k];
      if (!foldable(in)) continue;
      if (!scratch && !(scratch = cx_module_new(m->ctx, "fold"))) return CXLA_ERR_OUT_OF_MEMORY;
      cxla_literal *lit = NULL;
      s = evaluate(scratch, in, &lit);
      if (s == CXLA_OK && lit) {
        s = become_constant(in, lit);
        if (s == CXLA_OK) (*changed)++;
      }
    }
  }
  cx_module_free(scratch);
  return s;
}
