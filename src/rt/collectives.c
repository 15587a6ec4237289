/* collectives.c — the collectives on the cpu: run-time routines the sequencer calls for
 * every collective (cx_seq_collective), exchanging through the run's transport
 * (core/transport.h: MPI ranks or threads of --replicas).
 *
 * all-reduce runs as a reduce-scatter then an all-gather: the elements are cut into one chunk
 * per member, member c gathers chunk c of everyone and folds it, then the folded chunks are
 * gathered by all. Each element is folded once, by one member, in member order
 * ((x_0 + x_1) + x_2) + ..., the order the interpreter defines (interp/collectives.c), so
 * results are bit for bit the interpreter's whatever arrives first; and each member sends and
 * receives 2(n-1)/n of the data, as a ring would. reduce-scatter is the first half alone,
 * all-gather the second. The fold calls the reducer compiled from to_apply
 * (cx_emit_scalar_fn), except for one add of f32, f64, s32 or s64, which runs as a loop. */
#include <stdio.h>
#include <string.h>
#include "core/trace.h"
#include "rt/collectives.h"
#include "core/transport.h"
#include "ir/groups.h"

#define MAX_GROUP 1024

/* ---- the fold ---- */

/* out[0..n) = fold of x_k[0..n) over k in order; out may be x_0. */
static void fold(const coll_desc *d, int op, cx_scalar_fn fn, char *out, char *const *x, int nx, int64_t n) {
  size_t es = d->es[op];
  if (out != x[0]) memmove(out, x[0], (size_t)n * es);
  for (int k = 1; k < nx; k++) {
    const char *y = x[k];
    switch ((coll_fast)d->fast) {
#define ADD_INTO(T) for (int64_t e = 0; e < n; e++) ((T *)out)[e] += ((const T *)y)[e]
    case COLL_ADD_F32: ADD_INTO(float); break;
    case COLL_ADD_F64: ADD_INTO(double); break;
    case COLL_ADD_S32: ADD_INTO(uint32_t); break; /* unsigned: wraps, as the interpreter's integer add */
    case COLL_ADD_S64: ADD_INTO(uint64_t); break;
#undef ADD_INTO
    case COLL_CALL: {
      void *p[3];
      for (int64_t e = 0; e < n; e++) {
        p[0] = p[1] = out + (size_t)e * es; /* the result over the accumulator: read before written */
        p[2] = (void *)(y + (size_t)e * es);
        fn(p);
      }
      break;
    }
    }
  }
}

/* ---- the pieces every routine shares ---- */

typedef struct coll_run {
  cx_rt *rt;
  const coll_desc *d;
  const cx_replica *rep;
  cx_replica single;
  int m[MAX_GROUP], n, pos;
} coll_run;

static void fail(coll_run *c, cxla_status code, const char *why) {
  const cx_instr *in = c->d->in;
  cx_rt *rt = c->rt;
  if (rt->status != CXLA_OK) return;
  rt->status = code;
  snprintf(rt->errmsg, sizeof rt->errmsg, "%s:%d:%d: error: %s '%s': %s", c->d->file, in->loc.line, in->loc.col,
           cx_op_name(in->op), in->name ? in->name : "?", why);
}

/* The run and the group of this device; 0 when it failed (rt->status set). */
static int start(coll_run *c, cx_rt *rt, const coll_desc *d) {
  c->rt = rt;
  c->d = d;
  c->n = 0;
  c->single = cx_replica_single();
  c->rep = rt->rep ? rt->rep : &c->single;
  if (d->kind == COLL_PERMUTE) return 1;
  char why[300];
  c->n = cx_collective_group(d->in, c->rep->dv, c->rep->device, c->m, MAX_GROUP, &c->pos, why, sizeof why);
  if (c->n < 0) fail(c, CXLA_ERR_INVALID_ARGUMENT, why);
  return c->n > 0;
}

static int exchange(coll_run *c, const cx_xfer *s, int ns, const cx_xfer *r, int nr) {
  char err[400];
  if (cx_transport_exchange(c->rep, s, ns, r, nr, err, sizeof err) == 0) return 1;
  fail(c, CXLA_ERR_RUNTIME, err);
  return 0;
}

/* Block j (of n) of dimension d of operand op, between its full array and a dense block:
 * to_block 1 copies it out. Dimension 0 blocks are already dense: *direct says so. */
static void block(const coll_desc *d, int op, int n, int j, char *full, char *blk, int to_block) {
  int64_t b = d->dim[op] / n, rows = d->outer[op], row = b * d->inner[op];
  for (int64_t o = 0; o < rows; o++) {
    char *f = full + (size_t)((o * d->dim[op] + j * b) * d->inner[op]), *p = blk + (size_t)(o * row);
    if (to_block) memcpy(p, f, (size_t)row);
    else memcpy(f, p, (size_t)row);
  }
}

static void trace(coll_run *c, int64_t t0, int64_t bytes, int32_t id) {
  cx_rt *rt = c->rt;
  if (!rt->trace) return;
  const char *name = rt->names && id >= 0 && rt->names[id] ? rt->names[id] : cx_op_name(c->d->in->op);
  cx_trace_args a = cx_rt_origin_args(rt, id);
  a.n = 2, a.key[0] = "bytes", a.key[1] = "devices";
  a.val[0] = bytes, a.val[1] = c->n;
  cx_trace_add(rt->trace, name, "collective", t0, cx_trace_now(), &a);
}

/* ---- all-reduce and reduce-scatter ---- */

/* Chunk c of n of `count` elements: [lo, hi). */
static void chunk(int64_t count, int n, int c, int64_t *lo, int64_t *hi) {
  *lo = count * c / n;
  *hi = count * (c + 1) / n;
}

/* all-reduce: res[i] = fold over members of ops[i], by chunks (see the top). */
static void all_reduce(coll_run *c, cx_scalar_fn fn, void **res, void **ops) {
  const coll_desc *d = c->d;
  int n = c->n, pos = c->pos, nops = d->nops;
  size_t scratch = 0;
  for (int i = 0; i < nops; i++) {
    int64_t lo, hi;
    chunk(d->elems[i], n, pos, &lo, &hi);
    scratch += (size_t)(hi - lo) * d->es[i] * (size_t)n;
  }
  char *tmp = cx_malloc(scratch + 1);
  cx_xfer *x = cx_malloc(sizeof *x * (size_t)(2 * n * nops + 1));
  char **xs = cx_malloc(sizeof *xs * (size_t)n);
  if (!tmp || !x || !xs) {
    fail(c, CXLA_ERR_OUT_OF_MEMORY, "out of memory");
    goto done;
  }
  /* phase 1: chunk k of every operand to member k; chunk pos of everyone into tmp */
  int ns = 0, nr = 0;
  cx_xfer *recvs = x + n * nops;
  char *t = tmp;
  for (int i = 0; i < nops; i++) {
    int64_t lo, hi;
    chunk(d->elems[i], n, pos, &lo, &hi);
    size_t mine = (size_t)(hi - lo) * d->es[i];
    for (int k = 0; k < n; k++) {
      if (k == pos) continue;
      int64_t klo, khi;
      chunk(d->elems[i], n, k, &klo, &khi);
      x[ns++] = (cx_xfer){c->m[k], (char *)ops[i] + (size_t)klo * d->es[i], (size_t)(khi - klo) * d->es[i]};
      recvs[nr++] = (cx_xfer){c->m[k], t + mine * (size_t)k, mine};
    }
    t += mine * (size_t)n;
  }
  if (!exchange(c, x, ns, recvs, nr)) goto done;
  t = tmp;
  for (int i = 0; i < nops; i++) {
    int64_t lo, hi;
    chunk(d->elems[i], n, pos, &lo, &hi);
    size_t mine = (size_t)(hi - lo) * d->es[i];
    for (int k = 0; k < n; k++) xs[k] = k == pos ? (char *)ops[i] + (size_t)lo * d->es[i] : t + mine * (size_t)k;
    fold(d, i, fn, (char *)res[i] + (size_t)lo * d->es[i], xs, n, hi - lo);
    t += mine * (size_t)n;
  }
  /* phase 2: the folded chunk to everyone; chunk k from member k */
  ns = nr = 0;
  for (int i = 0; i < nops; i++)
    for (int k = 0; k < n; k++) {
      if (k == pos) continue;
      int64_t lo, hi, klo, khi;
      chunk(d->elems[i], n, pos, &lo, &hi);
      chunk(d->elems[i], n, k, &klo, &khi);
      x[ns++] = (cx_xfer){c->m[k], (char *)res[i] + (size_t)lo * d->es[i], (size_t)(hi - lo) * d->es[i]};
      recvs[nr++] = (cx_xfer){c->m[k], (char *)res[i] + (size_t)klo * d->es[i], (size_t)(khi - klo) * d->es[i]};
    }
  exchange(c, x, ns, recvs, nr);
done:
  cx_free(tmp);
  cx_free(x);
  cx_free(xs);
}

/* reduce-scatter: res[i] = fold over members of their block pos (dimension d) of ops[i]. */
static void reduce_scatter(coll_run *c, cx_scalar_fn fn, void **res, void **ops) {
  const coll_desc *d = c->d;
  int n = c->n, pos = c->pos, nops = d->nops;
  if (d->dim[0] % n) {
    fail(c, CXLA_ERR_INVALID_ARGUMENT, "its groups have a size its dimension does not divide by");
    return;
  }
  size_t scratch = 0;
  for (int i = 0; i < nops; i++) scratch += (size_t)(d->elems[i] / n) * d->es[i] * (size_t)(2 * n);
  char *tmp = cx_malloc(scratch + 1), **xs = cx_malloc(sizeof *xs * (size_t)n);
  cx_xfer *x = cx_malloc(sizeof *x * (size_t)(2 * n * nops + 1));
  if (!tmp || !x || !xs) {
    fail(c, CXLA_ERR_OUT_OF_MEMORY, "out of memory");
    goto done;
  }
  int ns = 0, nr = 0;
  cx_xfer *recvs = x + n * nops;
  char *t = tmp;
  for (int i = 0; i < nops; i++) { /* my blocks, dense, then room for everyone's block pos */
    size_t b = (size_t)(d->elems[i] / n) * d->es[i];
    for (int k = 0; k < n; k++) {
      block(d, i, n, k, ops[i], t + b * (size_t)k, 1);
      if (k == pos) continue;
      x[ns++] = (cx_xfer){c->m[k], t + b * (size_t)k, b};
      recvs[nr++] = (cx_xfer){c->m[k], t + b * (size_t)(n + k), b};
    }
    t += b * (size_t)(2 * n);
  }
  if (!exchange(c, x, ns, recvs, nr)) goto done;
  t = tmp;
  for (int i = 0; i < nops; i++) {
    size_t b = (size_t)(d->elems[i] / n) * d->es[i];
    for (int k = 0; k < n; k++) xs[k] = t + b * (size_t)(k == pos ? pos : n + k);
    fold(d, i, fn, res[i], xs, n, d->elems[i] / n);
    t += b * (size_t)(2 * n);
  }
done:
  cx_free(tmp);
  cx_free(x);
  cx_free(xs);
}

void cx_rt_collective_reduce(cx_rt *rt, const void *desc, cx_scalar_fn fn, void **bufs, int32_t id) {
  if (rt->status != CXLA_OK) return;
  const coll_desc *d = desc;
  coll_run c;
  if (!start(&c, rt, d)) return;
  int64_t t0 = rt->trace ? cx_trace_now() : 0, bytes = 0;
  for (int i = 0; i < d->nops; i++) bytes += d->elems[i] * (int64_t)d->es[i];
  if (d->kind == COLL_ALL_REDUCE) all_reduce(&c, fn, bufs, bufs + d->nops);
  else reduce_scatter(&c, fn, bufs, bufs + d->nops);
  trace(&c, t0, bytes, id);
}

/* ---- the collectives that move data ---- */

/* all-gather: member k's operand is block k of the result. */
static void all_gather(coll_run *c, void **res, void **ops) {
  const coll_desc *d = c->d;
  int n = c->n, pos = c->pos, nops = d->nops;
  size_t scratch = 0;
  for (int i = 0; i < nops; i++) scratch += (size_t)d->elems[i] * d->es[i] * (size_t)n;
  char *tmp = cx_malloc(scratch + 1);
  cx_xfer *x = cx_malloc(sizeof *x * (size_t)(2 * n * nops + 1));
  if (!tmp || !x) {
    fail(c, CXLA_ERR_OUT_OF_MEMORY, "out of memory");
    goto done;
  }
  int ns = 0, nr = 0;
  cx_xfer *recvs = x + n * nops;
  char *t = tmp;
  for (int i = 0; i < nops; i++) {
    size_t b = (size_t)d->elems[i] * d->es[i];
    memcpy(t + b * (size_t)pos, ops[i], b);
    for (int k = 0; k < n; k++) {
      if (k == pos) continue;
      x[ns++] = (cx_xfer){c->m[k], ops[i], b};
      recvs[nr++] = (cx_xfer){c->m[k], t + b * (size_t)k, b};
    }
    t += b * (size_t)n;
  }
  if (!exchange(c, x, ns, recvs, nr)) goto done;
  t = tmp;
  for (int i = 0; i < nops; i++) {
    size_t b = (size_t)d->elems[i] * d->es[i];
    coll_desc r = *d; /* the result's dimension is n blocks of the operand's */
    r.dim[i] = d->dim[i] * n;
    for (int k = 0; k < n; k++) block(&r, i, n, k, res[i], t + b * (size_t)k, 0);
    t += b * (size_t)n;
  }
done:
  cx_free(tmp);
  cx_free(x);
}

/* all-to-all: block (array form) or operand (tuple form) j to member j, in place i. */
static void all_to_all(coll_run *c, void **res, void **ops) {
  const coll_desc *d = c->d;
  int n = c->n, pos = c->pos, array = d->d >= 0;
  if (array ? d->dim[0] % n : d->nops != n) {
    fail(c, CXLA_ERR_INVALID_ARGUMENT, "it needs one block (operand) per device of its group");
    return;
  }
  size_t total = (size_t)d->elems[0] * d->es[0], b = array ? total / (size_t)n : total;
  char *tmp = array ? cx_malloc(2 * total + 1) : NULL;
  cx_xfer *x = cx_malloc(sizeof *x * (size_t)(2 * n));
  if ((array && !tmp) || !x) {
    fail(c, CXLA_ERR_OUT_OF_MEMORY, "out of memory");
    goto done;
  }
  int ns = 0, nr = 0;
  cx_xfer *recvs = x + n;
  for (int j = 0; j < n; j++) {
    char *in = array ? tmp + b * (size_t)j : ops[j], *out = array ? tmp + total + b * (size_t)j : res[j];
    if (array) block(d, 0, n, j, ops[0], in, 1);
    if (j == pos) memcpy(out, in, b);
    else {
      x[ns++] = (cx_xfer){c->m[j], in, b};
      recvs[nr++] = (cx_xfer){c->m[j], out, b};
    }
  }
  if (!exchange(c, x, ns, recvs, nr)) goto done;
  for (int j = 0; array && j < n; j++) block(d, 0, n, j, res[0], tmp + total + b * (size_t)j, 0);
done:
  cx_free(tmp);
  cx_free(x);
}

/* collective-permute: to this device's target, from its source (zeros without one). */
static void permute(coll_run *c, void **res, void **ops) {
  const coll_desc *d = c->d;
  int to, from, ns = 0, nr = 0;
  char why[300];
  if (cx_collective_permute_peers(d->in, c->rep->dv, c->rep->device, &to, &from, why, sizeof why)) {
    fail(c, CXLA_ERR_INVALID_ARGUMENT, why);
    return;
  }
  cx_xfer x[2 * COLL_MAX_OPS];
  int self = to == c->rep->device; /* a pair {i,i} */
  for (int i = 0; i < d->nops && !self; i++) {
    size_t b = (size_t)d->elems[i] * d->es[i];
    if (to >= 0) x[ns++] = (cx_xfer){to, ops[i], b};
    if (from >= 0) x[COLL_MAX_OPS + nr++] = (cx_xfer){from, res[i], b};
  }
  if (!exchange(c, x, ns, x + COLL_MAX_OPS, nr)) return;
  for (int i = 0; i < d->nops && (self || from < 0); i++) {
    size_t b = (size_t)d->elems[i] * d->es[i];
    if (self) memcpy(res[i], ops[i], b);
    else memset(res[i], 0, b); /* no pair names this device as a target */
  }
}

/* collective-broadcast: the first member's operand everywhere. */
static void broadcast(coll_run *c, void **res, void **ops) {
  const coll_desc *d = c->d;
  cx_xfer *x = cx_malloc(sizeof *x * (size_t)(c->n * d->nops + 1));
  if (!x) {
    fail(c, CXLA_ERR_OUT_OF_MEMORY, "out of memory");
    return;
  }
  int ns = 0, nr = 0;
  for (int i = 0; i < d->nops; i++) {
    size_t b = (size_t)d->elems[i] * d->es[i];
    if (c->pos == 0) {
      if (res[i] != ops[i]) memcpy(res[i], ops[i], b);
      for (int k = 1; k < c->n; k++) x[ns++] = (cx_xfer){c->m[k], ops[i], b};
    }
  }
  for (int i = 0; c->pos && i < d->nops; i++) x[ns + nr++] = (cx_xfer){c->m[0], res[i], (size_t)d->elems[i] * d->es[i]};
  exchange(c, x, ns, x + ns, nr);
  cx_free(x);
}

void cx_rt_collective(cx_rt *rt, const void *desc, void **bufs, int32_t id) {
  if (rt->status != CXLA_OK) return;
  const coll_desc *d = desc;
  coll_run c;
  if (!start(&c, rt, d)) return;
  int64_t t0 = rt->trace ? cx_trace_now() : 0, bytes = 0;
  for (int i = 0; i < d->nops; i++) bytes += d->elems[i] * (int64_t)d->es[i];
  void **res = bufs, **ops = bufs + d->nops; /* as many result leaves as operands, for each of these */
  switch ((coll_kind)d->kind) {
  case COLL_ALL_GATHER: all_gather(&c, res, ops); break;
  case COLL_ALL_TO_ALL: all_to_all(&c, res, ops); break;
  case COLL_PERMUTE: permute(&c, res, ops); break;
  case COLL_BROADCAST: broadcast(&c, res, ops); break;
  case COLL_ALL_REDUCE: case COLL_REDUCE_SCATTER: break; /* cx_rt_collective_reduce */
  }
  trace(&c, t0, bytes, id);
}

void cx_rt_device_id(cx_rt *rt, int32_t partition, uint32_t *out) {
  cx_replica single = cx_replica_single();
  const cx_replica *r = rt->rep ? rt->rep : &single;
  *out = (uint32_t)(partition ? r->device % r->dv.partitions : r->device / r->dv.partitions);
}
