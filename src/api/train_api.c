/* train_api.c — cxla_optimizer_init and cxla_module_train_step, the public face of the
 * training step grad/ builds (docs/train.md). */
#include <string.h>
#include "api/api.h"
#include "grad/grad.h"
#include "util/fpenv.h"

void cxla_optimizer_init(cxla_optimizer *opt, cxla_optimizer_kind kind) {
  if (!opt) return;
  memset(opt, 0, sizeof *opt);
  opt->kind = kind;
  opt->learning_rate = kind == CXLA_OPTIMIZER_ADAM ? 0.001 : 0.01;
  opt->beta1 = 0.9;
  opt->beta2 = 0.999;
  opt->epsilon = 1e-8;
  opt->steps_per_call = 1;
}

cxla_status cxla_module_train_step(cxla_module *m, const int *wrt, int nwrt, const cxla_optimizer *opt,
                                   cxla_module **out) {
  if (out) *out = NULL;
  if (!m) return CXLA_ERR_INVALID_ARGUMENT;
  if (!out) return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_module_train_step: out is NULL");
  unsigned env = cx_fpenv_enter(0); /* folding is IEEE (util/fpenv.h) */
  cxla_status s = cx_train_step_module(m, wrt, nwrt, opt, out);
  cx_fpenv_leave(env);
  return s;
}
