/* map.c — map: to_apply(x_0[i], ..., x_N-1[i]) for every index i of N same-shaped operands.
 * XLA only maps over all dimensions, so dimensions= must list 0..rank-1 when present. */
#include "interp/apply.h"
#include "interp/index_util.h"

#define MAP_MAX_N 64

cxla_status cx_interp_map(cx_interp *st, cx_instr *in, cxla_literal *const *ops,
                          cxla_literal **out) {
  *out = NULL;
  int n = in->nops;
  if (n < 1 || n > MAP_MAX_N) return cx_hv_bad(st, in, "expects 1 to %d operands", MAP_MAX_N);
  cxla_type types[MAP_MAX_N];
  for (int i = 0; i < n; i++) {
    CX_TRY(cx_hv_check_array(st, in, ops[i], ops[0]->shape.rank, "operand"));
    if (!cx_shape_same_dims(&ops[i]->shape, &ops[0]->shape))
      return cx_hv_bad(st, in, "operands must have the same dimensions");
    types[i] = ops[i]->shape.type;
  }
  const cx_shape *s0 = &ops[0]->shape;
  if (in->a.dims.n) {
    int ok = in->a.dims.n == s0->rank;
    for (int d = 0; ok && d < s0->rank; d++) ok = in->a.dims.v[d] == d;
    if (!ok) return cx_interp_unsupported(st, in, "map over a subset of dimensions");
  }
  if (in->shape.type == CXLA_TUPLE || !cx_type_is_array(in->shape.type))
    return cx_hv_bad(st, in, "result must be an array");
  CX_TRY(cx_hv_check_result(st, in, &in->shape, in->shape.type, s0->rank, s0->dims));
  cx_apply f;
  CX_TRY(cx_apply_init(st, in, in->ncalled ? in->called[0] : NULL, n, types, 1, &f));
  if (f.comp->root->shape.type != in->shape.type || f.comp->root->shape.rank != 0)
    return cx_hv_bad(st, in, "to_apply must return a %s scalar", cxla_type_name(in->shape.type));

  cxla_literal *res = cx_hv_literal(st, in, &in->shape);
  if (!res) return CXLA_ERR_OUT_OF_MEMORY;
  int64_t elems = cx_shape_elems(s0);
  cx_scalar args[MAP_MAX_N], v;
  for (int64_t i = 0; i < elems; i++) {
    for (int k = 0; k < n; k++) args[k] = cx_scalar_load(types[k], ops[k]->data, i);
    cxla_status s = cx_apply_call(st, &f, args, &v);
    if (s != CXLA_OK) {
      cxla_literal_destroy(res);
      return s;
    }
    cx_scalar_store(res->shape.type, res->data, i, v);
  }
  *out = res;
  return CXLA_OK;
}
