/* apply.h — applying a called computation (reducer, comparator, combiner) to scalars. The
 * common shapes (ROOT = a commutative binary op of two parameters, or a compare of two) run
 * directly through cx_scalar_binary / cx_scalar_compare; everything else goes through
 * cx_interp_call_scalar. Both give the same values: the direct path only skips the call. */
#ifndef CX_INTERP_APPLY_H
#define CX_INTERP_APPLY_H
#include "interp/interp.h"

typedef enum { CX_APPLY_CALL, CX_APPLY_BINARY, CX_APPLY_COMPARE } cx_apply_kind;

typedef struct cx_apply {
  cx_comp *comp;
  int nargs, nouts;
  cx_apply_kind kind;
  cx_op op;             /* CX_APPLY_BINARY */
  cxla_compare_dir dir; /* CX_APPLY_COMPARE */
  cx_cmp_type ct;
  cxla_type type;       /* operand element type of the direct op */
  int a, b;             /* which arguments feed the direct op */
} cx_apply;

/* Prepares to apply c to nargs scalar arguments giving nouts scalar results. arg_types are the
 * element types the caller will pass (the direct path is taken only when they match the
 * computation's parameters). Fails if c is missing or its parameter count is wrong. */
cxla_status cx_apply_init(cx_interp *st, cx_instr *in, cx_comp *c, int nargs,
                          const cxla_type *arg_types, int nouts, cx_apply *f);

static inline cxla_status cx_apply_call(cx_interp *st, const cx_apply *f, const cx_scalar *args,
                                        cx_scalar *outs) {
  switch (f->kind) {
  case CX_APPLY_BINARY:
    outs[0] = cx_scalar_binary(f->op, f->type, args[f->a], args[f->b]);
    return CXLA_OK;
  case CX_APPLY_COMPARE:
    outs[0].i = cx_scalar_compare(f->dir, f->ct, f->type, args[f->a], args[f->b]) != 0;
    return CXLA_OK;
  default:
    return cx_interp_call_scalar(st, f->comp, f->nargs, args, f->nouts, outs);
  }
}

#endif
