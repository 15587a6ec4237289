/* translate_collective.c — the collectives (all_reduce, all_gather, reduce_scatter, all_to_all,
 * collective_permute, collective_broadcast) and the device ids (replica_id, partition_id are
 * plain ops in translate_ops.c): replica groups from their [G, S] tensor (-1 pads a shorter
 * group, as StableHLO writes ragged groups), channel handles as channel_id=, as XLA's
 * translation makes them. */
#include <string.h>
#include "ir/edit.h"
#include "ir/groups.h"
#include "stablehlo/translate.h"

/* A [G, S] (or [K, 2] for pairs) integer tensor attribute into cx_groups; pairs: every row must
 * have both entries. */
static cxla_status groups(cx_sx *sx, const cx_mlir_op *op, const char *name, int pairs, cx_groups **out) {
  *out = NULL;
  cxla_status st;
  const cx_mlir_attr *a = cx_sx_attr(sx, op, name, 0, &st);
  if (!a) return st;
  /* none: an empty list (StableHLO writes tensor<0xi64>) */
  if (a->kind == CX_MLIR_ATTR_TENSOR && a->u.dense.type && a->u.dense.type->kind == CX_MLIR_TYPE_RANKED_TENSOR &&
      a->u.dense.type->rank == 1 && a->u.dense.type->dims[0] == 0)
    return CXLA_OK;
  if (a->kind != CX_MLIR_ATTR_TENSOR || !a->u.dense.type || a->u.dense.type->kind != CX_MLIR_TYPE_RANKED_TENSOR ||
      a->u.dense.type->rank != 2)
    return cx_sx_err(sx, op, CXLA_ERR_PARSE, "'%s' must be a rank-2 integer tensor", name);
  int64_t g = a->u.dense.type->dims[0], s = a->u.dense.type->dims[1];
  if (g < 0 || s < 0 || (pairs && s != 2) || g * (s ? s : 1) > (1 << 20))
    return cx_sx_err(sx, op, CXLA_ERR_PARSE, "'%s' of %lldx%lld entries", name, (long long)g, (long long)s);
  cx_ints v;
  CX_TRY(cx_sx_ints_of(sx, op, a, name, &v));
  if (v.n != g * s) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "'%s' holds %d entries for %lldx%lld", name, v.n, (long long)g, (long long)s);
  if (!g) return CXLA_OK; /* {}: every device in one group */
  int64_t *sizes = cx_arena_alloc(&sx->m->arena, sizeof *sizes * (size_t)g);
  int64_t *ids = cx_arena_alloc(&sx->m->arena, sizeof *ids * (size_t)(v.n ? v.n : 1));
  if (!sizes || !ids) return cx_oom(sx->ctx);
  int64_t k = 0;
  for (int64_t r = 0; r < g; r++) {
    sizes[r] = 0;
    for (int64_t c = 0; c < s; c++) {
      int64_t id = v.v[r * s + c];
      if (id == -1 && !pairs) continue;
      if (id < 0) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "'%s' entry %lld is negative", name, (long long)id);
      ids[k++] = id;
      sizes[r]++;
    }
  }
  *out = cx_groups_new(sx->m, (int)g, sizes, ids);
  return *out ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
}

/* channel_id (v2 ops: the handle; v1: a channel_handle record) > 0 is a channel, as XLA has it. */
static cxla_status channel(cx_sx *sx, const cx_mlir_op *op, cx_instr *in) {
  const cx_mlir_attr *a = cx_mlir_op_attr(op, "channel_id");
  if (!a) a = cx_mlir_op_attr(op, "channel_handle");
  in->a.channel_id = -1;
  if (!a) return CXLA_OK;
  int64_t h;
  if (a->kind == CX_MLIR_ATTR_INT) h = a->u.integer.value;
  else if (a->kind == CX_MLIR_ATTR_RECORD && a->u.rec.nints >= 1) h = a->u.rec.ints[0];
  else return cx_sx_err(sx, op, CXLA_ERR_PARSE, "'channel_id' must be an integer");
  if (h > 0) in->a.channel_id = h;
  return CXLA_OK;
}

/* The parts every collective has: operands, result shape, groups, channel, global ids. */
static cxla_status collective(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, cx_op opc, int with_region, cx_instr **out) {
  CX_TRY(cx_sx_arity(sx, op, -1, -1));
  if (!op->num_results) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "expected results");
  cx_shape s;
  CX_TRY(cx_sx_result_shape(sx, op, &s));
  cx_instr **ops;
  int n;
  CX_TRY(cx_sx_operands(sx, op, 0, &ops, &n));
  cx_comp *body = NULL;
  if (with_region) CX_TRY(cx_sx_scalar_region(sx, op, 0, &body));
  cx_groups *rg;
  CX_TRY(groups(sx, op, "replica_groups", 0, &rg));
  cx_instr *in = cx_sx_add(sx, c, opc, &s, n, ops, op);
  if (!in || (body && !cx_instr_set_called(in, 1, &body))) return CXLA_ERR_OUT_OF_MEMORY;
  in->a.replica_groups = rg;
  CX_TRY(channel(sx, op, in));
  CX_TRY(cx_sx_bool(sx, op, "use_global_device_ids", 0, 0, &in->a.use_global_device_ids));
  *out = in;
  return CXLA_OK;
}

cxla_status cx_sx_h_all_reduce(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  if (op->num_results != op->num_operands) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "expected one result per operand");
  cx_instr *in;
  CX_TRY(collective(sx, c, op, CX_OP_ALL_REDUCE, 1, &in));
  return cx_sx_bind(sx, c, op, in);
}

/* all_gather_dim / scatter_dimension: HLO's dimensions={d} */
static cxla_status with_dim(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, cx_op opc, const char *dim, int region) {
  if (op->num_results != op->num_operands) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "expected one result per operand");
  int64_t d;
  CX_TRY(cx_sx_int(sx, op, dim, 1, 0, &d));
  cx_instr *in;
  CX_TRY(collective(sx, c, op, opc, region, &in));
  if (!cx_ints_set(sx->m, &in->a.dims, 1, &d)) return CXLA_ERR_OUT_OF_MEMORY;
  return cx_sx_bind(sx, c, op, in);
}

cxla_status cx_sx_h_all_gather(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  return with_dim(sx, c, op, CX_OP_ALL_GATHER, "all_gather_dim", 0);
}

cxla_status cx_sx_h_reduce_scatter(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  return with_dim(sx, c, op, CX_OP_REDUCE_SCATTER, "scatter_dimension", 1);
}

/* all_to_all: HLO's array form when it splits and concatenates the same dimension (what jax's
 * all_to_all lowers to); the two-dimension form XLA's builder rewrites with reshapes and
 * transposes is refused. */
cxla_status cx_sx_h_all_to_all(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, 1, 1));
  int64_t sd, cd, n;
  CX_TRY(cx_sx_int(sx, op, "split_dimension", 1, 0, &sd));
  CX_TRY(cx_sx_int(sx, op, "concat_dimension", 1, 0, &cd));
  CX_TRY(cx_sx_int(sx, op, "split_count", 1, 0, &n));
  if (sd != cd)
    return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "not supported: all_to_all splitting dimension %lld and concatenating %lld",
                     (long long)sd, (long long)cd);
  cx_instr *in;
  CX_TRY(collective(sx, c, op, CX_OP_ALL_TO_ALL, 0, &in));
  if (!cx_ints_set(sx->m, &in->a.dims, 1, &sd)) return CXLA_ERR_OUT_OF_MEMORY;
  return cx_sx_bind(sx, c, op, in);
}

cxla_status cx_sx_h_collective_permute(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, 1, 1));
  cx_shape s;
  CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &s));
  cx_instr *x;
  CX_TRY(cx_sx_operand(sx, op, 0, &x));
  cx_groups *pairs;
  CX_TRY(groups(sx, op, "source_target_pairs", 1, &pairs));
  cx_instr *in = cx_sx_add(sx, c, CX_OP_COLLECTIVE_PERMUTE, &s, 1, &x, op);
  if (!in) return CXLA_ERR_OUT_OF_MEMORY;
  in->a.source_target_pairs = pairs;
  CX_TRY(channel(sx, op, in));
  return cx_sx_bind(sx, c, op, in);
}

cxla_status cx_sx_h_collective_broadcast(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, 1, 1));
  cx_instr *in;
  CX_TRY(collective(sx, c, op, CX_OP_COLLECTIVE_BROADCAST, 0, &in));
  return cx_sx_bind(sx, c, op, in);
}

/* cross-replica-sum_v1 (the old all-reduce of add): an all-reduce with an adder. */
cxla_status cx_sx_h_cross_replica_sum(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, 1, 1));
  cx_shape s;
  CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &s));
  if (s.type == CXLA_TUPLE || s.type == CXLA_TOKEN) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "the result must be a tensor");
  cx_instr *x;
  CX_TRY(cx_sx_operand(sx, op, 0, &x));
  cx_groups *rg;
  CX_TRY(groups(sx, op, "replica_groups", 0, &rg));
  cx_comp *add = cx_module_add_binary(sx->m, "add", CX_OP_ADD, s.type);
  cx_instr *in = add ? cx_sx_add(sx, c, CX_OP_ALL_REDUCE, &s, 1, &x, op) : NULL;
  if (!in || !cx_instr_set_called(in, 1, &add)) return CXLA_ERR_OUT_OF_MEMORY;
  in->a.replica_groups = rg;
  return cx_sx_bind(sx, c, op, in);
}

/* infeed(token) -> data..., token: HLO's infeed gives ((data...), token[]). */
cxla_status cx_sx_h_infeed(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, 1, -1));
  if (op->num_results < 1) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "expected the data and a token as results");
  cx_instr *tok;
  CX_TRY(cx_sx_operand(sx, op, 0, &tok));
  int nd = op->num_results - 1;
  cx_shape s, data;
  memset(&s, 0, sizeof s);
  memset(&data, 0, sizeof data);
  data.type = CXLA_TUPLE;
  data.ntuple = nd;
  s.type = CXLA_TUPLE;
  s.ntuple = 2;
  s.tuple = cx_arena_alloc(&sx->m->arena, sizeof *s.tuple * 2);
  if (nd) data.tuple = cx_arena_alloc(&sx->m->arena, sizeof *data.tuple * (size_t)nd);
  if (!s.tuple || (nd && !data.tuple)) return cx_oom(sx->ctx);
  for (int i = 0; i < nd; i++) CX_TRY(cx_sx_shape(sx, op, op->results[i].type, &data.tuple[i]));
  CX_TRY(cx_sx_shape(sx, op, op->results[nd].type, &s.tuple[1]));
  if (s.tuple[1].type != CXLA_TOKEN) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "the last result must be a token");
  s.tuple[0] = data;
  cx_instr *in = cx_sx_add(sx, c, CX_OP_INFEED, &s, 1, &tok, op);
  if (!in) return CXLA_ERR_OUT_OF_MEMORY;
  const char *cfg = cx_sx_str(op, "infeed_config");
  if (cfg && *cfg && !cx_attr_add_raw(sx->m, &in->a.nraw, &in->a.raw, "infeed_config", cfg)) return CXLA_ERR_OUT_OF_MEMORY;
  cx_instr *d = cx_sx_add(sx, c, CX_OP_GET_TUPLE_ELEMENT, &s.tuple[0], 1, &in, op);
  cx_instr *t = cx_sx_add(sx, c, CX_OP_GET_TUPLE_ELEMENT, &s.tuple[1], 1, &in, op);
  if (!d || !t) return CXLA_ERR_OUT_OF_MEMORY;
  t->a.index = 1;
  for (int i = 0; i < nd; i++) {
    cx_instr *g = cx_sx_add(sx, c, CX_OP_GET_TUPLE_ELEMENT, &data.tuple[i], 1, &d, op);
    if (!g) return CXLA_ERR_OUT_OF_MEMORY;
    g->a.index = i;
    sx->vals[op->results[i].id] = g;
  }
  sx->vals[op->results[nd].id] = t;
  return CXLA_OK;
}

/* outfeed(inputs..., token) -> token: HLO's outfeed of the inputs' tuple. */
cxla_status cx_sx_h_outfeed(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, -1, 1));
  cx_instr **ops;
  int n;
  CX_TRY(cx_sx_operands(sx, op, 0, &ops, &n));
  cx_instr *data;
  CX_TRY(cx_sx_root(sx, c, op, ops, n - 1, 1, &data));
  cx_shape s;
  CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &s));
  cx_instr *two[2] = {data, ops[n - 1]};
  cx_instr *in = cx_sx_add(sx, c, CX_OP_OUTFEED, &s, 2, two, op);
  if (!in) return CXLA_ERR_OUT_OF_MEMORY;
  const char *cfg = cx_sx_str(op, "outfeed_config");
  if (cfg && *cfg && !cx_attr_add_raw(sx->m, &in->a.nraw, &in->a.raw, "outfeed_config", cfg)) return CXLA_ERR_OUT_OF_MEMORY;
  return cx_sx_bind(sx, c, op, in);
}

/* A shape (data, u32[], token[]) of a send or recv with the given data. */
static cxla_status started_shape(cx_sx *sx, const cx_shape *data, cx_shape *s) {
  memset(s, 0, sizeof *s);
  s->type = CXLA_TUPLE;
  s->ntuple = 3;
  if (!(s->tuple = cx_arena_alloc(&sx->m->arena, sizeof *s->tuple * 3))) return cx_oom(sx->ctx);
  s->tuple[0] = *data;
  s->tuple[1] = cx_shape_scalar(CXLA_U32);
  s->tuple[2].type = CXLA_TOKEN;
  return CXLA_OK;
}

static cxla_status transfer_attrs(cx_sx *sx, const cx_mlir_op *op, cx_instr *in) {
  CX_TRY(channel(sx, op, in));
  CX_TRY(cx_sx_bool(sx, op, "is_host_transfer", 0, 0, &in->a.is_host_transfer));
  cx_groups *pairs;
  CX_TRY(groups(sx, op, "source_target_pairs", 1, &pairs));
  if (pairs && pairs->n)
    return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "not supported: send/recv with source_target_pairs");
  return CXLA_OK;
}

/* send(inputs..., token) -> token: HLO's send of the data (a tuple when several) and its
 * send-done, as XLA makes them. cxla loads them and refuses to compile them (ops.def). */
cxla_status cx_sx_h_send(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, -2, 1));
  cx_instr **ops;
  int n;
  CX_TRY(cx_sx_operands(sx, op, 0, &ops, &n));
  cx_instr *data = ops[0];
  if (n - 1 != 1) CX_TRY(cx_sx_root(sx, c, op, ops, n - 1, 1, &data));
  cx_shape s;
  CX_TRY(started_shape(sx, &data->shape, &s));
  cx_instr *two[2] = {data, ops[n - 1]};
  cx_instr *snd = cx_sx_add(sx, c, CX_OP_SEND, &s, 2, two, op);
  if (!snd) return CXLA_ERR_OUT_OF_MEMORY;
  CX_TRY(transfer_attrs(sx, op, snd));
  cx_instr *done = cx_sx_add(sx, c, CX_OP_SEND_DONE, &s.tuple[2], 1, &snd, op);
  if (!done) return CXLA_ERR_OUT_OF_MEMORY;
  done->a.channel_id = snd->a.channel_id;
  done->a.is_host_transfer = snd->a.is_host_transfer;
  return cx_sx_bind(sx, c, op, done);
}

/* recv(token) -> data..., token: HLO's recv and recv-done, the data a tuple when several. */
cxla_status cx_sx_h_recv(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, 1, -1));
  if (op->num_results < 2) return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "not supported: a recv of no data");
  cx_instr *tok;
  CX_TRY(cx_sx_operand(sx, op, 0, &tok));
  int nd = op->num_results - 1;
  cx_shape data;
  if (nd == 1) {
    CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &data));
  } else {
    memset(&data, 0, sizeof data);
    data.type = CXLA_TUPLE;
    data.ntuple = nd;
    if (!(data.tuple = cx_arena_alloc(&sx->m->arena, sizeof *data.tuple * (size_t)nd))) return cx_oom(sx->ctx);
    for (int i = 0; i < nd; i++) CX_TRY(cx_sx_shape(sx, op, op->results[i].type, &data.tuple[i]));
  }
  cx_shape s, ds;
  CX_TRY(started_shape(sx, &data, &s));
  cx_instr *rcv = cx_sx_add(sx, c, CX_OP_RECV, &s, 1, &tok, op);
  if (!rcv) return CXLA_ERR_OUT_OF_MEMORY;
  CX_TRY(transfer_attrs(sx, op, rcv));
  memset(&ds, 0, sizeof ds);
  ds.type = CXLA_TUPLE;
  ds.ntuple = 2;
  if (!(ds.tuple = cx_arena_alloc(&sx->m->arena, sizeof *ds.tuple * 2))) return cx_oom(sx->ctx);
  ds.tuple[0] = data;
  ds.tuple[1].type = CXLA_TOKEN;
  cx_instr *done = cx_sx_add(sx, c, CX_OP_RECV_DONE, &ds, 1, &rcv, op);
  if (!done) return CXLA_ERR_OUT_OF_MEMORY;
  done->a.channel_id = rcv->a.channel_id;
  done->a.is_host_transfer = rcv->a.is_host_transfer;
  cx_instr *d = cx_sx_add(sx, c, CX_OP_GET_TUPLE_ELEMENT, &ds.tuple[0], 1, &done, op);
  cx_instr *t = cx_sx_add(sx, c, CX_OP_GET_TUPLE_ELEMENT, &ds.tuple[1], 1, &done, op);
  if (!d || !t) return CXLA_ERR_OUT_OF_MEMORY;
  t->a.index = 1;
  if (nd == 1) {
    sx->vals[op->results[0].id] = d;
  } else {
    for (int i = 0; i < nd; i++) {
      cx_instr *g = cx_sx_add(sx, c, CX_OP_GET_TUPLE_ELEMENT, &data.tuple[i], 1, &d, op);
      if (!g) return CXLA_ERR_OUT_OF_MEMORY;
      g->a.index = i;
      sx->vals[op->results[i].id] = g;
    }
  }
  sx->vals[op->results[nd].id] = t;
  return CXLA_OK;
}
