/* collectives.c — the reference semantics of the collectives, on every device of a run at
 * once: each device's interpreter exchanges its operands with the others of its group through
 * the run's transport (core/transport.h) and computes its result from all of them.
 *
 * The order is the definition (docs/collectives.md): a group's members are taken in the order
 * the group lists them (device order for {}), member k being x_k. all-reduce and
 * reduce-scatter fold ((x_0 + x_1) + x_2) + ... with to_apply, element by element, whatever
 * the order in which the data arrived, so results are the same bit for bit on every device
 * and every run; the cpu backend folds in the same order. all-gather concatenates in member
 * order; all-to-all sends block j to member j. This file keeps the interpreter's plain style:
 * every member's whole operand is gathered, then folded or cut. */
#include <stdio.h>
#include <string.h>
#include "core/transport.h"
#include "interp/internal.h"
#include "ir/groups.h"

#define MAX_GROUP 1024

static const cx_replica *replica(cx_interp *st, cx_replica *single) {
  if (st->rep) return st->rep;
  *single = cx_replica_single();
  return single;
}

/* The run's devices in in's group of this device (members[0..*n), this one at *pos). */
static cxla_status members(cx_interp *st, cx_instr *in, const cx_replica *r, int *m, int *n, int *pos) {
  char why[300];
  *n = cx_collective_group(in, r->dv, r->device, m, MAX_GROUP, pos, why, sizeof why);
  if (*n < 0)
    return cx_error_at(st->m, in->loc, CXLA_ERR_INVALID_ARGUMENT, "%s '%s': %s", cx_op_name(in->op),
                       in->name ? in->name : "?", why);
  return CXLA_OK;
}

static cxla_status exchanged(cx_interp *st, cx_instr *in, const cx_replica *r, const cx_xfer *s, int ns,
                             const cx_xfer *rv, int nr) {
  char err[400];
  if (cx_transport_exchange(r, s, ns, rv, nr, err, sizeof err) == 0) return CXLA_OK;
  return cx_error_at(st->m, in->loc, CXLA_ERR_RUNTIME, "%s '%s': %s", cx_op_name(in->op), in->name ? in->name : "?",
                     err);
}

/* The array operands of in, as the k-th leaf: ops[k] itself (collectives take arrays). */
static size_t bytes_of(const cxla_literal *l) { return (size_t)cx_shape_bytes(&l->shape); }

/* all[i][k]: operand i of member k, for every operand (one exchange for them all). Frees with
 * free_all. */
static cxla_status gather_all(cx_interp *st, cx_instr *in, const cx_replica *r, const int *m, int n, int pos,
                              cxla_literal *const *ops, char ***all) {
  int nops = in->nops;
  char **a = cx_calloc((size_t)nops, sizeof *a);
  cx_xfer *x = cx_calloc((size_t)(2 * nops * n + 1), sizeof *x);
  cxla_status s = a && x ? CXLA_OK : cx_oom(st->ctx);
  int ns = 0, nr = 0;
  cx_xfer *sends = x, *recvs = x ? x + nops * n : NULL;
  for (int i = 0; i < nops && s == CXLA_OK; i++) {
    size_t b = bytes_of(ops[i]);
    if (!(a[i] = cx_malloc(b * (size_t)n + 1))) {
      s = cx_oom(st->ctx);
      break;
    }
    memcpy(a[i] + b * (size_t)pos, ops[i]->data, b);
    for (int k = 0; k < n; k++) {
      if (k == pos) continue;
      sends[ns++] = (cx_xfer){m[k], ops[i]->data, b};
      recvs[nr++] = (cx_xfer){m[k], a[i] + b * (size_t)k, b};
    }
  }
  if (s == CXLA_OK) s = exchanged(st, in, r, sends, ns, recvs, nr);
  cx_free(x);
  if (s != CXLA_OK && a) {
    for (int i = 0; i < nops; i++) cx_free(a[i]);
    cx_free(a);
    a = NULL;
  }
  *all = a;
  return s;
}

static void free_all(char **a, int nops) {
  for (int i = 0; a && i < nops; i++) cx_free(a[i]);
  cx_free(a);
}

/* Copies the block [off, off + b) of dimension d between an array of dims `dims` (full) and
 * one whose dimension d is b (block): to_block 1 cuts it out, 0 puts it in. */
static void block_copy(const cx_shape *full, int d, int64_t off, int64_t b, char *fdata, char *bdata, int to_block) {
  size_t es = cxla_type_size(full->type);
  int64_t outer = 1, inner = (int64_t)es;
  for (int k = 0; k < d; k++) outer *= full->dims[k];
  for (int k = d + 1; k < full->rank; k++) inner *= full->dims[k];
  for (int64_t o = 0; o < outer; o++) {
    char *f = fdata + (size_t)((o * full->dims[d] + off) * inner), *p = bdata + (size_t)(o * b * inner);
    if (to_block) memcpy(p, f, (size_t)(b * inner));
    else memcpy(f, p, (size_t)(b * inner));
  }
}

/* The result leaf for operand i: the literal itself or its tuple element. */
static cxla_literal *leaf(cxla_literal *res, int nops, int i) { return nops == 1 && res->shape.type != CXLA_TUPLE ? res : res->elems[i]; }

/* out[e] = fold over k of x[k][e] with in's to_apply, in member order. */
static cxla_status fold(cx_interp *st, cx_instr *in, char *const *x, int n, cxla_literal *out) {
  cxla_type t = out->shape.type;
  int64_t ne = cx_shape_elems(&out->shape);
  for (int64_t e = 0; e < ne; e++) {
    cx_scalar acc = cx_scalar_load(t, x[0], e);
    for (int k = 1; k < n; k++) {
      cx_scalar args[2] = {acc, cx_scalar_load(t, x[k], e)};
      CX_TRY(cx_interp_call_scalar(st, in->called[0], 2, args, 1, &acc));
    }
    cx_scalar_store(t, out->data, e, acc);
  }
  return CXLA_OK;
}

/* all-reduce (and all-reduce-start, which gives the same) and reduce-scatter (scatter 1: the
 * fold of this member's block of dimension dimensions[0]). */
static cxla_status reduce(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out, int scatter) {
  char buf[128]; /* a reducer of another type than the operands verifies (XLA's rule) but is not run */
  const char *why = cx_interp_cannot_run(in, buf, sizeof buf);
  if (why) return cx_interp_unsupported(st, in, why);
  cx_replica single;
  const cx_replica *r = replica(st, &single);
  int m[MAX_GROUP], n, pos;
  char **all = NULL;
  CX_TRY(members(st, in, r, m, &n, &pos));
  CX_TRY(gather_all(st, in, r, m, n, pos, ops, &all));
  cxla_literal *res = cx_literal_new(&in->shape);
  char **x = cx_calloc((size_t)n, sizeof *x);
  cxla_status s = res && x ? CXLA_OK : cx_oom(st->ctx);
  for (int i = 0; i < in->nops && s == CXLA_OK; i++) {
    cxla_literal *o = leaf(res, in->nops, i);
    size_t b = bytes_of(ops[i]), ob = bytes_of(o);
    for (int k = 0; k < n && s == CXLA_OK; k++) {
      x[k] = all[i] + b * (size_t)k;
      if (!scatter) continue;
      char *blk = cx_malloc(ob + 1); /* member k's block `pos` */
      if (!blk) {
        s = cx_oom(st->ctx);
        break;
      }
      int64_t d = in->a.dims.v[0], bd = o->shape.dims[d];
      block_copy(&ops[i]->shape, (int)d, pos * bd, bd, x[k], blk, 1);
      x[k] = blk;
    }
    if (s == CXLA_OK) s = fold(st, in, x, n, o);
    for (int k = 0; scatter && k < n; k++)
      if (x[k] && x[k] != all[i] + b * (size_t)k) cx_free(x[k]);
    memset(x, 0, sizeof *x * (size_t)n);
  }
  cx_free(x);
  free_all(all, in->nops);
  if (s != CXLA_OK) {
    cxla_literal_destroy(res);
    return s;
  }
  *out = res;
  return CXLA_OK;
}

CX_INTERP_EVALUATOR(cx_interp_all_reduce) { return reduce(st, in, ops, out, 0); }
CX_INTERP_EVALUATOR(cx_interp_reduce_scatter) { return reduce(st, in, ops, out, 1); }

/* The all-gather of ops into res (an array or a tuple of them): member k's operand is block k
 * of dimension dimensions[0]. */
static cxla_status all_gather_into(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal *res) {
  cx_replica single;
  const cx_replica *r = replica(st, &single);
  int m[MAX_GROUP], n, pos;
  char **all = NULL;
  CX_TRY(members(st, in, r, m, &n, &pos));
  CX_TRY(gather_all(st, in, r, m, n, pos, ops, &all));
  int d = (int)in->a.dims.v[0];
  for (int i = 0; i < in->nops; i++) {
    cxla_literal *o = leaf(res, in->nops, i);
    int64_t b = ops[i]->shape.dims[d];
    if (o->shape.dims[d] != b * n) {
      free_all(all, in->nops);
      return cx_error_at(st->m, in->loc, CXLA_ERR_INVALID_ARGUMENT,
                         "%s '%s': its groups have %d devices in this run, so dimension %d must be %lld, not %lld",
                         cx_op_name(in->op), in->name ? in->name : "?", n, d, (long long)(b * n),
                         (long long)o->shape.dims[d]);
    }
    for (int k = 0; k < n; k++) block_copy(&o->shape, d, k * b, b, o->data, all[i] + bytes_of(ops[i]) * (size_t)k, 0);
  }
  free_all(all, in->nops);
  return CXLA_OK;
}

CX_INTERP_EVALUATOR(cx_interp_all_gather) {
  cxla_literal *res = cx_literal_new(&in->shape);
  if (!res) return cx_oom(st->ctx);
  cxla_status s = all_gather_into(st, in, ops, res);
  if (s != CXLA_OK) {
    cxla_literal_destroy(res);
    return s;
  }
  *out = res;
  return CXLA_OK;
}

/* collective-broadcast: the first member's operand, on every member. */
CX_INTERP_EVALUATOR(cx_interp_collective_broadcast) {
  cx_replica single;
  const cx_replica *r = replica(st, &single);
  int m[MAX_GROUP], n, pos;
  CX_TRY(members(st, in, r, m, &n, &pos));
  cxla_literal *res = cx_literal_new(&in->shape);
  cx_xfer *x = cx_calloc((size_t)(n * in->nops + 1), sizeof *x);
  cxla_status s = res && x ? CXLA_OK : cx_oom(st->ctx);
  int ns = 0, nr = 0;
  for (int i = 0; i < in->nops && s == CXLA_OK; i++) {
    cxla_literal *o = leaf(res, in->nops, i);
    if (pos == 0) {
      memcpy(o->data, ops[i]->data, bytes_of(o));
      for (int k = 1; k < n; k++) x[ns++] = (cx_xfer){m[k], ops[i]->data, bytes_of(o)};
    }
  }
  cx_xfer *recvs = x + ns;
  for (int i = 0; i < in->nops && s == CXLA_OK && pos != 0; i++)
    recvs[nr++] = (cx_xfer){m[0], leaf(res, in->nops, i)->data, bytes_of(leaf(res, in->nops, i))};
  if (s == CXLA_OK) s = exchanged(st, in, r, x, ns, recvs, nr);
  cx_free(x);
  if (s != CXLA_OK) {
    cxla_literal_destroy(res);
    return s;
  }
  *out = res;
  return CXLA_OK;
}

/* replica-id and partition-id of this device. */
CX_INTERP_EVALUATOR(cx_interp_device_id) {
  (void)ops;
  cx_replica single;
  const cx_replica *r = replica(st, &single);
  CX_TRY(cx_interp_new_array(st, in, &in->shape, out));
  uint32_t v = (uint32_t)(in->op == CX_OP_REPLICA_ID ? r->device / r->dv.partitions : r->device % r->dv.partitions);
  memcpy((*out)->data, &v, sizeof v);
  return CXLA_OK;
}

/* all-gather-start: (operands, result); all-reduce-done: its operand; all-gather-done and
 * collective-permute-done: element {1} of their -start. */
CX_INTERP_EVALUATOR(cx_interp_all_gather_start) {
  cxla_literal *res = cx_literal_new(&in->shape);
  if (!res) return cx_oom(st->ctx);
  cxla_status s = all_gather_into(st, in, ops, res->elems[1]);
  for (int i = 0; i < in->nops && s == CXLA_OK; i++)
    memcpy(leaf(res->elems[0], in->nops, i)->data, ops[i]->data, bytes_of(ops[i]));
  if (s != CXLA_OK) {
    cxla_literal_destroy(res);
    return s;
  }
  *out = res;
  return CXLA_OK;
}

CX_INTERP_EVALUATOR(cx_interp_collective_done) {
  const cxla_literal *t = ops[0];
  int k = in->op == CX_OP_ALL_REDUCE_DONE ? -1 : 1;
  if (k >= 0 && (t->shape.type != CXLA_TUPLE || t->nelems <= k)) return cx_interp_bad(st, in, "operand is not a -start's tuple");
  *out = cxla_literal_clone(st->ctx, k < 0 ? t : t->elems[k]);
  return *out ? CXLA_OK : CXLA_ERR_OUT_OF_MEMORY;
}
