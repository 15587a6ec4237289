/* sort.c — variadic sort along one dimension. The comparator takes 2N scalars
 * (lhs_0, rhs_0, lhs_1, rhs_1, ...) and returns "lhs sorts before rhs"; all operands are
 * permuted together, each 1-D slice along the dimension independently. A stable bottom-up
 * merge sort serves both is_stable=true and false (an unstable sort may return any order of
 * equivalent elements, so the stable one is a valid answer too), which makes the oracle
 * deterministic. */
#include "interp/apply.h"
#include "interp/index_util.h"

#define SORT_MAX_N 64

typedef struct sort_ctx {
  cx_interp *st;
  const cx_apply *f;
  int n;
  int64_t len;
  cx_scalar *vals; /* n rows of len values: the current slice */
  cx_scalar args[2 * SORT_MAX_N];
} sort_ctx;

/* *lt = comparator(element a, element b) */
static cxla_status less(sort_ctx *c, int64_t a, int64_t b, int *lt) {
  for (int k = 0; k < c->n; k++) {
    c->args[2 * k] = c->vals[k * c->len + a];
    c->args[2 * k + 1] = c->vals[k * c->len + b];
  }
  cx_scalar r;
  CX_TRY(cx_apply_call(c->st, c->f, c->args, &r));
  *lt = r.i != 0;
  return CXLA_OK;
}

/* Sorts the permutation a[0..len) (tmp is scratch of the same size). An element of the right
 * run moves ahead only if it is strictly less, which keeps equal elements in order. */
static cxla_status merge_sort(sort_ctx *c, int64_t *a, int64_t *tmp) {
  int64_t n = c->len;
  int64_t *src = a, *dst = tmp;
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      int64_t mid = lo + width < n ? lo + width : n;
      int64_t hi = mid + width < n ? mid + width : n;
      int64_t i = lo, j = mid, o = lo;
      while (i < mid && j < hi) {
        int lt;
        CX_TRY(less(c, src[j], src[i], &lt));
        dst[o++] = lt ? src[j++] : src[i++];
      }
      while (i < mid) dst[o++] = src[i++];
      while (j < hi) dst[o++] = src[j++];
    }
    int64_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != a)
    for (int64_t i = 0; i < n; i++) a[i] = src[i];
  return CXLA_OK;
}

static cxla_status sort_slices(sort_ctx *c, int64_t d, cxla_literal *const *ops,
                               cxla_literal **res, int64_t *perm, int64_t *tmp) {
  const cx_shape *s0 = &ops[0]->shape;
  int64_t strides[CXLA_MAX_RANK], outer[CXLA_MAX_RANK], idx[CXLA_MAX_RANK] = {0};
  cx_shape_strides(s0, strides);
  for (int k = 0; k < s0->rank; k++) outer[k] = k == d ? 1 : s0->dims[k];
  int64_t step = strides[d];
  if (cx_shape_elems(s0) == 0) return CXLA_OK;
  do {
    int64_t base = 0;
    for (int k = 0; k < s0->rank; k++) base += idx[k] * strides[k];
    for (int k = 0; k < c->n; k++)
      for (int64_t j = 0; j < c->len; j++)
        c->vals[k * c->len + j] = cx_scalar_load(ops[k]->shape.type, ops[k]->data, base + j * step);
    for (int64_t j = 0; j < c->len; j++) perm[j] = j;
    CX_TRY(merge_sort(c, perm, tmp));
    for (int k = 0; k < c->n; k++)
      for (int64_t j = 0; j < c->len; j++)
        cx_scalar_store(res[k]->shape.type, res[k]->data, base + j * step,
                        c->vals[k * c->len + perm[j]]);
  } while (cx_idx_next(s0->rank, outer, idx));
  return CXLA_OK;
}

cxla_status cx_interp_sort(cx_interp *st, cx_instr *in, cxla_literal *const *ops,
                           cxla_literal **out) {
  *out = NULL;
  int n = in->nops;
  if (n < 1 || n > SORT_MAX_N) return cx_hv_bad(st, in, "expects 1 to %d operands", SORT_MAX_N);
  cxla_type types[2 * SORT_MAX_N];
  for (int k = 0; k < n; k++) {
    CX_TRY(cx_hv_check_array(st, in, ops[k], ops[0]->shape.rank, "operand"));
    if (!cx_shape_same_dims(&ops[k]->shape, &ops[0]->shape))
      return cx_hv_bad(st, in, "operands must have the same dimensions");
    types[2 * k] = types[2 * k + 1] = ops[k]->shape.type;
    const cx_shape *rs = cx_hv_result_shape(st, in, k, n);
    if (!rs) return CXLA_ERR_VERIFY;
    CX_TRY(cx_hv_check_result(st, in, rs, ops[k]->shape.type, ops[k]->shape.rank,
                              ops[k]->shape.dims));
  }
  const cx_shape *s0 = &ops[0]->shape;
  if (s0->rank == 0) return cx_hv_bad(st, in, "cannot sort a scalar");
  if (in->a.dims.n != 1 || in->a.dims.v[0] < 0 || in->a.dims.v[0] >= s0->rank)
    return cx_hv_bad(st, in, "dimensions= must name one dimension of the operands");
  int64_t d = in->a.dims.v[0];
  cx_apply f;
  CX_TRY(cx_apply_init(st, in, in->ncalled ? in->called[0] : NULL, 2 * n, types, 1, &f));
  if (f.comp->root->shape.type != CXLA_PRED || f.comp->root->shape.rank != 0)
    return cx_hv_bad(st, in, "comparator must return a pred scalar");

  sort_ctx c = {.st = st, .f = &f, .n = n, .len = s0->dims[d]};
  int64_t nvals;
  if (!cx_hv_mul(c.len, n, &nvals) || c.len > CX_HV_MAX / 16 || nvals > CX_HV_MAX / 16)
    return cx_hv_bad(st, in, "dimension too large");
  c.vals = cx_malloc(sizeof(cx_scalar) * (size_t)(nvals ? nvals : 1));
  int64_t *perm = cx_malloc(sizeof(int64_t) * (size_t)(c.len ? 2 * c.len : 1));
  cxla_literal *res[SORT_MAX_N] = {0};
  cxla_status s = c.vals && perm ? CXLA_OK : cx_hv_oom(st, in);
  for (int k = 0; k < n && s == CXLA_OK; k++)
    if (!(res[k] = cx_hv_literal(st, in, &ops[k]->shape))) s = CXLA_ERR_OUT_OF_MEMORY;
  if (s == CXLA_OK) s = sort_slices(&c, d, ops, res, perm, perm + c.len);
  cx_free(c.vals);
  cx_free(perm);
  if (s != CXLA_OK) {
    for (int k = 0; k < n; k++) cxla_literal_destroy(res[k]);
    return s;
  }
  return cx_hv_finish(st, in, n, res, out);
}
