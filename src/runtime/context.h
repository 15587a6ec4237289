/* context.h — the cxla_context: flags, last error message, and shared caches. */
#ifndef CX_CONTEXT_H
#define CX_CONTEXT_H
#include <pthread.h>
#include "runtime/flags.h"

struct cxla_context {
  pthread_mutex_t mu; /* guards msg */
  char msg[2048];     /* last error message; fixed size so reporting OOM cannot fail */
  cx_flags flags;
};

#endif
