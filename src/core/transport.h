/* transport.h — how the devices of a run exchange bytes (docs/collectives.md). A run has one
 * device per MPI rank (transport_mpi.c) or per thread of --replicas (transport_local.c); the
 * collectives of the interpreter and of the cpu backend are all written on one call,
 * cx_transport_exchange, and reach a transport through a function table, so the layers above core
 * need no link to it. */
#ifndef CX_TRANSPORT_H
#define CX_TRANSPORT_H
#include <stddef.h>
#include "util/util.h"

/* The devices of a run: replicas x partitions, device d being replica d / partitions and
 * partition d % partitions (XLA's default device assignment); one device per MPI rank or per
 * thread of --replicas. (ir/groups.h: which devices a collective's groups name.) */
typedef struct cx_devices {
  int replicas, partitions;
} cx_devices;

/* One block to send to (or receive from) another device. */
typedef struct cx_xfer {
  int peer;
  void *buf;   /* a send's is only read */
  size_t bytes;
} cx_xfer;

typedef struct cx_transport cx_transport;
typedef struct cx_transport_ops {
  /* Sends every sends[i] to its peer and receives every recvs[j] from its peer; returns once
   * all have arrived and the send buffers may be reused. Every device of the run calls it for
   * every collective, in program order, even with nothing to send or receive; blocks between
   * one pair of devices arrive in the order they were listed. 0, or -1 with a message in err:
   * a peer that does not come within timeout_s seconds (0: wait for ever), a peer that failed,
   * or the transport's own error. */
  int (*exchange)(cx_transport *t, const cx_xfer *sends, int nsend, const cx_xfer *recvs, int nrecv,
                  double timeout_s, char *err, size_t errlen);
  /* This device failed (why): peers waiting for it give up now rather than at their timeout,
   * where the transport can tell them. */
  void (*fail)(cx_transport *t, const char *why);
  /* Optional: on 1, the calling execution has the transport to itself until it calls 0 (MPI:
   * executions on one communicator must not interleave their messages). */
  void (*hold)(cx_transport *t, int on);
  /* Optional: frees a transport a context owns (cxla_context_destroy calls it). */
  void (*destroy)(cx_transport *t);
} cx_transport_ops;

struct cx_transport {
  const cx_transport_ops *ops;
  int rank, size; /* this device and how many the run has */
};

/* What one device's execution knows of its run: passed to the backends' execute. */
typedef struct cx_replica {
  cx_transport *tr;   /* NULL: a run of one device */
  int device;         /* this device: replica device / partitions, partition device % partitions */
  cx_devices dv;
  double timeout_s;   /* --collective-timeout */
} cx_replica;

/* The one device of a run without a transport. */
static inline cx_replica cx_replica_single(void) {
  cx_replica r = {NULL, 0, {1, 1}, 0};
  return r;
}

static inline int cx_transport_exchange(const cx_replica *r, const cx_xfer *sends, int nsend, const cx_xfer *recvs,
                                        int nrecv, char *err, size_t errlen) {
  if (!r->tr) return 0; /* alone: there is no one to exchange with (callers copy to themselves) */
  return r->tr->ops->exchange(r->tr, sends, nsend, recvs, nrecv, r->timeout_s, err, errlen);
}

#endif
