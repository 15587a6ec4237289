/* host_callbacks.h — the process's host-callback dispatcher (cxla_host_callbacks_set), as the
 * layers that compile and run the cxla_host_callback custom-call ask it. */
#ifndef CX_HOST_CALLBACKS_H
#define CX_HOST_CALLBACKS_H
#include <stddef.h>
#include <stdint.h>
#include "cxla.h"

/* 1 if the dispatcher knows id, else 0 with why in buf ("no host-callback dispatcher is set
 * ..." or "callback_id 7 (name) is not registered ..."). */
int cx_host_callback_known(uint64_t id, char *buf, size_t n);
/* Runs callback id through the dispatcher: CXLA_OK, or CXLA_ERR_RUNTIME with the callback's
 * message (or why there is no dispatcher) in err. */
cxla_status cx_host_callback_run(uint64_t id, int nargs, const cxla_host_value *args, int nresults,
                                 cxla_host_value *results, char *err, size_t errlen);

#endif
