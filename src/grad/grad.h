/* grad.h — reverse-mode differentiation on the IR (issue 10). From a module whose ENTRY
 * returns a scalar float, cx_grad_module builds a new module with the same parameters whose
 * ENTRY returns (value, gradient for each chosen parameter). Every op's gradient rule is found
 * through a table indexed by op (grad/rules.c); docs/grad.md states the rules, the tie rules
 * and how while loops are handled. grad/ calls ir/ and util/ only. */
#ifndef CX_GRAD_H
#define CX_GRAD_H
#include "ir/ir.h"

/* *out: a new module (m is left as it is) whose ENTRY takes m's parameters and returns the
 * tuple (ENTRY's result, d result / d parameter wrt[0], ..., wrt[nwrt-1]), each gradient of its
 * parameter's shape. ENTRY must return a scalar float; wrt[i] must name a float-array
 * parameter (a number may repeat). An op on the path from a wrt parameter to the result that
 * has no rule is CXLA_ERR_UNSUPPORTED naming it and its location; bad arguments are
 * CXLA_ERR_INVALID_ARGUMENT. The module's context holds the message. */
cxla_status cx_grad_module(cx_module *m, const int *wrt, int nwrt, cx_module **out);

/* The training step of cxla_module_train_step (cxla.h states the layout; docs/train.md the
 * math): gradients of m's ENTRY with respect to wrt, the optimizer's update of each weight
 * built into the same ENTRY, weights and state aliased to their new values, and K > 1 steps
 * in one while loop. m is left as it is; the module's context holds any error. */
cxla_status cx_train_step_module(cx_module *m, const int *wrt, int nwrt, const cxla_optimizer *opt,
                                 cx_module **out);

/* Whether op has a gradient rule (ops without one are refused when a gradient reaches them). */
int cx_grad_has_rule(cx_op op);

#endif
