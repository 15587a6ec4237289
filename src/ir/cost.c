/* cost.c — flops, transcendentals and bytes accessed of a module, by XLA's HloCostAnalysis
 * rules, so that JAX's compiled.cost_analysis() means on cxla what it means on XLA:
 *  - elementwise ops (compare, select, clamp and convert too): one flop per result element,
 *    or one transcendental for the op table's TRANSCENDENTAL ops, none for its MOVES ops;
 *  - dot: 2 × result elements × contraction size; ragged-dot likewise (each row meets one
 *    group's matrix); convolution: 2 × (input features / feature groups) × output features ×
 *    (batch / batch groups) × the (output, kernel) position pairs of each spatial dimension
 *    whose input element exists (padding and dilation holes do not count);
 *  - reduce: (operand elements − result elements) applications of its computation; reduce-window:
 *    (window elements − 1) per result element; select-and-scatter: (window − 1) selects and one
 *    scatter per source element; map: one per element; scatter: one per update element;
 *    all-reduce and reduce-scatter: one per result element; sort: n·⌈log2 n⌉ flops; fft:
 *    8 × elements × Π log2(length);
 *  - bytes: every instruction's operand and result bytes, except what moves no data
 *    (parameters, constants, get-tuple-element, bitcasts, tokens' after-all and
 *    add-dependency); a tuple counts its pointer table; slices count twice their result,
 *    dynamic-update-slice twice its update (the rest of its operand stays in place). A fusion
 *    counts its results, the operands its body reads, and its body's arithmetic; computations applied per
 *    element (reduce, map, sort's comparator) count their arithmetic only;
 *  - control flow: a call once, a while loop's condition and body per trip where the trip
 *    count is known (XLA counts one trip), a conditional its costliest branch. */
#include <math.h>
#include <string.h>
#include "ir/cost.h"
#include "ir/ops.h"
#include "ir/while_trips.h"

static void comp_cost(const cx_comp *c, int with_bytes, cx_cost *out);

static double elems(const cx_shape *s) {
  if (cx_shape_is_tuple(s)) return 0;
  int64_t n = cx_shape_elems(s);
  return n > 0 ? (double)n : 0;
}

static double bytes_of(const cx_shape *s) { return (double)cx_shape_leaves_bytes(s); }

/* The arithmetic of one application of x's i-th called computation. */
static cx_cost applied(const cx_instr *x, int i) {
  cx_cost c = {0, 0, 0};
  if (i < x->ncalled && x->called[i]) comp_cost(x->called[i], 0, &c);
  return c;
}

static void add_scaled(cx_cost *out, const cx_cost *c, double times) {
  out->flops += c->flops * times;
  out->transcendentals += c->transcendentals * times;
  out->bytes += c->bytes * times;
}

/* (output, kernel) position pairs of window dim w whose input element exists: the input index
 * o·stride + k·rhs_dilate − pad_lo must land on an element of the lhs-dilated input. Per output
 * position, the kernel positions in range are an interval, counted in one step without lhs
 * dilation; with it, only every (ld / gcd(rd, ld))-th lands on an element, found within ld
 * steps: O(outputs × ld), whatever the kernel's size. */
static int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

static double valid_pairs(const cx_window_dim *w, int64_t in, int64_t out, int64_t k) {
  int64_t ld = w->lhs_dilate > 0 ? w->lhs_dilate : 1, rd = w->rhs_dilate > 0 ? w->rhs_dilate : 1;
  int64_t st = w->stride > 0 ? w->stride : 1, span = (in - 1) * ld;
  int64_t g = ld, r = rd;
  while (r) { int64_t t = g % r; g = r; r = t; } /* gcd(ld, rd) */
  int64_t period = ld / g;
  double n = 0;
  for (int64_t o = 0; o < out; o++) {
    int64_t base = o * st - w->pad_lo;
    int64_t lo = base < 0 ? floor_div(-base + rd - 1, rd) : 0; /* first k with base + k·rd >= 0 */
    int64_t hi = floor_div(span - base, rd);                     /* last k with base + k·rd <= span */
    if (hi > k - 1) hi = k - 1;
    if (hi < lo) continue;
    if (ld == 1) { n += (double)(hi - lo + 1); continue; }
    int64_t first = -1;
    for (int64_t j = lo; j <= hi && j < lo + period; j++)
      if ((base + j * rd) % ld == 0) { first = j; break; }
    if (first >= 0) n += (double)((hi - first) / period + 1);
  }
  return n;
}

static double conv_flops(const cx_instr *x) {
  const cx_conv_dims *cd = x->a.conv;
  if (!cd || x->nops < 2) return 0;
  const cx_shape *is = &x->ops[0]->shape, *ks = &x->ops[1]->shape, *os = &x->shape;
  int64_t fg = x->a.feature_group_count > 0 ? x->a.feature_group_count : 1;
  int64_t bg = x->a.batch_group_count > 0 ? x->a.batch_group_count : 1;
  double fma = (double)(is->dims[cd->in_feature] / fg) * (double)os->dims[cd->out_feature] *
               (double)(is->dims[cd->in_batch] / bg);
  for (int d = 0; d < cd->nspatial && d < x->a.window.rank; d++)
    fma *= valid_pairs(&x->a.window.d[d], is->dims[cd->in_spatial[d]], os->dims[cd->out_spatial[d]],
                       ks->dims[cd->k_spatial[d]]);
  return 2 * fma;
}

static double contraction(const cx_instr *x) {
  double k = 1;
  const cx_ints *lc = &x->a.dot.lhs_contract;
  for (int i = 0; i < lc->n; i++) k *= (double)x->ops[0]->shape.dims[lc->v[i]];
  return k;
}

/* A fusion reads the operands whose parameters something in its body reads (XLA weighs each
 * operand by its parameter's use; a compiled module's fusions may carry operands their body
 * no longer reads, as an epilogue split from its product keeps the product's). */
static double fusion_bytes(const cx_instr *x) {
  double t = bytes_of(&x->shape);
  const cx_comp *fc = x->ncalled == 1 ? x->called[0] : NULL;
  unsigned char small[256], *read = !fc ? NULL : x->nops <= 256 ? small : cx_calloc((size_t)x->nops, 1);
  if (!read) { /* every operand (no body to ask, or no memory to ask it with) */
    for (int i = 0; i < x->nops; i++) t += bytes_of(&x->ops[i]->shape);
    return t;
  }
  if (read == small) memset(small, 0, (size_t)x->nops);
  for (int j = 0; j < fc->ninstrs; j++) {
    const cx_instr *y = fc->instrs[j];
    for (int k = 0; k < y->nops; k++)
      if (y->ops[k]->op == CX_OP_PARAMETER && y->ops[k]->a.index >= 0 && y->ops[k]->a.index < x->nops)
        read[y->ops[k]->a.index] = 1;
  }
  if (fc->root && fc->root->op == CX_OP_PARAMETER && fc->root->a.index >= 0 && fc->root->a.index < x->nops)
    read[fc->root->a.index] = 1;
  for (int i = 0; i < x->nops; i++)
    if (read[i]) t += bytes_of(&x->ops[i]->shape);
  if (read != small) cx_free(read);
  return t;
}

/* Bytes x moves (operands and result, with XLA's exceptions). */
static double instr_bytes(const cx_instr *x) {
  switch (x->op) {
  case CX_OP_PARAMETER: case CX_OP_CONSTANT: case CX_OP_GET_TUPLE_ELEMENT: case CX_OP_BITCAST:
  case CX_OP_AFTER_ALL: case CX_OP_ADD_DEPENDENCY: case CX_OP_DOMAIN:
    return 0;
  case CX_OP_TUPLE: return 8.0 * x->nops; /* its pointer table */
  case CX_OP_SLICE: return 2 * bytes_of(&x->shape);
  case CX_OP_DYNAMIC_SLICE: {
    double t = 2 * bytes_of(&x->shape);
    for (int i = 1; i < x->nops; i++) t += bytes_of(&x->ops[i]->shape);
    return t;
  }
  case CX_OP_DYNAMIC_UPDATE_SLICE: {
    double t = x->nops > 1 ? 2 * bytes_of(&x->ops[1]->shape) : 0;
    for (int i = 2; i < x->nops; i++) t += bytes_of(&x->ops[i]->shape);
    return t;
  }
  case CX_OP_FUSION: return fusion_bytes(x);
  default: {
    double t = bytes_of(&x->shape);
    for (int i = 0; i < x->nops; i++) t += bytes_of(&x->ops[i]->shape);
    return t;
  }
  }
}

/* x's arithmetic (flops and transcendentals) into out; 1 for control flow, whose bytes are its
 * callees' (counted here, with_bytes), 0 for an op whose own bytes the caller counts. */
static int instr_cost(const cx_instr *x, int with_bytes, cx_cost *out) {
  const cx_shape *s0 = x->nops ? &x->ops[0]->shape : &x->shape;
  cx_cost sub;
  switch (x->op) {
  case CX_OP_DOT:
  case CX_OP_RAGGED_DOT:
  case CX_OP_SCALED_DOT: out->flops += 2 * elems(&x->shape) * contraction(x); return 0;
  case CX_OP_CONVOLUTION: out->flops += conv_flops(x); return 0;
  case CX_OP_REDUCE: {
    const cx_shape *r = cx_shape_is_tuple(&x->shape) ? cx_shape_leaf(&x->shape, 0) : &x->shape;
    sub = applied(x, 0);
    add_scaled(out, &sub, fmax(elems(s0) - elems(r), 0)); /* an empty operand: none */
    return 0;
  }
  case CX_OP_REDUCE_WINDOW: {
    const cx_shape *r = cx_shape_is_tuple(&x->shape) ? cx_shape_leaf(&x->shape, 0) : &x->shape;
    int64_t w = cx_window_elems(&x->a.window);
    sub = applied(x, 0);
    add_scaled(out, &sub, (double)(w > 0 ? w - 1 : 0) * elems(r));
    return 0;
  }
  case CX_OP_SELECT_AND_SCATTER: {
    int64_t w = cx_window_elems(&x->a.window);
    double src = x->nops > 1 ? elems(&x->ops[1]->shape) : 0;
    sub = applied(x, 0);
    add_scaled(out, &sub, src * (double)(w > 0 ? w - 1 : 0));
    sub = applied(x, 1);
    add_scaled(out, &sub, src);
    return 0;
  }
  case CX_OP_MAP: case CX_OP_ALL_REDUCE: case CX_OP_REDUCE_SCATTER:
    sub = applied(x, 0);
    add_scaled(out, &sub, elems(cx_shape_is_tuple(&x->shape) ? cx_shape_leaf(&x->shape, 0) : &x->shape));
    return 0;
  case CX_OP_SCATTER: { /* operands: inputs..., indices, updates... (as many as inputs) */
    int n = (x->nops - 1) / 2;
    sub = applied(x, 0);
    add_scaled(out, &sub, n >= 1 ? elems(&x->ops[n + 1]->shape) : 0);
    return 0;
  }
  case CX_OP_SORT: {
    double n = elems(s0);
    out->flops += n > 1 ? n * ceil(log2(n)) : 0;
    return 0;
  }
  case CX_OP_FFT: {
    double f = 1;
    for (int i = 0; i < x->a.fft_length.n; i++) f *= x->a.fft_length.v[i] > 1 ? floor(log2((double)x->a.fft_length.v[i])) : 0;
    out->flops += 8 * f * elems(&x->shape);
    return 0;
  }
  case CX_OP_WHILE: { /* called: condition, body */
    int64_t trips = 1;
    if (!cx_while_trip_count(x, &trips) || trips < 0) trips = 1;
    for (int i = 0; i < x->ncalled; i++) {
      cx_cost c = {0, 0, 0};
      comp_cost(x->called[i], with_bytes, &c);
      add_scaled(out, &c, (double)trips);
    }
    return 1;
  }
  case CX_OP_CONDITIONAL: {
    cx_cost most = {0, 0, 0};
    for (int i = 0; i < x->ncalled; i++) {
      cx_cost c = {0, 0, 0};
      comp_cost(x->called[i], with_bytes, &c);
      most.flops = fmax(most.flops, c.flops);
      most.transcendentals = fmax(most.transcendentals, c.transcendentals);
      most.bytes = fmax(most.bytes, c.bytes);
    }
    add_scaled(out, &most, 1);
    return 1;
  }
  case CX_OP_CALL: case CX_OP_ASYNC_START:
    for (int i = 0; i < x->ncalled; i++) comp_cost(x->called[i], with_bytes, out);
    return 1;
  case CX_OP_FUSION: /* its arithmetic; its bytes are fusion_bytes' */
    for (int i = 0; i < x->ncalled; i++) comp_cost(x->called[i], 0, out);
    return 0;
  default:
    if (cx_op_class_of(x->op) != CX_CLASS_ELEMENTWISE || cx_op_moves_only(x->op)) return 0;
    if (cx_op_is_transcendental(x->op)) out->transcendentals += elems(&x->shape);
    else out->flops += elems(&x->shape);
    return 0;
  }
}

static void comp_cost(const cx_comp *c, int with_bytes, cx_cost *out) {
  for (int i = 0; i < c->ninstrs; i++) {
    const cx_instr *x = c->instrs[i];
    if (!instr_cost(x, with_bytes, out) && with_bytes) out->bytes += instr_bytes(x);
  }
}

void cx_module_cost(const cx_module *m, cx_cost *out) {
  out->flops = out->transcendentals = out->bytes = 0;
  if (m && m->entry) comp_cost(m->entry, 1, out);
}
