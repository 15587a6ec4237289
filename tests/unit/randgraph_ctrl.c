/* randgraph_ctrl.c — control flow for the generator: counted while loops whose state tuple
 * holds a counter, carried values (updated by a random body, float ones kept in [-B, B] by a
 * clamp so that every iteration stays in range) and pass-through values, and conditionals
 * (pred or s32 index, out-of-range indices included) whose branches compute a common result
 * from their own operands. Bodies and branches are built by the same step function, one
 * nesting level deeper. */
#include <math.h>
#include <string.h>
#include "randgraph_int.h"
#include "ir/types.h"

#define WHILE_BOUND 4.0 /* carried floats stay in [-WHILE_BOUND, WHILE_BOUND] */

static gval any_val(gen *g) {
  gval v;
  if (rg_pick(g, NULL, NULL, &v)) return v;
  int rank;
  int64_t dims[CXLA_MAX_RANK];
  rg_pick_shape(g, &rank, dims);
  return rg_fresh(g, rg_pick_type(g), rank, dims, 0);
}

static void public_shape(const cx_shape *s, cxla_shape *out) {
  out->type = s->type, out->rank = s->rank, out->dims = s->dims, out->ntuple = 0, out->elems = NULL;
}

/* Starts building a nested computation whose parameter 0 has shape ps and leaves pl. */
static gcomp *enter(gen *g, const char *prefix, const cxla_shape *ps, const rg_val *pl, int npl, gval *param) {
  gcomp *c = cx_calloc(1, sizeof *c);
  char name[32];
  if (!c) { g->failed = 1; return NULL; }
  c->b = cxla_builder_create(g->m, rg_comp_name(g, prefix, name, sizeof name));
  if (!c->b) { cx_free(c); g->failed = 1; return NULL; }
  c->depth = g->cur->depth + 1;
  c->pleaves = pl;
  c->npleaves = npl;
  gcomp *outer = g->cur;
  g->cur = c;
  *param = rg_v(g, cxla_builder_parameter(c->b, 0, ps, NULL));
  g->cur = outer;
  return c;
}

/* Finishes a nested computation (NULL after a builder error, which g->failed records). */
static cxla_computation *leave(gen *g, gcomp *c, gcomp *outer, cxla_op root) {
  cxla_computation *comp = NULL;
  g->cur = outer;
  if (cxla_builder_finish(c->b, root, 0, &comp) != CXLA_OK) g->failed = 1;
  cx_free(c);
  return comp;
}

void rg_op_while(gen *g) {
  gcomp *outer = g->cur;
  int ncar = 1 + rg_below(&g->rs, 2), npass = rg_below(&g->rs, 3), ne = 0;
  gval el[6];
  int trips = rg_size(g, 0, 5);
  rg_val start = {-2, 2, 0, 0, 0, 0}; /* a counter from a parameter: the trip count varies */
  el[ne++] = rg_chance(g, 0.8) || outer->depth ? rg_const(g, CXLA_S32, 0) : rg_param_new(g, CXLA_S32, 0, NULL, start);
  for (int i = 0; i < ncar + npass; i++) {
    gval v = any_val(g);
    if (i < ncar && rg_ok(v) && cx_type_is_float(v.in->shape.type)) v = rg_bounded(g, v, WHILE_BOUND);
    if (!rg_ok(v)) return;
    el[ne++] = v;
  }
  cxla_op ops[6];
  cxla_shape es[6];
  for (int i = 0; i < ne; i++) ops[i] = el[i].op, public_shape(&el[i].in->shape, &es[i]);
  gval init = rg_v(g, cxla_builder_tuple(outer->b, ne, ops));
  int nl;
  const rg_val *il = rg_ok(init) ? rg_bounds_get(&g->bd, init.in, &nl) : NULL;
  if (!il || nl != ne) return;
  cxla_shape ts = {CXLA_TUPLE, 0, NULL, ne, es};

  /* condition: counter < trips */
  rg_val cl[6];
  memcpy(cl, il, sizeof cl[0] * (size_t)ne);
  gval p;
  gcomp *cc = enter(g, "cond", &ts, cl, ne, &p);
  if (!cc) return;
  cxla_op i0 = cxla_builder_get_tuple_element(cc->b, p.op, 0);
  cxla_op lim = cxla_builder_constant_scalar(cc->b, CXLA_S32, trips);
  cxla_computation *cond = leave(g, cc, outer, cxla_builder_compare(cc->b, i0, lim, CXLA_LT, NULL));
  if (!cond) return;

  /* body: what a later iteration may see is wider than the first: carried floats are only
   * known to be in [-B, B] and inexact, carried integers may have wrapped */
  rg_val bl[6];
  memcpy(bl, il, sizeof bl[0] * (size_t)ne);
  bl[0].lo = fmin(il[0].lo, 0), bl[0].hi = trips + 1;
  for (int i = 1; i <= ncar; i++) {
    cxla_type t = el[i].in->shape.type;
    if (cx_type_is_float(t)) {
      bl[i].lo = fmin(bl[i].lo, -WHILE_BOUND), bl[i].hi = fmax(bl[i].hi, WHILE_BOUND);
      bl[i].err = fmax(bl[i].err, 1e-3);
    } else if (t != CXLA_PRED) {
      bl[i].lo = cx_type_kind(t) == CX_KIND_UINT ? 0 : -ldexp(1, cx_type_bits(t) - 1);
      bl[i].hi = ldexp(1, cx_type_bits(t) - (cx_type_kind(t) != CX_KIND_UINT)) - 1;
    }
  }
  gcomp *bc = enter(g, "body", &ts, bl, ne, &p);
  if (!bc) return;
  g->cur = bc;
  gval gte[6];
  for (int i = 0; i < ne; i++) gte[i] = rg_keep(g, rg_v(g, cxla_builder_get_tuple_element(bc->b, p.op, i)));
  int steps = 1 + rg_below(&g->rs, 6);
  for (int i = 0; i < steps && cxla_builder_status(bc->b) == CXLA_OK; i++) rg_step(g);
  cxla_op outs[6];
  outs[0] = cxla_builder_add(bc->b, gte[0].op, cxla_builder_constant_scalar(bc->b, CXLA_S32, 1));
  for (int i = 1; i < ne; i++) {
    outs[i] = gte[i].op;
    if (i > ncar) continue; /* pass-through */
    const cx_shape *s = &el[i].in->shape;
    gval v = rg_get(g, s->type, s->rank, s->dims, 0);
    if (!rg_ok(v) || rg_info(g, v).bad) continue;
    if (cx_type_is_float(s->type)) {
      gval lo = rg_const(g, s->type, -WHILE_BOUND), hi = rg_const(g, s->type, WHILE_BOUND);
      v = rg_v(g, cxla_builder_clamp(bc->b, lo.op, v.op, hi.op));
    }
    if (rg_ok(v)) outs[i] = v.op;
  }
  cxla_computation *body = leave(g, bc, outer, cxla_builder_tuple(bc->b, ne, outs));
  if (!body) return;

  gval w = rg_v(g, cxla_builder_while(outer->b, init.op, cond, body));
  if (!rg_ok(w)) return;
  for (int i = rg_chance(g, 0.3) ? 0 : 1; i < ne; i++)
    rg_keep(g, rg_v(g, cxla_builder_get_tuple_element(outer->b, w.op, i)));
}

void rg_op_conditional(gen *g) {
  gcomp *outer = g->cur;
  int use_pred = rg_chance(g, 0.5), nb = use_pred ? 2 : 2 + rg_below(&g->rs, 3);
  gval idx = use_pred ? rg_get(g, CXLA_PRED, 0, NULL, 1)
                      : rg_chance(g, 0.5) ? rg_index_scalar(g, CXLA_S32, -1, nb + 1) : rg_get(g, CXLA_S32, 0, NULL, 1);
  if (!rg_ok(idx) || rg_info(g, idx).bad) return;
  /* the result: one or two arrays shaped like pool values */
  int nres = 1 + rg_chance(g, 0.4), tuple_result = nres > 1 || rg_chance(g, 0.4);
  cx_shape rs[2];
  for (int j = 0; j < nres; j++) {
    gval v = any_val(g);
    if (!rg_ok(v)) return;
    rs[j] = v.in->shape;
  }
  /* each branch's operand: one array or a tuple of up to three */
  gval opnd[4];
  for (int k = 0; k < nb; k++) {
    int nin = 1 + rg_below(&g->rs, 3);
    gval v = any_val(g);
    if (!rg_ok(v)) return;
    if (nin == 1 && rg_chance(g, 0.5)) { opnd[k] = v; continue; }
    cxla_op ops[3] = {v.op};
    for (int i = 1; i < nin; i++) {
      gval u = any_val(g);
      if (!rg_ok(u)) return;
      ops[i] = u.op;
    }
    opnd[k] = rg_v(g, cxla_builder_tuple(outer->b, nin, ops));
    if (!rg_ok(opnd[k])) return;
  }
  cxla_computation *br[4];
  cxla_op bops[4];
  for (int k = 0; k < nb; k++) {
    const cx_shape *os = &opnd[k].in->shape;
    cxla_shape ps, pe[3];
    if (os->type == CXLA_TUPLE) {
      for (int i = 0; i < os->ntuple; i++) public_shape(&os->tuple[i], &pe[i]);
      ps = (cxla_shape){CXLA_TUPLE, 0, NULL, os->ntuple, pe};
    } else {
      public_shape(os, &ps);
    }
    int nl;
    const rg_val *ol = rg_bounds_get(&g->bd, opnd[k].in, &nl);
    rg_val pl[3];
    if (!ol || nl > 3) return;
    memcpy(pl, ol, sizeof pl[0] * (size_t)nl);
    gval p;
    gcomp *bc = enter(g, "branch", &ps, pl, nl, &p);
    if (!bc) return;
    g->cur = bc;
    if (os->type == CXLA_TUPLE)
      for (int i = 0; i < os->ntuple; i++) rg_keep(g, rg_v(g, cxla_builder_get_tuple_element(bc->b, p.op, i)));
    else
      rg_keep(g, p);
    int steps = rg_below(&g->rs, 5);
    for (int i = 0; i < steps && cxla_builder_status(bc->b) == CXLA_OK; i++) rg_step(g);
    cxla_op outs[2];
    for (int j = 0; j < nres; j++) {
      gval v = rg_get(g, rs[j].type, rs[j].rank, rs[j].dims, 0);
      if (!rg_ok(v) || rg_info(g, v).bad) v = rg_splat(g, rs[j].type, rs[j].rank, rs[j].dims, 1);
      outs[j] = v.op;
    }
    br[k] = leave(g, bc, outer, tuple_result ? cxla_builder_tuple(bc->b, nres, outs) : outs[0]);
    if (!br[k]) return;
    bops[k] = opnd[k].op;
  }
  gval c = rg_v(g, cxla_builder_conditional(outer->b, idx.op, nb, bops, br));
  if (!rg_ok(c)) return;
  if (!tuple_result) {
    rg_keep(g, c);
    return;
  }
  for (int j = 0; j < nres; j++) rg_keep(g, rg_v(g, cxla_builder_get_tuple_element(outer->b, c.op, j)));
}
