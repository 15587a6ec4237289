/* execute_args.c — cxla_executable_execute_args: one call with the caller's arrays read where
 * they lie. Each array becomes a wrapped buffer on the stack (a literal over its memory that
 * owns nothing), so the call allocates nothing for its arguments and copies nothing; then it is
 * an ordinary cxla_executable_execute, with the same checks and messages. */
#include <stdio.h>
#include <string.h>
#include "ir/literal.h"
#include "runtime/executable.h"

#define STACK_ARGS 16

cxla_status cxla_executable_execute_args(cxla_executable *e, int nargs, const cxla_arg *args, cxla_buffer **result) {
  if (!e) return CXLA_ERR_INVALID_ARGUMENT;
  if (!result) return cx_error(e->ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_executable_execute_args: result is NULL");
  *result = NULL;
  if (nargs < 0 || (nargs && !args))
    return cx_error(e->ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_executable_execute_args: bad argument list (nargs %d)",
                    nargs);
  cxla_literal stack_lits[STACK_ARGS];
  cxla_buffer stack_bufs[STACK_ARGS], *stack_ptrs[STACK_ARGS];
  int small = nargs <= STACK_ARGS;
  cxla_literal *lits = small ? stack_lits : cx_malloc(sizeof *lits * (size_t)nargs);
  cxla_buffer *bufs = small ? stack_bufs : cx_calloc((size_t)nargs, sizeof *bufs);
  cxla_buffer **ptrs = small ? stack_ptrs : cx_malloc(sizeof *ptrs * (size_t)nargs);
  cxla_status s = lits && bufs && ptrs ? CXLA_OK : cx_oom(e->ctx);
  for (int i = 0; i < nargs && s == CXLA_OK; i++) {
    if (args[i].buffer) {
      ptrs[i] = args[i].buffer;
      continue;
    }
    char fn[48];
    snprintf(fn, sizeof fn, "argument %d", i);
    s = cx_buffer_wrap_literal(e->ctx, fn, args[i].type, args[i].rank, args[i].dims, args[i].data, args[i].nbytes,
                               &lits[i]);
    memset(&bufs[i], 0, sizeof bufs[i]);
    bufs[i].ctx = e->ctx;
    bufs[i].backend = e->core->backend;
    bufs[i].host = &lits[i];
    bufs[i].wrapped = 1; /* execute refuses to donate it */
    ptrs[i] = &bufs[i];
  }
  if (s == CXLA_OK) s = cxla_executable_execute(e, nargs, ptrs, result);
  if (!small) {
    cx_free(lits);
    cx_free(bufs);
    cx_free(ptrs);
  }
  return s;
}
