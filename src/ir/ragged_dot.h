/* ragged_dot.h — what a verified ragged-dot's dimension numbers mean, shared by its shape rule,
 * the interpreter and the cpu lowering (XLA's RaggedDotDimensionNumbers; ir/infer_ragged_dot.c
 * has the rules). The lhs ragged dimension is cut into consecutive groups of group_sizes[..., g]
 * elements; what a group means depends on the kind of dimension it is:
 *   non-contracting: the rows of group g are multiplied by rhs's slice g along rhs_group_dims;
 *   contracting: result slice g (a leading result dimension) sums only over group g's range;
 *   batch: a plain dot (group_sizes changes nothing).
 * group_sizes is [prefix..., G], the prefix being the lhs batch dims, then (non-contracting) the
 * lhs non-contracting dims before the ragged one or (contracting) the contracting dims listed
 * before it, each in its list's order; a [G] group_sizes stands for that broadcast. */
#ifndef CX_RAGGED_DOT_H
#define CX_RAGGED_DOT_H
#include "ir/ir.h"

typedef enum { CX_RAGGED_NONCONTRACTING, CX_RAGGED_CONTRACTING, CX_RAGGED_BATCH } cx_ragged_mode;

typedef struct cx_ragged_dims {
  cx_ragged_mode mode;
  int64_t lhs_ragged; /* the lhs dimension */
  int64_t rhs_group;  /* non-contracting: the rhs dimension that picks the group's matrix; else -1 */
  int nprefix;        /* the lhs dims that index group_sizes before its last dimension */
  int64_t prefix[CXLA_MAX_RANK];
} cx_ragged_dims;

/* Fills *r from the instruction's dims (any lhs_ragged_dims of exactly one in-range dimension;
 * 0 otherwise). */
int cx_ragged_dims_of(const cx_instr *in, int lhs_rank, cx_ragged_dims *r);

#endif
