/* fusion_row.c — row fusion: a reduction over the trailing dims of an array and the fusion
 * that reads its result only once per row (a broadcast along the reduced dims) become one
 * kernel that makes its passes over each row while the row is in cache. Softmax's max,
 * {exp, sum} and divide kernels become one that reads x from memory once and writes once (the
 * exp is computed again in the last pass: cheaper than a round trip through memory); layer
 * norm's statistics and normalisation become one.
 *
 * P (a kInput fusion whose reduces run over the trailing dims) merges into C when C runs over
 * P's input dims (a kLoop of that shape, or a kInput with the same reduces' dims) and C reads
 * each of P's results it reads either as a per-row value (only through broadcasts that map the
 * result's dims onto the leading dims) or, for P's input-shaped outputs, element by element at
 * C's own index. The emitter (codegen/reduce_plan.c) runs such a fusion's reduces in stages
 * over each row.
 *
 * Results of a multi-output P that others read too stay outputs of the merged fusion: an
 * attention's softmax keeps its exp and row sums for the backward pass, and its divide still
 * joins the row kernel (one read of the scores, the divide's fast form, no second kernel
 * reading the exp back), while the rows' data is small enough for ordinary stores
 * (ROW_KEEP_MAX_BYTES). A cycle would form if C read something that itself reads P, so then
 * it does not merge; when C is P's only reader none can. */
#include <string.h>
#include "passes/pass.h"
#include "passes/fusion_util.h"

#define ROW_MAX_ELEMS 32768 /* 128 KiB of f32 */
/* Results kept for other readers only while the rows (P's reduce input) are smaller than this:
 * at 8 MiB the emitter (codegen/reduce_emit.c) stores a row kernel's one input-shaped output
 * non-temporally and prefetches the next row, which it does not do for two such outputs; a
 * softmax over f32[4096,4096] keeping its exp ran 17.3 -> 20.2 ms merged. */
#define ROW_KEEP_MAX_BYTES ((int64_t)8 << 20)

/* The number of kept (leading) dims when every reduce of fusion f runs over the trailing
 * dims of one input shape, else -1; *in is that shape. */
static int trailing_row_reduce(const cx_instr *f, const cx_shape **in) {
  const cx_instr *r = fu_first_reduce(f);
  if (fu_kind_of(f) != CX_FUSION_INPUT || !r || !fu_reduces_compatible(f, f)) return -1;
  int rank = r->ops[0]->shape.rank, nk = rank - r->a.dims.n;
  /* rows: at least one kept dim (the rows are the parallel work), and short enough that a
   * row stays in L2 between the passes */
  if (nk < 1 || r->a.dims.n < 1) return -1;
  int64_t row = 1;
  for (int i = 0; i < r->a.dims.n; i++) {
    if (r->a.dims.v[i] < nk || r->a.dims.v[i] >= rank) return -1;
    row *= r->ops[0]->shape.dims[r->a.dims.v[i]];
  }
  if (row > ROW_MAX_ELEMS) return -1;
  *in = &r->ops[0]->shape;
  return nk;
}

/* Every use of `x` (a per-row value) in fused computation b is a broadcast of it onto the
 * leading nk dims of a value with dims `in`, or an elementwise op or reshape of per-row values
 * (mean = sum * 1/n; [8,1] -> [8]) whose uses are such in turn. */
static int only_row_uses(const cx_comp *b, const cx_instr *x, const cx_shape *in, int nk, int *budget) {
  if (b->root == x || --*budget < 0) return 0;
  for (int i = 0; i < b->ninstrs; i++) {
    const cx_instr *u = b->instrs[i];
    int uses = 0;
    for (int j = 0; j < u->nops; j++) uses |= u->ops[j] == x;
    if (!uses) continue;
    if (u->op == CX_OP_BROADCAST && cx_shape_same_dims(&u->shape, in) && u->a.dims.n == nk) {
      for (int d = 0; d < nk; d++)
        if (u->a.dims.v[d] != d) return 0;
    } else {
      int same = cx_op_is_elementwise(u->op) ? cx_shape_same_dims(&u->shape, &x->shape)
                 : u->op == CX_OP_RESHAPE ? cx_shape_elems(&u->shape) == cx_shape_elems(&x->shape)
                                          : 0;
      if (!same || !only_row_uses(b, u, in, nk, budget)) return 0;
    }
  }
  return 1;
}

/* C reads operand j (one of P's results) the way a row kernel can. -1 on OOM. */
static int operand_ok(const cx_instr *c, int j, const cx_shape *in, int nk) {
  const cx_instr *o = c->ops[j];
  if (!cx_type_is_array(o->shape.type)) return 0;
  if (cx_shape_same_dims(&o->shape, in)) { /* an input-shaped output: at C's own index */
    fu_param_use u;
    if (!fu_analyze_operand(c, j, &u)) return -1;
    return u.elementwise && !u.reused;
  }
  const cx_comp *b = c->called[0];
  for (int i = 0; i < b->ninstrs; i++) {
    const cx_instr *x = b->instrs[i];
    int budget = 256;
    if (x->op == CX_OP_PARAMETER && x->a.index == j && !only_row_uses(b, x, in, nk, &budget)) return 0;
  }
  return 1;
}

/* P's results as C's operands: P itself, or get-tuple-elements of a multi-output P. Fills
 * parts (the get-tuple-elements) and returns their number, or -1 when C does not read them as
 * a row kernel can or the merge is not allowed; -2 on OOM. out[g] is set for the parts whose
 * value others read too (they stay outputs of the merged fusion). */
static int row_edge(cx_comp *c, cx_instr *p, cx_instr *cons, cx_instr **gtes, int *out, int cap) {
  const cx_shape *in;
  int nk = trailing_row_reduce(p, &in);
  cx_fusion_kind kc = fu_kind_of(cons);
  if (nk < 0 || cons == p || (kc != CX_FUSION_LOOP && kc != CX_FUSION_INPUT) || c->root == p) return -1;
  if (fu_is_multi_output(cons)) { /* its users must be get-tuple-elements to rewire */
    if (c->root == cons) return -1;
    cx_instr **cu;
    int ncu = fu_users(c, cons, &cu), all = ncu >= 0;
    for (int i = 0; i < ncu; i++) all &= cu[i]->op == CX_OP_GET_TUPLE_ELEMENT;
    cx_free(cu);
    if (ncu < 0) return -2;
    if (!all) return -1;
  }
  if (kc == CX_FUSION_INPUT) {
    const cx_shape *cin;
    if (trailing_row_reduce(cons, &cin) != nk || !cx_shape_same_dims(cin, in) || !fu_reduces_compatible(p, cons))
      return -1;
  } else {
    const cx_shape *s = &cons->shape;
    if (s->type == CXLA_TUPLE) s = s->ntuple > 0 ? &s->tuple[0] : s;
    if (s->type == CXLA_TUPLE || !cx_shape_same_dims(s, in)) return -1;
  }
  cx_instr **users;
  int nu = fu_users(c, p, &users), ng = 0, ok = nu > 0, shared = 0;
  if (nu < 0) return -2;
  for (int i = 0; i < nu && ok; i++) {
    cx_instr *u = users[i];
    if (u == cons && !fu_is_multi_output(p)) continue;
    if (u->op != CX_OP_GET_TUPLE_ELEMENT || !fu_is_multi_output(p) || c->root == u || ng >= cap) {
      ok = 0;
      break;
    }
    out[ng] = !fu_only_user_is(c, u, cons);
    shared |= out[ng];
    gtes[ng++] = u;
  }
  cx_free(users);
  if (shared && cx_shape_bytes(in) >= ROW_KEEP_MAX_BYTES) ok = 0;
  /* with a result kept for others, C must not read anything that reads P (a cycle) */
  for (int j = 0; j < cons->nops && ok && shared; j++) {
    int mine = cons->ops[j] == p;
    for (int g = 0; g < ng; g++) mine |= cons->ops[j] == gtes[g];
    int dep = mine ? 0 : fu_reaches(c, p, cons->ops[j]);
    if (dep < 0) return -2;
    ok = !dep;
  }
  for (int j = 0; j < cons->nops && ok; j++) {
    int mine = cons->ops[j] == p;
    for (int g = 0; g < ng; g++) mine |= cons->ops[j] == gtes[g];
    if (!mine) continue;
    int r = operand_ok(cons, j, in, nk);
    if (r < 0) return -2;
    ok = r;
  }
  if (!ok) return -1;
  int size = fu_size(p) + fu_size(cons), kept = 0;
  for (int g = 0; g < ng; g++) kept += out[g];
  return size <= FU_MAX_INSTRS && fu_count_reduces(p) + fu_count_reduces(cons) <= FU_MAX_REDUCES &&
                 cons->nops + p->nops + fu_nouts(cons) + kept <= FU_MAX_ARGS
             ? ng
             : -1;
}

/* Merges the first row edge whose consumer is at position *from or later; *from becomes
 * where the next sweep starts, -1 when nothing merged. A merge of P and C only changes what
 * is decided for edges into or out of the new fusion (every other reader sees the same users
 * and no shorter path), and with the stretch of c between the parts re-sorted in place
 * nothing before the first part moved: the next sweep starts there. Starting from the top
 * again made the pass quadratic in the depth of a model (a 32-layer transformer's step: a
 * quarter of all its pass time). */
static cxla_status sweep(cx_comp *c, int *changed, int *from) {
  int start = *from;
  *from = -1;
  for (int i = start; i < c->ninstrs; i++) {
    cx_instr *cons = c->instrs[i];
    if (cons->parent != c || cons->op != CX_OP_FUSION) continue;
    for (int j = 0; j < cons->nops; j++) {
      cx_instr *p = cons->ops[j];
      if (p->op == CX_OP_GET_TUPLE_ELEMENT) p = p->ops[0];
      if (p->op != CX_OP_FUSION || p->parent != c) continue;
      cx_instr *parts[FU_MAX_ARGS + 2], *outs[FU_MAX_ARGS + 1];
      int keep_out[FU_MAX_ARGS], nouts = 0;
      int ng = row_edge(c, p, cons, parts + 1, keep_out, FU_MAX_ARGS);
      if (ng == -2) return cx_oom(c->module->ctx);
      if (ng < 0) continue;
      parts[0] = p;
      parts[ng + 1] = cons;
      /* P's shared results first: the emitter then stashes the exp in its own output */
      for (int g = 0; g < ng; g++)
        if (keep_out[g]) outs[nouts++] = parts[g + 1];
      outs[nouts++] = cons;
      int lo = -1, hi, layouts = fu_index_layouts(c);
      if (!fu_index_span(c, parts, ng + 2, &lo, &hi)) lo = -1;
      cx_instr *f;
      fu_spec s = {.parts = parts, .nparts = ng + 2, .outs = outs, .nouts = nouts, .kind = CX_FUSION_INPUT};
      CX_TRY(fu_fuse(c, &s, 0, &f));
      *changed = 1;
      *from = lo >= 0 && layouts >= 0 && fu_index_layouts(c) == layouts ? lo : 0;
      return CXLA_OK;
    }
  }
  return CXLA_OK;
}

/* Each merge removes a kernel, so this ends. */
static cxla_status row_comp(cx_comp *c, int *changed) {
  cxla_status st = CXLA_OK;
  for (int round = 0, from = 0; from >= 0 && round <= c->ninstrs && st == CXLA_OK; round++)
    st = sweep(c, changed, &from);
  return st;
}

cxla_status cx_pass_row_fusion(cx_module *m, int *changed) { return fu_each_control_comp(m, changed, row_comp); }
