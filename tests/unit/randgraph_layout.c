/* randgraph_layout.c — what XLA's layout assignment writes into optimized modules, for the
 * random graphs: non-default layouts on parameters and intermediates, copies that change a
 * layout, transposes whose layout keeps the operand's bytes (a bitcast in disguise), and
 * bitcasts that reinterpret a buffer as another shape in another layout. Only a bitcast reads
 * a layout, so every such graph checks that the compiled backends keep the bytes a bitcast
 * reads where the interpreter (which implements bitcast on bytes) says they are.
 *
 * The builder API infers shapes without layouts; the layouts are set on the instructions
 * afterwards, which is what a parsed module holds. */
#include <string.h>
#include "randgraph_int.h"

static void shuffle(gen *g, int64_t *p, int n) {
  for (int i = 0; i < n; i++) p[i] = i;
  for (int i = n - 1; i > 0; i--) {
    int j = rg_below(&g->rz, i + 1);
    int64_t t = p[i];
    p[i] = p[j], p[j] = t;
  }
}

/* Sets s's layout from a major-to-minor order. */
static void set_major_to_minor(cx_shape *s, const int64_t *p) {
  s->has_layout = 1;
  for (int j = 0; j < s->rank; j++) s->minor_to_major[s->rank - 1 - j] = (int8_t)p[j];
}

static gval relayout(gen *g, gval v) {
  int64_t p[CXLA_MAX_RANK];
  shuffle(g, p, v.in->shape.rank);
  set_major_to_minor(&v.in->shape, p);
  return v;
}

/* v's bytes as another array: its physical dims regrouped (a random factorisation), read in a
 * random layout. The bytes are all that bitcast keeps, so the result's logical dims are the
 * regrouped physical dims put back through that layout. */
static gval bitcast(gen *g, gval v) {
  const cx_shape *s = &v.in->shape;
  int64_t n = cx_shape_elems(s), q[CXLA_MAX_RANK], p[CXLA_MAX_RANK], f[64];
  int nf = 0, rank = 1 + rg_below(&g->rs, 4);
  for (int64_t k = 2, m = n; m > 1 && nf < 60;) { /* prime factors */
    if (m % k == 0) f[nf++] = k, m /= k;
    else if (k * k > m) f[nf++] = m, m = 1;
    else k++;
  }
  for (int d = 0; d < rank; d++) q[d] = 1;
  for (int i = 0; i < nf; i++) q[rg_below(&g->rz, rank)] *= f[i];
  if (n == 0) q[rg_below(&g->rz, rank)] = 0;
  shuffle(g, p, rank);
  if (rg_chance(g, 0.5)) /* mostly the default layout, as after XLA's copies */
    for (int j = 0; j < rank; j++) p[j] = j;
  int64_t dims[CXLA_MAX_RANK];
  for (int j = 0; j < rank; j++) dims[p[j]] = q[j];
  cx_shape rs = cx_shape_array(s->type, rank, dims);
  cxla_builder *b = g->cur->b;
  cx_instr *x = v.in, *in = cx_b_new(b, CX_OP_BITCAST, 1, &x, &rs);
  if (!in) return (gval){0};
  gval r = rg_v(g, cx_b_done(b, in));
  if (rg_ok(r)) set_major_to_minor(&r.in->shape, p);
  return r;
}

/* A transpose laid out so that it keeps its operand's bytes: result dim i is operand dim
 * perm[i], so the result's major-to-minor order is the operand's, renumbered. */
static gval bytes_keeping_transpose(gen *g, gval v) {
  const cx_shape *s = &v.in->shape;
  int64_t perm[CXLA_MAX_RANK], inv[CXLA_MAX_RANK], p1[CXLA_MAX_RANK], p[CXLA_MAX_RANK];
  int rank = s->rank;
  shuffle(g, perm, rank);
  cx_shape_major_to_minor(s, p1);
  for (int i = 0; i < rank; i++) inv[perm[i]] = i;
  for (int j = 0; j < rank; j++) p[j] = inv[p1[j]];
  gval r = rg_v(g, cxla_builder_transpose(g->cur->b, v.op, perm));
  if (rg_ok(r)) set_major_to_minor(&r.in->shape, p);
  return r;
}

void rg_op_layout(gen *g) {
  gval v;
  if (!rg_pick(g, NULL, NULL, &v) || !rg_ok(v)) return;
  switch (rg_below(&g->rs, 4)) {
  case 0: /* a value (a parameter too) that lives in another layout */
    relayout(g, v);
    return;
  case 1: { /* copy to another layout, then (mostly) reinterpret it, as XLA's dumps do: a
             * value in some layout copied to the default one, or the other way round */
    int to_default = rg_chance(g, 0.5);
    if (to_default) relayout(g, v);
    gval c = rg_v(g, cxla_builder_copy(g->cur->b, v.op));
    if (!rg_ok(c)) return;
    if (!to_default) relayout(g, c);
    rg_keep(g, rg_chance(g, 0.7) ? bitcast(g, c) : c);
    return;
  }
  case 2: { /* a transpose that is a bitcast */
    gval t = bytes_keeping_transpose(g, v);
    if (!rg_ok(t)) return;
    rg_keep(g, rg_chance(g, 0.5) ? bitcast(g, t) : t);
    return;
  }
  default:
    rg_keep(g, bitcast(g, v));
    return;
  }
}
