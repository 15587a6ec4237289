/* rules_dot_conv.c — gradients of dot (any batch and contracting dims) and convolution (lhs
 * and rhs, with strides, padding, both dilations, feature and batch groups), after jax's
 * dot_general and conv_general_dilated transpose rules. A result wider than the operands
 * (bf16 x bf16 -> f32) sends its cotangent back in the operand's type. */
#include "grad/grad_int.h"

#define E (&s->e)

/* ---- dot ---- */

static int in_ints(const cx_ints *l, int64_t v) {
  for (int i = 0; i < l->n; i++)
    if (l->v[i] == v) return i;
  return -1;
}

/* The dims of an operand of `rank` in none of the lists, in order. */
static int free_dims(int rank, const cx_ints *a, const cx_ints *b, int64_t *out) {
  int n = 0;
  for (int d = 0; d < rank; d++)
    if (in_ints(a, d) < 0 && in_ints(b, d) < 0) out[n++] = d;
  return n;
}

static cx_instr *make_dot(gr_state *s, cx_instr *l, cx_instr *r, const int64_t *lb, const int64_t *rb, int nb,
                          const int64_t *lc, const int64_t *rc, int nc, cxla_type t) {
  cx_shape declared = cx_shape_scalar(t);
  cx_instr *ops[2] = {l, r};
  cx_instr *in = gr_new(E, CX_OP_DOT, &declared, 2, ops);
  if (in && (!gr_ints(E, &in->a.dot.lhs_batch, nb, lb) || !gr_ints(E, &in->a.dot.rhs_batch, nb, rb) ||
             !gr_ints(E, &in->a.dot.lhs_contract, nc, lc) || !gr_ints(E, &in->a.dot.rhs_contract, nc, rc)))
    return NULL;
  return gr_done(E, in);
}

/* The cotangent of one operand (which = 0: lhs, 1: rhs) of y = dot(a, b). y's dims are
 * batch, lhs free, rhs free. The cotangent is dot(g, other) (lhs) or dot(other, g) (rhs)
 * contracting g's dims of the other operand's free dims; what comes out is batch, then this
 * operand's free dims and the other's contracting dims (in the other's order), which name
 * this operand's contracting dims: a transpose puts them in place. */
static cx_instr *dot_operand(gr_state *s, cx_instr *in, cx_instr *g, int which) {
  const cx_dot_dims *dd = &in->a.dot;
  cx_instr *me = gr_x(s, in, which), *other = gr_x(s, in, 1 - which);
  const cx_ints *my_b = which ? &dd->rhs_batch : &dd->lhs_batch, *my_c = which ? &dd->rhs_contract : &dd->lhs_contract;
  const cx_ints *ot_b = which ? &dd->lhs_batch : &dd->rhs_batch, *ot_c = which ? &dd->lhs_contract : &dd->rhs_contract;
  int nb = my_b->n, rank = me->shape.rank;
  int64_t my_f[CXLA_MAX_RANK], ot_f[CXLA_MAX_RANK], gb[CXLA_MAX_RANK], gc[CXLA_MAX_RANK];
  int nmf = free_dims(rank, my_b, my_c, my_f), nof = free_dims(other->shape.rank, ot_b, ot_c, ot_f);
  for (int i = 0; i < nb; i++) gb[i] = i;
  /* g's dims holding the other operand's free dims (y has lhs free before rhs free) */
  int64_t g_other0 = which ? nb : nb + nmf;
  for (int i = 0; i < nof; i++) gc[i] = g_other0 + i;
  cxla_type t = me->shape.type;
  g = gr_convert(E, g, t);
  other = gr_convert(E, other, t);
  cx_instr *r = which ? make_dot(s, other, g, ot_b->v, gb, nb, ot_f, gc, nof, t)
                      : make_dot(s, g, other, gb, ot_b->v, nb, gc, ot_f, nof, t);
  /* which of my dims each result dim is */
  int64_t src[CXLA_MAX_RANK], perm[CXLA_MAX_RANK];
  int k = 0;
  if (!which) {
    for (int i = 0; i < nb; i++) src[k++] = my_b->v[i];
    for (int i = 0; i < nmf; i++) src[k++] = my_f[i];
    for (int d = 0; d < other->shape.rank; d++) /* the other's contracting dims, in its order */
      if (in_ints(ot_c, d) >= 0) src[k++] = my_c->v[in_ints(ot_c, d)];
  } else {
    for (int i = 0; i < nb; i++) src[k++] = my_b->v[i];
    for (int d = 0; d < other->shape.rank; d++)
      if (in_ints(ot_c, d) >= 0) src[k++] = my_c->v[in_ints(ot_c, d)];
    for (int i = 0; i < nmf; i++) src[k++] = my_f[i];
  }
  for (int i = 0; i < k; i++) perm[src[i]] = i;
  return gr_transpose(E, r, perm);
}

cxla_status gr_rule_dot(gr_state *s, cx_instr *in, const gr_ct *ct) {
  for (int which = 0; which < 2; which++)
    if (gr_wants(s, in, which)) gr_acc(s, in->ops[which], dot_operand(s, in, ct->v, which));
  return s->e.st;
}

/* ---- convolution ----
 * A spec lists an operand's dims as (batch-like, feature-like, spatial...): the input
 * (batch, feature), the kernel (output feature, input feature) and the output (batch,
 * feature), as jax's ConvDimensionNumbers do. */
typedef struct spec {
  int n;
  int64_t d[CXLA_MAX_RANK];
} spec;

static void specs_of(const cx_conv_dims *c, spec *l, spec *r, spec *o) {
  int ns = c->nspatial;
  l->n = r->n = o->n = ns + 2;
  l->d[0] = c->in_batch, l->d[1] = c->in_feature;
  r->d[0] = c->k_out, r->d[1] = c->k_in;
  o->d[0] = c->out_batch, o->d[1] = c->out_feature;
  for (int i = 0; i < ns; i++) {
    l->d[2 + i] = c->in_spatial[i];
    r->d[2 + i] = c->k_spatial[i];
    o->d[2 + i] = c->out_spatial[i];
  }
}

static spec swapped(spec s) {
  int64_t t = s.d[0];
  s.d[0] = s.d[1];
  s.d[1] = t;
  return s;
}

static cx_conv_dims dims_of(const spec *l, const spec *r, const spec *o) {
  cx_conv_dims c = {0};
  c.nspatial = l->n - 2;
  c.in_batch = l->d[0], c.in_feature = l->d[1];
  c.k_out = r->d[0], c.k_in = r->d[1];
  c.out_batch = o->d[0], c.out_feature = o->d[1];
  for (int i = 0; i < c.nspatial; i++) {
    c.in_spatial[i] = l->d[2 + i];
    c.k_spatial[i] = r->d[2 + i];
    c.out_spatial[i] = o->d[2 + i];
  }
  return c;
}

/* Dim `at` of x split into (groups, rest), groups major. */
static cx_instr *axis_out_of(gr_state *s, cx_instr *x, int64_t at, int64_t groups) {
  if (!x) return NULL;
  int64_t dims[CXLA_MAX_RANK];
  int r = x->shape.rank, k = 0;
  for (int d = 0; d < r; d++) {
    if (d == at) {
      dims[k++] = groups;
      dims[k++] = x->shape.dims[d] / groups;
    } else {
      dims[k++] = x->shape.dims[d];
    }
  }
  return gr_reshape(E, x, r + 1, dims);
}

/* Dim src of x merged into dim dst (numbered without src) as its major part. */
static cx_instr *axis_into(gr_state *s, cx_instr *x, int64_t src, int64_t dst) {
  if (!x) return NULL;
  int r = x->shape.rank;
  int64_t perm[CXLA_MAX_RANK], dims[CXLA_MAX_RANK];
  int k = 0;
  for (int d = 0; d < r; d++)
    if (d != src) perm[k++] = d;
  for (int i = r - 1; i > dst; i--) perm[i] = perm[i - 1];
  perm[dst] = src;
  for (int i = 0, j = 0; i < r; i++)
    if (i != src) dims[j++] = x->shape.dims[i];
  dims[dst] *= x->shape.dims[src];
  return gr_reshape(E, gr_transpose(E, x, perm), r - 1, dims);
}

static cx_instr *make_conv(gr_state *s, cx_instr *l, cx_instr *r, const cx_conv_dims *cd, const cx_window_dim *w,
                           int64_t fg, int64_t bg, cxla_type t) {
  cx_shape declared = cx_shape_scalar(t);
  cx_instr *ops[2] = {l, r};
  cx_instr *in = gr_new(E, CX_OP_CONVOLUTION, &declared, 2, ops);
  if (in) {
    in->a.feature_group_count = fg;
    in->a.batch_group_count = bg;
    in->a.conv = cx_arena_memdup(&s->e.c->module->arena, cd, sizeof *cd);
    if (!in->a.conv || !gr_window(E, &in->a.window, cd->nspatial, w)) {
      if (s->e.st == CXLA_OK) s->e.st = cx_oom(s->e.g->m->ctx);
      return NULL;
    }
  }
  return gr_done(E, in);
}

static int64_t dilated(int64_t n, int64_t d) { return n == 0 ? 0 : 1 + d * (n - 1); }

/* d lhs: the cotangent convolved with the reversed kernel, its in/out features swapped,
 * strides becoming input dilation (jax's _conv_general_dilated_transpose_lhs). */
static cx_instr *conv_lhs(gr_state *s, cx_instr *in, cx_instr *g) {
  const cx_window *w = &in->a.window;
  cx_instr *x = gr_x(s, in, 0), *k = gr_x(s, in, 1);
  int ns = w->rank;
  spec ls, rs, os;
  specs_of(in->a.conv, &ls, &rs, &os);
  int64_t fg = in->a.feature_group_count, bg = in->a.batch_group_count, groups = 1;
  cxla_type t = x->shape.type;
  k = gr_convert(E, k, t);
  if (fg > 1 || bg > 1) {
    groups = fg > 1 ? fg : bg;
    k = axis_into(s, axis_out_of(s, k, rs.d[0], groups), rs.d[0], rs.d[1]);
  }
  cx_window_dim nw[CXLA_MAX_RANK];
  int64_t rev[CXLA_MAX_RANK];
  for (int i = 0; i < ns; i++) {
    const cx_window_dim *wd = &w->d[i];
    int64_t in_dil = dilated(x->shape.dims[ls.d[2 + i]], wd->lhs_dilate);
    int64_t k_dil = dilated(wd->size, wd->rhs_dilate);
    int64_t out_dil = dilated(g->shape.dims[os.d[2 + i]], wd->stride);
    int64_t before = k_dil - wd->pad_lo - 1, after = in_dil + k_dil - 1 - out_dil - before;
    nw[i] = (cx_window_dim){wd->size, wd->lhs_dilate, before, after, wd->stride, wd->rhs_dilate, 0};
    rev[i] = rs.d[2 + i];
  }
  cx_conv_dims cd = dims_of(&os, (spec[]){swapped(rs)}, &ls);
  cx_instr *r = make_conv(s, gr_convert(E, g, t), gr_reverse(E, k, ns, rev), &cd, nw, groups, 1, t);
  if (bg > 1) r = axis_into(s, axis_out_of(s, r, ls.d[1], bg), ls.d[1], ls.d[0]);
  return r;
}

/* d rhs: the input convolved with the cotangent as kernel, batch and feature roles swapped,
 * strides becoming kernel dilation (jax's _conv_general_dilated_transpose_rhs); feature
 * groups become batch groups and the other way round. */
static cx_instr *conv_rhs(gr_state *s, cx_instr *in, cx_instr *g) {
  const cx_window *w = &in->a.window;
  cx_instr *x = gr_x(s, in, 0), *k = gr_x(s, in, 1);
  int ns = w->rank;
  spec ls, rs, os;
  specs_of(in->a.conv, &ls, &rs, &os);
  int64_t fg = in->a.feature_group_count, bg = in->a.batch_group_count;
  cxla_type t = k->shape.type;
  cx_window_dim nw[CXLA_MAX_RANK];
  for (int i = 0; i < ns; i++) {
    const cx_window_dim *wd = &w->d[i];
    int64_t in_dil = dilated(x->shape.dims[ls.d[2 + i]], wd->lhs_dilate);
    int64_t k_dil = dilated(wd->size, wd->rhs_dilate);
    int64_t out_dil = dilated(g->shape.dims[os.d[2 + i]], wd->stride);
    int64_t hi = (out_dil - in_dil) + (k_dil - wd->pad_lo - 1);
    nw[i] = (cx_window_dim){g->shape.dims[os.d[2 + i]], wd->rhs_dilate, wd->pad_lo, hi, wd->lhs_dilate, wd->stride, 0};
  }
  spec lt = swapped(ls), ot = swapped(os), rt = swapped(rs);
  cx_conv_dims cd = dims_of(&lt, &ot, &rt);
  return make_conv(s, gr_convert(E, x, t), gr_convert(E, g, t), &cd, nw, bg > 1 ? bg : 1, fg > 1 ? fg : 1, t);
}

cxla_status gr_rule_convolution(gr_state *s, cx_instr *in, const gr_ct *ct) {
  for (int d = 0; d < in->a.window.rank; d++)
    if (in->a.window.d[d].reversal) return gr_refuse(s, in, "window reversal has no gradient rule");
  if (!in->a.conv) return gr_refuse(s, in, "a convolution without dim_labels has no gradient rule");
  if (gr_wants(s, in, 0)) gr_acc(s, in->ops[0], conv_lhs(s, in, ct->v));
  if (gr_wants(s, in, 1)) gr_acc(s, in->ops[1], conv_rhs(s, in, ct->v));
  return s->e.st;
}
