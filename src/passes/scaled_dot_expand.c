/* scaled_dot_expand.c — scaled-dot and the __op$block_scaled_dot custom-call (ir/scaled_dot.h)
 * become the ops they stand for, as XLA's ScaledDotRewriter and BlockScalingRewriter write
 * them: each operand converted to the result type T, times its scale (sliced where padded,
 * converted, broadcast over a block dimension after each blocked one and reshaped to the
 * operand's shape), then a plain dot, which the cpu backend runs as any dot (GEMM for f32);
 * a global scale multiplies the result. Where ir/scaled_dot.h computes in f32 for a narrower
 * float T, the products and the dot are f32 and a convert to T ends it. The interpreter
 * evaluates the instructions themselves (interp/scaled_dot.c), so each checks the other. The
 * instruction itself becomes the last op of its expansion, so nothing needs removing. A scale
 * whose broadcast would pass CXLA_MAX_RANK stays for the interpreter (the op's fallback). */
#include <string.h>
#include "ir/edit.h"
#include "ir/scaled_dot.h"
#include "passes/pass.h"

typedef struct ex {
  cx_instr *at;
  cx_module *m;
  int oom;
} ex;

static cx_instr *add(ex *e, cx_op op, const cx_shape *s, int nops, cx_instr *const *ops) {
  cx_instr *in = e->oom ? NULL : cx_instr_add(e->at->parent, op, s, nops, ops, e->at->loc);
  if (!in) e->oom = 1;
  return in;
}

static cx_instr *convert(ex *e, cx_instr *x, cxla_type t) {
  if (!x || x->shape.type == t) return x;
  cx_shape s = cx_shape_array(t, x->shape.rank, x->shape.dims);
  return add(e, CX_OP_CONVERT, &s, 1, &x);
}

static int ints(ex *e, cx_ints *dst, int n, const int64_t *v) {
  if (!e->oom && !cx_ints_set(e->m, dst, n, v)) e->oom = 1;
  return !e->oom;
}

/* The rank a scale's broadcast needs: one more per blocked dimension. */
static int bcast_rank(const cx_shape *x, const cx_sdot_side *sd) {
  int r = x->rank;
  for (int d = 0; d < x->rank; d++) r += sd->block[d] != 1;
  return r;
}

/* x times its scale, both in the types ir/scaled_dot.h names; x converted only when unscaled. */
static cx_instr *dequantize(ex *e, const cx_sdot *d, cx_instr *x, cx_instr *s, const cx_sdot_side *sd) {
  x = convert(e, convert(e, x, d->type), d->deq);
  if (!sd->scaled || !x) return x;
  const cx_shape *xs = &x->shape;
  int r = xs->rank, used_all = 1;
  int64_t zero[CXLA_MAX_RANK] = {0}, one[CXLA_MAX_RANK], bdims[CXLA_MAX_RANK], bmap[CXLA_MAX_RANK];
  for (int k = 0; k < r; k++) one[k] = 1, used_all &= sd->used[k] == s->shape.dims[k];
  if (!used_all) { /* block_scaled_dot's padding */
    cx_shape ss = cx_shape_array(s->shape.type, r, sd->used);
    cx_instr *sl = add(e, CX_OP_SLICE, &ss, 1, &s);
    if (!sl || !ints(e, &sl->a.slice_start, r, zero) || !ints(e, &sl->a.slice_limit, r, sd->used) ||
        !ints(e, &sl->a.slice_stride, r, one))
      return NULL;
    s = sl;
  }
  s = convert(e, convert(e, s, d->type), d->deq);
  int n = 0;
  for (int k = 0; k < r; k++) {
    bmap[k] = n;
    bdims[n++] = sd->used[k];
    if (sd->block[k] != 1) bdims[n++] = sd->block[k];
  }
  cx_instr *rs = s; /* a scale of the operand's own shape multiplies it directly */
  if (n != r) {
    cx_shape bs = cx_shape_array(d->deq, n, bdims);
    cx_instr *b = s ? add(e, CX_OP_BROADCAST, &bs, 1, &s) : NULL;
    if (!b || !ints(e, &b->a.dims, r, bmap)) return NULL;
    rs = add(e, CX_OP_RESHAPE, xs, 1, &b);
  }
  cx_instr *ops[2] = {x, rs};
  return rs ? add(e, CX_OP_MULTIPLY, xs, 2, ops) : NULL;
}

static cxla_status expand(cx_instr *in) {
  ex e = {in, in->parent->module, 0};
  cx_sdot d;
  if (!cx_sdot_of(in, &d)) return cx_error(e.m->ctx, CXLA_ERR_INTERNAL, "scaled-dot-expand: %s is not verified", in->name);
  for (int i = 0; i < 2; i++)
    if (d.side[i].scaled && bcast_rank(&in->ops[i]->shape, &d.side[i]) > CXLA_MAX_RANK) return CXLA_OK;
  cx_instr *ops[2];
  for (int i = 0; i < 2; i++) ops[i] = dequantize(&e, &d, in->ops[i], d.side[i].scaled ? in->ops[i + 2] : NULL, &d.side[i]);
  cx_instr *g = d.global >= 0 ? in->ops[d.global] : NULL;
  cx_instr *dot = in;
  if (ops[0] && ops[1] && (d.deq != d.type || g)) {
    cx_shape ds = cx_shape_array(d.deq, in->shape.rank, in->shape.dims);
    dot = add(&e, CX_OP_DOT, &ds, 2, ops);
  }
  if (e.oom || !ops[0] || !ops[1] || !dot) return cx_oom(e.m->ctx);
  cx_dot_dims dims = d.dims; /* copied first: for the custom-call its lists live in d */
  memset(&dot->a.dot, 0, sizeof dot->a.dot);
  if (!ints(&e, &dot->a.dot.lhs_batch, dims.lhs_batch.n, dims.lhs_batch.v) ||
      !ints(&e, &dot->a.dot.rhs_batch, dims.rhs_batch.n, dims.rhs_batch.v) ||
      !ints(&e, &dot->a.dot.lhs_contract, dims.lhs_contract.n, dims.lhs_contract.v) ||
      !ints(&e, &dot->a.dot.rhs_contract, dims.rhs_contract.n, dims.rhs_contract.v))
    return cx_oom(e.m->ctx);
  cx_instr *last = NULL; /* what `in` becomes after the dot: nothing, a convert or a multiply */
  if (g) {
    cx_instr *r = convert(&e, dot, d.type);
    cx_shape rs = cx_shape_array(d.type, in->shape.rank, in->shape.dims);
    cx_instr *gb = add(&e, CX_OP_BROADCAST, &rs, 1, &g);
    if (e.oom) return cx_oom(e.m->ctx);
    in->op = CX_OP_MULTIPLY, in->nops = 2, in->ops[0] = r, in->ops[1] = gb, last = in;
  } else if (dot != in) {
    in->op = CX_OP_CONVERT, in->nops = 1, in->ops[0] = dot, last = in;
  } else {
    in->op = CX_OP_DOT, in->nops = 2, in->ops[0] = ops[0], in->ops[1] = ops[1];
  }
  if (last) memset(&in->a.dot, 0, sizeof in->a.dot);
  in->a.custom_call_target = NULL, in->a.backend_config = NULL;
  return CXLA_OK;
}

static int is_scaled_dot(const cx_instr *in) { return in->op == CX_OP_SCALED_DOT || cx_is_block_scaled_dot(in); }

cxla_status cx_pass_scaled_dot_expand(cx_module *m, int *changed) {
  *changed = 0;
  return cx_module_rewrite(m, "scaled-dot-expand", is_scaled_dot, expand, changed);
}
