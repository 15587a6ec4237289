/* transport_mpi.c — the devices of a run as the ranks of an MPI job, one device per process
 * (docs/collectives.md), on Open MPI from Debian. A context uses the communicator its caller
 * gave (cxla_context_set_communicator) or, when the process runs under mpirun, MPI_COMM_WORLD:
 * MPI is initialised the first time an execution needs it, never before, and finalised at exit
 * when cxla initialised it. cxla talks on its own duplicate of the communicator, so its
 * messages never meet the application's.
 *
 * An exchange posts every receive and send at once (MPI_Irecv, MPI_Isend) and polls them with
 * MPI_Testall until they are done or --collective-timeout has passed: a rank that died or
 * never comes gives an error naming it, not a hang. Blocks larger than MPI's int count go in
 * pieces, in order. Executions with collectives hold the transport for their whole run, so
 * concurrent executions on one communicator cannot interleave their messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include "core/context.h"
#include "core/transport.h"

/* The rank and size mpirun (Open MPI, or a PMI launcher) gave this process, without asking MPI:
 * 0 when it did not start it. */
static int launched(int *rank, int *size) {
  static const char *const vars[][2] = {{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}, {"PMI_RANK", "PMI_SIZE"}};
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
    const char *r = getenv(vars[i][0]), *s = getenv(vars[i][1]);
    if (r && s && atoi(s) > 0) {
      *rank = atoi(r);
      *size = atoi(s);
      return 1;
    }
  }
  return 0;
}

#ifndef CX_HAVE_MPI

/* Built without MPI: every process is a run of its own. */
cxla_status cx_context_transport(cxla_context *ctx, cx_transport **out) {
  (void)ctx;
  *out = NULL;
  int rank, size;
  if (launched(&rank, &size) && size > 1)
    return cx_error(ctx, CXLA_ERR_UNSUPPORTED,
                    "this process is rank %d of %d under mpirun, but this cxla was built without MPI "
                    "(install libopenmpi-dev and rebuild)", rank, size);
  return CXLA_OK;
}


cxla_status cxla_context_set_communicator(cxla_context *ctx, const void *mpi_comm) {
  (void)mpi_comm;
  return ctx ? cx_error(ctx, CXLA_ERR_UNSUPPORTED, "cxla_context_set_communicator: this cxla was built without MPI")
             : CXLA_ERR_INVALID_ARGUMENT;
}

cxla_status cxla_context_device(cxla_context *ctx, int *device, int *ndevices) {
  if (!ctx || !device || !ndevices) return CXLA_ERR_INVALID_ARGUMENT;
  *device = 0;
  *ndevices = 1;
  return CXLA_OK;
}

#else
#include <mpi.h>
#include <sched.h>
#include <time.h>

#define TAG 0x6378 /* "cx" */
#define PIECE ((size_t)1 << 30)

typedef struct mpi_tr {
  cx_transport t;           /* first: a cx_transport * is an mpi_tr * */
  MPI_Comm comm;            /* cxla's duplicate */
  int broken;               /* a timeout left messages in flight: nothing more goes on it */
  pthread_mutex_t mu;
} mpi_tr;

static int g_any_broken;    /* a failure or timeout: finalising could wait for a dead rank */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

static void finalize_at_exit(void) {
  int done = 0;
  MPI_Finalized(&done);
  if (!done && !g_any_broken) MPI_Finalize();
}

static void mpi_message(int code, const char *what, char *err, size_t errlen) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "MPI error %d", code);
  snprintf(err, errlen, "%s: %s", what, msg);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Posts one block in pieces MPI's int count can hold; returns the requests used or -1. */
static int post(mpi_tr *m, const cx_xfer *x, int send, MPI_Request *req, int *nreq, int *owner, int k, char *err,
                size_t errlen) {
  size_t done = 0;
  do {
    size_t piece = x->bytes - done > PIECE ? PIECE : x->bytes - done;
    char *p = (char *)x->buf + done;
    int rc = send ? MPI_Isend(p, (int)piece, MPI_BYTE, x->peer, TAG, m->comm, &req[*nreq])
                  : MPI_Irecv(p, (int)piece, MPI_BYTE, x->peer, TAG, m->comm, &req[*nreq]);
    if (rc != MPI_SUCCESS) {
      mpi_message(rc, send ? "MPI_Isend" : "MPI_Irecv", err, errlen);
      return -1;
    }
    owner[(*nreq)++] = k;
    done += piece;
  } while (done < x->bytes);
  return 0;
}

static int pieces(const cx_xfer *x, int n) {
  int k = 0;
  for (int i = 0; i < n; i++) k += x[i].bytes ? (int)((x[i].bytes + PIECE - 1) / PIECE) : 1;
  return k;
}

/* After a timeout: which receives never completed, as " 1, 3". */
static void missing(const cx_xfer *recvs, const int *owner, MPI_Request *req, int nreq, int nrecv_req, char *out,
                    size_t n) {
  size_t k = 0;
  int last = -1;
  out[0] = 0;
  for (int i = 0; i < nrecv_req && i < nreq && k < n; i++) {
    int flag = 0;
    MPI_Test(&req[i], &flag, MPI_STATUS_IGNORE);
    int peer = recvs[owner[i]].peer;
    if (!flag && peer != last) {
      k += (size_t)snprintf(out + k, n - k, "%s%d", k ? ", " : " ", peer);
      last = peer;
    }
  }
}

static int mpi_exchange(cx_transport *t, const cx_xfer *sends, int nsend, const cx_xfer *recvs, int nrecv,
                        double timeout_s, char *err, size_t errlen) {
  mpi_tr *m = (mpi_tr *)t;
  if (m->broken) {
    snprintf(err, errlen, "an earlier collective of this process failed; its communicator is no longer used");
    return -1;
  }
  int nr = pieces(recvs, nrecv), n = nr + pieces(sends, nsend), nreq = 0, rc = 0;
  if (!n) return 0;
  MPI_Request *req = cx_calloc((size_t)n, sizeof *req);
  int *owner = cx_calloc((size_t)n, sizeof *owner);
  if (!req || !owner) {
    cx_free(req);
    cx_free(owner);
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  for (int j = 0; j < nrecv && !rc; j++) rc = post(m, &recvs[j], 0, req, &nreq, owner, j, err, errlen);
  for (int i = 0; i < nsend && !rc; i++) rc = post(m, &sends[i], 1, req, &nreq, owner, i, err, errlen);
  /* MPI moves data only inside its calls, so a transfer in progress wants MPI_Testall often:
   * back to back for the first 20 ms (as MPI_Wait would), then yielding between calls (other
   * ranks may share the core) up to a second, then sleeping a little between them (a peer
   * that late is not coming soon). */
  double start = now_s(), waited = 0;
  for (long spins = 0; !rc; spins++) {
    int flag = 0, code = MPI_Testall(nreq, req, &flag, MPI_STATUSES_IGNORE);
    if (code != MPI_SUCCESS) {
      mpi_message(code, "MPI_Testall", err, errlen);
      rc = -1;
    } else if (flag) {
      break;
    } else if (spins % 64 == 63) {
      waited = now_s() - start;
      if (timeout_s > 0 && waited > timeout_s) {
        char who[200];
        missing(recvs, owner, req, nreq, nr, who, sizeof who);
        snprintf(err, errlen, "timed out after %g s (--collective-timeout) waiting for rank%s%s", timeout_s,
                 strchr(who, ',') ? "s" : "", who[0] ? who : " (sends not taken)");
        rc = -1;
      } else if (waited > 1) {
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
      }
    } else if (waited > 0.02) {
      sched_yield();
    }
  }
  if (rc) { /* requests left in flight: the communicator cannot be trusted any more */
    for (int i = 0; i < nreq; i++)
      if (req[i] != MPI_REQUEST_NULL) MPI_Cancel(&req[i]);
    m->broken = 1;
    pthread_mutex_lock(&g_mu);
    g_any_broken = 1;
    pthread_mutex_unlock(&g_mu);
  }
  cx_free(req);
  cx_free(owner);
  return rc;
}

/* A rank whose execution failed may leave its peers waiting in a collective it never reaches,
 * and MPI has no way to tell them. So such a process leaves MPI unfinalised when it ends (where
 * cxla initialised it): mpirun then ends the whole job as soon as this process is gone, instead
 * of the peers waiting for their --collective-timeout. */
static void mpi_fail(cx_transport *t, const char *why) {
  (void)why;
  ((mpi_tr *)t)->broken = 1;
  pthread_mutex_lock(&g_mu);
  g_any_broken = 1;
  pthread_mutex_unlock(&g_mu);
}

static void mpi_hold(cx_transport *t, int on) {
  mpi_tr *m = (mpi_tr *)t;
  if (on) pthread_mutex_lock(&m->mu);
  else pthread_mutex_unlock(&m->mu);
}

static void destroy(cx_transport *t);
static const cx_transport_ops k_mpi = {.exchange = mpi_exchange, .fail = mpi_fail, .hold = mpi_hold, .destroy = destroy};

/* A transport on a duplicate of comm; NULL with err set. */
static cx_transport *make(MPI_Comm comm, char *err, size_t errlen) {
  mpi_tr *m = cx_calloc(1, sizeof *m);
  if (!m) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  int rank = 0, size = 0, rc = MPI_Comm_dup(comm, &m->comm);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(m->comm, &rank);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_size(m->comm, &size);
  if (rc != MPI_SUCCESS) {
    mpi_message(rc, "duplicating the communicator", err, errlen);
    cx_free(m);
    return NULL;
  }
  pthread_mutex_init(&m->mu, NULL);
  m->t = (cx_transport){&k_mpi, rank, size};
  return &m->t;
}

static void destroy(cx_transport *t) {
  if (!t) return;
  mpi_tr *m = (mpi_tr *)t;
  int done = 0;
  MPI_Finalized(&done);
  if (!done && !m->broken) MPI_Comm_free(&m->comm);
  pthread_mutex_destroy(&m->mu);
  cx_free(m);
}

/* MPI_COMM_WORLD's transport, initialising MPI if it is not (once per process). */
static cx_transport *world(char *err, size_t errlen) {
  int inited = 0;
  pthread_mutex_lock(&g_mu);
  MPI_Initialized(&inited);
  if (!inited) {
    int provided = 0, rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
    if (rc != MPI_SUCCESS) {
      pthread_mutex_unlock(&g_mu);
      mpi_message(rc, "MPI_Init_thread", err, errlen);
      return NULL;
    }
    atexit(finalize_at_exit); /* cxla initialised MPI, so it finalises it */
  }
  pthread_mutex_unlock(&g_mu);
  return make(MPI_COMM_WORLD, err, errlen);
}

cxla_status cx_context_transport(cxla_context *ctx, cx_transport **out) {
  pthread_mutex_lock(&ctx->rt_mu);
  *out = ctx->transport;
  int rank, size, inited = 0, want = !*out && !ctx->own_comm;
  pthread_mutex_unlock(&ctx->rt_mu);
  if (!want) return CXLA_OK;
  MPI_Initialized(&inited);
  if (!(launched(&rank, &size) && size > 1) && !inited) return CXLA_OK; /* a run of one device */
  char err[400];
  cx_transport *t = world(err, sizeof err);
  if (!t) return cx_error(ctx, CXLA_ERR_RUNTIME, "MPI: %s", err);
  pthread_mutex_lock(&ctx->rt_mu);
  if (ctx->transport) { /* another thread made one first */
    pthread_mutex_unlock(&ctx->rt_mu);
    destroy(t);
    *out = ctx->transport;
    return CXLA_OK;
  }
  ctx->transport = t->size > 1 ? t : NULL;
  pthread_mutex_unlock(&ctx->rt_mu);
  if (t->size <= 1) destroy(t);
  *out = ctx->transport;
  return CXLA_OK;
}


cxla_status cxla_context_set_communicator(cxla_context *ctx, const void *mpi_comm) {
  if (!ctx) return CXLA_ERR_INVALID_ARGUMENT;
  cx_transport *t = NULL;
  if (mpi_comm) {
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited)
      return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_context_set_communicator: MPI is not initialised (call MPI_Init first)");
    char err[400];
    if (!(t = make(*(const MPI_Comm *)mpi_comm, err, sizeof err)))
      return cx_error(ctx, CXLA_ERR_RUNTIME, "cxla_context_set_communicator: %s", err);
  }
  pthread_mutex_lock(&ctx->rt_mu);
  cx_transport *old = ctx->transport;
  ctx->transport = t;
  ctx->own_comm = t != NULL;
  pthread_mutex_unlock(&ctx->rt_mu);
  destroy(old);
  return CXLA_OK;
}

cxla_status cxla_context_device(cxla_context *ctx, int *device, int *ndevices) {
  if (!ctx || !device || !ndevices) return CXLA_ERR_INVALID_ARGUMENT;
  *device = 0;
  *ndevices = 1;
  pthread_mutex_lock(&ctx->rt_mu);
  if (ctx->transport) {
    *device = ctx->transport->rank;
    *ndevices = ctx->transport->size;
  }
  int have = ctx->transport != NULL;
  pthread_mutex_unlock(&ctx->rt_mu);
  int rank, size;
  if (!have && launched(&rank, &size) && size > 1) {
    *device = rank;
    *ndevices = size;
  }
  return CXLA_OK;
}

#endif
