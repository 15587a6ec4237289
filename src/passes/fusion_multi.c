/* fusion_multi.c — multi-output fusion: fewer kernels and fewer passes over memory after loop
 * fusion, without recomputing anything.
 *
 *  - producer-consumer: a fusion P with several users, one of which (R) reads P element by
 *    element in its own loop (e.g. P = exp(x - max), R = sum(P)), is computed inside R, and R
 *    also outputs P for the other users (get-tuple-element). This makes softmax three kernels:
 *    max-reduce, {exp, sum}, divide (row fusion, fusion_row.c, then makes them one). P may
 *    also be a kInput fusion whose result R's epilogue reads (layer norm: mean and
 *    mean-of-squares land in one kernel).
 *  - siblings: two fusions that read the same operand and run over the same iteration space
 *    (two reductions of one input over the same dimensions; loops of the same shape; a loop
 *    over a reduction's input shape) become one fusion with a tuple root, reading it once.
 * Legality as in XLA: no cycles (neither fusion may depend on the other, and no other operand
 * of R may depend on P), compatible iteration spaces, size limits, kOutput fusions excluded. */
#include <stdlib.h>
#include <string.h>
#include "passes/pass.h"
#include "passes/fusion_util.h"

/* Loop and input fusions with array outputs (a variadic reduce's tuple is not split up). */
static int mergeable_kind(const cx_instr *f) {
  cx_fusion_kind k = fu_kind_of(f);
  return (k == CX_FUSION_LOOP || k == CX_FUSION_INPUT) && (cx_type_is_array(f->shape.type) || fu_is_multi_output(f));
}

/* Dims of the loop a fusion runs: a reduce's input, else the (first) output. */
static const cx_shape *iteration_dims(const cx_instr *f) {
  const cx_instr *r = fu_first_reduce(f);
  if (r) return &r->ops[0]->shape;
  const cx_shape *s = &f->shape;
  return s->type == CXLA_TUPLE && s->ntuple > 0 ? &s->tuple[0] : s;
}

/* A multi-output fusion may only be rewired through its get-tuple-elements. */
static int rewirable(const cx_comp *c, const cx_instr *f) {
  if (!fu_is_multi_output(f)) return 1;
  if (c->root == f) return 0;
  cx_instr **users;
  int nu = fu_users(c, f, &users), ok = nu >= 0;
  for (int i = 0; i < nu; i++) ok &= users[i]->op == CX_OP_GET_TUPLE_ELEMENT;
  cx_free(users);
  return ok;
}

static int distinct_operands(const cx_instr *a, const cx_instr *b, const cx_instr *skip) {
  int n = 0;
  for (int pass = 0; pass < 2; pass++) {
    const cx_instr *x = pass ? b : a;
    for (int j = 0; j < x->nops; j++) {
      const cx_instr *o = x->ops[j];
      if (o == skip) continue;
      int seen = 0;
      for (int k = 0; k < j && !seen; k++) seen = x->ops[k] == o;
      for (int k = 0; pass && k < a->nops && !seen; k++) seen = a->ops[k] == o;
      n += !seen;
    }
  }
  return n;
}

static int within_limits(const cx_instr *a, const cx_instr *b, int args) {
  return fu_size(a) + fu_size(b) <= FU_MAX_INSTRS &&
         fu_count_reduces(a) + fu_count_reduces(b) <= FU_MAX_REDUCES && args <= FU_MAX_ARGS;
}

/* R (a user of P) can compute P itself and output it. -1 on OOM. */
static int producer_consumer_ok(cx_comp *c, cx_instr *p, cx_instr *r) {
  if (r == p || !mergeable_kind(r) || !rewirable(c, r)) return 0;
  int idx = -1;
  for (int j = 0; j < r->nops; j++)
    if (r->ops[j] == p) idx = j;
  if (idx < 0) return 0;
  fu_param_use u;
  if (!fu_analyze_operand(r, idx, &u)) return -1;
  if (!u.elementwise || u.reused) return 0; /* P's elements are read once, at R's index */
  if (fu_kind_of(p) == CX_FUSION_INPUT) {
    /* P's reduction joins R's loop (or R becomes its epilogue); R reads P's result at the
     * reduce output index. */
    if (u.to_reduce || !fu_reduces_compatible(p, r)) return 0;
    const cx_instr *rr = fu_first_reduce(r);
    if (cx_shape_elems(&p->shape) != cx_shape_elems(rr ? &rr->shape : iteration_dims(r))) return 0;
  } else {
    /* P is computed in R's loop at R's index. */
    if (!cx_shape_same_dims(&p->shape, iteration_dims(r))) return 0;
  }
  if (!within_limits(p, r, distinct_operands(r, p, p) + fu_nouts(r) + 1)) return 0;
  for (int j = 0; j < r->nops; j++) {
    if (r->ops[j] == p) continue;
    int dep = fu_reaches(c, p, r->ops[j]);
    if (dep) return dep < 0 ? -1 : 0; /* R -> other operand -> P would become a cycle */
  }
  return 1;
}

static cxla_status producer_consumer(cx_comp *c, int *changed, int *any) {
  for (int i = 0; i < c->ninstrs; i++) {
    cx_instr *p = c->instrs[i];
    if (p->parent != c || !mergeable_kind(p) || fu_is_multi_output(p) || fu_nusers(c, p) < 2) continue;
    cx_instr **users;
    int nu = fu_users(c, p, &users);
    if (nu < 0) return cx_oom(c->module->ctx);
    cx_instr *pick = NULL;
    cxla_status st = CXLA_OK;
    /* Prefer a reduction consumer: that is where the second pass over memory is saved. */
    for (int pass = 0; pass < 2 && !pick && st == CXLA_OK; pass++)
      for (int k = 0; k < nu && !pick; k++) {
        if ((fu_kind_of(users[k]) == CX_FUSION_INPUT) != (pass == 0)) continue;
        int ok = producer_consumer_ok(c, p, users[k]);
        if (ok < 0) st = cx_oom(c->module->ctx);
        if (ok > 0) pick = users[k];
      }
    cx_free(users);
    CX_TRY(st);
    if (!pick) continue;
    cx_instr *parts[2] = {p, pick}, *outs[2] = {pick, p}, *f;
    fu_spec s = {.parts = parts, .nparts = 2, .outs = outs, .nouts = 2, .kind = fu_kind_of(pick)};
    if (fu_kind_of(p) == CX_FUSION_INPUT) s.kind = CX_FUSION_INPUT;
    CX_TRY(fu_fuse(c, &s, 0, &f));
    *changed = *any = 1; /* c was re-sorted: sweep on; the caller sweeps again until quiet */
  }
  return CXLA_OK;
}

/* -1 on OOM. */
static int siblings_ok(cx_comp *c, cx_instr *a, cx_instr *b) {
  if (a == b || !mergeable_kind(a) || !mergeable_kind(b) || !rewirable(c, a) || !rewirable(c, b)) return 0;
  if (!cx_shape_same_dims(iteration_dims(a), iteration_dims(b))) return 0;
  if (fu_kind_of(a) == CX_FUSION_INPUT && fu_kind_of(b) == CX_FUSION_INPUT && !fu_reduces_compatible(a, b)) return 0;
  if (!within_limits(a, b, distinct_operands(a, b, NULL) + fu_nouts(a) + fu_nouts(b))) return 0;
  int d1 = fu_reaches(c, a, b), d2 = d1 ? d1 : fu_reaches(c, b, a);
  if (d1 < 0 || d2 < 0) return -1;
  return !d1 && !d2;
}

/* Siblings are paired only with the next few users of their operand in program order: an
 * operand read by k fusions (a weight every layer of a chain reads) otherwise costs k^2/2
 * reachability searches, each as long as the stretch between the two: a chain of 4000 ops
 * took 9 s in this pass. Users further apart than this are rarely independent anyway. */
enum { SIBLING_WINDOW = 16 };

typedef struct placed {
  int pos;
  cx_instr *x;
} placed;

static int by_pos(const void *a, const void *b) {
  int pa = ((const placed *)a)->pos, pb = ((const placed *)b)->pos;
  return (pa > pb) - (pa < pb);
}

/* users in program order (as listed when there is no index to say). 0 on OOM. */
static int order_users(const cx_comp *c, cx_instr **users, int nu) {
  if (nu < 3 || !fu_index_active(c)) return 1;
  placed *v = cx_malloc(sizeof *v * (size_t)nu);
  if (!v) return 0;
  for (int i = 0; i < nu; i++) v[i] = (placed){fu_index_pos(c, users[i]), users[i]};
  qsort(v, (size_t)nu, sizeof *v, by_pos);
  for (int i = 0; i < nu; i++) users[i] = v[i].x;
  cx_free(v);
  return 1;
}

static cxla_status siblings(cx_comp *c, int *changed, int *any) {
  for (int i = 0; i < c->ninstrs; i++) {
    cx_instr *x = c->instrs[i];
    /* Only worth it when the shared operand is real memory, not a scalar. */
    if (x->parent != c || !cx_type_is_array(x->shape.type) || cx_shape_elems(&x->shape) <= 1) continue;
    cx_instr **users;
    int nu = fu_users(c, x, &users);
    if (nu < 0 || !order_users(c, users, nu)) {
      cx_free(users);
      return cx_oom(c->module->ctx);
    }
    cx_instr *a = NULL, *b = NULL;
    cxla_status st = CXLA_OK;
    for (int p = 0; p < nu && !a && st == CXLA_OK; p++)
      for (int q = p + 1; q < nu && q <= p + SIBLING_WINDOW && !a; q++) {
        int ok = siblings_ok(c, users[p], users[q]);
        if (ok < 0) st = cx_oom(c->module->ctx);
        if (ok > 0) { a = users[p]; b = users[q]; }
      }
    cx_free(users);
    CX_TRY(st);
    if (!a) continue;
    cx_instr *parts[2] = {a, b}, *f;
    cx_fusion_kind k = fu_kind_of(a) == CX_FUSION_INPUT || fu_kind_of(b) == CX_FUSION_INPUT ? CX_FUSION_INPUT : CX_FUSION_LOOP;
    fu_spec s = {.parts = parts, .nparts = 2, .outs = parts, .nouts = 2, .kind = k};
    CX_TRY(fu_fuse(c, &s, 0, &f));
    *changed = *any = 1;
  }
  return CXLA_OK;
}

/* Sweeps until nothing merges; each merge removes a kernel, so this ends. */
static cxla_status merge_comp(cx_comp *c, int *changed) {
  cxla_status st = CXLA_OK;
  for (int round = 0, any = 1; any && round <= c->ninstrs && st == CXLA_OK; round++) {
    any = 0;
    st = producer_consumer(c, changed, &any);
    if (st == CXLA_OK) st = siblings(c, changed, &any);
  }
  return st;
}

cxla_status cx_pass_multi_output_fusion(cx_module *m, int *changed) {
  return fu_each_control_comp(m, changed, merge_comp);
}
