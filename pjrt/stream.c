/* stream.c — the client's executions, run in order by one thread: PJRT_LoadedExecutable_Execute
 * queues a job and returns its outputs with pending ready events (execute.c); the thread runs
 * each job under the client's lock, gives each output its value (or the job's error) and
 * completes their events.
 *
 * What the queue owes the caller's thread, under the stream's mutex:
 *  - an argument is counted in `uses` from the call until its job has run, so deleting or
 *    destroying it meanwhile only marks it, and the thread lets go of it afterwards (a
 *    destroyed buffer's struct too): a job never reads freed memory, and the caller never waits
 *    to delete;
 *  - a pending output counts its own job as a use, so it is kept the same way until defined;
 *  - a call that reads a value (to host, a pointer, a copy) first waits for the buffer's ready
 *    event (cx_pjrt_buffer_await); an execution on the calling thread (the cpu device's by
 *    default, any with host callbacks or --pjrt-async=off) first drains the queue. */
#include <stdlib.h>
#include <string.h>

#include "pjrt_internal.h"

void cx_pjrt_stream_init(cx_pjrt_stream *s) {
  pthread_mutex_init(&s->m, NULL);
  pthread_cond_init(&s->cv, NULL);
}

void cx_pjrt_job_free(cx_pjrt_job *j) {
  if (!j) return;
  cx_pjrt_executable_release(j->e);
  free(j->in);
  free(j->consumed);
  free(j->keep);
  free(j->out);
  free(j->scratch);
  free(j);
}

cx_pjrt_job *cx_pjrt_job_new(PJRT_Executable *e, PJRT_Buffer *const *in, size_t n) {
  cx_pjrt_job *j = calloc(1, sizeof *j);
  if (!j) return NULL;
  cx_pjrt_executable_retain(e);
  j->e = e;
  j->n = n;
  size_t nout = (size_t)e->noutputs, cap = n + nout + 1;
  j->in = calloc(n + 1, sizeof *j->in);
  j->consumed = calloc(n + 1, 1);
  j->keep = calloc(n + 1, 1);
  j->out = calloc(nout + 1, sizeof *j->out);
  /* settle's four lists, then the results' cxla buffers: nothing to allocate once it has run */
  j->scratch = calloc(4 * cap + nout + 1, sizeof(void *));
  if (!j->in || !j->consumed || !j->keep || !j->out || !j->scratch) {
    cx_pjrt_job_free(j);
    return NULL;
  }
  if (n) memcpy(j->in, in, n * sizeof *in);
  return j;
}

/* What a finished job leaves to do outside the mutex: events to complete, buffers to let go
 * of, structs to free. */
typedef struct settled {
  PJRT_Event **events;
  int nevents;
  cxla_buffer **drop;
  PJRT_Event **host_done;
  int ndrop;
  PJRT_Buffer **free;
  int nfree;
} settled;

/* Under the mutex: b is no longer in use by a job. A deleted buffer lets go of its memory, a
 * destroyed one of its struct too (each once: b may be listed twice). */
static void release_use(PJRT_Buffer *b, settled *t) {
  if (--b->uses > 0) return;
  if (b->deleted && (b->buf || b->host_done)) {
    t->drop[t->ndrop] = b->buf;
    t->host_done[t->ndrop++] = b->host_done;
    b->buf = NULL;
    b->host_done = NULL;
  }
  if (b->destroyed) t->free[t->nfree++] = b;
}

/* Gives j's outputs their values (or err), lets go of its arguments, completes the events. */
static void settle(PJRT_Client *c, cx_pjrt_job *j, PJRT_Error *err, cxla_buffer **outs) {
  PJRT_Executable *e = j->e;
  size_t cap = j->n + (size_t)e->noutputs + 1; /* job_new's scratch: four lists this long */
  settled t = {(PJRT_Event **)j->scratch, 0, (cxla_buffer **)j->scratch + cap, (PJRT_Event **)j->scratch + 2 * cap, 0,
               (PJRT_Buffer **)j->scratch + 3 * cap, 0};
  pthread_mutex_lock(&c->stream.m);
  for (int k = 0; k < e->noutputs; k++) {
    PJRT_Buffer *b = j->out[k];
    if (err) b->error = cx_pjrt_error_copy(err);
    else b->buf = outs[k];
    if (b->ready) { /* completed below, outside the mutex: a reference of our own meanwhile */
      cx_pjrt_event_retain(b->ready);
      t.events[t.nevents++] = b->ready;
    }
  }
  for (size_t i = 0; i < j->n; i++) release_use(j->in[i], &t);
  for (int k = 0; k < e->noutputs; k++) release_use(j->out[k], &t);
  /* Drained now, before the events' callbacks run: one of them may itself wait for a drain. */
  c->stream.busy = 0;
  pthread_cond_broadcast(&c->stream.cv);
  pthread_mutex_unlock(&c->stream.m);
  for (int k = 0; k < t.nevents; k++) {
    cx_pjrt_event_complete(t.events[k], err ? cx_pjrt_error_copy(err) : NULL);
    cx_pjrt_event_release(t.events[k]);
  }
  if (j->done) {
    cx_pjrt_event_complete(j->done, err ? cx_pjrt_error_copy(err) : NULL);
    cx_pjrt_event_release(j->done);
  }
  for (int k = 0; k < t.ndrop; k++) {
    cxla_buffer_destroy(t.drop[k]);
    if (t.host_done[k]) {
      cx_pjrt_event_complete(t.host_done[k], NULL);
      cx_pjrt_event_release(t.host_done[k]);
    }
  }
  for (int k = 0; k < t.nfree; k++) cx_pjrt_buffer_free(t.free[k]);
  if (err) /* what a failed run made before it failed */
    for (int k = 0; k < e->noutputs; k++) cxla_buffer_destroy(outs[k]);
}

static void *stream_main(void *arg) {
  PJRT_Client *c = arg;
  cx_pjrt_stream *s = &c->stream;
  pthread_mutex_lock(&s->m);
  for (;;) {
    while (!s->head && !s->stop) pthread_cond_wait(&s->cv, &s->m);
    cx_pjrt_job *j = s->head;
    if (!j) break; /* stopped, nothing left */
    s->head = j->next;
    if (!s->head) s->tail = NULL;
    s->busy = 1;
    pthread_mutex_unlock(&s->m);
    cxla_buffer **outs = (cxla_buffer **)j->scratch + 4 * (j->n + (size_t)j->e->noutputs + 1);
    cx_pjrt_lock(c);
    PJRT_Error *err = cx_pjrt_run(c, j, outs);
    cx_pjrt_unlock(c);
    settle(c, j, err, outs);
    cx_pjrt_error_free(err);
    cx_pjrt_lock(c); /* its executable's last reference may go: that uses the context */
    cx_pjrt_job_free(j);
    cx_pjrt_unlock(c);
    pthread_mutex_lock(&s->m);
  }
  pthread_mutex_unlock(&s->m);
  return NULL;
}

PJRT_Error *cx_pjrt_stream_push(PJRT_Client *c, cx_pjrt_job *j) {
  cx_pjrt_stream *s = &c->stream;
  pthread_mutex_lock(&s->m);
  if (!s->started) {
    if (pthread_create(&s->thread, NULL, stream_main, c) != 0) {
      pthread_mutex_unlock(&s->m);
      return cx_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                           "PJRT_LoadedExecutable_Execute: cannot start the execution thread (--pjrt-async=off runs "
                           "on the calling thread)");
    }
    s->started = 1;
  }
  j->next = NULL;
  if (s->tail) s->tail->next = j;
  else s->head = j;
  s->tail = j;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->m);
  return NULL;
}

void cx_pjrt_stream_drain(PJRT_Client *c) {
  cx_pjrt_stream *s = &c->stream;
  pthread_mutex_lock(&s->m);
  while (s->head || s->busy) pthread_cond_wait(&s->cv, &s->m);
  pthread_mutex_unlock(&s->m);
}

void cx_pjrt_stream_destroy(PJRT_Client *c) {
  cx_pjrt_stream *s = &c->stream;
  pthread_mutex_lock(&s->m);
  s->stop = 1;
  pthread_cond_broadcast(&s->cv);
  int started = s->started;
  pthread_mutex_unlock(&s->m);
  if (started) pthread_join(s->thread, NULL); /* it runs what is queued first */
  pthread_cond_destroy(&s->cv);
  pthread_mutex_destroy(&s->m);
}
