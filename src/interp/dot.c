/* dot.c — general dot (DotGeneral): batch and contracting dims anywhere, several contracting
 * dims, none (outer products), mixed element types.
 *
 * Semantics: as XLA's evaluator, both operands are first converted to the result element type
 * (exact for the widening cases s8->s32, bf16/f16->f32); products are then summed in a wide
 * type — double for float results (two for complex ones), 64-bit two's complement for integer
 * and pred results — in row-major order of the contracting dims (the order lhs_contracting_dims
 * lists them), and rounded or wrapped once to the result type. Result dims: batch, lhs free,
 * rhs free.
 *
 * Speed: both operands are copied once into contiguous buffers ordered [batch][m][k] and
 * [batch][k][n], and an i-k-j loop accumulates into a [batch][m][n] buffer, so the inner loop
 * is a unit-stride multiply-add. Each result element still sums over k in order. */
#include <string.h>
#include "interp/index_util.h"

typedef struct dot_plan {
  int64_t B, M, K, N;
  /* destination stride in the packed buffer of each operand dimension */
  int64_t lhs_dst[CXLA_MAX_RANK], rhs_dst[CXLA_MAX_RANK];
  int64_t out_dims[CXLA_MAX_RANK];
  int out_rank;
} dot_plan;

/* Role of each dimension of one operand: 0 free, 1 batch, 2 contracting. */
static void roles(const cx_ints *batch, const cx_ints *contract, int *role) {
  for (int i = 0; i < batch->n; i++) role[batch->v[i]] = 1;
  for (int i = 0; i < contract->n; i++) role[contract->v[i]] = 2;
}

static cxla_status plan_dot(cx_interp *st, cx_instr *in, const cx_shape *ls, const cx_shape *rs,
                            dot_plan *p) {
  const cx_dot_dims *dd = &in->a.dot;
  int lseen[CXLA_MAX_RANK] = {0}, rseen[CXLA_MAX_RANK] = {0};
  CX_TRY(cx_hv_check_dims(st, in, &dd->lhs_batch, ls->rank, lseen, "lhs batch dimension"));
  CX_TRY(cx_hv_check_dims(st, in, &dd->lhs_contract, ls->rank, lseen, "lhs contracting dimension"));
  CX_TRY(cx_hv_check_dims(st, in, &dd->rhs_batch, rs->rank, rseen, "rhs batch dimension"));
  CX_TRY(cx_hv_check_dims(st, in, &dd->rhs_contract, rs->rank, rseen, "rhs contracting dimension"));
  if (dd->lhs_batch.n != dd->rhs_batch.n || dd->lhs_contract.n != dd->rhs_contract.n)
    return cx_hv_bad(st, in, "lhs and rhs list different numbers of batch or contracting dims");
  int lrole[CXLA_MAX_RANK] = {0}, rrole[CXLA_MAX_RANK] = {0};
  roles(&dd->lhs_batch, &dd->lhs_contract, lrole);
  roles(&dd->rhs_batch, &dd->rhs_contract, rrole);

  /* sizes; the packed strides are filled from the innermost position outwards */
  p->B = p->K = p->M = p->N = 1;
  p->out_rank = 0;
  for (int i = 0; i < dd->lhs_batch.n; i++) {
    int64_t a = ls->dims[dd->lhs_batch.v[i]], b = rs->dims[dd->rhs_batch.v[i]];
    if (a != b) return cx_hv_bad(st, in, "batch dimension %d sizes differ (%lld vs %lld)", i,
                                 (long long)a, (long long)b);
    p->out_dims[p->out_rank++] = a;
    p->B *= a; /* bounded: a product of some of one literal's dims */
  }
  for (int i = 0; i < dd->lhs_contract.n; i++) {
    int64_t a = ls->dims[dd->lhs_contract.v[i]], b = rs->dims[dd->rhs_contract.v[i]];
    if (a != b) return cx_hv_bad(st, in, "contracting dimension %d sizes differ (%lld vs %lld)",
                                 i, (long long)a, (long long)b);
    p->K *= a;
  }
  int nfree = 0;
  for (int d = 0; d < ls->rank; d++) nfree += !lrole[d];
  for (int d = 0; d < rs->rank; d++) nfree += !rrole[d];
  if (p->out_rank + nfree > CXLA_MAX_RANK) return cx_hv_bad(st, in, "result rank too large");
  for (int d = 0; d < ls->rank; d++)
    if (!lrole[d]) { p->M *= ls->dims[d]; p->out_dims[p->out_rank++] = ls->dims[d]; }
  for (int d = 0; d < rs->rank; d++)
    if (!rrole[d]) { p->N *= rs->dims[d]; p->out_dims[p->out_rank++] = rs->dims[d]; }

  /* lhs packed as [B][M][K]: walk each group's dims from the last listed to the first */
  int64_t s = 1;
  for (int i = dd->lhs_contract.n - 1; i >= 0; i--) { p->lhs_dst[dd->lhs_contract.v[i]] = s; s *= ls->dims[dd->lhs_contract.v[i]]; }
  for (int d = ls->rank - 1; d >= 0; d--)
    if (!lrole[d]) { p->lhs_dst[d] = s; s *= ls->dims[d]; }
  for (int i = dd->lhs_batch.n - 1; i >= 0; i--) { p->lhs_dst[dd->lhs_batch.v[i]] = s; s *= ls->dims[dd->lhs_batch.v[i]]; }
  /* rhs packed as [B][K][N] */
  s = 1;
  for (int d = rs->rank - 1; d >= 0; d--)
    if (!rrole[d]) { p->rhs_dst[d] = s; s *= rs->dims[d]; }
  for (int i = dd->rhs_contract.n - 1; i >= 0; i--) { p->rhs_dst[dd->rhs_contract.v[i]] = s; s *= rs->dims[dd->rhs_contract.v[i]]; }
  for (int i = dd->rhs_batch.n - 1; i >= 0; i--) { p->rhs_dst[dd->rhs_batch.v[i]] = s; s *= rs->dims[dd->rhs_batch.v[i]]; }
  return CXLA_OK;
}

/* Copies a literal into its packed order, converted as `convert` to type `to` would, into a
 * double (float results) or int64 buffer. */
static void pack(const cxla_literal *x, const int64_t *dst_stride, cxla_type to, int as_float,
                 void *buf) {
  const cx_shape *s = &x->shape;
  int64_t n = cx_shape_elems(s);
  int64_t idx[CXLA_MAX_RANK] = {0}, off = 0;
  double *fb = buf;
  int64_t *ib = buf;
  for (int64_t i = 0; i < n; i++) {
    if (as_float) fb[off] = cx_hv_load_f64_as(s->type, x->data, i, to);
    else ib[off] = cx_hv_load_i64_as(s->type, x->data, i, to);
    /* step the row-major index and keep off = sum idx[d] * dst_stride[d] */
    for (int d = s->rank - 1; d >= 0; d--) {
      off += dst_stride[d];
      if (++idx[d] < s->dims[d]) break;
      off -= idx[d] * dst_stride[d];
      idx[d] = 0;
    }
  }
}

/* Complex operands: each element as two doubles (real, imaginary), rounded part by part to
 * the result's component type as `convert` would (c64 -> c128 is exact). */
static void pack_complex(const cxla_literal *x, const int64_t *dst_stride, cxla_type to, double *buf) {
  const cx_shape *s = &x->shape;
  cxla_type part = cx_type_part(to);
  int64_t n = cx_shape_elems(s);
  int64_t idx[CXLA_MAX_RANK] = {0}, off = 0;
  for (int64_t i = 0; i < n; i++) {
    double re, im;
    cx_load_complex(s->type, x->data, i, &re, &im);
    buf[2 * off] = cx_round_to_type(part, re);
    buf[2 * off + 1] = cx_round_to_type(part, im);
    for (int d = s->rank - 1; d >= 0; d--) {
      off += dst_stride[d];
      if (++idx[d] < s->dims[d]) break;
      off -= idx[d] * dst_stride[d];
      idx[d] = 0;
    }
  }
}

static void matmul_c128(const dot_plan *p, const double *a, const double *b, double *c) {
  for (int64_t bi = 0; bi < p->B; bi++) {
    const double *ab = a + 2 * bi * p->M * p->K, *bb = b + 2 * bi * p->K * p->N;
    double *cb = c + 2 * bi * p->M * p->N;
    for (int64_t i = 0; i < p->M; i++) {
      double *crow = cb + 2 * i * p->N;
      for (int64_t k = 0; k < p->K; k++) {
        double ar = ab[2 * (i * p->K + k)], ai = ab[2 * (i * p->K + k) + 1];
        const double *brow = bb + 2 * k * p->N;
        for (int64_t j = 0; j < p->N; j++) {
          crow[2 * j] += ar * brow[2 * j] - ai * brow[2 * j + 1];
          crow[2 * j + 1] += ar * brow[2 * j + 1] + ai * brow[2 * j];
        }
      }
    }
  }
}

static void matmul_f64(const dot_plan *p, const double *a, const double *b, double *c) {
  for (int64_t bi = 0; bi < p->B; bi++) {
    const double *ab = a + bi * p->M * p->K, *bb = b + bi * p->K * p->N;
    double *cb = c + bi * p->M * p->N;
    for (int64_t i = 0; i < p->M; i++) {
      double *crow = cb + i * p->N;
      for (int64_t k = 0; k < p->K; k++) {
        double av = ab[i * p->K + k];
        const double *brow = bb + k * p->N;
        for (int64_t j = 0; j < p->N; j++) crow[j] += av * brow[j];
      }
    }
  }
}

/* Unsigned arithmetic: wraps modulo 2^64 without undefined behaviour, which gives the right
 * low bits for every integer result type. */
static void matmul_i64(const dot_plan *p, const int64_t *a, const int64_t *b, int64_t *c) {
  for (int64_t bi = 0; bi < p->B; bi++) {
    const int64_t *ab = a + bi * p->M * p->K, *bb = b + bi * p->K * p->N;
    uint64_t *cb = (uint64_t *)(c + bi * p->M * p->N);
    for (int64_t i = 0; i < p->M; i++) {
      uint64_t *crow = cb + i * p->N;
      for (int64_t k = 0; k < p->K; k++) {
        uint64_t av = (uint64_t)ab[i * p->K + k];
        const int64_t *brow = bb + k * p->N;
        for (int64_t j = 0; j < p->N; j++) crow[j] += av * (uint64_t)brow[j];
      }
    }
  }
}

cxla_status cx_interp_dot(cx_interp *st, cx_instr *in, cxla_literal *const *ops,
                          cxla_literal **out) {
  *out = NULL;
  if (in->nops != 2) return cx_hv_bad(st, in, "expects 2 operands");
  CX_TRY(cx_hv_check_array(st, in, ops[0], -1, "lhs"));
  CX_TRY(cx_hv_check_array(st, in, ops[1], -1, "rhs"));
  const cx_shape *ls = &ops[0]->shape, *rs = &ops[1]->shape;
  dot_plan p;
  CX_TRY(plan_dot(st, in, ls, rs, &p));
  cxla_type rt = in->shape.type;
  if (!cx_type_is_array(rt)) return cx_hv_bad(st, in, "result must be an array");
  CX_TRY(cx_hv_check_result(st, in, &in->shape, rt, p.out_rank, p.out_dims));
  int64_t mn, out_elems = cx_shape_elems(&in->shape);
  if (!cx_hv_mul(p.M, p.N, &mn) || out_elems < 0 || out_elems > CX_HV_MAX / 8)
    return cx_hv_bad(st, in, "result too large");

  /* doubles and int64 are 8 bytes wide, so one set of buffers serves either (complex numbers
   * take two doubles) */
  int as_float = cx_type_is_float(rt), as_complex = cx_type_is_complex(rt);
  size_t w = as_complex ? 16 : 8;
  int64_t na = cx_shape_elems(ls), nb = cx_shape_elems(rs);
  void *a = cx_malloc(w * (size_t)(na ? na : 1));
  void *b = cx_malloc(w * (size_t)(nb ? nb : 1));
  void *c = cx_calloc((size_t)(out_elems ? out_elems : 1), w);
  cxla_literal *res = a && b && c ? cx_hv_literal(st, in, &in->shape) : NULL;
  if (!res) {
    cx_free(a); cx_free(b); cx_free(c);
    return cx_hv_oom(st, in);
  }
  /* the packed [B][M][N] order is the result's row-major order */
  if (as_complex) {
    pack_complex(ops[0], p.lhs_dst, rt, a);
    pack_complex(ops[1], p.rhs_dst, rt, b);
    matmul_c128(&p, a, b, c);
    for (int64_t i = 0; i < out_elems; i++)
      cx_store_complex(rt, res->data, i, ((double *)c)[2 * i], ((double *)c)[2 * i + 1]);
  } else if (as_float) {
    pack(ops[0], p.lhs_dst, rt, as_float, a);
    pack(ops[1], p.rhs_dst, rt, as_float, b);
    matmul_f64(&p, a, b, c);
    for (int64_t i = 0; i < out_elems; i++) cx_store_f64(rt, res->data, i, ((double *)c)[i]);
  } else {
    pack(ops[0], p.lhs_dst, rt, as_float, a);
    pack(ops[1], p.rhs_dst, rt, as_float, b);
    matmul_i64(&p, a, b, c);
    for (int64_t i = 0; i < out_elems; i++) cx_store_i64(rt, res->data, i, ((int64_t *)c)[i]);
  }
  cx_free(a); cx_free(b); cx_free(c);
  *out = res;
  return CXLA_OK;
}
