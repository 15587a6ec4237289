/* randgraph_bounds.c — the analysis driver (see randgraph.h): per-instruction storage of
 * leaf ranges and errors, the walk over computations (reduce, while loops iterated to their
 * trip bound, conditionals as the hull of their branches, calls), tolerances, and a dump for
 * debugging. The per-op rules live in randgraph_rules.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "randgraph_lib_rules.h"
#include "randgraph_rules.h"
#include "ir/types.h"

void rg_tolerance(const rg_val *v, cxla_type t, double *rtol, double *atol) {
  if (!cx_type_is_float(t) || !rg_inexact(*v)) { *rtol = 0; *atol = 0; return; }
  /* 4x the bound (the bound is not a proof), plus two roundings of the result itself */
  *atol = 4 * v->err;
  *rtol = 4 * v->rel + 2 * rg_eps(t);
}

int rg_leaf_count(const cx_shape *s) {
  if (s->type != CXLA_TUPLE) return 1;
  int n = 0;
  for (int i = 0; i < s->ntuple; i++) n += rg_leaf_count(&s->tuple[i]);
  return n;
}

/* ---- storage ---- */

void rg_bounds_init(rg_bounds *bd, cx_module *m) {
  memset(bd, 0, sizeof *bd);
  bd->m = m;
}

void rg_bounds_free(rg_bounds *bd) {
  for (int i = 0; i < bd->cap; i++) cx_free(bd->slot[i].v);
  cx_free(bd->slot);
  memset(bd, 0, sizeof *bd);
}

const rg_val *rg_bounds_get(rg_bounds *bd, const cx_instr *in, int *n) {
  *n = 0;
  if (in->id < 0 || in->id >= bd->cap || !bd->slot[in->id].n) return NULL;
  rg_slot *s = &bd->slot[in->id];
  *n = s->n;
  return s->v;
}

int rg_bounds_set(rg_bounds *bd, const cx_instr *in, const rg_val *v, int n) {
  if (in->id < 0) return 0;
  if (in->id >= bd->cap) {
    int cap = in->id + 64 > 2 * bd->cap ? in->id + 64 : 2 * bd->cap;
    rg_slot *ns = cx_realloc(bd->slot, sizeof *ns * (size_t)cap);
    if (!ns) return 0;
    memset(ns + bd->cap, 0, sizeof *ns * (size_t)(cap - bd->cap));
    bd->slot = ns;
    bd->cap = cap;
  }
  rg_slot *s = &bd->slot[in->id];
  if (n != s->n) { /* leaves live on the heap: pointers to them survive the slot array growing */
    rg_val *nv = n ? cx_malloc(sizeof *v * (size_t)n) : NULL;
    if (n && !nv) return 0;
    if (n) memcpy(nv, v, sizeof *v * (size_t)n);
    cx_free(s->v);
    s->v = nv;
    s->n = n;
  } else if (n) {
    memmove(s->v, v, sizeof *v * (size_t)n);
  }
  return 1;
}

static int leaf_offset(const cx_shape *s, int64_t index) {
  int off = 0;
  for (int64_t i = 0; i < index && i < s->ntuple; i++) off += rg_leaf_count(&s->tuple[i]);
  return off;
}

/* ---- reductions ---- */

static rg_red_kind reducer_kind(const cx_comp *c) {
  const cx_instr *r = c->root;
  if (!r) return RK_UNKNOWN;
  if (r->op == CX_OP_TUPLE) return RK_VARIADIC;
  if (r->nops != 2 || r->ops[0]->op != CX_OP_PARAMETER || r->ops[1]->op != CX_OP_PARAMETER ||
      r->ops[0] == r->ops[1])
    return RK_UNKNOWN;
  switch (r->op) {
  case CX_OP_ADD: return RK_SUM;
  case CX_OP_MULTIPLY: return RK_PROD;
  case CX_OP_MAXIMUM: return RK_MAX;
  case CX_OP_MINIMUM: return RK_MIN;
  case CX_OP_AND: case CX_OP_OR: case CX_OP_XOR: return RK_BITWISE;
  default: return RK_UNKNOWN;
  }
}

static void reduce_op(rg_bounds *bd, cx_instr *in, rg_val *out, int nout) {
  int n = in->nops / 2, nl;
  rg_red_kind k = in->ncalled ? reducer_kind(in->called[0]) : RK_UNKNOWN;
  double cnt = 1;
  if (in->op == CX_OP_REDUCE) {
    for (int d = 0; d < in->a.dims.n; d++) cnt *= (double)in->ops[0]->shape.dims[in->a.dims.v[d]];
  } else {
    for (int d = 0; d < in->a.window.rank; d++) cnt *= (double)in->a.window.d[d].size;
  }
  int any_bad = 0, inexact = 0, special = 0;
  for (int j = 0; j < in->nops; j++) {
    const rg_val *v = rg_bounds_get(bd, in->ops[j], &nl);
    if (v) any_bad |= v->bad, inexact |= rg_inexact(*v), special |= v->special;
  }
  for (int j = 0; j < nout && j < n; j++) {
    const rg_val *a = rg_bounds_get(bd, in->ops[j], &nl), *i = rg_bounds_get(bd, in->ops[n + j], &nl);
    cxla_type t = in->shape.type == CXLA_TUPLE ? in->shape.tuple[j].type : in->shape.type;
    out[j] = k == RK_VARIADIC ? rg_hull(*a, *i) : rg_reduce_leaf(bd, in, k, *a, *i, cnt, t);
    out[j].bad |= any_bad;
    /* a multi-operand reducer (argmax) chooses by comparing: it needs exact, finite inputs */
    if (k == RK_VARIADIC && (inexact || special)) rg_mark_bad(bd, &out[j], in, "variadic reduce of inexact or NaN values");
  }
}

/* ---- library ops ---- */

/* ---- control flow ---- */

static int comp_leaves(rg_bounds *bd, cx_comp *c, int nargs, const rg_val *const *args, const int *nleaves,
                       rg_val *out, int nout) {
  if (bd->depth > 16) return 0;
  bd->depth++;
  int ok = rg_bounds_comp(bd, c, nargs, args, nleaves);
  bd->depth--;
  int n;
  const rg_val *r = ok ? rg_bounds_get(bd, c->root, &n) : NULL;
  if (!r || n != nout) return 0;
  memcpy(out, r, sizeof *out * (size_t)nout);
  return 1;
}

/* Trip count bound of a while loop from a condition like compare(gte(p, k), c) LT (the
 * counter counting up by one from its initial range); 16 when the pattern is not there. */
static int trip_bound(rg_bounds *bd, cx_instr *w, const rg_val *init) {
  const cx_instr *r = w->called[0]->root;
  if (r->op != CX_OP_COMPARE) return 16;
  const cx_instr *x = r->ops[0], *y = r->ops[1];
  if (x->op != CX_OP_GET_TUPLE_ELEMENT || x->ops[0]->op != CX_OP_PARAMETER || y->op != CX_OP_CONSTANT) return 16;
  int nl;
  const rg_val *c = rg_bounds_get(bd, y, &nl);
  double start = init[leaf_offset(&w->shape, x->a.index)].lo;
  if (!c || !isfinite(c->hi) || !isfinite(start)) return 16;
  double n = c->hi - start + 2;
  return n < 1 ? 1 : n > 64 ? -1 : (int)n; /* -1: too many trips to follow (or to run) */
}

static int while_op(rg_bounds *bd, cx_instr *w, rg_val *out, int nout) {
  int nl;
  const rg_val *init = rg_bounds_get(bd, w->ops[0], &nl);
  if (!init || nl != nout) return 0;
  rg_val *state = cx_malloc(sizeof *state * (size_t)nout * 2);
  if (!state) return 0;
  rg_val *next = state + nout;
  memcpy(state, init, sizeof *state * (size_t)nout);
  int trips = trip_bound(bd, w, init), ok = 1;
  if (trips < 0) {
    for (int i = 0; i < nout; i++) rg_mark_bad(bd, &state[i], w, "the loop may run for very long");
    trips = 1;
  }
  for (int it = 0; it < trips && ok; it++) {
    const rg_val *args[1] = {state};
    ok = comp_leaves(bd, w->called[1], 1, args, &nout, next, nout);
    int grew = 0;
    for (int i = 0; ok && i < nout; i++) {
      rg_val h = rg_hull(state[i], next[i]);
      grew |= memcmp(&h, &state[i], sizeof h) != 0;
      state[i] = h;
    }
    if (!grew) break;
  }
  /* the condition decides on the state: it must be exact */
  rg_val cond;
  const rg_val *args[1] = {state};
  if (ok && comp_leaves(bd, w->called[0], 1, args, &nout, &cond, 1) && cond.bad)
    for (int i = 0; i < nout; i++) rg_mark_bad(bd, &state[i], w, "loop condition not determined");
  if (ok) memcpy(out, state, sizeof *out * (size_t)nout);
  cx_free(state);
  return ok;
}

static int conditional_op(rg_bounds *bd, cx_instr *in, rg_val *out, int nout) {
  int nl, ok = 1;
  const rg_val *idx = rg_bounds_get(bd, in->ops[0], &nl);
  rg_val *tmp = cx_malloc(sizeof *tmp * (size_t)nout);
  if (!tmp || !idx) { cx_free(tmp); return 0; }
  for (int k = 0; k < in->ncalled && ok; k++) {
    int n;
    const rg_val *arg = rg_bounds_get(bd, in->ops[1 + k], &n);
    const rg_val *args[1] = {arg};
    ok = arg && comp_leaves(bd, in->called[k], 1, args, &n, tmp, nout);
    for (int i = 0; ok && i < nout; i++) out[i] = k ? rg_hull(out[i], tmp[i]) : tmp[i];
  }
  for (int i = 0; ok && i < nout; i++) out[i].bad |= idx->bad;
  cx_free(tmp);
  return ok;
}

static int call_op(rg_bounds *bd, cx_instr *in, rg_val *out, int nout) {
  const rg_val *args[64];
  int nls[64];
  if (in->nops > 64) return 0;
  for (int i = 0; i < in->nops; i++)
    if (!(args[i] = rg_bounds_get(bd, in->ops[i], &nls[i]))) return 0;
  return comp_leaves(bd, in->called[0], in->nops, args, nls, out, nout);
}

/* ---- one instruction ---- */

static rg_val constant_range(const cx_instr *in) {
  rg_val r = {INFINITY, -INFINITY, 0, 0, 0};
  const cxla_literal *l = in->a.literal;
  int64_t n = cx_shape_elems(&l->shape);
  for (int64_t i = 0; i < n; i++) {
    double v = cx_load_f64(l->shape.type, l->data, i);
    if (!isfinite(v)) { r.special = 1; continue; }
    r.lo = fmin(r.lo, v), r.hi = fmax(r.hi, v);
  }
  if (r.lo > r.hi) r.lo = r.hi = 0;
  return r;
}

int rg_bounds_instr(rg_bounds *bd, cx_instr *in) {
  int nout = rg_leaf_count(&in->shape), nl;
  rg_val stack[8], *out = nout <= 8 ? stack : cx_malloc(sizeof *out * (size_t)nout);
  if (!out) return 0;
  int ok = 1;
  rg_val o[4], first = {0, 0, 0, 0, 0};
  for (int i = 0; i < in->nops; i++) {
    const rg_val *v = rg_bounds_get(bd, in->ops[i], &nl);
    if (!v) { ok = 0; break; }
    if (i < 4) o[i] = v[0];
    if (i == 0) first = v[0];
  }
  for (int i = 0; ok && i < nout; i++) out[i] = first;
  switch (ok ? cx_op_class_of(in->op) : CX_CLASS_OTHER) {
  case CX_CLASS_ELEMENTWISE:
    out[0] = rg_elementwise(bd, in, o);
    break;
  case CX_CLASS_DATA:
    if (in->op == CX_OP_CONSTANT) {
      out[0] = constant_range(in);
    } else if (in->op == CX_OP_TUPLE) {
      for (int i = 0, k = 0; i < in->nops; i++) {
        const rg_val *v = rg_bounds_get(bd, in->ops[i], &nl);
        memcpy(out + k, v, sizeof *out * (size_t)nl);
        k += nl;
      }
    } else if (in->op == CX_OP_GET_TUPLE_ELEMENT) {
      const rg_val *v = rg_bounds_get(bd, in->ops[0], &nl);
      memcpy(out, v + leaf_offset(&in->ops[0]->shape, in->a.index), sizeof *out * (size_t)nout);
    } else {
      ok = 0; /* parameters are set by the caller */
    }
    break;
  case CX_CLASS_SHAPE: {
    if (in->op == CX_OP_IOTA) {
      rg_val r = {0, (double)(in->shape.dims[in->a.index] - 1), 0, 0, 0};
      if (r.hi < 0) r.hi = 0;
      out[0] = r;
      break;
    }
    int ndata = in->op == CX_OP_DYNAMIC_SLICE || in->op == CX_OP_GATHER ? 1
                : in->op == CX_OP_DYNAMIC_UPDATE_SLICE                   ? 2
                                                                         : in->nops;
    rg_val r = first;
    for (int i = 1; i < in->nops; i++) {
      const rg_val *v = rg_bounds_get(bd, in->ops[i], &nl);
      if (i < ndata) r = rg_hull(r, *v);
      else r.bad |= v->bad; /* indices are integers: exact */
    }
    out[0] = r;
    break;
  }
  case CX_CLASS_REDUCE:
    if (in->op == CX_OP_REDUCE || in->op == CX_OP_REDUCE_WINDOW) {
      reduce_op(bd, in, out, nout);
    } else {
      for (int i = 0; i < nout; i++) rg_mark_bad(bd, &out[i], in, "op not analysed");
    }
    break;
  case CX_CLASS_LIBRARY:
    if (in->op == CX_OP_DOT) out[0] = rg_dot_rule(bd, in, o[0], o[1]);
    else if (!rg_library_rule(bd, in, out, nout))
      for (int i = 0; i < nout; i++) rg_mark_bad(bd, &out[i], in, "op not analysed");
    break;
  case CX_CLASS_CONTROL:
    if (in->op == CX_OP_WHILE) ok = while_op(bd, in, out, nout);
    else if (in->op == CX_OP_CONDITIONAL) ok = conditional_op(bd, in, out, nout);
    else ok = call_op(bd, in, out, nout); /* call, fusion */
    break;
  default:
    if (ok)
      for (int i = 0; i < nout; i++) rg_mark_bad(bd, &out[i], in, "op not analysed");
    break;
  }
  if (ok) ok = rg_bounds_set(bd, in, out, nout);
  if (out != stack) cx_free(out);
  return ok;
}

int rg_bounds_comp(rg_bounds *bd, cx_comp *c, int nargs, const rg_val *const *args, const int *nleaves) {
  for (int i = 0; i < c->ninstrs; i++) {
    cx_instr *in = c->instrs[i];
    if (in->op == CX_OP_PARAMETER) {
      int64_t p = in->a.index;
      if (p < 0 || p >= nargs || nleaves[p] != rg_leaf_count(&in->shape)) return 0;
      if (!rg_bounds_set(bd, in, args[p], nleaves[p])) return 0;
    } else if (!rg_bounds_instr(bd, in)) {
      return 0;
    }
  }
  return 1;
}

rg_val *rg_analyze(cx_module *m, const rg_param *params, int nparams, int *n, char *why, size_t whylen) {
  rg_bounds bd;
  rg_bounds_init(&bd, m);
  *n = 0;
  cx_comp *e = m->entry;
  const rg_val **args = cx_malloc(sizeof *args * (size_t)(nparams + 1));
  int *nl = cx_malloc(sizeof *nl * (size_t)(nparams + 1));
  rg_val *res = NULL;
  if (args && nl) {
    for (int i = 0; i < nparams; i++) args[i] = &params[i].v, nl[i] = 1;
    int k;
    const rg_val *r = rg_bounds_comp(&bd, e, nparams, args, nl) ? rg_bounds_get(&bd, e->root, &k) : NULL;
    if (r && (res = cx_malloc(sizeof *res * (size_t)k))) {
      memcpy(res, r, sizeof *res * (size_t)k);
      *n = k;
    }
  }
  if (why && whylen) snprintf(why, whylen, "%s", bd.why);
  cx_free(args);
  cx_free(nl);
  rg_bounds_free(&bd);
  return res;
}

void rg_bounds_print(cx_module *m, const rg_param *params, int nparams, cx_sb *sb) {
  rg_bounds bd;
  rg_bounds_init(&bd, m);
  const rg_val **args = cx_malloc(sizeof *args * (size_t)(nparams + 1));
  int *nl = cx_malloc(sizeof *nl * (size_t)(nparams + 1));
  if (args && nl) {
    for (int i = 0; i < nparams; i++) args[i] = &params[i].v, nl[i] = 1;
    rg_bounds_comp(&bd, m->entry, nparams, args, nl);
    for (int i = 0; i < m->entry->ninstrs; i++) {
      const cx_instr *in = m->entry->instrs[i];
      int n;
      const rg_val *v = rg_bounds_get(&bd, in, &n);
      cx_sb_printf(sb, "  %-28s", in->name ? in->name : "?");
      for (int k = 0; v && k < n && k < 4; k++)
        cx_sb_printf(sb, " [%.4g, %.4g] err %.3g rel %.3g%s%s", v[k].lo, v[k].hi, v[k].err, v[k].rel,
                     v[k].special ? " nan/inf" : "",
                     v[k].bad ? " BAD" : "");
      cx_sb_putc(sb, '\n');
    }
  }
  cx_free(args);
  cx_free(nl);
  rg_bounds_free(&bd);
}
