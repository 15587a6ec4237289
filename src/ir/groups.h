/* groups.h — the replica groups and source-target pairs of the collectives (cx_groups, ir.h):
 * making them, XLA's iota form, and which devices take part with a given one under XLA's
 * group modes (docs/collectives.md). The verifier, the interpreter and the cpu backend all
 * resolve groups here, so they agree on who takes part and in what order. */
#ifndef CX_GROUPS_H
#define CX_GROUPS_H
#include "core/transport.h" /* cx_devices */
#include "ir/ir.h"

/* n groups of sizes[0..n), their members concatenated in ids, copied into m's arena; NULL on
 * OOM (error set). */
cx_groups *cx_groups_new(cx_module *m, int n, const int64_t *sizes, const int64_t *ids);
/* A deep copy into m's arena (NULL stays NULL); 0 on OOM. */
int cx_groups_copy(cx_module *m, cx_groups **to, const cx_groups *from);
static inline int64_t cx_groups_size(const cx_groups *g, int k) { return g->start[k + 1] - g->start[k]; }
static inline int64_t cx_groups_count(const cx_groups *g) { return g ? g->start[g->n] : 0; }
/* XLA's iota form: the ids 0..count-1 laid out as an array of dims[0..ndims), transposed by
 * perm (NULL: not transposed), read row by row into ids[0..count). */
void cx_groups_iota_ids(int ndims, const int64_t *dims, const int *perm, int64_t count, int64_t *ids);

/* How a collective's ids name devices (XLA's CollectiveOpGroupMode): replica ids within one
 * partition, partition ids within one replica, replica ids with every partition of each, or
 * device ids (replica * partitions + partition). */
typedef enum cx_group_mode {
  CX_GROUPS_CROSS_REPLICA, CX_GROUPS_CROSS_PARTITION, CX_GROUPS_CROSS_REPLICA_AND_PARTITION, CX_GROUPS_FLATTENED
} cx_group_mode;
/* The mode of a collective: channel_id= and use_global_device_ids= decide, as in XLA (ops
 * without use_global_device_ids: cross-partition with a channel, else cross-replica). */
cx_group_mode cx_collective_mode(const cx_instr *in);
/* How many ids the groups of a mode must cover on replicas x partitions devices. */
int64_t cx_group_mode_ids(cx_group_mode mode, int replicas, int partitions);
const char *cx_group_mode_what(cx_group_mode mode); /* "replicas", "partitions", "devices" */

/* The devices in the group of `in` that device `me` belongs to, in group order (the order
 * gathers concatenate and reductions fold in), into out[0..cap); *pos is me's place among them.
 * Returns the count, or -1 with a message in why when the groups do not fit the run. */
int cx_collective_group(const cx_instr *in, cx_devices dv, int me, int *out, int cap, int *pos, char *why, size_t n);
/* collective-permute: the device me sends to and the one it receives from (-1: none; it then
 * gets zeros). 0, or -1 with why when a pair names an id the run does not have. */
int cx_collective_permute_peers(const cx_instr *in, cx_devices dv, int me, int *to, int *from, char *why, size_t n);
/* replica_count= and num_partitions= from the module header (0 where absent). */
void cx_module_device_counts(const cx_module *m, int64_t *replicas, int64_t *partitions);
/* The devices of a run of m on n of them (one per rank or thread): num_partitions= from the
 * header (else 1) and replicas the rest. 0, or -1 with why when the header does not allow n. */
int cx_module_devices(const cx_module *m, int n, cx_devices *dv, char *why, size_t len);
/* The same from the header's counts (0: absent) and the module's name. */
int cx_devices_for(int64_t replicas, int64_t partitions, int n, const char *name, cx_devices *dv, char *why,
                   size_t len);
/* Whether every collective of m fits a run on dv: groups cover its devices, pairs name ids it
 * has. CXLA_ERR_INVALID_ARGUMENT at the first that does not, saying how many devices it needs. */
cxla_status cx_module_check_run(cx_module *m, cx_devices dv);
/* Whether m has collectives, replica-id or partition-id (its value depends on the device). */
int cx_module_uses_devices(const cx_module *m);

#endif
