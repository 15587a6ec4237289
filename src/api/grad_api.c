/* grad_api.c — cxla_module_grad, the public face of grad/ (reverse-mode gradients). */
#include "api/api.h"
#include "grad/grad.h"
#include "util/fpenv.h"

cxla_status cxla_module_grad(cxla_module *m, const int *wrt, int nwrt, cxla_module **out) {
  if (out) *out = NULL;
  if (!m) return CXLA_ERR_INVALID_ARGUMENT;
  if (!out) return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_module_grad: out is NULL");
  unsigned env = cx_fpenv_enter(0); /* folding is IEEE (util/fpenv.h) */
  cxla_status s = cx_grad_module(m, wrt, nwrt, out);
  cx_fpenv_leave(env);
  return s;
}
