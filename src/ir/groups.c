/* groups.c — replica groups and source-target pairs: building them, expanding XLA's iota form,
 * and resolving, for one device of a run, the devices it exchanges data with (XLA's
 * GetParticipatingDevicesGroups, one group at a time). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/groups.h"

cx_groups *cx_groups_new(cx_module *m, int n, const int64_t *sizes, const int64_t *ids) {
  cx_groups *g = cx_arena_alloc(&m->arena, sizeof *g);
  int64_t *start = cx_arena_alloc(&m->arena, sizeof *start * (size_t)(n + 1));
  if (!g || !start) {
    cx_oom(m->ctx);
    return NULL;
  }
  memset(g, 0, sizeof *g);
  start[0] = 0;
  for (int k = 0; k < n; k++) start[k + 1] = start[k] + sizes[k];
  g->ids = cx_arena_alloc(&m->arena, sizeof *g->ids * (size_t)(start[n] ? start[n] : 1));
  if (!g->ids) {
    cx_oom(m->ctx);
    return NULL;
  }
  if (start[n]) memcpy(g->ids, ids, sizeof *ids * (size_t)start[n]);
  g->n = n;
  g->start = start;
  return g;
}

int cx_groups_copy(cx_module *m, cx_groups **to, const cx_groups *from) {
  *to = NULL;
  if (!from) return 1;
  int64_t *sizes = cx_malloc(sizeof *sizes * (size_t)(from->n ? from->n : 1));
  if (!sizes) return 0;
  for (int k = 0; k < from->n; k++) sizes[k] = cx_groups_size(from, k);
  cx_groups *g = cx_groups_new(m, from->n, sizes, from->ids);
  cx_free(sizes);
  if (!g) return 0;
  g->ndims = from->ndims;
  memcpy(g->dims, from->dims, sizeof g->dims);
  memcpy(g->perm, from->perm, sizeof g->perm);
  *to = g;
  return 1;
}

void cx_groups_iota_ids(int ndims, const int64_t *dims, const int *perm, int64_t count, int64_t *ids) {
  int64_t tdims[CXLA_MAX_RANK], stride[CXLA_MAX_RANK], idx[CXLA_MAX_RANK] = {0};
  for (int i = ndims - 1, s = 1; i >= 0; i--) { /* row-major strides of the untransposed array */
    stride[i] = s;
    s *= (int)dims[i];
  }
  for (int i = 0; i < ndims; i++) tdims[i] = dims[perm ? perm[i] : i];
  for (int64_t k = 0; k < count; k++) {
    int64_t v = 0;
    for (int i = 0; i < ndims; i++) v += idx[i] * stride[perm ? perm[i] : i];
    ids[k] = v;
    for (int i = ndims - 1; i >= 0; i--) { /* next index of the transposed array, row-major */
      if (++idx[i] < tdims[i]) break;
      idx[i] = 0;
    }
  }
}

/* The ops whose text has use_global_device_ids= (XLA: a bool there, absent elsewhere). */
static const uint8_t k_global_ids[CX_OP_COUNT] = {
  [CX_OP_ALL_REDUCE] = 1, [CX_OP_ALL_REDUCE_START] = 1, [CX_OP_ALL_GATHER] = 1, [CX_OP_ALL_GATHER_START] = 1,
  [CX_OP_REDUCE_SCATTER] = 1,
};

cx_group_mode cx_collective_mode(const cx_instr *in) {
  int channel = in->a.channel_id >= 0;
  if (!k_global_ids[in->op]) return channel ? CX_GROUPS_CROSS_PARTITION : CX_GROUPS_CROSS_REPLICA;
  if (!channel) return CX_GROUPS_CROSS_REPLICA; /* use_global_device_ids needs a channel (the verifier) */
  return in->a.use_global_device_ids ? CX_GROUPS_FLATTENED : CX_GROUPS_CROSS_REPLICA_AND_PARTITION;
}

int64_t cx_group_mode_ids(cx_group_mode mode, int replicas, int partitions) {
  if (mode == CX_GROUPS_CROSS_PARTITION) return partitions;
  if (mode == CX_GROUPS_FLATTENED) return (int64_t)replicas * partitions;
  return replicas;
}

const char *cx_group_mode_what(cx_group_mode mode) {
  static const char *const what[] = {"replicas", "partitions", "replicas", "devices"};
  return what[mode];
}

static const char *mode_name(cx_group_mode mode) {
  static const char *const names[] = {"cross-replica", "cross-partition", "cross-replica-and-partition",
                                      "flattened device ids"};
  return names[mode];
}

/* The device with id `id` (as the mode names devices) seen from device me; CROSS_REPLICA_AND_
 * PARTITION ids expand to every partition, which the caller does itself. */
static int device_of(cx_group_mode mode, cx_devices dv, int me, int64_t id) {
  int r = me / dv.partitions, p = me % dv.partitions;
  switch (mode) {
  case CX_GROUPS_CROSS_REPLICA: return (int)id * dv.partitions + p;
  case CX_GROUPS_CROSS_PARTITION: return r * dv.partitions + (int)id;
  case CX_GROUPS_CROSS_REPLICA_AND_PARTITION: return (int)id * dv.partitions;
  case CX_GROUPS_FLATTENED: return (int)id;
  }
  return -1;
}

static int64_t my_id(cx_group_mode mode, cx_devices dv, int me) {
  if (mode == CX_GROUPS_CROSS_PARTITION) return me % dv.partitions;
  if (mode == CX_GROUPS_FLATTENED) return me;
  return me / dv.partitions;
}

/* How a gather (+1: the result grows by the group size) or a scatter (-1: shrinks) scales its
 * dimension; 0 for the other collectives. */
static const signed char k_scales[CX_OP_COUNT] = {
  [CX_OP_ALL_GATHER] = 1, [CX_OP_ALL_GATHER_START] = 1, [CX_OP_REDUCE_SCATTER] = -1,
};

/* The group size a gather's or scatter's shapes were written for (operand 0 against its
 * result along the one dimension), or 0. The verifier checks the shapes against each other;
 * only a run knows its groups, and without replica_groups a group is every device. */
static int64_t shaped_group(const cx_instr *in) {
  int scale = k_scales[in->op];
  const cx_shape *r = &in->shape;
  if (r->type == CXLA_TUPLE) r = in->op == CX_OP_ALL_GATHER_START && r->ntuple == 2 ? &r->tuple[1] : r->ntuple ? &r->tuple[0] : NULL;
  if (r && r->type == CXLA_TUPLE) r = r->ntuple ? &r->tuple[0] : NULL;
  if (!scale || !r || in->nops < 1 || in->a.dims.n != 1) return 0;
  const cx_shape *x = &in->ops[0]->shape;
  int64_t d = in->a.dims.v[0];
  if (!cx_type_is_array(x->type) || r->rank != x->rank || d < 0 || d >= x->rank) return 0;
  int64_t big = scale > 0 ? r->dims[d] : x->dims[d], small = scale > 0 ? x->dims[d] : r->dims[d];
  return small > 0 && big % small == 0 ? big / small : 0;
}

int cx_collective_group(const cx_instr *in, cx_devices dv, int me, int *out, int cap, int *pos, char *why, size_t n) {
  cx_group_mode mode = cx_collective_mode(in);
  const cx_groups *g = in->a.replica_groups;
  int64_t need = cx_group_mode_ids(mode, dv.replicas, dv.partitions), mine = my_id(mode, dv, me);
  if (!g && mode == CX_GROUPS_FLATTENED) {
    snprintf(why, n, "use_global_device_ids=true needs explicit replica_groups");
    return -1;
  }
  if (g && cx_groups_count(g) != need) {
    snprintf(why, n, "its replica groups (%s) name %lld %s, but this run has %lld (%d replica%s x %d partition%s)",
             mode_name(mode), (long long)cx_groups_count(g), cx_group_mode_what(mode), (long long)need, dv.replicas,
             dv.replicas == 1 ? "" : "s", dv.partitions, dv.partitions == 1 ? "" : "s");
    return -1;
  }
  int64_t first = 0, count = need;
  if (g) {
    int k = 0;
    for (int64_t i = 0; i < g->start[g->n]; i++)
      if (g->ids[i] == mine) {
        while (g->start[k + 1] <= i) k++;
        first = g->start[k];
        count = cx_groups_size(g, k);
        break;
      }
    if (!count) {
      snprintf(why, n, "no replica group names id %lld", (long long)mine);
      return -1;
    }
  }
  int per = mode == CX_GROUPS_CROSS_REPLICA_AND_PARTITION ? dv.partitions : 1, k = 0;
  if (count * per > cap) {
    snprintf(why, n, "a group of %lld devices is more than cxla takes (%d)", (long long)(count * per), cap);
    return -1;
  }
  *pos = -1;
  for (int64_t i = 0; i < count; i++) {
    int64_t id = g ? g->ids[first + i] : i;
    for (int q = 0; q < per; q++, k++) {
      out[k] = device_of(mode, dv, me, id) + q;
      if (out[k] == me) *pos = k;
    }
  }
  if (*pos < 0) {
    snprintf(why, n, "device %d is not in its own group", me);
    return -1;
  }
  int64_t shaped = shaped_group(in);
  if (shaped && shaped != k) { /* its result would not hold what the group computes */
    int at = snprintf(why, n, "its shapes are for groups of %lld devices, but its group in this run has %d", (long long)shaped, k);
    if (!g && at > 0 && (size_t)at < n) /* then a group is every replica (or device) */
      snprintf(why + at, n - (size_t)at, "; run it with --replicas=%lld or under mpirun -np %lld",
               (long long)(shaped * dv.partitions), (long long)(shaped * dv.partitions));
    return -1;
  }
  return k;
}

int cx_collective_permute_peers(const cx_instr *in, cx_devices dv, int me, int *to, int *from, char *why, size_t n) {
  cx_group_mode mode = cx_collective_mode(in);
  const cx_groups *g = in->a.source_target_pairs;
  int64_t need = cx_group_mode_ids(mode, dv.replicas, dv.partitions), mine = my_id(mode, dv, me);
  *to = *from = -1;
  for (int k = 0; g && k < g->n; k++) {
    int64_t s = g->ids[g->start[k]], t = g->ids[g->start[k] + 1];
    if (s >= need || t >= need) {
      snprintf(why, n, "source_target_pairs name %s %lld, but this run has %lld", cx_group_mode_what(mode),
               (long long)(s >= need ? s : t), (long long)need);
      return -1;
    }
    if (s == mine) *to = device_of(mode, dv, me, t);
    if (t == mine) *from = device_of(mode, dv, me, s);
  }
  return 0;
}

static int64_t header_int(const cx_module *m, const char *key) {
  for (int i = 0; i < m->nraw; i++)
    if (!strcmp(m->raw[i].key, key) && m->raw[i].value) {
      char *end;
      long long v = strtoll(m->raw[i].value, &end, 10);
      return *end || v < 1 || v > (1 << 24) ? -1 : v;
    }
  return 0;
}

void cx_module_device_counts(const cx_module *m, int64_t *replicas, int64_t *partitions) {
  *replicas = header_int(m, "replica_count");
  *partitions = header_int(m, "num_partitions");
}

int cx_devices_for(int64_t r, int64_t p, int n, const char *name, cx_devices *dv, char *why, size_t len) {
  if (r < 0 || p < 0) {
    snprintf(why, len, "the module header's replica_count= or num_partitions= is not a positive count");
    return -1;
  }
  int64_t pp = p ? p : 1, want = (r ? r : 1) * pp;
  if (n < 1 || n % pp || (r && r * pp != n)) {
    snprintf(why, len, "module %s is for %lld devices (replica_count=%lld x num_partitions=%lld); this run has %d "
             "(run it with --replicas=%lld or under mpirun -np %lld)", name ? name : "?", (long long)want,
             (long long)(r ? r : 1), (long long)pp, n, (long long)want, (long long)want);
    return -1;
  }
  dv->partitions = (int)pp;
  dv->replicas = n / (int)pp;
  return 0;
}

int cx_module_devices(const cx_module *m, int n, cx_devices *dv, char *why, size_t len) {
  int64_t r, p;
  cx_module_device_counts(m, &r, &p);
  return cx_devices_for(r, p, n, m->name, dv, why, len);
}

/* One collective against the run's devices; error at its location. */
static cxla_status check_one(cx_module *m, const cx_instr *in, cx_devices dv) {
  char why[300];
  int members[1024], pos, to, from;
  int ok = in->op == CX_OP_COLLECTIVE_PERMUTE || in->op == CX_OP_COLLECTIVE_PERMUTE_START
               ? cx_collective_permute_peers(in, dv, 0, &to, &from, why, sizeof why) >= 0
               : cx_collective_group(in, dv, 0, members, 1024, &pos, why, sizeof why) >= 0;
  if (ok) return CXLA_OK;
  int64_t want = cx_groups_count(in->a.replica_groups) * (dv.replicas * dv.partitions) /
                 cx_group_mode_ids(cx_collective_mode(in), dv.replicas, dv.partitions);
  if (want < 1 || in->op == CX_OP_COLLECTIVE_PERMUTE || in->op == CX_OP_COLLECTIVE_PERMUTE_START)
    return cx_error_at(m, in->loc, CXLA_ERR_INVALID_ARGUMENT, "%s '%s': %s", cx_op_name(in->op),
                       in->name ? in->name : "?", why);
  return cx_error_at(m, in->loc, CXLA_ERR_INVALID_ARGUMENT, "%s '%s': %s; run it with --replicas=%lld or under mpirun -np %lld",
                     cx_op_name(in->op), in->name ? in->name : "?", why, (long long)want, (long long)want);
}

cxla_status cx_module_check_run(cx_module *m, cx_devices dv) {
  for (int c = 0; c < m->ncomps; c++)
    for (int i = 0; i < m->comps[c]->ninstrs; i++) {
      const cx_instr *in = m->comps[c]->instrs[i];
      if (cx_op_is_collective(in->op) && in->op != CX_OP_ALL_REDUCE_DONE && in->op != CX_OP_ALL_GATHER_DONE &&
          in->op != CX_OP_COLLECTIVE_PERMUTE_DONE)
        CX_TRY(check_one(m, in, dv));
    }
  return CXLA_OK;
}

int cx_module_uses_devices(const cx_module *m) {
  for (int c = 0; c < m->ncomps; c++)
    for (int i = 0; i < m->comps[c]->ninstrs; i++) {
      cx_op op = m->comps[c]->instrs[i]->op;
      if (cx_op_is_collective(op) || op == CX_OP_REPLICA_ID || op == CX_OP_PARTITION_ID) return 1;
    }
  return 0;
}
