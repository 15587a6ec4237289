/* host_callbacks.c — the process's one host-callback dispatcher. Process-wide, not per context:
 * a program names its callbacks by the ids of the process that lowered it (the Python package's
 * registry), and the PJRT plugin's contexts are out of its caller's reach. Its copy is taken
 * under a lock for each use, so a dispatcher set while programs run never tears. */
#include <pthread.h>
#include <stdio.h>
#include "core/host_callbacks.h"

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static cxla_host_callbacks g_cb;

void cxla_host_callbacks_set(const cxla_host_callbacks *cb) {
  pthread_mutex_lock(&g_mu);
  if (cb && cb->call) g_cb = *cb;
  else g_cb = (cxla_host_callbacks){0};
  pthread_mutex_unlock(&g_mu);
}

static cxla_host_callbacks current(void) {
  pthread_mutex_lock(&g_mu);
  cxla_host_callbacks cb = g_cb;
  pthread_mutex_unlock(&g_mu);
  return cb;
}

int cx_host_callback_known(uint64_t id, char *buf, size_t n) {
  cxla_host_callbacks cb = current();
  if (!cb.call) {
    snprintf(buf, n, "callback_id %llu: no host-callback dispatcher is set in this process (cxla_host_callbacks_set)",
             (unsigned long long)id);
    return 0;
  }
  char name[64] = "";
  int ok = cb.lookup ? cb.lookup(cb.user, id, name, sizeof name) : 1;
  name[sizeof name - 1] = '\0';
  if (!ok)
    snprintf(buf, n, "callback_id %llu%s%s%s is not registered with this process's dispatcher", (unsigned long long)id,
             name[0] ? " (" : "", name, name[0] ? ")" : "");
  return ok;
}

cxla_status cx_host_callback_run(uint64_t id, int nargs, const cxla_host_value *args, int nresults,
                                 cxla_host_value *results, char *err, size_t errlen) {
  cxla_host_callbacks cb = current();
  if (!cb.call) {
    snprintf(err, errlen, "no host-callback dispatcher is set in this process (cxla_host_callbacks_set)");
    return CXLA_ERR_RUNTIME;
  }
  err[0] = '\0';
  if (cb.call(cb.user, id, nargs, args, nresults, results, err, errlen) == 0) return CXLA_OK;
  err[errlen - 1] = '\0';
  if (!err[0]) snprintf(err, errlen, "the callback failed without a message");
  return CXLA_ERR_RUNTIME;
}
