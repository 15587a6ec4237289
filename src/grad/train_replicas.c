/* train_replicas.c — data-parallel steps (cxla_optimizer.replicas N > 1): each of N devices
 * computes the loss and gradients of its own share of the batch, and the step replaces them by
 * their mean over the devices before the optimizer sees them, so every device applies the same
 * update to the same weights. Because the loss is a mean over a device's share, the mean of
 * the N devices' gradients is the gradient of the loss over the whole batch (shares of equal
 * size).
 *
 * One all-reduce per float type takes every value of that type at once (the gradients of an
 * f32 model: one collective a step, as XLA's all-reduce combiner would make), over one group of
 * all N replicas written out, {{0,1,...,N-1}}, so a run on another number of devices is
 * refused when it starts rather than averaged wrongly. The sum folds in replica order
 * (docs/collectives.md), so every device gets the same bits whatever the transport; the
 * division by N follows, in the value's own type (exact for N a power of two). */
#include "grad/train_int.h"
#include "ir/groups.h"

/* all-reduce(vals of type t...) with to_apply add over replicas 0..n-1; results back in vals. */
static void mean_of_type(gr_em *e, int n, cx_instr **vals, cxla_type t, int replicas) {
  cx_instr **ops = cx_calloc((size_t)n, sizeof *ops);
  int64_t *ids = cx_calloc((size_t)replicas, sizeof *ids), size = replicas;
  int *at = cx_calloc((size_t)n, sizeof *at), k = 0;
  if (!ops || !ids || !at) {
    e->st = cx_oom(e->g->m->ctx);
    goto done;
  }
  for (int i = 0; i < n; i++)
    if (vals[i]->shape.type == t) at[k] = i, ops[k++] = vals[i];
  for (int r = 0; r < replicas; r++) ids[r] = r;
  cx_comp *add = gr_scalar_comp(e->g, CX_OP_ADD, t, CXLA_EQ);
  cx_groups *groups = cx_groups_new(e->c->module, 1, &size, ids);
  if (!add || !groups) {
    e->st = CXLA_ERR_OUT_OF_MEMORY;
    goto done;
  }
  cx_instr *ar = gr_new(e, CX_OP_ALL_REDUCE, NULL, k, ops);
  if (ar) {
    ar->a.replica_groups = groups;
    if (!cx_instr_set_called(ar, 1, &add)) e->st = CXLA_ERR_OUT_OF_MEMORY;
  }
  ar = gr_done(e, ar);
  for (int j = 0; j < k && ar; j++) {
    cx_instr *sum = k == 1 ? ar : gr_gte(e, ar, j);
    vals[at[j]] = gr_bin(e, CX_OP_DIVIDE, sum, gr_like(e, sum, (double)replicas));
  }
done:
  cx_free(ops);
  cx_free(ids);
  cx_free(at);
}

void tr_replica_mean(gr_em *e, int n, cx_instr **vals, int replicas) {
  if (replicas <= 1) return;
  for (int i = 0; i < n && e->st == CXLA_OK; i++) {
    int seen = 0; /* each type once, at its first value (a mean keeps its value's type) */
    for (int j = 0; j < i; j++) seen |= vals[j]->shape.type == vals[i]->shape.type;
    if (!seen) mean_of_type(e, n, vals, vals[i]->shape.type, replicas);
  }
}
