/* reduce.c — variadic reduce: N operands, N init values, to_apply(acc_0..acc_N-1, x_0..x_N-1).
 * Each result element starts from the init values and folds in the reduced elements in
 * row-major order of the reduced dimensions (XLA's evaluator order); float sums in double. One pass over the
 * operands in row-major order gives exactly that order for every result element, so the
 * accumulators live in a scalar array indexed by result position. */
#include <string.h>
#include "interp/apply.h"
#include "interp/index_util.h"

typedef struct reduce_plan {
  int n, rank, out_rank;
  int64_t in_elems, out_elems;
  int64_t ostride[CXLA_MAX_RANK]; /* result stride of each operand dim (0 if reduced) */
  int64_t out_dims[CXLA_MAX_RANK];
} reduce_plan;

static cxla_status plan_reduce(cx_interp *st, cx_instr *in, cxla_literal *const *ops, int n,
                               reduce_plan *p) {
  const cx_shape *s0 = &ops[0]->shape;
  int seen[CXLA_MAX_RANK] = {0};
  for (int i = 0; i < n; i++) {
    CX_TRY(cx_hv_check_array(st, in, ops[i], s0->rank, "operand"));
    CX_TRY(cx_hv_check_array(st, in, ops[n + i], 0, "init value"));
    if (!cx_shape_same_dims(&ops[i]->shape, s0))
      return cx_hv_bad(st, in, "operands must have the same dimensions");
  }
  CX_TRY(cx_hv_check_dims(st, in, &in->a.dims, s0->rank, seen, "dimension"));
  p->n = n;
  p->rank = s0->rank;
  p->out_rank = 0;
  for (int d = 0; d < s0->rank; d++)
    if (!seen[d]) p->out_dims[p->out_rank++] = s0->dims[d];
  cx_shape os = cx_shape_array(CXLA_F32, p->out_rank, p->out_dims);
  int64_t ost[CXLA_MAX_RANK];
  cx_shape_strides(&os, ost);
  for (int d = 0, k = 0; d < s0->rank; d++) p->ostride[d] = seen[d] ? 0 : ost[k++];
  p->in_elems = cx_shape_elems(s0);
  p->out_elems = cx_shape_elems(&os);
  if (p->in_elems < 0 || p->out_elems < 0) return cx_hv_bad(st, in, "operand too large");
  for (int i = 0; i < n; i++) {
    const cx_shape *rs = cx_hv_result_shape(st, in, i, n);
    if (!rs) return CXLA_ERR_VERIFY;
    CX_TRY(cx_hv_check_result(st, in, rs, ops[n + i]->shape.type, p->out_rank, p->out_dims));
  }
  return CXLA_OK;
}

/* The numerics policy (docs/numerics.md): a float sum (the reducer adds its accumulator and
 * the element) accumulates in double (a complex one in double parts) and is rounded once, when stored, so the reference is
 * the correctly rounded sum for any length a test can run, not a sequential f32/bf16 sum
 * whose error grows with the length (an f32 sum of ones stops at 2^24). Every other reducer
 * folds in its own type, in order, as XLA's evaluator does. */
static cxla_type accumulation_type(const cx_apply *f) {
  int sum = f->op == CX_OP_ADD && f->a != f->b && f->a + f->b == 1;
  if (sum && cx_type_is_complex(f->type)) return CXLA_C128;
  return sum && cx_type_is_float(f->type) ? CXLA_F64 : f->type;
}

/* Folds every operand element into acc (n arrays of out_elems accumulators, one after the
 * other). The common single-operand reducers skip the call entirely. */
static cxla_status fold(cx_interp *st, const cx_apply *f, const reduce_plan *p,
                        cxla_literal *const *ops, cx_scalar *acc) {
  int n = p->n, last = p->rank - 1;
  int64_t idx[CXLA_MAX_RANK] = {0};
  int64_t inner = p->rank ? ops[0]->shape.dims[last] : 1;
  int64_t ost = p->rank ? p->ostride[last] : 0;
  cx_scalar args[2 * 64], outs[64];
  int64_t lin = 0;
  if (p->in_elems == 0) return CXLA_OK;
  cxla_type at = accumulation_type(f);
  do {
    int64_t base = 0;
    for (int d = 0; d < last; d++) base += idx[d] * p->ostride[d];
    if (n == 1 && f->kind == CX_APPLY_BINARY) {
      cxla_type t = ops[0]->shape.type;
      const void *data = ops[0]->data;
      for (int64_t j = 0; j < inner; j++, lin++) {
        cx_scalar *a = &acc[base + j * ost];
        *a = cx_scalar_binary(f->op, at, *a, cx_scalar_load(t, data, lin));
      }
    } else {
      for (int64_t j = 0; j < inner; j++, lin++) {
        int64_t o = base + j * ost;
        for (int k = 0; k < n; k++) {
          args[k] = acc[k * p->out_elems + o];
          args[n + k] = cx_scalar_load(ops[k]->shape.type, ops[k]->data, lin);
        }
        CX_TRY(cx_apply_call(st, f, args, outs));
        for (int k = 0; k < n; k++) acc[k * p->out_elems + o] = outs[k];
      }
    }
  } while (cx_idx_next(last > 0 ? last : 0, ops[0]->shape.dims, idx));
  return CXLA_OK;
}

cxla_status cx_interp_reduce(cx_interp *st, cx_instr *in, cxla_literal *const *ops,
                             cxla_literal **out) {
  *out = NULL;
  if (in->nops < 2 || in->nops % 2 || in->nops / 2 > 64)
    return cx_hv_bad(st, in, "expects N operands and N init values (1 <= N <= 64)");
  int n = in->nops / 2;
  reduce_plan p;
  CX_TRY(plan_reduce(st, in, ops, n, &p));
  cxla_type types[2 * 64];
  for (int i = 0; i < n; i++) {
    types[i] = ops[n + i]->shape.type;
    types[n + i] = ops[i]->shape.type;
  }
  cx_apply f;
  CX_TRY(cx_apply_init(st, in, in->ncalled ? in->called[0] : NULL, 2 * n, types, n, &f));

  int64_t nacc;
  if (!cx_hv_mul(p.out_elems, n, &nacc) || nacc > CX_HV_MAX / (int64_t)sizeof(cx_scalar))
    return cx_hv_bad(st, in, "result too large");
  cx_scalar *acc = cx_malloc((size_t)(nacc ? nacc : 1) * sizeof *acc);
  if (!acc) return cx_hv_oom(st, in);
  for (int k = 0; k < n; k++) {
    cx_scalar init = cx_scalar_load(ops[n + k]->shape.type, ops[n + k]->data, 0);
    for (int64_t o = 0; o < p.out_elems; o++) acc[k * p.out_elems + o] = init;
  }
  cxla_status s = fold(st, &f, &p, ops, acc);

  cxla_literal *lits[64] = {0};
  for (int k = 0; s == CXLA_OK && k < n; k++) {
    const cx_shape *rs = cx_hv_result_shape(st, in, k, n);
    if (!(lits[k] = cx_hv_literal(st, in, rs))) { s = CXLA_ERR_OUT_OF_MEMORY; break; }
    for (int64_t o = 0; o < p.out_elems; o++)
      cx_scalar_store(rs->type, lits[k]->data, o, acc[k * p.out_elems + o]);
  }
  cx_free(acc);
  if (s != CXLA_OK) {
    for (int k = 0; k < n; k++) cxla_literal_destroy(lits[k]);
    return s;
  }
  return cx_hv_finish(st, in, n, lits, out);
}
