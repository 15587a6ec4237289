/* infer_collective.c — shape rules of the collectives (XLA's ShapeInference and the verifier's
 * CheckReplicaGroups): their result shapes, the reducer of all-reduce and reduce-scatter, and
 * what the replica groups and source-target pairs must be. How many devices a group has is
 * known here when the groups are written out or the module header says how many devices the
 * run has; otherwise all-gather and reduce-scatter take the declared shape's factor, and the
 * run checks it (docs/collectives.md). */
#include <string.h>
#include "ir/groups.h"
#include "ir/infer.h"

/* The ids the module header says a mode's groups must cover, or 0 if it does not say. A count
 * the header leaves out is the run's (XLA takes 1; cxla runs a module on as many devices as it
 * is given, docs/collectives.md). */
static int64_t header_ids(cx_infer *ic, cx_group_mode mode) {
  int64_t r, p;
  cx_module_device_counts(ic->m, &r, &p);
  if (mode == CX_GROUPS_CROSS_PARTITION) return p > 1 ? p : 0;
  if (mode == CX_GROUPS_FLATTENED) return r && (r > 1 || p > 1) ? r * (p ? p : 1) : 0; /* both known */
  return r > 1 ? r : 0;
}

/* Partitions per replica in a cross-replica-and-partition group (the header's, else 1). */
static int64_t header_partitions(cx_infer *ic) {
  int64_t r, p;
  cx_module_device_counts(ic->m, &r, &p);
  return p > 0 ? p : 1;
}

/* XLA's CheckReplicaGroups: no empty group, each id once, the ids 0..n-1, n what the header
 * says when it says, and (uniform) groups of one size. Sets *size to the devices of a group
 * when known, else 0. */
static cxla_status check_groups(cx_infer *ic, int uniform, int64_t *size) {
  const cx_instr *in = ic->in;
  const cx_groups *g = in->a.replica_groups;
  cx_group_mode mode = cx_collective_mode(in);
  *size = 0;
  if (in->a.use_global_device_ids && in->a.channel_id < 0)
    return cx_vfail(ic, "use_global_device_ids=true needs a channel_id (XLA's rule)");
  if (!g) {
    if (mode == CX_GROUPS_FLATTENED) return cx_vfail(ic, "use_global_device_ids=true needs replica_groups that name the devices");
    *size = header_ids(ic, mode);
  } else {
    int64_t n = cx_groups_count(g);
    uint8_t *seen = cx_arena_alloc(ic->arena, (size_t)(n ? n : 1));
    if (!seen) return cx_oom(ic->m->ctx);
    memset(seen, 0, (size_t)(n ? n : 1));
    for (int k = 0; k < g->n; k++) {
      if (!cx_groups_size(g, k)) return cx_vfail(ic, "replica group %d is empty", k);
      if (uniform && cx_groups_size(g, k) != cx_groups_size(g, 0))
        return cx_vfail(ic, "replica groups must all have one size: group 0 has %lld ids, group %d has %lld",
                        (long long)cx_groups_size(g, 0), k, (long long)cx_groups_size(g, k));
    }
    for (int64_t i = 0; i < n; i++) {
      int64_t id = g->ids[i];
      if (id >= n)
        return cx_vfail(ic, "replica groups name %lld ids, so they must be 0..%lld, but one is %lld", (long long)n,
                        (long long)(n - 1), (long long)id);
      if (seen[id]) return cx_vfail(ic, "replica groups name id %lld twice", (long long)id);
      seen[id] = 1;
    }
    int64_t want = header_ids(ic, mode);
    if (want && n != want)
      return cx_vfail(ic, "replica groups name %lld %s, but the module header says there are %lld", (long long)n,
                      cx_group_mode_what(mode), (long long)want);
    *size = cx_groups_size(g, 0);
  }
  if (*size && mode == CX_GROUPS_CROSS_REPLICA_AND_PARTITION) *size *= header_partitions(ic);
  if (!uniform) *size = 0;
  return CXLA_OK;
}

/* Every operand an array; with same_shape, all of operand 0's shape (all-to-all's tuple form). */
static cxla_status array_operands(cx_infer *ic, int min, int same_shape) {
  if (ic->in->nops < min) return cx_vfail(ic, "needs at least %d operand%s, got %d", min, min == 1 ? "" : "s", ic->in->nops);
  for (int i = 0; i < ic->in->nops; i++) {
    CX_TRY(cx_vneed_array(ic, i, "operand"));
    if (same_shape && !cx_shape_same_dims(cx_vop(ic, i), cx_vop(ic, 0)))
      return cx_vfail(ic, "operands must have one shape, got %s (operand 0) and %s (operand %d)",
                      cx_vshape(ic, cx_vop(ic, 0)), cx_vshape(ic, cx_vop(ic, i)), i);
  }
  return CXLA_OK;
}

/* The operands' shapes: one array, or a tuple of them. */
static cxla_status operands_shape(cx_infer *ic, cx_shape *out) {
  if (ic->in->nops == 1) {
    *out = ic->in->ops[0]->shape;
    cx_vplain(out);
    return CXLA_OK;
  }
  cx_shape *el = cx_vtuple(ic, out, ic->in->nops);
  if (!el) return CXLA_ERR_OUT_OF_MEMORY;
  for (int i = 0; i < ic->in->nops; i++) {
    el[i] = ic->in->ops[i]->shape;
    cx_vplain(&el[i]);
  }
  return CXLA_OK;
}

/* to_apply reduces two scalars of every operand's element type to one. XLA's verifier does
 * not look at the to_apply of all-reduce or reduce-scatter (HandleAllReduce checks shapes
 * only): a well-formed reducer of another scalar type passes here, and the backends refuse to
 * run it (interp/check.c). */
static cxla_status reducer(cx_infer *ic) {
  cxla_type t = cx_vop(ic, 0)->type;
  for (int i = 1; i < ic->in->nops; i++)
    if (cx_vop(ic, i)->type != t)
      return cx_vfail(ic, "operands must have one element type (to_apply reduces them all), got %s and %s",
                      cx_vtype(t), cx_vtype(cx_vop(ic, i)->type));
  const cx_comp *c = ic->in->ncalled == 1 ? ic->in->called[0] : NULL;
  cxla_type rt = t;
  if (c && c->nparams == 2 && c->params && c->params[0] && cx_varray(&c->params[0]->shape) &&
      c->params[0]->shape.rank == 0)
    rt = c->params[0]->shape.type;
  int is_tuple;
  return cx_vreducer(ic, 0, "to_apply", 1, &rt, &rt, &is_tuple);
}

cxla_status cx_infer_all_reduce(cx_infer *ic, cx_shape *out) {
  int64_t size;
  CX_TRY(array_operands(ic, 1, 0));
  CX_TRY(check_groups(ic, 0, &size));
  CX_TRY(reducer(ic));
  return operands_shape(ic, out);
}

/* The one dimension= of all-gather and reduce-scatter, in range for every operand. */
static cxla_status one_dimension(cx_infer *ic, int64_t *d) {
  const cx_ints *v = &ic->in->a.dims;
  if (v->n != 1) return cx_vfail(ic, "dimensions=%s must name exactly one dimension", cx_vints(ic, v));
  for (int i = 0; i < ic->in->nops; i++) CX_TRY(cx_vdims(ic, v, cx_vop(ic, i)->rank, "dimensions", NULL));
  *d = v->v[0];
  return CXLA_OK;
}

/* The result of a gather (grow) or scatter (shrink) along d by the group size: the declared
 * element shape `decl` of operand i, checked. *factor is the size (known: checked; 0: taken
 * from the first operand's declared dims). */
static cxla_status scaled(cx_infer *ic, int i, const cx_shape *decl, int64_t d, int grow, int64_t *factor,
                          cx_shape *el) {
  const cx_shape *x = cx_vop(ic, i);
  const char *what = grow ? "all-gather" : "reduce-scatter";
  if (!cx_type_is_array(decl->type) || decl->type != x->type || decl->rank != x->rank)
    return cx_vfail(ic, "declared result %s does not fit operand %d %s (the %s keeps type and rank)", cx_vshape(ic, decl),
                    i, cx_vshape(ic, x), what);
  for (int k = 0; k < x->rank; k++)
    if (k != d && decl->dims[k] != x->dims[k])
      return cx_vfail(ic, "declared result %s differs from operand %d %s outside dimension %lld", cx_vshape(ic, decl), i,
                      cx_vshape(ic, x), (long long)d);
  int64_t big = grow ? decl->dims[d] : x->dims[d], small = grow ? x->dims[d] : decl->dims[d];
  if (!*factor) {
    if (small <= 0 || big % small || big / small < 1)
      return cx_vfail(ic, "dimension %lld: %lld is not a whole multiple of %lld (operand %d %s, result %s)", (long long)d,
                      (long long)big, (long long)small, i, cx_vshape(ic, x), cx_vshape(ic, decl));
    *factor = big / small;
  }
  if (big != small * *factor)
    return cx_vfail(ic, "dimension %lld must be %lld x %lld = %lld for groups of %lld, got %lld (operand %d %s)",
                    (long long)d, (long long)(grow ? small : x->dims[d] / *factor), (long long)*factor,
                    (long long)(grow ? small * *factor : x->dims[d]), (long long)*factor,
                    (long long)(grow ? decl->dims[d] : small), i, cx_vshape(ic, x));
  *el = *decl;
  cx_vplain(el);
  return CXLA_OK;
}

/* all-gather and reduce-scatter results: one array per operand, a tuple for several. */
static cxla_status gather_or_scatter(cx_infer *ic, const cx_shape *decl, int grow, cx_shape *out) {
  int64_t d = 0, size;
  int n = ic->in->nops;
  CX_TRY(array_operands(ic, 1, 0));
  CX_TRY(check_groups(ic, 1, &size));
  CX_TRY(one_dimension(ic, &d));
  if (!grow) CX_TRY(reducer(ic));
  if (n == 1) return scaled(ic, 0, decl, d, grow, &size, out);
  if (decl->type != CXLA_TUPLE || decl->ntuple != n)
    return cx_vfail(ic, "%d operands give a tuple of %d results, declared %s", n, n, cx_vshape(ic, decl));
  cx_shape *el = cx_vtuple(ic, out, n);
  if (!el) return CXLA_ERR_OUT_OF_MEMORY;
  for (int i = 0; i < n; i++) CX_TRY(scaled(ic, i, &decl->tuple[i], d, grow, &size, &el[i]));
  return CXLA_OK;
}

cxla_status cx_infer_all_gather(cx_infer *ic, cx_shape *out) { return gather_or_scatter(ic, &ic->in->shape, 1, out); }
cxla_status cx_infer_reduce_scatter(cx_infer *ic, cx_shape *out) { return gather_or_scatter(ic, &ic->in->shape, 0, out); }

/* all-gather-start: (operands, results), each one array or a tuple of them. */
cxla_status cx_infer_all_gather_start(cx_infer *ic, cx_shape *out) {
  const cx_shape *s = &ic->in->shape;
  if (s->type != CXLA_TUPLE || s->ntuple != 2)
    return cx_vfail(ic, "declared shape %s must be (operands, results)", cx_vshape(ic, s));
  cx_shape *el = cx_vtuple(ic, out, 2);
  if (!el) return CXLA_ERR_OUT_OF_MEMORY;
  CX_TRY(gather_or_scatter(ic, &s->tuple[1], 1, &el[1]));
  return operands_shape(ic, &el[0]);
}

/* all-to-all: with dimensions={d} one array split along d into a block per device (d must
 * divide), else one array per device, all of one shape; the result has the operands' shape. */
cxla_status cx_infer_all_to_all(cx_infer *ic, cx_shape *out) {
  int64_t size;
  const cx_ints *v = &ic->in->a.dims;
  CX_TRY(array_operands(ic, 1, v->n == 0));
  CX_TRY(check_groups(ic, 1, &size));
  if (v->n) {
    if (v->n != 1 || ic->in->nops != 1)
      return cx_vfail(ic, "the array form takes one operand and one split dimension, got %d operand%s and "
                      "dimensions=%s", ic->in->nops, ic->in->nops == 1 ? "" : "s", cx_vints(ic, v));
    CX_TRY(cx_vdims(ic, v, cx_vop(ic, 0)->rank, "dimensions", NULL));
    int64_t dim = cx_vop(ic, 0)->dims[v->v[0]];
    if (size && dim % size)
      return cx_vfail(ic, "dimension %lld of %s (%lld) does not split into %lld blocks, one per device of a group",
                      (long long)v->v[0], cx_vshape(ic, cx_vop(ic, 0)), (long long)dim, (long long)size);
  } else if (size && ic->in->nops != size) {
    return cx_vfail(ic, "the tuple form takes one operand per device of a group (%lld), got %d", (long long)size,
                    ic->in->nops);
  }
  if (!v->n && ic->in->nops == 1) { /* XLA: the tuple form always gives a tuple */
    cx_shape *el = cx_vtuple(ic, out, 1);
    if (!el) return CXLA_ERR_OUT_OF_MEMORY;
    el[0] = ic->in->ops[0]->shape;
    cx_vplain(&el[0]);
    return CXLA_OK;
  }
  return operands_shape(ic, out);
}

cxla_status cx_infer_collective_broadcast(cx_infer *ic, cx_shape *out) {
  int64_t size;
  CX_TRY(array_operands(ic, 1, 0));
  CX_TRY(check_groups(ic, 0, &size));
  return operands_shape(ic, out);
}

/* XLA's CheckDuplicatedSourceOrTarget: a device sends at most once and receives at most once;
 * ids below the header's count when it gives one. */
static cxla_status check_pairs(cx_infer *ic) {
  const cx_groups *g = ic->in->a.source_target_pairs;
  cx_group_mode mode = cx_collective_mode(ic->in);
  int64_t count = header_ids(ic, mode);
  for (int k = 0; g && k < g->n; k++) {
    int64_t s = g->ids[g->start[k]], t = g->ids[g->start[k] + 1];
    if (count && (s >= count || t >= count))
      return cx_vfail(ic, "source_target_pairs pair {%lld,%lld}: the module header says there are %lld %s", (long long)s,
                      (long long)t, (long long)count, cx_group_mode_what(mode));
    for (int j = 0; j < k; j++) {
      if (g->ids[g->start[j]] == s) return cx_vfail(ic, "source_target_pairs: %lld is a source twice", (long long)s);
      if (g->ids[g->start[j] + 1] == t) return cx_vfail(ic, "source_target_pairs: %lld is a target twice", (long long)t);
    }
  }
  return CXLA_OK;
}

/* XLA's in-place form (operand, output buffer, offsets; slice_sizes=) writes dynamic slices of
 * a buffer: kept as declared, and refused when compiling (interp/check.c). */
static int in_place(const cx_instr *in) {
  for (int i = 0; i < in->a.nraw; i++)
    if (!strcmp(in->a.raw[i].key, "slice_sizes")) return 1;
  return 0;
}

cxla_status cx_infer_collective_permute(cx_infer *ic, cx_shape *out) {
  if (in_place(ic->in)) return cx_infer_declared(ic, out);
  CX_TRY(array_operands(ic, 1, 0));
  CX_TRY(check_pairs(ic));
  return operands_shape(ic, out);
}

/* collective-permute-start: (operands, results, context...), the operands' shape twice, then
 * whatever context the text declares (XLA: u32[] scalars; zeros here). */
cxla_status cx_infer_collective_permute_start(cx_infer *ic, cx_shape *out) {
  const cx_shape *s = &ic->in->shape;
  cx_shape ops;
  if (in_place(ic->in)) return cx_infer_declared(ic, out);
  CX_TRY(array_operands(ic, 1, 0));
  CX_TRY(check_pairs(ic));
  CX_TRY(operands_shape(ic, &ops));
  if (s->type != CXLA_TUPLE || s->ntuple < 2 || !cx_shape_equal(&s->tuple[0], &ops) ||
      !cx_shape_equal(&s->tuple[1], &ops))
    return cx_vfail(ic, "declared shape %s must be (%s, %s, context...)", cx_vshape(ic, s), cx_vshape(ic, &ops),
                    cx_vshape(ic, &ops));
  for (int i = 2; i < s->ntuple; i++)
    if (!cx_type_is_array(s->tuple[i].type))
      return cx_vfail(ic, "context element %d of %s must be an array", i, cx_vshape(ic, s));
  *out = *s;
  cx_vplain(out);
  return CXLA_OK;
}

/* all-reduce-done: what its all-reduce-start gave. */
cxla_status cx_infer_all_reduce_done(cx_infer *ic, cx_shape *out) {
  if (ic->in->ops[0]->op != CX_OP_ALL_REDUCE_START)
    return cx_vfail(ic, "operand must be an all-reduce-start, got %s", cx_op_name(ic->in->ops[0]->op));
  *out = ic->in->ops[0]->shape;
  cx_vplain(out);
  return CXLA_OK;
}

/* all-gather-done, collective-permute-done: the result element {1} of their -start. */
cxla_status cx_infer_collective_done(cx_infer *ic, cx_shape *out) {
  cx_op want = ic->in->op == CX_OP_ALL_GATHER_DONE ? CX_OP_ALL_GATHER_START : CX_OP_COLLECTIVE_PERMUTE_START;
  const cx_shape *s = cx_vop(ic, 0);
  if (ic->in->ops[0]->op != want)
    return cx_vfail(ic, "operand must be a %s, got %s", cx_op_name(want), cx_op_name(ic->in->ops[0]->op));
  if (s->type != CXLA_TUPLE || s->ntuple < 2) return cx_vfail(ic, "operand %s is not a -start's tuple", cx_vshape(ic, s));
  *out = s->tuple[1];
  cx_vplain(out);
  return CXLA_OK;
}
