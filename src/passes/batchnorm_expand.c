/* batchnorm_expand.c — batch-norm-training, -inference and -grad become the reduces, broadcasts
 * and elementwise ops they stand for (XLA's BatchNormExpander), which fusion then turns into a
 * few kernels; the interpreter evaluates the ops themselves (interp/batch_norm.c), so each
 * checks the other. Computed in the operand's type (per-feature operands of another float
 * type are converted to it); the variance in two passes, mean((x - mean)^2), which cannot go
 * negative the way XLA's mean(x^2) - mean(x)^2 can. */
#include <string.h>
#include "ir/edit.h"
#include "passes/pass.h"

/* Room for a reducer per element type (an operand's type indexes it). */
#define CX_BN_TYPES 32

/* Where new instructions go, and what they are built from. */
typedef struct bn {
  cx_instr *at;       /* the batch-norm instruction */
  cx_module *m;
  cxla_type t;        /* the operand's element type */
  const cx_shape *xs; /* the operand's shape */
  int64_t fi, f, n;   /* feature_index, features, elements per feature */
  cx_comp *add;       /* the sum reducer */
  int oom;
} bn;

static cx_instr *add(bn *b, cx_op op, const cx_shape *s, int nops, cx_instr *const *ops) {
  cx_instr *in = b->oom ? NULL : cx_instr_add(b->at->parent, op, s, nops, ops, b->at->loc);
  if (!in) b->oom = 1;
  return in;
}

/* x op y, of x's shape; unary when y is NULL. */
static cx_instr *ew(bn *b, cx_op op, cx_instr *x, cx_instr *y) {
  if (!x || (op != CX_OP_RSQRT && !y)) return b->oom = 1, NULL;
  cx_instr *ops[2] = {x, y};
  return add(b, op, &x->shape, y ? 2 : 1, ops);
}

static cx_instr *constant(bn *b, double v) {
  cx_shape s = cx_shape_scalar(b->t);
  cxla_literal *lit = b->oom ? NULL : cx_literal_new(&s);
  if (!lit || !cx_module_own_literal(b->m, lit)) return b->oom = 1, NULL;
  cxla_literal_set_f64(lit, 0, v);
  cx_instr *c = add(b, CX_OP_CONSTANT, &s, 0, NULL);
  if (c) c->a.literal = lit;
  return c;
}

/* A per-feature [F] value in the operand's type. */
static cx_instr *feature(bn *b, cx_instr *x) {
  if (!x || x->shape.type == b->t) return x;
  cx_shape s = cx_shape_array(b->t, 1, &b->f);
  return add(b, CX_OP_CONVERT, &s, 1, &x);
}

/* A scalar or [F] value broadcast to [F] (scalar) or to the operand's shape. */
static cx_instr *bcast(bn *b, cx_instr *x, int to_operand) {
  if (!x) return b->oom = 1, NULL;
  cx_shape s = to_operand ? cx_shape_array(b->t, b->xs->rank, b->xs->dims) : cx_shape_array(b->t, 1, &b->f);
  cx_instr *r = add(b, CX_OP_BROADCAST, &s, 1, &x);
  if (r && x->shape.rank == 1 && !cx_ints_set(b->m, &r->a.dims, 1, &b->fi)) b->oom = 1;
  return r;
}

/* The sum over every dimension but the feature's: [F]. */
static cx_instr *sum(bn *b, cx_instr *x) {
  cx_instr *zero = constant(b, 0);
  if (!x || !zero) return b->oom = 1, NULL;
  int64_t dims[CXLA_MAX_RANK];
  int nd = 0;
  for (int d = 0; d < b->xs->rank; d++)
    if (d != b->fi) dims[nd++] = d;
  cx_shape s = cx_shape_array(b->t, 1, &b->f);
  cx_instr *ops[2] = {x, zero};
  cx_instr *r = add(b, CX_OP_REDUCE, &s, 2, ops);
  if (r && (!cx_ints_set(b->m, &r->a.dims, nd, dims) || !cx_instr_set_called(r, 1, &b->add))) b->oom = 1;
  return r;
}

/* The scalar add computation of type t. */
static cx_comp *adder(cx_module *m, cxla_type t) { return cx_module_add_binary(m, "bn_add", CX_OP_ADD, t); }

static void setup(bn *b, cx_instr *in, cx_comp *const *adders) {
  memset(b, 0, sizeof *b);
  b->at = in;
  b->m = in->parent->module;
  b->xs = &in->ops[0]->shape;
  b->t = b->xs->type;
  b->fi = in->a.index;
  b->f = b->xs->dims[b->fi];
  b->n = b->f ? cx_shape_elems(b->xs) / b->f : 0;
  b->add = adders[b->t];
}

static cx_instr *eps_plus(bn *b, cx_instr *var) {
  float e;
  int32_t bits = b->at->a.epsilon_bits;
  memcpy(&e, &bits, sizeof e);
  return ew(b, CX_OP_ADD, var, bcast(b, constant(b, e), 0));
}

/* (x - mean) * (scale * rsqrt(var + eps)) + offset, all but x per feature. */
static cx_instr *normalize(bn *b, cx_instr *xc, cx_instr *var, cx_instr *scale, cx_instr *offset) {
  cx_instr *k = ew(b, CX_OP_MULTIPLY, feature(b, scale), ew(b, CX_OP_RSQRT, eps_plus(b, var), NULL));
  return ew(b, CX_OP_ADD, ew(b, CX_OP_MULTIPLY, xc, bcast(b, k, 1)), bcast(b, feature(b, offset), 1));
}

static cx_instr *tuple3(bn *b, cx_instr *x, cx_instr *y, cx_instr *z) {
  cx_shape *el = x && y && z && !b->oom ? cx_arena_alloc(&b->m->arena, 3 * sizeof *el) : NULL;
  if (!el) return b->oom = 1, NULL;
  el[0] = x->shape, el[1] = y->shape, el[2] = z->shape;
  cx_shape s;
  memset(&s, 0, sizeof s);
  s.type = CXLA_TUPLE, s.ntuple = 3, s.tuple = el;
  cx_instr *ops[3] = {x, y, z};
  return add(b, CX_OP_TUPLE, &s, 3, ops);
}

static cx_instr *training(bn *b) {
  cx_instr *x = b->at->ops[0], *inv_n = bcast(b, constant(b, 1.0 / (double)b->n), 0);
  cx_instr *mean = ew(b, CX_OP_MULTIPLY, sum(b, x), inv_n);
  cx_instr *xc = ew(b, CX_OP_SUBTRACT, x, bcast(b, mean, 1));
  cx_instr *var = ew(b, CX_OP_MULTIPLY, sum(b, ew(b, CX_OP_MULTIPLY, xc, xc)), inv_n);
  return tuple3(b, normalize(b, xc, var, b->at->ops[1], b->at->ops[2]), mean, var);
}

static cx_instr *inference(bn *b) {
  cx_instr *xc = ew(b, CX_OP_SUBTRACT, b->at->ops[0], bcast(b, feature(b, b->at->ops[3]), 1));
  return normalize(b, xc, feature(b, b->at->ops[4]), b->at->ops[1], b->at->ops[2]);
}

/* operands x, scale, mean, variance, grad_output */
static cx_instr *grad(bn *b) {
  cx_instr *x = b->at->ops[0], *g = b->at->ops[4];
  if (g && g->shape.type != b->t) {
    cx_shape s = cx_shape_array(b->t, b->xs->rank, b->xs->dims);
    g = add(b, CX_OP_CONVERT, &s, 1, &g);
  }
  cx_instr *ve = eps_plus(b, feature(b, b->at->ops[3]));
  cx_instr *rs = ew(b, CX_OP_RSQRT, ve, NULL);
  cx_instr *xc = ew(b, CX_OP_SUBTRACT, x, bcast(b, feature(b, b->at->ops[2]), 1));
  cx_instr *gsum = sum(b, g), *gxsum = sum(b, ew(b, CX_OP_MULTIPLY, g, xc));
  cx_instr *n = constant(b, (double)b->n);
  /* N g - sum(g) - (x - mean) * sum(g (x - mean)) / (var + eps) */
  cx_instr *inner = ew(b, CX_OP_SUBTRACT, ew(b, CX_OP_SUBTRACT, ew(b, CX_OP_MULTIPLY, g, bcast(b, n, 1)), bcast(b, gsum, 1)),
                       ew(b, CX_OP_MULTIPLY, xc, bcast(b, ew(b, CX_OP_DIVIDE, gxsum, ve), 1)));
  cx_instr *k = ew(b, CX_OP_DIVIDE, ew(b, CX_OP_MULTIPLY, feature(b, b->at->ops[1]), rs), bcast(b, n, 0));
  cx_instr *gx = ew(b, CX_OP_MULTIPLY, bcast(b, k, 1), inner);
  return tuple3(b, gx, ew(b, CX_OP_MULTIPLY, gxsum, rs), gsum);
}

static int is_batch_norm(const cx_instr *in) {
  return (in->op == CX_OP_BATCH_NORM_TRAINING && in->nops == 3) || (in->op == CX_OP_BATCH_NORM_INFERENCE && in->nops == 5) ||
         (in->op == CX_OP_BATCH_NORM_GRAD && in->nops == 5);
}

static cxla_status expand(cx_instr *in, cx_comp *const *adders) {
  bn b;
  setup(&b, in, adders);
  cx_instr *r = in->op == CX_OP_BATCH_NORM_TRAINING ? training(&b) : in->op == CX_OP_BATCH_NORM_GRAD ? grad(&b) : inference(&b);
  if (!r || b.oom) return cx_oom(b.m->ctx);
  cx_comp_replace_uses(in->parent, in, r);
  return CXLA_OK;
}

cxla_status cx_pass_batchnorm_expand(cx_module *m, int *changed) {
  *changed = 0;
  /* the reducers first, for the types seen (adding a computation moves the others) */
  cx_comp *adders[CX_BN_TYPES] = {0};
  char need[CX_BN_TYPES] = {0};
  for (int i = 0; i < m->ncomps; i++)
    for (int k = 0; k < m->comps[i]->ninstrs; k++) {
      cx_instr *in = m->comps[i]->instrs[k];
      if (!is_batch_norm(in)) continue;
      cxla_type t = in->ops[0]->shape.type;
      if ((unsigned)t >= CX_BN_TYPES) return cx_error(m->ctx, CXLA_ERR_INTERNAL, "batchnorm-expand: element type %d", (int)t);
      need[t] = 1;
    }
  for (int t = 0; t < CX_BN_TYPES; t++)
    if (need[t] && !(adders[t] = adder(m, (cxla_type)t))) return cx_oom(m->ctx);
  for (int i = 0; i < m->ncomps; i++) {
    cx_comp *c = m->comps[i];
    int n0 = c->ninstrs;
    uint8_t *drop = NULL;
    for (int k = 0; k < n0; k++) {
      if (!is_batch_norm(c->instrs[k])) continue;
      if (!drop && !(drop = cx_calloc((size_t)n0, 1))) return cx_oom(m->ctx);
      cxla_status s = expand(c->instrs[k], adders);
      if (s != CXLA_OK) {
        cx_free(drop);
        return s;
      }
      drop[k] = 1; /* nothing uses it now */
    }
    if (!drop) continue;
    /* the mask covers the instructions that were there; the new ones come after them */
    uint8_t *all = cx_calloc((size_t)c->ninstrs, 1);
    if (!all) {
      cx_free(drop);
      return cx_oom(m->ctx);
    }
    memcpy(all, drop, (size_t)n0);
    cx_free(drop);
    cx_comp_remove_instrs(c, all);
    cx_free(all);
    CX_TRY(cx_comp_resort(c, "batchnorm-expand"));
    *changed = 1;
  }
  return CXLA_OK;
}
