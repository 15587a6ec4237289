/* dot_reduce.c — integer dots (BLAS has none) as a kInput fusion the emitter compiles:
 *   reduce(multiply(broadcast(a'), broadcast(b')), 0), add over the contracting dims
 * where a', b' are the operands converted to the result type and transposed so that each
 * broadcast maps them in increasing order onto [batch, lhs free, rhs free, contracting] — the
 * reduce then leaves exactly dot's result dims. Products and sums wrap in the result type,
 * which equals the interpreter's wide sum wrapped once (two's complement arithmetic is exact
 * modulo 2^n). Quantized (s8 x s8 -> s32) matmuls land here. */
#include <string.h>
#include "ir/edit.h"
#include "passes/fusion_build.h"
#include "passes/library_lowering.h"

static cx_instr *new_named(cx_comp *fc, cx_op op, const cx_shape *sh, int n, cx_instr *const *ops) {
  cx_instr *x = cx_instr_new(fc, op, sh, n, ops);
  const char *nm = x ? cx_module_unique_name(fc->module, cx_op_name(op)) : NULL;
  if (nm) x->name = nm;
  return nm ? x : NULL;
}

static void insert_before(cx_module *m, cx_comp *x, cx_comp *before) {
  int at = cx_module_comp_index(m, before), me = cx_module_comp_index(m, x);
  if (at < 0 || me < at) return;
  memmove(m->comps + at + 1, m->comps + at, sizeof *m->comps * (size_t)(me - at));
  m->comps[at] = x;
}

/* A scalar add computation of type t, placed before `before`. */
static cx_comp *add_comp(cx_module *m, cxla_type t, cx_comp *before) {
  const char *name = cx_module_unique_name(m, "add");
  cx_comp *a = name ? cx_comp_new(m, name) : NULL;
  if (!a) return NULL;
  cx_shape s = cx_shape_scalar(t);
  cx_instr *p[2] = {new_named(a, CX_OP_PARAMETER, &s, 0, NULL), new_named(a, CX_OP_PARAMETER, &s, 0, NULL)};
  if (!p[0] || !p[1]) return NULL;
  p[0]->a.index = 0;
  p[1]->a.index = 1;
  if (!(a->root = new_named(a, CX_OP_ADD, &s, 2, p)) || !cx_comp_index_params(a) || !cx_module_add_comp(m, a))
    return NULL;
  insert_before(m, a, before);
  return a;
}

/* The instructions the fusion is made of, added to c as they are built. */
typedef struct parts {
  cx_instr *v[12];
  int n;
  cx_loc loc;
} parts;

static cx_instr *add(cx_comp *c, parts *ps, cx_op op, const cx_shape *sh, int n, cx_instr *const *ops) {
  cx_instr *x = cx_instr_add(c, op, sh, n, ops, ps->loc);
  if (x) ps->v[ps->n++] = x;
  return x;
}

/* x converted to t, transposed so that its dims come in increasing pos[] order, broadcast to
 * `big` with dim d landing at pos[d]. */
static cx_instr *spread(cx_comp *c, parts *ps, cx_instr *x, cxla_type t, const int64_t *pos, const cx_shape *big) {
  int r = x->shape.rank;
  if (x->shape.type != t) {
    cx_shape cs = cx_shape_array(t, r, x->shape.dims);
    if (!(x = add(c, ps, CX_OP_CONVERT, &cs, 1, &x))) return NULL;
  }
  int64_t order[CXLA_MAX_RANK], sorted[CXLA_MAX_RANK], dims[CXLA_MAX_RANK];
  for (int i = 0; i < r; i++) order[i] = i;
  for (int i = 1; i < r; i++) /* insertion sort by target position */
    for (int j = i; j > 0 && pos[order[j - 1]] > pos[order[j]]; j--) {
      int64_t tmp = order[j];
      order[j] = order[j - 1];
      order[j - 1] = tmp;
    }
  int identity = 1;
  for (int i = 0; i < r; i++) {
    identity &= order[i] == i;
    sorted[i] = pos[order[i]];
    dims[i] = x->shape.dims[order[i]];
  }
  if (!identity) {
    cx_shape ts = cx_shape_array(t, r, dims);
    cx_instr *tr = add(c, ps, CX_OP_TRANSPOSE, &ts, 1, &x);
    if (!tr || !cx_ints_set(c->module, &tr->a.dims, r, order)) return NULL;
    x = tr;
  }
  cx_instr *b = add(c, ps, CX_OP_BROADCAST, big, 1, &x);
  if (!b || !cx_ints_set(c->module, &b->a.dims, r, sorted)) return NULL;
  return b;
}

cxla_status cx_int_dot_as_reduce(cx_comp *c, cx_instr *d) {
  cx_module *m = c->module;
  cxla_type ot = d->shape.type;
  const cx_shape *ls = &d->ops[0]->shape, *rs = &d->ops[1]->shape;
  const cx_dot_dims *dd = &d->a.dot;
  int nb = dd->lhs_batch.n, nc = dd->lhs_contract.n, nfl = ls->rank - nb - nc, nfr = rs->rank - nb - nc;
  int rank = nb + nfl + nfr + nc;
  if (!cx_type_is_int(ot) || !cx_type_is_int(ls->type) || !cx_type_is_int(rs->type) || rank > CXLA_MAX_RANK ||
      nfl < 0 || nfr < 0)
    return CXLA_OK; /* stays a dot: the interpreter runs it */
  int64_t big_dims[CXLA_MAX_RANK], pl[CXLA_MAX_RANK], pr[CXLA_MAX_RANK];
  int role_l[CXLA_MAX_RANK] = {0}, role_r[CXLA_MAX_RANK] = {0};
  for (int i = 0; i < nb; i++) {
    pl[dd->lhs_batch.v[i]] = pr[dd->rhs_batch.v[i]] = i;
    big_dims[i] = ls->dims[dd->lhs_batch.v[i]];
    role_l[dd->lhs_batch.v[i]] = role_r[dd->rhs_batch.v[i]] = 1;
  }
  for (int i = 0; i < nc; i++) {
    pl[dd->lhs_contract.v[i]] = pr[dd->rhs_contract.v[i]] = nb + nfl + nfr + i;
    big_dims[nb + nfl + nfr + i] = ls->dims[dd->lhs_contract.v[i]];
    role_l[dd->lhs_contract.v[i]] = role_r[dd->rhs_contract.v[i]] = 1;
  }
  for (int i = 0, j = 0; i < ls->rank; i++)
    if (!role_l[i]) big_dims[nb + j] = ls->dims[i], pl[i] = nb + j++;
  for (int i = 0, j = 0; i < rs->rank; i++)
    if (!role_r[i]) big_dims[nb + nfl + j] = rs->dims[i], pr[i] = nb + nfl + j++;
  cx_shape big = cx_shape_array(ot, rank, big_dims), out = cx_shape_array(ot, d->shape.rank, d->shape.dims);
  cx_comp *adder = nc ? add_comp(m, ot, c) : NULL;
  if (nc && !adder) return cx_oom(m->ctx);
  parts ps = {.n = 0, .loc = d->loc};
  cx_instr *ab[2] = {spread(c, &ps, d->ops[0], ot, pl, &big), NULL};
  ab[1] = ab[0] ? spread(c, &ps, d->ops[1], ot, pr, &big) : NULL;
  cx_instr *mul = ab[1] ? add(c, &ps, CX_OP_MULTIPLY, &big, 2, ab) : NULL, *root = mul;
  if (mul && nc) {
    cx_shape zs = cx_shape_scalar(ot);
    cxla_literal *zl = cx_literal_new(&zs);
    cx_instr *z = zl && cx_module_own_literal(m, zl) ? add(c, &ps, CX_OP_CONSTANT, &zs, 0, NULL) : NULL;
    int64_t rd[CXLA_MAX_RANK];
    for (int i = 0; i < nc; i++) rd[i] = nb + nfl + nfr + i;
    cx_instr *ops[2] = {mul, z};
    root = z ? add(c, &ps, CX_OP_REDUCE, &out, 2, ops) : NULL;
    if (z) z->a.literal = zl;
    if (root && (!cx_ints_set(m, &root->a.dims, nc, rd) || !cx_instr_set_called(root, 1, &adder))) root = NULL;
  }
  if (!root) return cx_oom(m->ctx);
  cx_comp_replace_uses(c, d, root);
  uint8_t *drop = cx_calloc((size_t)c->ninstrs + 1, 1);
  if (!drop) return cx_oom(m->ctx);
  for (int i = 0; i < c->ninstrs; i++) drop[i] = c->instrs[i] == d;
  cx_comp_remove_instrs(c, drop);
  cx_free(drop);
  cx_instr *f;
  return cx_fusion_make(c, ps.v, ps.n, root, nc ? CX_FUSION_INPUT : CX_FUSION_LOOP, &f);
}
