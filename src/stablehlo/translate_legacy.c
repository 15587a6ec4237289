/* translate_legacy.c — the deprecated StableHLO ops XLA still translates, in the HLO it makes of
 * them: einsum (two operands) as a dot_general and a transpose, torch_index_select as a gather.
 * unary_einsum stays refused, as XLA refuses it. */
#include <string.h>
#include "stablehlo/translate.h"

static int is_label(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* einsum_config "ab,bc->ac": each operand's labels, one per dimension. Every label of the
 * output must be in an operand; a label of both operands is a batch dimension when the output
 * has it, else contracted; a label of one operand must be in the output (summing it away
 * first, and "..." broadcasting, are refused). */
cxla_status cx_sx_h_einsum(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, 2, 1));
  const char *cfg = cx_sx_str(op, "einsum_config");
  if (!cfg) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "missing attribute 'einsum_config'");
  cx_instr **ops;
  int n;
  CX_TRY(cx_sx_operands(sx, op, 0, &ops, &n));
  cx_shape s;
  CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &s));
  char lab[3][CXLA_MAX_RANK + 1];
  int len[3] = {0, 0, 0}, part = 0;
  for (const char *p = cfg; *p; p++) {
    if (*p == ' ') continue;
    if (*p == ',' && part == 0) part = 1;
    else if (p[0] == '-' && p[1] == '>' && part == 1) part = 2, p++;
    else if (is_label(*p) && len[part] < CXLA_MAX_RANK) lab[part][len[part]++] = *p;
    else return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "not supported: einsum_config \"%s\" (only labels a-z, A-Z, no '...')", cfg);
  }
  for (int k = 0; k < 3; k++) lab[k][len[k]] = 0;
  if (part != 2) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "einsum_config \"%s\" is not \"lhs,rhs->out\"", cfg);
  for (int k = 0; k < 2; k++)
    if (ops[k]->shape.type == CXLA_TUPLE || ops[k]->shape.rank != len[k])
      return cx_sx_err(sx, op, CXLA_ERR_PARSE, "einsum_config \"%s\": operand %d has rank %d", cfg, k, ops[k]->shape.rank);
  if (s.rank != len[2]) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "einsum_config \"%s\": the result has rank %d", cfg, s.rank);
  int64_t lb[CXLA_MAX_RANK], rb[CXLA_MAX_RANK], lc[CXLA_MAX_RANK], rc[CXLA_MAX_RANK];
  char order[CXLA_MAX_RANK * 3 + 1]; /* the dot's result labels: batch, lhs free, rhs free */
  int nb = 0, nc = 0, no = 0;
  for (int i = 0; i < len[0]; i++) {
    char l = lab[0][i];
    const char *r = strchr(lab[1], l), *o = strchr(lab[2], l);
    if (strchr(lab[0] + i + 1, l) || (r && strchr(r + 1, l)))
      return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "not supported: einsum label '%c' repeated in an operand", l);
    if (r && o) lb[nb] = i, rb[nb++] = r - lab[1];
    else if (r) lc[nc] = i, rc[nc++] = r - lab[1];
    else if (!o) return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "not supported: einsum label '%c' summed within one operand", l);
  }
  for (int i = 0; i < nb; i++) order[no++] = lab[0][lb[i]];
  for (int i = 0; i < len[0]; i++)
    if (strchr(lab[2], lab[0][i]) && !strchr(lab[1], lab[0][i])) order[no++] = lab[0][i];
  for (int i = 0; i < len[1]; i++) {
    char l = lab[1][i];
    if (strchr(lab[0], l)) continue;
    if (!strchr(lab[2], l)) return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "not supported: einsum label '%c' summed within one operand", l);
    order[no++] = l;
  }
  order[no] = 0;
  if (no != len[2]) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "einsum_config \"%s\": the output labels are not the operands'", cfg);
  /* the dot, then the transpose to the output's label order */
  cx_shape ds = cx_shape_scalar(s.type);
  ds.rank = no;
  int64_t perm[CXLA_MAX_RANK];
  int identity = 1;
  for (int j = 0; j < no; j++) {
    const char *w = strchr(lab[2], order[j]);
    if (!w) return cx_sx_err(sx, op, CXLA_ERR_PARSE, "einsum_config \"%s\": label '%c' is not in the output", cfg, order[j]);
    ds.dims[j] = s.dims[w - lab[2]];
  }
  for (int j = 0; j < no; j++) {
    perm[j] = strchr(order, lab[2][j]) - order;
    identity &= perm[j] == j;
  }
  cx_instr *d = cx_sx_add(sx, c, CX_OP_DOT, &ds, 2, ops, op);
  if (!d || !cx_ints_set(sx->m, &d->a.dot.lhs_batch, nb, lb) || !cx_ints_set(sx->m, &d->a.dot.rhs_batch, nb, rb) ||
      !cx_ints_set(sx->m, &d->a.dot.lhs_contract, nc, lc) || !cx_ints_set(sx->m, &d->a.dot.rhs_contract, nc, rc))
    return CXLA_ERR_OUT_OF_MEMORY;
  if (identity) return cx_sx_bind(sx, c, op, d);
  cx_instr *t = cx_sx_add(sx, c, CX_OP_TRANSPOSE, &s, 1, &d, op);
  if (!t || !cx_ints_set(sx->m, &t->a.dims, no, perm)) return CXLA_ERR_OUT_OF_MEMORY;
  return cx_sx_bind(sx, c, op, t);
}

/* torch_index_select(operand, index), dim, batch_dims = 0: the operand's slices along dim at
 * each index, a gather whose indices are the index tensor's elements. */
cxla_status cx_sx_h_torch_index_select(cx_sx *sx, cx_comp *c, const cx_mlir_op *op, int arg) {
  (void)arg;
  CX_TRY(cx_sx_arity(sx, op, 2, 1));
  int64_t dim, bd;
  CX_TRY(cx_sx_int(sx, op, "dim", 1, 0, &dim));
  CX_TRY(cx_sx_int(sx, op, "batch_dims", 0, 0, &bd));
  if (bd) return cx_sx_err(sx, op, CXLA_ERR_UNSUPPORTED, "not supported: torch_index_select with batch_dims %lld", (long long)bd);
  cx_instr **ops;
  int n;
  CX_TRY(cx_sx_operands(sx, op, 0, &ops, &n));
  const cx_shape *x = &ops[0]->shape, *ix = &ops[1]->shape;
  if (x->type == CXLA_TUPLE || ix->type == CXLA_TUPLE || dim < 0 || dim >= x->rank ||
      x->rank - 1 + ix->rank > CXLA_MAX_RANK)
    return cx_sx_err(sx, op, CXLA_ERR_PARSE, "dim %lld is not a dimension of the operand", (long long)dim);
  cx_shape s;
  CX_TRY(cx_sx_shape(sx, op, op->results[0].type, &s));
  int64_t off[CXLA_MAX_RANK], sizes[CXLA_MAX_RANK];
  int noff = 0;
  for (int i = 0; i < x->rank; i++) {
    sizes[i] = i == dim ? 1 : x->dims[i];
    if (i != dim) off[noff++] = i < dim ? i : i - 1 + ix->rank;
  }
  cx_instr *g = cx_sx_add(sx, c, CX_OP_GATHER, &s, 2, ops, op);
  if (!g || !cx_ints_set(sx->m, &g->a.gather.offset_dims, noff, off) ||
      !cx_ints_set(sx->m, &g->a.gather.collapsed_slice_dims, 1, &dim) ||
      !cx_ints_set(sx->m, &g->a.gather.start_index_map, 1, &dim) ||
      !cx_ints_set(sx->m, &g->a.gather.slice_sizes, x->rank, sizes))
    return CXLA_ERR_OUT_OF_MEMORY;
  g->a.gather.index_vector_dim = ix->rank;
  return cx_sx_bind(sx, c, op, g);
}
