/* emit.c — the emitter's instruction helpers (grad_int.h): each makes one instruction at the
 * end of the emitter's computation, sets the attributes its HLO text carries, and takes its
 * shape from the verifier's inference, so a rule that builds something ill-formed fails here
 * with the verifier's message instead of producing a module that does not verify. */
#include <math.h>
#include <string.h>
#include "grad/grad_int.h"

static int ok(gr_em *e) { return e->st == CXLA_OK; }

cx_instr *gr_new(gr_em *e, cx_op op, const cx_shape *declared, int nops, cx_instr *const *ops) {
  if (!ok(e)) return NULL;
  for (int i = 0; i < nops; i++)
    if (!ops[i]) {
      if (ok(e)) e->st = cx_error(e->g->m->ctx, CXLA_ERR_INTERNAL, "grad: %s built from a missing operand", cx_op_name(op));
      return NULL;
    }
  cx_shape placeholder = cx_shape_scalar(nops ? ops[0]->shape.type : CXLA_F32);
  if (nops && ops[0]->shape.type == CXLA_TUPLE) placeholder = cx_shape_scalar(CXLA_F32);
  cx_instr *in = cx_instr_add(e->c, op, declared ? declared : &placeholder, nops, ops, e->loc);
  if (!in) e->st = CXLA_ERR_OUT_OF_MEMORY;
  return in;
}

cx_instr *gr_done(gr_em *e, cx_instr *in) {
  if (!in || !ok(e)) return NULL;
  cx_shape s;
  cxla_status st = cx_infer_shape(in, &s);
  if (st != CXLA_OK) {
    /* the verifier's message names the instruction; say whose bug it is */
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", cx_errmsg(e->g->m->ctx));
    e->st = st == CXLA_ERR_OUT_OF_MEMORY ? st
                                         : cx_error(e->g->m->ctx, CXLA_ERR_INTERNAL, "grad made an invalid %s: %s",
                                                    cx_op_name(in->op), msg);
    return NULL;
  }
  in->shape = s;
  return in;
}

int gr_ints(gr_em *e, cx_ints *dst, int n, const int64_t *v) {
  if (!ok(e)) return 0;
  if (!cx_ints_set(e->c->module, dst, n, v)) {
    e->st = CXLA_ERR_OUT_OF_MEMORY;
    return 0;
  }
  return 1;
}

int gr_window(gr_em *e, cx_window *dst, int rank, const cx_window_dim *w) {
  if (!ok(e)) return 0;
  dst->rank = rank;
  dst->d = rank ? cx_arena_memdup(&e->c->module->arena, w, sizeof *w * (size_t)rank) : NULL;
  if (rank && !dst->d) {
    e->st = cx_oom(e->g->m->ctx);
    return 0;
  }
  return 1;
}

cx_instr *gr_param(gr_em *e, int index, const cx_shape *shape) {
  cx_instr *in = gr_new(e, CX_OP_PARAMETER, shape, 0, NULL);
  if (in) in->a.index = index;
  return gr_done(e, in);
}

cx_instr *gr_scalar(gr_em *e, cxla_type t, double v) {
  if (!ok(e)) return NULL;
  cx_shape s = cx_shape_scalar(t);
  cxla_literal *lit = cx_literal_new(&s);
  if (!lit || !cx_module_own_literal(e->c->module, lit)) {
    e->st = cx_oom(e->g->m->ctx);
    return NULL;
  }
  if (cx_type_is_float(t) || t == CXLA_PRED) cx_store_f64(t, lit->data, 0, v);
  else cx_store_i64(t, lit->data, 0, (int64_t)v);
  cx_instr *in = gr_new(e, CX_OP_CONSTANT, &s, 0, NULL);
  if (in) in->a.literal = lit;
  return gr_done(e, in);
}

cx_instr *gr_full(gr_em *e, cxla_type t, const cx_shape *s, double v) {
  cx_instr *c = gr_scalar(e, t, v);
  return s->rank ? gr_bcast(e, c, s->rank, s->dims, NULL) : c;
}

cx_instr *gr_zeros(gr_em *e, const cx_shape *s) {
  if (!ok(e)) return NULL;
  if (s->type == CXLA_TUPLE) {
    cx_instr *el[CXLA_MAX_RANK * 4], **v = s->ntuple <= CX_ARRAY_LEN(el) ? el : cx_calloc((size_t)s->ntuple, sizeof *v);
    if (!v) {
      e->st = cx_oom(e->g->m->ctx);
      return NULL;
    }
    for (int i = 0; i < s->ntuple; i++) v[i] = gr_zeros(e, &s->tuple[i]);
    cx_instr *t = gr_tuple(e, s->ntuple, v);
    if (v != el) cx_free(v);
    return t;
  }
  if (!cx_type_is_array(s->type)) {
    e->st = cx_error(e->g->m->ctx, CXLA_ERR_UNSUPPORTED, "grad: cannot make a zero cotangent of a token");
    return NULL;
  }
  return gr_full(e, s->type, s, 0);
}

cx_instr *gr_un(gr_em *e, cx_op op, cx_instr *x) { return gr_done(e, gr_new(e, op, NULL, 1, &x)); }

cx_instr *gr_bin(gr_em *e, cx_op op, cx_instr *a, cx_instr *b) {
  cx_instr *ops[2] = {a, b};
  return gr_done(e, gr_new(e, op, NULL, 2, ops));
}

cx_instr *gr_cmp(gr_em *e, cx_instr *a, cx_instr *b, cxla_compare_dir dir) {
  cx_instr *ops[2] = {a, b};
  cx_instr *in = gr_new(e, CX_OP_COMPARE, NULL, 2, ops);
  if (in) in->a.dir = dir;
  return gr_done(e, in);
}

cx_instr *gr_select(gr_em *e, cx_instr *p, cx_instr *t, cx_instr *f) {
  cx_instr *ops[3] = {p, t, f};
  return gr_done(e, gr_new(e, CX_OP_SELECT, NULL, 3, ops));
}

cx_instr *gr_convert(gr_em *e, cx_instr *x, cxla_type t) {
  if (!x || x->shape.type == t) return x;
  cx_shape s = cx_shape_array(t, x->shape.rank, x->shape.dims);
  return gr_done(e, gr_new(e, CX_OP_CONVERT, &s, 1, &x));
}

cx_instr *gr_reduce_precision(gr_em *e, cx_instr *x, int exponent_bits, int mantissa_bits) {
  cx_instr *in = gr_new(e, CX_OP_REDUCE_PRECISION, x ? &x->shape : NULL, 1, &x);
  if (in) {
    in->a.exponent_bits = exponent_bits;
    in->a.mantissa_bits = mantissa_bits;
  }
  return gr_done(e, in);
}

cx_instr *gr_bcast(gr_em *e, cx_instr *x, int rank, const int64_t *dims, const int64_t *map) {
  if (!x) return NULL;
  cx_shape s = cx_shape_array(x->shape.type, rank, dims);
  cx_instr *in = gr_new(e, CX_OP_BROADCAST, &s, 1, &x);
  if (in && !gr_ints(e, &in->a.dims, x->shape.rank, map)) return NULL;
  return gr_done(e, in);
}

cx_instr *gr_reshape(gr_em *e, cx_instr *x, int rank, const int64_t *dims) {
  if (!x) return NULL;
  cx_shape s = cx_shape_array(x->shape.type, rank, dims);
  if (cx_shape_equal(&s, &x->shape) && cx_shape_has_default_layout(&x->shape)) return x;
  return gr_done(e, gr_new(e, CX_OP_RESHAPE, &s, 1, &x));
}

cx_instr *gr_transpose(gr_em *e, cx_instr *x, const int64_t *perm) {
  if (!x) return NULL;
  int identity = 1;
  for (int i = 0; i < x->shape.rank; i++) identity &= perm[i] == i;
  if (identity) return x;
  cx_instr *in = gr_new(e, CX_OP_TRANSPOSE, NULL, 1, &x);
  if (in && !gr_ints(e, &in->a.dims, x->shape.rank, perm)) return NULL;
  return gr_done(e, in);
}

cx_instr *gr_slice(gr_em *e, cx_instr *x, const int64_t *start, const int64_t *limit, const int64_t *stride) {
  cx_instr *in = gr_new(e, CX_OP_SLICE, NULL, 1, &x);
  int r = in ? x->shape.rank : 0;
  if (in && (!gr_ints(e, &in->a.slice_start, r, start) || !gr_ints(e, &in->a.slice_limit, r, limit) ||
             !gr_ints(e, &in->a.slice_stride, r, stride)))
    return NULL;
  if (in) { /* slice's result shape is written in HLO; inference reads the declared type */
    in->shape.type = x->shape.type;
    in->shape.rank = r;
    for (int i = 0; i < r; i++) in->shape.dims[i] = (limit[i] - start[i] + stride[i] - 1) / stride[i];
  }
  return gr_done(e, in);
}

cx_instr *gr_pad(gr_em *e, cx_instr *x, cx_instr *v, const int64_t *lo, const int64_t *hi, const int64_t *interior) {
  cx_instr *ops[2] = {x, v};
  cx_instr *in = gr_new(e, CX_OP_PAD, NULL, 2, ops);
  int r = in ? x->shape.rank : 0;
  if (in && (!gr_ints(e, &in->a.pad_lo, r, lo) || !gr_ints(e, &in->a.pad_hi, r, hi) ||
             !gr_ints(e, &in->a.pad_interior, r, interior)))
    return NULL;
  return gr_done(e, in);
}

cx_instr *gr_reverse(gr_em *e, cx_instr *x, int n, const int64_t *dims) {
  if (!n) return x;
  cx_instr *in = gr_new(e, CX_OP_REVERSE, NULL, 1, &x);
  if (in && !gr_ints(e, &in->a.dims, n, dims)) return NULL;
  return gr_done(e, in);
}

cx_instr *gr_dynamic_slice(gr_em *e, cx_instr *x, cx_instr *const *starts, const int64_t *sizes) {
  if (!x) return NULL;
  int r = x->shape.rank;
  cx_instr *ops[1 + CXLA_MAX_RANK];
  ops[0] = x;
  for (int i = 0; i < r; i++) ops[1 + i] = starts[i];
  cx_shape s = cx_shape_array(x->shape.type, r, sizes);
  cx_instr *in = gr_new(e, CX_OP_DYNAMIC_SLICE, &s, 1 + r, ops);
  if (in && !gr_ints(e, &in->a.dims, r, sizes)) return NULL;
  return gr_done(e, in);
}

cx_instr *gr_dynamic_update_slice(gr_em *e, cx_instr *x, cx_instr *u, cx_instr *const *starts) {
  if (!x) return NULL;
  int r = x->shape.rank;
  cx_instr *ops[2 + CXLA_MAX_RANK];
  ops[0] = x;
  ops[1] = u;
  for (int i = 0; i < r; i++) ops[2 + i] = starts[i];
  return gr_done(e, gr_new(e, CX_OP_DYNAMIC_UPDATE_SLICE, &x->shape, 2 + r, ops));
}

/* The identity of a reduction, so that reducing any number of elements is exact. */
static double identity_of(cx_op op) {
  return op == CX_OP_MAXIMUM ? -INFINITY : op == CX_OP_MINIMUM ? INFINITY : op == CX_OP_AND || op == CX_OP_MULTIPLY ? 1 : 0;
}

cx_instr *gr_reduce(gr_em *e, cx_instr *x, int n, const int64_t *dims, cx_op op) {
  if (!x) return NULL;
  if (!n) return x;
  cx_comp *f = gr_scalar_comp(e->g, op, x->shape.type, CXLA_EQ);
  if (!f && ok(e)) e->st = CXLA_ERR_OUT_OF_MEMORY;
  cx_instr *ops[2] = {x, gr_scalar(e, x->shape.type, identity_of(op))};
  cx_instr *in = gr_new(e, CX_OP_REDUCE, NULL, 2, ops);
  if (in && (!gr_ints(e, &in->a.dims, n, dims) || !cx_instr_set_called(in, 1, &f))) {
    if (ok(e)) e->st = CXLA_ERR_OUT_OF_MEMORY;
    return NULL;
  }
  return gr_done(e, in);
}

cx_instr *gr_sum_all(gr_em *e, cx_instr *x) {
  if (!x) return NULL;
  int64_t all[CXLA_MAX_RANK];
  for (int i = 0; i < x->shape.rank; i++) all[i] = i;
  return gr_reduce(e, x, x->shape.rank, all, CX_OP_ADD);
}

cx_instr *gr_tuple(gr_em *e, int n, cx_instr *const *ops) { return gr_done(e, gr_new(e, CX_OP_TUPLE, NULL, n, ops)); }

cx_instr *gr_gte(gr_em *e, cx_instr *t, int64_t index) {
  if (t && t->op == CX_OP_TUPLE && index < t->nops) return t->ops[index]; /* no gte(tuple) pairs */
  cx_instr *in = gr_new(e, CX_OP_GET_TUPLE_ELEMENT, NULL, 1, &t);
  if (in) in->a.index = index;
  return gr_done(e, in);
}

static cx_instr *with_called(gr_em *e, cx_instr *in, int n, cx_comp *const *called) {
  if (in && !cx_instr_set_called(in, n, called)) {
    e->st = CXLA_ERR_OUT_OF_MEMORY;
    return NULL;
  }
  return gr_done(e, in);
}

cx_instr *gr_call(gr_em *e, cx_comp *c, int n, cx_instr *const *ops) {
  return with_called(e, gr_new(e, CX_OP_CALL, NULL, n, ops), 1, &c);
}

cx_instr *gr_while(gr_em *e, cx_instr *init, cx_comp *cond, cx_comp *body) {
  cx_comp *cb[2] = {cond, body};
  return with_called(e, gr_new(e, CX_OP_WHILE, NULL, 1, &init), 2, cb);
}
