/* transport_local.h — the in-process transport: the devices of a run as threads of this
 * process (transport_local.c). */
#ifndef CX_TRANSPORT_LOCAL_H
#define CX_TRANSPORT_LOCAL_H
#include "core/transport.h"

/* n transports, ranks 0..n-1 of one world, one per thread; NULL on OOM. */
cx_transport **cx_local_transports(int n);
/* Once the threads are done: the device whose failure (or timeout) broke the run, with what
 * happened in why, or -1. */
int cx_local_broken(cx_transport *const *ts, char *why, size_t n);
void cx_local_transports_free(cx_transport **ts);

#endif
