/* transport_local.c — the devices of a run as threads of one process (--replicas=N,
 * cxla_executable_execute_replicas). An exchange is a rendezvous of every device: each posts
 * what it sends, all meet, each copies what it receives straight out of its peers' buffers,
 * and all meet again before anyone may reuse a buffer. So every device takes part in every
 * exchange, as the transport contract says, and nothing is copied twice.
 *
 * A device that fails (cx_transport_ops.fail) or does not arrive within the timeout breaks
 * the world: every device waiting now, or arriving later, gets an error naming it instead of
 * waiting for ever. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include "core/transport_local.h"

typedef struct local_world local_world;

typedef struct local_dev {
  cx_transport t;       /* first: a cx_transport * is a local_dev * */
  local_world *w;
  const cx_xfer *sends; /* posted for the current exchange */
  int nsend;
  int64_t arrivals;     /* rendezvous this device reached */
} local_dev;

struct local_world {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int n, arrived;
  int64_t generation;   /* rendezvous completed */
  int broken;
  int breaker;          /* the device that failed, or that gave up waiting */
  char why[400];        /* what broke it */
  local_dev *devs;
};

/* Waits (mu held) until every device has reached this rendezvous. -1 if the world is or gets
 * broken, or the deadline passes (which breaks it, naming the devices that did not come). */
static int rendezvous(local_dev *d, double timeout_s, char *err, size_t errlen) {
  local_world *w = d->w;
  int64_t gen = w->generation;
  d->arrivals++;
  if (!w->broken && ++w->arrived == w->n) {
    w->arrived = 0;
    w->generation++;
    pthread_cond_broadcast(&w->cv);
    return 0;
  }
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  double whole = timeout_s > 0 ? (double)(int64_t)timeout_s : 0;
  until.tv_sec += (time_t)whole;
  until.tv_nsec += (long)((timeout_s - whole) * 1e9);
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000L;
  }
  while (!w->broken && w->generation == gen) {
    int rc = timeout_s > 0 ? pthread_cond_timedwait(&w->cv, &w->mu, &until) : pthread_cond_wait(&w->cv, &w->mu);
    if (rc == ETIMEDOUT && !w->broken && w->generation == gen) {
      size_t k = (size_t)snprintf(w->why, sizeof w->why, "timed out after %g s (--collective-timeout) waiting for device",
                                  timeout_s);
      for (int i = 0, first = 1; i < w->n && k < sizeof w->why; i++)
        if (w->devs[i].arrivals < d->arrivals) {
          k += (size_t)snprintf(w->why + k, sizeof w->why - k, "%s %d", first ? "" : ",", i);
          first = 0;
        }
      w->broken = 1;
      w->breaker = d->t.rank;
      pthread_cond_broadcast(&w->cv);
      snprintf(err, errlen, "%s", w->why);
      return -1;
    }
  }
  if (w->generation != gen) return 0;
  snprintf(err, errlen, "%s", w->why);
  return -1;
}

static int local_exchange(cx_transport *t, const cx_xfer *sends, int nsend, const cx_xfer *recvs, int nrecv,
                          double timeout_s, char *err, size_t errlen) {
  local_dev *d = (local_dev *)t;
  local_world *w = d->w;
  pthread_mutex_lock(&w->mu);
  d->sends = sends;
  d->nsend = nsend;
  int rc = rendezvous(d, timeout_s, err, errlen);
  pthread_mutex_unlock(&w->mu);
  /* Every device has posted and none may go on until the second rendezvous: the posted lists
   * and buffers hold still, and the mutex made them visible. */
  for (int j = 0; j < nrecv && rc == 0; j++) {
    const local_dev *p = recvs[j].peer >= 0 && recvs[j].peer < w->n ? &w->devs[recvs[j].peer] : NULL;
    int nth = 0; /* blocks between one pair arrive in the order listed */
    for (int k = 0; k < j; k++) nth += recvs[k].peer == recvs[j].peer;
    const cx_xfer *s = NULL;
    for (int k = 0; p && k < p->nsend && !s; k++)
      if (p->sends[k].peer == t->rank && nth-- == 0) s = &p->sends[k];
    if (!s || s->bytes != recvs[j].bytes) {
      snprintf(err, errlen, "device %d sent %s to device %d (a program that is not the same on every device?)",
               recvs[j].peer, s ? "a block of another size" : "nothing", t->rank);
      rc = -1;
      break;
    }
    if (s->bytes) memcpy(recvs[j].buf, s->buf, s->bytes);
  }
  pthread_mutex_lock(&w->mu);
  if (rc != 0 && !w->broken) {
    w->broken = 1;
    w->breaker = t->rank;
    snprintf(w->why, sizeof w->why, "device %d failed: %s", t->rank, err);
    pthread_cond_broadcast(&w->cv);
  }
  char late[400];
  int rc2 = rendezvous(d, timeout_s, rc ? late : err, rc ? sizeof late : errlen);
  pthread_mutex_unlock(&w->mu);
  return rc ? rc : rc2;
}

static void local_fail(cx_transport *t, const char *why) {
  local_dev *d = (local_dev *)t;
  local_world *w = d->w;
  pthread_mutex_lock(&w->mu);
  if (!w->broken) {
    w->broken = 1;
    w->breaker = t->rank;
    snprintf(w->why, sizeof w->why, "device %d: %s", t->rank, why);
    pthread_cond_broadcast(&w->cv);
  }
  pthread_mutex_unlock(&w->mu);
}

static const cx_transport_ops k_local = {.exchange = local_exchange, .fail = local_fail};

cx_transport **cx_local_transports(int n) {
  local_world *w = cx_calloc(1, sizeof *w);
  local_dev *devs = cx_calloc((size_t)(n > 0 ? n : 1), sizeof *devs);
  cx_transport **ts = cx_calloc((size_t)(n > 0 ? n : 1), sizeof *ts);
  if (!w || !devs || !ts || n < 1) {
    cx_free(w);
    cx_free(devs);
    cx_free(ts);
    return NULL;
  }
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->cv, NULL);
  w->n = n;
  w->devs = devs;
  for (int i = 0; i < n; i++) {
    devs[i].t = (cx_transport){&k_local, i, n};
    devs[i].w = w;
    ts[i] = &devs[i].t;
  }
  return ts;
}

int cx_local_broken(cx_transport *const *ts, char *why, size_t n) {
  local_world *w = ((local_dev *)ts[0])->w;
  pthread_mutex_lock(&w->mu);
  int who = w->broken ? w->breaker : -1;
  if (who >= 0) snprintf(why, n, "%s", w->why);
  pthread_mutex_unlock(&w->mu);
  return who;
}

void cx_local_transports_free(cx_transport **ts) {
  if (!ts) return;
  local_world *w = ((local_dev *)ts[0])->w;
  pthread_mutex_destroy(&w->mu);
  pthread_cond_destroy(&w->cv);
  cx_free(w->devs);
  cx_free(w);
  cx_free(ts);
}
