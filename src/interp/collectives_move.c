/* collectives_move.c — the collectives that move data without combining it: all-to-all (block
 * or operand j to member j of the group, the result in member order) and collective-permute
 * (to the target of this device's pair, from its source; zeros where no pair names it as a
 * target), with collective-permute-start, which gives (operands, result, zero context). */
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

static cxla_status fail(cx_interp *st, cx_instr *in, cxla_status code, const char *why) {
  return cx_error_at(st->m, in->loc, code, "%s '%s': %s", cx_op_name(in->op), in->name ? in->name : "?", why);
}

static cxla_status exchanged(cx_interp *st, cx_instr *in, const cx_replica *r, const cx_xfer *s, int ns,
                             const cx_xfer *rv, int nr) {
  char err[400];
  return cx_transport_exchange(r, s, ns, rv, nr, err, sizeof err) ? fail(st, in, CXLA_ERR_RUNTIME, err) : CXLA_OK;
}

/* The blocks of x along dimension d, n of them, one after the other (to_blocks 1), or back. */
static void split(const cx_shape *s, int d, int n, char *x, char *blocks, int to_blocks) {
  size_t es = cxla_type_size(s->type);
  int64_t outer = 1, inner = (int64_t)es, b = s->dims[d] / n;
  for (int k = 0; k < d; k++) outer *= s->dims[k];
  for (int k = d + 1; k < s->rank; k++) inner *= s->dims[k];
  size_t blk = (size_t)(outer * b * inner);
  for (int j = 0; j < n; j++)
    for (int64_t o = 0; o < outer; o++) {
      char *f = x + (size_t)((o * s->dims[d] + j * b) * inner), *p = blocks + blk * (size_t)j + (size_t)(o * b * inner);
      if (to_blocks) memcpy(p, f, (size_t)(b * inner));
      else memcpy(f, p, (size_t)(b * inner));
    }
}

CX_INTERP_EVALUATOR(cx_interp_all_to_all) {
  cx_replica single;
  const cx_replica *r = replica(st, &single);
  int m[MAX_GROUP], pos;
  char why[300];
  int n = cx_collective_group(in, r->dv, r->device, m, MAX_GROUP, &pos, why, sizeof why);
  if (n < 0) return fail(st, in, CXLA_ERR_INVALID_ARGUMENT, why);
  int array = in->a.dims.n == 1;
  if (array && ops[0]->shape.dims[in->a.dims.v[0]] % n)
    return fail(st, in, CXLA_ERR_INVALID_ARGUMENT, "its split dimension does not divide into one block per device of the group");
  if (!array && in->nops != n) return fail(st, in, CXLA_ERR_INVALID_ARGUMENT, "it needs one operand per device of its group");
  cxla_literal *res = cx_literal_new(&in->shape);
  size_t total = (size_t)cx_shape_bytes(&ops[0]->shape), blk = array ? total / (size_t)n : total;
  char *sendb = array ? cx_malloc(total + 1) : NULL, *recvb = array ? cx_malloc(total + 1) : NULL;
  cx_xfer *x = cx_calloc((size_t)(2 * n), sizeof *x);
  cxla_status s = res && x && (!array || (sendb && recvb)) ? CXLA_OK : cx_oom(st->ctx);
  if (s == CXLA_OK) {
    int ns = 0, nr = 0;
    cx_xfer *recvs = x + n;
    if (array) split(&ops[0]->shape, (int)in->a.dims.v[0], n, ops[0]->data, sendb, 1);
    for (int j = 0; j < n; j++) {
      char *out_j = array ? recvb + blk * (size_t)j : res->elems[j]->data;
      char *in_j = array ? sendb + blk * (size_t)j : ops[j]->data;
      if (j == pos) memcpy(out_j, in_j, blk);
      else {
        x[ns++] = (cx_xfer){m[j], in_j, blk};
        recvs[nr++] = (cx_xfer){m[j], out_j, blk};
      }
    }
    s = exchanged(st, in, r, x, ns, recvs, nr);
    if (s == CXLA_OK && array) split(&res->shape, (int)in->a.dims.v[0], n, res->data, recvb, 0);
  }
  cx_free(x);
  cx_free(sendb);
  cx_free(recvb);
  if (s != CXLA_OK) {
    cxla_literal_destroy(res);
    return s;
  }
  *out = res;
  return CXLA_OK;
}

/* The permute of ops into res (an array, or a tuple of them for several operands). */
static cxla_status permute_into(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal *res) {
  cx_replica single;
  const cx_replica *r = replica(st, &single);
  int to, from;
  char why[300];
  if (cx_collective_permute_peers(in, r->dv, r->device, &to, &from, why, sizeof why))
    return fail(st, in, CXLA_ERR_INVALID_ARGUMENT, why);
  cx_xfer x[2 * 64];
  if (in->nops > 64) return cx_interp_unsupported(st, in, "more than 64 operands");
  int ns = 0, nr = 0;
  for (int i = 0; i < in->nops; i++) {
    cxla_literal *o = in->nops == 1 ? res : res->elems[i];
    size_t b = (size_t)cx_shape_bytes(&o->shape);
    if (to == r->device && from == r->device) memcpy(o->data, ops[i]->data, b); /* a pair {i,i} */
    else {
      if (to >= 0) x[ns++] = (cx_xfer){to, ops[i]->data, b};
      if (from >= 0) x[64 + nr++] = (cx_xfer){from, o->data, b};
    }
  }
  return exchanged(st, in, r, x, ns, x + 64, nr);
}

CX_INTERP_EVALUATOR(cx_interp_collective_permute) {
  cxla_literal *res = cx_literal_new(&in->shape); /* zeros where nothing arrives */
  if (!res) return cx_oom(st->ctx);
  cxla_status s = permute_into(st, in, ops, res);
  if (s != CXLA_OK) {
    cxla_literal_destroy(res);
    return s;
  }
  *out = res;
  return CXLA_OK;
}

CX_INTERP_EVALUATOR(cx_interp_collective_permute_start) {
  cxla_literal *res = cx_literal_new(&in->shape);
  if (!res) return cx_oom(st->ctx);
  cxla_status s = permute_into(st, in, ops, res->elems[1]);
  for (int i = 0; i < in->nops && s == CXLA_OK; i++) {
    cxla_literal *o = in->nops == 1 ? res->elems[0] : res->elems[0]->elems[i];
    memcpy(o->data, ops[i]->data, (size_t)cx_shape_bytes(&o->shape));
  }
  if (s != CXLA_OK) {
    cxla_literal_destroy(res);
    return s;
  }
  *out = res;
  return CXLA_OK;
}
