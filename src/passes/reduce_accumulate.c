/* reduce_accumulate.c — how compiled float sums accumulate (docs/numerics.md): in f32 for
 * f16/bf16 data and in c128 for c64 data, rounded once at the end, and in chains of at most
 * CX_SUM_CHAIN elements.
 *
 * A `reduce` whose reducer adds its two parameters is a sum. Summed in its own 16-bit type, a
 * bf16 sum of a few thousand terms is mostly rounding error, and a sequential f32 sum's error
 * grows with its length (n * 2^-24 * sum|x|; a sum of ones stops growing at 2^24). So, like
 * XLA, a 16-bit sum is converted to f32, summed there, and converted back once; and a sum of
 * more than CX_SUM_CHAIN elements becomes a tree of reduces (XLA's TreeReductionRewriter):
 * the innermost reduced dimensions, split (and padded with -0, the identity of +) where one
 * alone is longer than the chain, are summed first, then the partial sums, and so on. Each
 * element then goes through at most ceil(log_CHAIN n) chains of at most CHAIN additions, which
 * bounds the error by about that many times CHAIN * 2^-24 * sum|x| whatever n is; the partial
 * sums are also independent outputs, so a long sum to a scalar uses every core.
 *
 * Only the last reduce of a tree adds the init value (the others start from -0). c64 sums
 * accumulate in c128 (double parts) and round once, like 16-bit ones in f32, and long ones
 * become trees too (padded with (-0, -0)). Sums in f64 and c128 and non-sum reducers are left
 * alone. Runs before fusion; fused computations from the input
 * module are not touched (a fusion holds at most what its kind allows). */
#include <string.h>
#include "ir/edit.h"
#include "passes/pass.h"

/* Sums of at most this many elements stay one reduce: rows up to 32k (softmax over a large
 * vocabulary) stay single kernels, and the kernels' vector lanes split the chain further. */
#define CX_SUM_CHAIN 32768

static int is_sum_reducer(const cx_comp *c) {
  const cx_instr *r = cx_comp_binary_of_params(c);
  return r && r->op == CX_OP_ADD && r->shape.rank == 0 &&
         (cx_type_is_float(r->shape.type) || cx_type_is_complex(r->shape.type));
}

/* The wide sums: f32 for f16/bf16 data, c128 (double parts) for c64. */
enum { WIDE_F32, WIDE_C128, WIDE_KINDS };
static const cxla_type k_wide[WIDE_KINDS] = {CXLA_F32, CXLA_C128};

/* A sum computation of wide type k, created once per module; the pass adds it to the module
 * when done (first: callees come before their callers in m->comps). */
static cx_comp *wide_sum(cx_module *m, cx_comp **cache, int k) {
  if (cache[k]) return cache[k];
  const char *name = cx_module_unique_name(m, k == WIDE_F32 ? "sum_f32" : "sum_c128");
  cx_comp *c = name ? cx_comp_new(m, name) : NULL;
  if (!c) return NULL;
  cx_shape s = cx_shape_scalar(k_wide[k]);
  cx_instr *p[2];
  for (int i = 0; i < 2; i++) {
    if (!(p[i] = cx_instr_add(c, CX_OP_PARAMETER, &s, 0, NULL, c->loc))) return NULL;
    p[i]->a.index = i;
  }
  if (!(c->root = cx_instr_add(c, CX_OP_ADD, &s, 2, p, c->loc)) || !cx_comp_index_params(c)) return NULL;
  return cache[k] = c;
}

static int add_first(cx_module *m, cx_comp *c) {
  if (!cx_module_add_comp(m, c)) return 0;
  memmove(m->comps + 1, m->comps, sizeof *m->comps * (size_t)(m->ncomps - 1));
  m->comps[0] = c;
  return 1;
}

static cx_instr *constant(cx_instr *at, cxla_type t, double v) {
  cx_module *m = at->parent->module;
  cx_shape s = cx_shape_scalar(t);
  cxla_literal *lit = cx_literal_new(&s);
  if (!lit) return cx_oom(m->ctx), NULL;
  cx_store_complex(t, lit->data, 0, v, v); /* complex: -0 in both parts, the identity of + */
  if (!cx_module_own_literal(m, lit)) return NULL;
  cx_instr *c = cx_instr_add(at->parent, CX_OP_CONSTANT, &s, 0, NULL, at->loc);
  if (c) c->a.literal = lit;
  return c;
}

static cx_instr *convert(cx_instr *at, cx_instr *x, cxla_type t) {
  cx_shape s = cx_shape_array(t, x->shape.rank, x->shape.dims);
  return cx_instr_add(at->parent, CX_OP_CONVERT, &s, 1, &x, at->loc);
}

/* reduce(x, init) over the dimensions flagged in red[], with the sum computation f. */
static cx_instr *sum(cx_instr *at, cx_instr *x, cx_instr *init, const uint8_t *red, cx_comp *f) {
  int64_t dims[CXLA_MAX_RANK], rd[CXLA_MAX_RANK];
  int nk = 0, nr = 0;
  for (int d = 0; d < x->shape.rank; d++) {
    if (red[d]) rd[nr++] = d;
    else dims[nk++] = x->shape.dims[d];
  }
  cx_shape s = cx_shape_array(x->shape.type, nk, dims);
  cx_instr *ops[2] = {x, init};
  cx_instr *r = cx_instr_add(at->parent, CX_OP_REDUCE, &s, 2, ops, at->loc);
  if (!r || !cx_ints_set(at->parent->module, &r->a.dims, nr, rd) || !cx_instr_set_called(r, 1, &f)) return NULL;
  return r;
}

/* The chain length to split a dimension of D > CX_SUM_CHAIN elements into: a divisor of D
 * near the limit if there is one (a padded dimension costs a bounds check per element in the
 * kernel), else the limit, with padding. */
static int64_t chain_for(int64_t D) {
  for (int64_t b = CX_SUM_CHAIN; b >= CX_SUM_CHAIN / 4; b--)
    if (D % b == 0) return b;
  return CX_SUM_CHAIN;
}

/* One stage of the tree: sums the innermost reduced dimensions of *x (at most CX_SUM_CHAIN
 * elements, splitting the last one if it alone is longer) and updates *x and red[]. */
static int stage(cx_instr *at, cx_instr **x, uint8_t *red, cx_instr *zero, cx_comp *f) {
  const cx_shape *s = &(*x)->shape;
  int rank = s->rank, last = -1;
  for (int d = rank - 1; d >= 0 && last < 0; d--)
    if (red[d] && s->dims[d] > 1) last = d;
  if (last < 0) return 0;
  uint8_t now[CXLA_MAX_RANK] = {0};
  if (s->dims[last] > CX_SUM_CHAIN) { /* [.., D, ..] -> pad to k*B -> [.., k, B, ..] */
    if (rank >= CXLA_MAX_RANK) return 0;
    int64_t D = s->dims[last], B = chain_for(D), k = (D + B - 1) / B;
    cx_instr *y = *x;
    if (k * B != D) {
      int64_t lo[CXLA_MAX_RANK] = {0}, hi[CXLA_MAX_RANK] = {0}, pd[CXLA_MAX_RANK];
      memcpy(pd, s->dims, sizeof pd[0] * (size_t)rank);
      hi[last] = k * B - D, pd[last] = k * B;
      cx_shape ps = cx_shape_array(s->type, rank, pd);
      cx_instr *ops[2] = {y, zero};
      cx_module *m = at->parent->module;
      if (!(y = cx_instr_add(at->parent, CX_OP_PAD, &ps, 2, ops, at->loc)) || !cx_ints_set(m, &y->a.pad_lo, rank, lo) ||
          !cx_ints_set(m, &y->a.pad_hi, rank, hi))
        return -1;
    }
    int64_t sd[CXLA_MAX_RANK];
    for (int d = 0, e = 0; d < rank; d++) {
      if (d == last) sd[e++] = k, sd[e++] = B;
      else sd[e++] = s->dims[d];
    }
    cx_shape rs = cx_shape_array(s->type, rank + 1, sd);
    if (!(y = cx_instr_add(at->parent, CX_OP_RESHAPE, &rs, 1, &y, at->loc))) return -1;
    memmove(red + last + 1, red + last, (size_t)(rank - last));
    now[last + 1] = 1, red[last + 1] = 0;
    *x = y;
  } else { /* the innermost reduced dimensions while their product fits */
    int64_t n = 1;
    for (int d = last; d >= 0; d--) {
      if (!red[d]) continue;
      if (n * s->dims[d] > CX_SUM_CHAIN) break;
      n *= s->dims[d], now[d] = 1, red[d] = 0;
    }
  }
  cx_instr *y = sum(at, *x, zero, now, f);
  if (!y) return -1;
  int e = 0;
  for (int d = 0; d < (*x)->shape.rank; d++)
    if (!now[d]) red[e++] = red[d];
  *x = y;
  return 1;
}

static int64_t summed(const cx_instr *r) {
  int64_t n = 1;
  for (int i = 0; i < r->a.dims.n; i++) n *= r->ops[0]->shape.dims[r->a.dims.v[i]];
  return n;
}

/* Replaces the sum r by its wide and tree form; *changed counts rewrites. */
static cxla_status rewrite(cx_instr *r, cx_comp **wide, int *changed) {
  cx_module *m = r->parent->module;
  cxla_type t = r->shape.type;
  /* f16, bf16 and the 8- and 4-bit floats sum in f32 */
  int k = cx_type_is_float(t) && cx_type_bits(t) < 32 ? WIDE_F32 : t == CXLA_C64 ? WIDE_C128 : -1, narrow = k >= 0;
  if (!narrow && summed(r) <= CX_SUM_CHAIN) return CXLA_OK;
  cx_comp *f = narrow ? wide_sum(m, wide, k) : r->called[0];
  cx_instr *x = r->ops[0], *init = r->ops[1];
  if (!f || (narrow && (!(x = convert(r, x, k_wide[k])) || !(init = convert(r, init, k_wide[k])))))
    return cx_oom(m->ctx);
  cx_instr *zero = constant(r, x->shape.type, -0.0);
  if (!zero) return cx_oom(m->ctx);
  uint8_t red[CXLA_MAX_RANK] = {0};
  for (int i = 0; i < r->a.dims.n; i++) red[r->a.dims.v[i]] = 1;
  for (;;) {
    int64_t n = 1;
    for (int d = 0; d < x->shape.rank; d++) n *= red[d] ? x->shape.dims[d] : 1;
    if (n <= CX_SUM_CHAIN) break;
    int st = stage(r, &x, red, zero, f);
    if (st < 0) return cx_oom(m->ctx);
    if (!st) break;
  }
  cx_instr *y = sum(r, x, init, red, f);
  if (y && narrow) y = convert(r, y, t);
  if (!y) return cx_oom(m->ctx);
  cx_comp_replace_uses(r->parent, r, y);
  ++*changed;
  return CXLA_OK;
}

cxla_status cx_pass_reduce_accumulate(cx_module *m, int *changed) {
  *changed = 0;
  /* computations a fusion calls keep their reduces: a fusion's kind allows one reduce root */
  for (int i = 0; i < m->ncomps; i++) m->comps[i]->aux = NULL;
  for (int i = 0; i < m->ncomps; i++)
    for (int k = 0; k < m->comps[i]->ninstrs; k++) {
      cx_instr *in = m->comps[i]->instrs[k];
      if (in->op == CX_OP_FUSION)
        for (int j = 0; j < in->ncalled; j++) in->called[j]->aux = in;
    }
  cx_comp *wide[WIDE_KINDS] = {0};
  cxla_status s = CXLA_OK;
  for (int i = 0; i < m->ncomps && s == CXLA_OK; i++) {
    cx_comp *c = m->comps[i];
    if (c->aux) continue;
    int n0 = c->ninstrs, ch = 0;
    for (int k = 0; k < n0 && s == CXLA_OK; k++) {
      cx_instr *in = c->instrs[k];
      in->aux = NULL;
      if (in->op != CX_OP_REDUCE || in->nops != 2 || in->ncalled != 1 || in->shape.type == CXLA_TUPLE ||
          in->shape.type == CXLA_F64 || in->shape.type == CXLA_C128 || !is_sum_reducer(in->called[0]))
        continue;
      int was = ch;
      s = rewrite(in, wide, &ch);
      if (ch != was) in->aux = in; /* replaced: nothing uses it any more */
    }
    uint8_t *drop = s == CXLA_OK && ch ? cx_calloc((size_t)c->ninstrs, 1) : NULL;
    if (s == CXLA_OK && ch && !drop) s = cx_oom(m->ctx);
    if (drop) {
      for (int k = 0; k < n0; k++) drop[k] = c->instrs[k]->aux != NULL;
      for (int k = 0; k < n0; k++) c->instrs[k]->aux = NULL;
      cx_comp_remove_instrs(c, drop);
      s = cx_comp_resort(c, "reduce-accumulate");
      *changed = 1;
    }
    cx_free(drop);
  }
  for (int i = 0; i < m->ncomps; i++) m->comps[i]->aux = NULL;
  for (int k = 0; k < WIDE_KINDS && s == CXLA_OK; k++)
    if (wide[k] && !add_first(m, wide[k])) s = CXLA_ERR_OUT_OF_MEMORY;
  return s;
}
