/* scaled_dot.c — reading a scaled-dot or __op$block_scaled_dot custom-call (ir/scaled_dot.h). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "ir/scaled_dot.h"

int cx_is_block_scaled_dot(const cx_instr *in) {
  return in->op == CX_OP_CUSTOM_CALL && in->a.custom_call_target &&
         !strcmp(in->a.custom_call_target, CX_BLOCK_SCALED_DOT_TARGET);
}

static int word_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

int cx_block_scaled_dot_block_size(const cx_instr *in, int64_t *b) {
  static const char key[] = "block_size";
  const char *cfg = in->a.backend_config;
  for (const char *p = cfg ? strstr(cfg, key) : NULL; p; p = strstr(p + 1, key)) {
    const char *q = p + sizeof key - 1;
    if ((p > cfg && word_char(p[-1])) || word_char(*q)) continue;
    if (*q == '"') q++;
    while (*q == ' ') q++;
    if (*q != ':' && *q != '=') continue;
    q++;
    while (*q == ' ') q++;
    if (*q == '"') q++; /* proto3 JSON may quote 64-bit integers */
    char *end;
    long long v = strtoll(q, &end, 10);
    if (end == q) return 0;
    *b = v;
    return 1;
  }
  return 0;
}

cxla_type cx_scaled_dot_deq_type(cxla_type t) {
  return cx_type_is_float(t) && cx_type_bits(t) < 32 ? CXLA_F32 : t;
}

/* A scaled-dot side: a scalar scale is none; otherwise every dimension of the scale divides
 * the operand's (a zero-sized scale dimension only for a zero-sized operand dimension). */
static int plain_side(const cx_shape *x, const cx_shape *s, cx_sdot_side *sd) {
  if (s->rank == 0) return 1;
  if (s->rank != x->rank) return 0;
  sd->scaled = 1;
  for (int d = 0; d < x->rank; d++) {
    int64_t xd = x->dims[d], sdim = s->dims[d];
    if (sdim == 0 ? xd != 0 : xd % sdim != 0) return 0;
    sd->used[d] = sdim;
    sd->block[d] = sdim ? xd / sdim : 1;
  }
  return 1;
}

/* A block_scaled_dot side: batch dimension equal, free dimension padded at most, contracting
 * dimension (the last) in blocks of K/S, or K/ceil(K/B) with a block size B. */
static int block_side(const cx_shape *x, const cx_shape *s, int has_b, int64_t b, cx_sdot_side *sd) {
  int r = x->rank;
  if (s->rank != r) return 0;
  sd->scaled = 1;
  if (r == 3 && s->dims[0] != x->dims[0]) return 0;
  for (int d = 0; d < r - 1; d++) {
    if (x->dims[d] > s->dims[d]) return 0;
    sd->used[d] = x->dims[d], sd->block[d] = 1;
  }
  int64_t k = x->dims[r - 1], n = s->dims[r - 1];
  if (has_b) {
    if (b <= 0) return 0;
    int64_t need = k / b + (k % b != 0);
    if (need > n) return 0;
    n = need;
  }
  if (k <= 0 || n <= 0 || k % n != 0) return 0;
  sd->used[r - 1] = n, sd->block[r - 1] = k / n;
  return 1;
}

static int array(const cx_instr *x) { return cx_type_is_array(x->shape.type); }

int cx_sdot_of(const cx_instr *in, cx_sdot *d) {
  memset(d, 0, sizeof *d);
  d->type = in->shape.type;
  d->global = -1;
  if (!cx_type_is_array(d->type)) return 0;
  for (int i = 0; i < in->nops; i++)
    if (!array(in->ops[i])) return 0;
  if (in->op == CX_OP_SCALED_DOT) {
    if (in->nops != 4) return 0;
    d->deq = cx_scaled_dot_deq_type(d->type);
    d->dims = in->a.dot;
    for (int i = 0; i < 2; i++)
      if (!plain_side(&in->ops[i]->shape, &in->ops[i + 2]->shape, &d->side[i])) return 0;
    return 1;
  }
  if (!cx_is_block_scaled_dot(in) || in->nops < 3 || in->nops > 5) return 0;
  const cx_shape *l = &in->ops[0]->shape, *r = &in->ops[1]->shape;
  if (l->rank != r->rank || (l->rank != 2 && l->rank != 3)) return 0;
  d->deq = d->type;
  int64_t *v = d->dimv;
  v[0] = v[1] = l->rank - 1, v[2] = v[3] = 0;
  d->dims.lhs_contract = (cx_ints){1, &v[0]}, d->dims.rhs_contract = (cx_ints){1, &v[1]};
  if (l->rank == 3) d->dims.lhs_batch = (cx_ints){1, &v[2]}, d->dims.rhs_batch = (cx_ints){1, &v[3]};
  int64_t b = 0;
  int has_b = cx_block_scaled_dot_block_size(in, &b);
  for (int i = 0; i < 2 && i + 2 < in->nops; i++)
    if (!block_side(&in->ops[i]->shape, &in->ops[i + 2]->shape, has_b, b, &d->side[i])) return 0;
  if (in->nops == 5) {
    const cx_shape *g = &in->ops[4]->shape;
    if (g->rank != 0 || g->type != d->type) return 0;
    d->global = 4;
  }
  return 1;
}
