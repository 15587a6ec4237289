/* infer_reduce.c — shape rules of ops that apply a computation: reduce, reduce-window,
 * select-and-scatter, map, sort; and topk, which orders as sort does. */
#include "ir/infer.h"

/* Room for n element types (in the arena: reductions may have any number of inputs). */
static cxla_type *types(cx_infer *ic, int n) {
  cxla_type *t = cx_arena_alloc(ic->arena, sizeof(cxla_type) * (size_t)(n ? n : 1));
  if (!t) cx_oom(ic->m->ctx);
  return t;
}

/* Inputs 0..n-1 must be arrays of one set of dims, inits n..2n-1 scalars. Collects types. */
static cxla_status inputs_and_inits(cx_infer *ic, int n, cxla_type *elem, cxla_type *acc) {
  const cx_shape *x0 = cx_vop(ic, 0);
  for (int i = 0; i < n; i++) {
    CX_TRY(cx_vneed_array(ic, i, "input"));
    const cx_shape *x = cx_vop(ic, i);
    if (!cx_shape_same_dims(x, x0))
      return cx_vfail(ic, "inputs must have the same dimensions, got %s (input 0) and %s (input %d)",
                      cx_vshape(ic, x0), cx_vshape(ic, x), i);
    CX_TRY(cx_vneed_scalar(ic, n + i, "init value"));
    elem[i] = x->type;
    acc[i] = cx_vop(ic, n + i)->type;
  }
  return CXLA_OK;
}

/* Result of a variadic reduction: one array, or a tuple with one array per input. */
static cxla_status reduction_result(cx_infer *ic, cx_shape *out, int n, int is_tuple, const cxla_type *acc,
                                    int rank, const int64_t *dims) {
  if (!is_tuple) {
    cx_vset_array(out, acc[0], rank, dims);
    return CXLA_OK;
  }
  cx_shape *el = cx_vtuple(ic, out, n);
  if (!el) return CXLA_ERR_OUT_OF_MEMORY;
  for (int i = 0; i < n; i++) cx_vset_array(&el[i], acc[i], rank, dims);
  return CXLA_OK;
}

cxla_status cx_infer_reduce(cx_infer *ic, cx_shape *out) {
  if (ic->in->nops < 2 || ic->in->nops % 2)
    return cx_vfail(ic, "expected N inputs followed by N init values (an even number >= 2), got %d operands", ic->in->nops);
  int n = ic->in->nops / 2, is_tuple;
  cxla_type *elem = types(ic, 2 * n);
  if (!elem) return CXLA_ERR_OUT_OF_MEMORY;
  cxla_type *acc = elem + n;
  CX_TRY(inputs_and_inits(ic, n, elem, acc));
  const cx_shape *x = cx_vop(ic, 0);
  char used[CXLA_MAX_RANK] = {0};
  CX_TRY(cx_vdims(ic, &ic->in->a.dims, x->rank, "dimensions", used));
  CX_TRY(cx_vreducer(ic, 0, "to_apply", n, acc, elem, &is_tuple));
  int64_t dims[CXLA_MAX_RANK];
  int rank = 0;
  for (int i = 0; i < x->rank; i++)
    if (!used[i]) dims[rank++] = x->dims[i];
  return reduction_result(ic, out, n, is_tuple, acc, rank, dims);
}

/* The window's output dims over `x` (window rank must equal the operand rank). */
static cxla_status window_dims(cx_infer *ic, const cx_shape *x, int64_t *dims) {
  const cx_window *w = &ic->in->a.window;
  if (w->rank != x->rank)
    return cx_vfail(ic, "window has %d dimension%s but the operand %s has rank %d", w->rank, w->rank == 1 ? "" : "s",
                    cx_vshape(ic, x), x->rank);
  if (w->rank > 0 && !w->d) return cx_vfail(ic, "window dimensions are missing");
  for (int i = 0; i < x->rank; i++) CX_TRY(cx_vwindow_dim(ic, i, x->dims[i], &w->d[i], &dims[i]));
  return CXLA_OK;
}

cxla_status cx_infer_reduce_window(cx_infer *ic, cx_shape *out) {
  if (ic->in->nops < 2 || ic->in->nops % 2)
    return cx_vfail(ic, "expected N inputs followed by N init values (an even number >= 2), got %d operands", ic->in->nops);
  int n = ic->in->nops / 2, is_tuple;
  cxla_type *elem = types(ic, 2 * n);
  if (!elem) return CXLA_ERR_OUT_OF_MEMORY;
  cxla_type *acc = elem + n;
  CX_TRY(inputs_and_inits(ic, n, elem, acc));
  const cx_shape *x = cx_vop(ic, 0);
  int64_t dims[CXLA_MAX_RANK];
  CX_TRY(window_dims(ic, x, dims));
  CX_TRY(cx_vreducer(ic, 0, "to_apply", n, acc, elem, &is_tuple));
  return reduction_result(ic, out, n, is_tuple, acc, x->rank, dims);
}

cxla_status cx_infer_select_and_scatter(cx_infer *ic, cx_shape *out) {
  CX_TRY(cx_vneed_array(ic, 0, "operand"));
  CX_TRY(cx_vneed_array(ic, 1, "source"));
  CX_TRY(cx_vneed_scalar(ic, 2, "init value"));
  const cx_shape *x = cx_vop(ic, 0), *src = cx_vop(ic, 1);
  cxla_type acc = cx_vop(ic, 2)->type, st = src->type;
  int64_t dims[CXLA_MAX_RANK];
  CX_TRY(window_dims(ic, x, dims));
  cx_shape want = cx_shape_array(x->type, x->rank, dims);
  if (!cx_shape_equal(src, &want))
    return cx_vfail(ic, "source %s must have the shape of the windowed operand, %s", cx_vshape(ic, src),
                    cx_vshape(ic, &want));
  /* select: (T, T) -> pred[] over operand elements T */
  CX_TRY(cx_vcallee(ic, 0, "select", 2));
  cx_comp *sel = ic->in->called[0];
  for (int i = 0; i < 2; i++) {
    const cx_shape *p = &sel->params[i]->shape;
    if (!cx_varray(p) || p->rank != 0 || p->type != x->type)
      return cx_vfail(ic, "select %s: parameter %d must be %s[], got %s", sel->name, i, cx_vtype(x->type),
                      cx_vshape(ic, p));
  }
  const cx_shape *r = &sel->root->shape;
  if (!cx_varray(r) || r->rank != 0 || r->type != CXLA_PRED)
    return cx_vfail(ic, "select %s must return pred[], returns %s", sel->name, cx_vshape(ic, r));
  int is_tuple;
  CX_TRY(cx_vreducer(ic, 1, "scatter", 1, &acc, &st, &is_tuple));
  if (is_tuple) return cx_vfail(ic, "scatter %s must return a scalar, not a tuple", ic->in->called[1]->name);
  if (acc != x->type)
    return cx_vfail(ic, "init value %s must have the operand's element type %s", cx_vshape(ic, cx_vop(ic, 2)),
                    cx_vtype(x->type));
  *out = *x;
  cx_vplain(out);
  return CXLA_OK;
}

cxla_status cx_infer_map(cx_infer *ic, cx_shape *out) {
  if (ic->in->nops < 1) return cx_vfail(ic, "expected at least 1 operand, got 0");
  cx_instr *in = ic->in;
  const cx_shape *x0 = cx_vop(ic, 0);
  for (int i = 0; i < in->nops; i++) {
    CX_TRY(cx_vneed_array(ic, i, "operand"));
    if (!cx_shape_same_dims(cx_vop(ic, i), x0))
      return cx_vfail(ic, "operands must have the same dimensions, got %s and %s", cx_vshape(ic, x0),
                      cx_vshape(ic, cx_vop(ic, i)));
  }
  const cx_ints *d = &in->a.dims; /* only all dimensions in order, as in XLA */
  int ok = d->n == 0 || d->n == x0->rank;
  for (int i = 0; ok && i < d->n; i++) ok = d->v[i] == i;
  if (!ok) return cx_vfail(ic, "dimensions=%s must be {0..%d} (map applies to every element)", cx_vints(ic, d),
                           x0->rank - 1);
  CX_TRY(cx_vcallee(ic, 0, "to_apply", in->nops));
  cx_comp *c = in->called[0];
  for (int i = 0; i < in->nops; i++) {
    const cx_shape *p = &c->params[i]->shape;
    if (!cx_varray(p) || p->rank != 0 || p->type != cx_vop(ic, i)->type)
      return cx_vfail(ic, "to_apply %s: parameter %d must be %s[], got %s", c->name, i, cx_vtype(cx_vop(ic, i)->type),
                      cx_vshape(ic, p));
  }
  const cx_shape *r = &c->root->shape;
  if (!cx_varray(r) || r->rank != 0)
    return cx_vfail(ic, "to_apply %s must return a scalar, returns %s", c->name, cx_vshape(ic, r));
  cx_vset_array(out, r->type, x0->rank, x0->dims);
  return CXLA_OK;
}

cxla_status cx_infer_sort(cx_infer *ic, cx_shape *out) {
  if (ic->in->nops < 1) return cx_vfail(ic, "expected at least 1 operand, got 0");
  cx_instr *in = ic->in;
  const cx_shape *x0 = cx_vop(ic, 0);
  for (int i = 0; i < in->nops; i++) {
    CX_TRY(cx_vneed_array(ic, i, "operand"));
    if (!cx_shape_same_dims(cx_vop(ic, i), x0))
      return cx_vfail(ic, "operands must have the same dimensions, got %s and %s", cx_vshape(ic, x0),
                      cx_vshape(ic, cx_vop(ic, i)));
  }
  const cx_ints *d = &in->a.dims;
  if (d->n != 1 || d->v[0] < 0 || d->v[0] >= x0->rank)
    return cx_vfail(ic, "dimensions=%s must name one dimension of %s", cx_vints(ic, d), cx_vshape(ic, x0));
  CX_TRY(cx_vcallee(ic, 0, "comparator", 2 * in->nops));
  cx_comp *c = in->called[0];
  for (int i = 0; i < 2 * in->nops; i++) {
    const cx_shape *p = &c->params[i]->shape;
    cxla_type t = cx_vop(ic, i / 2)->type;
    if (!cx_varray(p) || p->rank != 0 || p->type != t)
      return cx_vfail(ic, "comparator %s: parameter %d must be %s[] (from operand %d), got %s", c->name, i,
                      cx_vtype(t), i / 2, cx_vshape(ic, p));
  }
  const cx_shape *r = &c->root->shape;
  if (!cx_varray(r) || r->rank != 0 || r->type != CXLA_PRED)
    return cx_vfail(ic, "comparator %s must return pred[], returns %s", c->name, cx_vshape(ic, r));
  if (in->nops == 1) {
    *out = *x0;
    cx_vplain(out);
    return CXLA_OK;
  }
  cx_shape *el = cx_vtuple(ic, out, in->nops);
  if (!el) return CXLA_ERR_OUT_OF_MEMORY;
  for (int i = 0; i < in->nops; i++) {
    el[i] = in->ops[i]->shape;
    cx_vplain(&el[i]);
  }
  return CXLA_OK;
}

/* topk(x), k=K: XLA's InferTopKShape — (x's type with the last dimension K, s32 of the same
 * dims); K at most the last dimension. Elements are ordered as a compare of TOTALORDER does
 * (XLA's TopK decomposition sorts with one), which cxla defines for real types. */
cxla_status cx_infer_topk(cx_infer *ic, cx_shape *out) {
  CX_TRY(cx_vneed_array(ic, 0, "operand"));
  const cx_shape *x = cx_vop(ic, 0);
  int64_t k = ic->in->a.index;
  cx_kind kind = cx_type_kind(x->type);
  if (kind != CX_KIND_FLOAT && kind != CX_KIND_SINT && kind != CX_KIND_UINT && kind != CX_KIND_PRED)
    return cx_vfail(ic, "cannot order %s elements", cx_vtype(x->type));
  if (x->rank < 1) return cx_vfail(ic, "needs an operand of rank 1 or more, got %s", cx_vshape(ic, x));
  if (k < 0 || k > x->dims[x->rank - 1])
    return cx_vfail(ic, "k=%lld must be in [0, %lld], the last dimension of %s", (long long)k,
                    (long long)x->dims[x->rank - 1], cx_vshape(ic, x));
  cx_shape *el = cx_vtuple(ic, out, 2);
  if (!el) return CXLA_ERR_OUT_OF_MEMORY;
  cx_vset_array(&el[0], x->type, x->rank, x->dims);
  el[0].dims[x->rank - 1] = k;
  el[1] = el[0];
  el[1].type = CXLA_S32;
  return CXLA_OK;
}
