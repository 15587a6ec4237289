/* replicas.c — cxla_executable_execute_replicas: a run of n devices as n threads of this
 * process, each executing the same executable on its own arguments, the collectives meeting
 * through the in-process transport (transport_local.c). The first device to fail tells the
 * others (they stop at their next collective instead of waiting), and its error is the one
 * reported, naming it. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "core/context.h"
#include "core/transport_local.h"
#include "ir/groups.h"
#include "runtime/executable.h"

typedef struct device_job {
  cxla_executable *e;
  cx_replica rep;
  int nargs;
  cxla_buffer *const *args;
  cxla_buffer **result;
  cxla_status status;
  char msg[1024];   /* its error, as it read it when it failed */
} device_job;

static void *run_device(void *p) {
  device_job *j = p;
  j->status = cx_execute(j->e, &j->rep, j->nargs, j->args, j->result);
  if (j->status == CXLA_OK) return NULL;
  snprintf(j->msg, sizeof j->msg, "%s", cxla_context_errmsg(j->e->ctx));
  j->rep.tr->ops->fail(j->rep.tr, j->msg);
  return NULL;
}

cxla_status cxla_executable_execute_replicas(cxla_executable *e, int n, int nargs, cxla_buffer *const *args,
                                             cxla_buffer **results) {
  if (!e) return CXLA_ERR_INVALID_ARGUMENT;
  if (n < 1 || n > 1024 || nargs < 0 || (nargs && !args) || !results)
    return cx_error(e->ctx, CXLA_ERR_INVALID_ARGUMENT,
                    "cxla_executable_execute_replicas: bad arguments (n %d: 1 to 1024 devices, nargs %d, args and "
                    "results needed)", n, nargs);
  for (int r = 0; r < n; r++) results[r] = NULL;
  const cx_exe_core *c = e->core;
  char why[400];
  cx_devices dv;
  if (cx_devices_for(c->replica_count, c->num_partitions, n, c->name, &dv, why, sizeof why))
    return cx_error(e->ctx, CXLA_ERR_INVALID_ARGUMENT, "%s", why);
  cx_transport **ts = cx_local_transports(n);
  device_job *jobs = cx_calloc((size_t)n, sizeof *jobs);
  pthread_t *th = cx_calloc((size_t)n, sizeof *th);
  uint8_t *started = cx_calloc((size_t)n, 1);
  if (!ts || !jobs || !th || !started) {
    cx_local_transports_free(ts);
    cx_free(jobs);
    cx_free(th);
    cx_free(started);
    return cx_oom(e->ctx);
  }
  for (int r = 0; r < n; r++) {
    jobs[r] = (device_job){e, {ts[r], r, dv, e->ctx->flags.collective_timeout}, nargs, args + (size_t)r * (size_t)nargs,
                           &results[r], CXLA_OK, ""};
    started[r] = pthread_create(&th[r], NULL, run_device, &jobs[r]) == 0;
    if (!started[r]) { /* no thread: the device fails, and the others with it */
      jobs[r].status = cx_error(e->ctx, CXLA_ERR_RUNTIME, "could not start a thread for device %d", r);
      ts[r]->ops->fail(ts[r], "could not start its thread");
    }
  }
  for (int r = 0; r < n; r++)
    if (started[r]) pthread_join(th[r], NULL);
  cxla_status s = CXLA_OK;
  for (int r = 0; r < n && s == CXLA_OK; r++) s = jobs[r].status;
  if (s != CXLA_OK) {
    /* the first failure broke the world: its status and message, not a peer's "device r
     * failed" */
    int who = cx_local_broken(ts, why, sizeof why);
    if (who >= 0 && jobs[who].status != CXLA_OK) s = jobs[who].status;
    /* a device that gave up waiting has the same words with its location in front */
    if (who >= 0) cx_error(e->ctx, s, "%s", strstr(jobs[who].msg, why) ? jobs[who].msg : why);
    for (int r = 0; r < n; r++) {
      cxla_buffer_destroy(results[r]);
      results[r] = NULL;
    }
  }
  cx_local_transports_free(ts);
  cx_free(jobs);
  cx_free(th);
  cx_free(started);
  return s;
}
