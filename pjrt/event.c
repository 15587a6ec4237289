/* event.c — PJRT_Event. Most events are born complete; the exceptions are an output's ready
 * event and an execution's device-complete event, completed by the client's stream when the
 * execution has run (stream.c), and a zero-copy buffer's done-with-host-buffer event,
 * completed when the buffer lets go of the caller's memory, which may be long after the call.
 * Callbacks registered before then run at completion, on the completing thread. */
#include <stdlib.h>

#include "pjrt_internal.h"

typedef struct {
  PJRT_Event_OnReadyCallback fn;
  void *arg;
} cx_event_cb;

struct PJRT_Event {
  pthread_mutex_t m;
  pthread_cond_t cv;
  int refs;
  int ready;
  PJRT_Error *error;
  cx_event_cb *cbs;
  int ncbs, capcbs;
};

PJRT_Event *cx_pjrt_event_new(int ready, PJRT_Error *error) {
  PJRT_Event *ev = calloc(1, sizeof *ev);
  if (!ev) {
    cx_pjrt_error_free(error);
    return NULL;
  }
  pthread_mutex_init(&ev->m, NULL);
  pthread_cond_init(&ev->cv, NULL);
  ev->refs = 1;
  ev->ready = ready;
  ev->error = error;
  return ev;
}

void cx_pjrt_event_retain(PJRT_Event *ev) {
  pthread_mutex_lock(&ev->m);
  ev->refs++;
  pthread_mutex_unlock(&ev->m);
}

void cx_pjrt_event_release(PJRT_Event *ev) {
  if (!ev) return;
  pthread_mutex_lock(&ev->m);
  int last = --ev->refs == 0;
  pthread_mutex_unlock(&ev->m);
  if (!last) return;
  cx_pjrt_error_free(ev->error);
  free(ev->cbs);
  pthread_cond_destroy(&ev->cv);
  pthread_mutex_destroy(&ev->m);
  free(ev);
}

void cx_pjrt_event_complete(PJRT_Event *ev, PJRT_Error *error) {
  pthread_mutex_lock(&ev->m);
  if (ev->ready) {
    pthread_mutex_unlock(&ev->m);
    cx_pjrt_error_free(error);
    return;
  }
  ev->ready = 1;
  ev->error = error;
  cx_event_cb *cbs = ev->cbs;
  int n = ev->ncbs;
  ev->cbs = NULL;
  ev->ncbs = ev->capcbs = 0;
  pthread_cond_broadcast(&ev->cv);
  pthread_mutex_unlock(&ev->m);
  /* Outside the lock: a callback may destroy the event's last other handle. Each callback
   * owns its own copy of the error. */
  for (int i = 0; i < n; i++) cbs[i].fn(cx_pjrt_error_copy(error), cbs[i].arg);
  free(cbs);
}

PJRT_Error *cx_PJRT_Event_Destroy(PJRT_Event_Destroy_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Event_Destroy_Args, event);
  cx_pjrt_event_release(args->event);
  return NULL;
}

#define NEED_EVENT(args, name)                                                                \
  if (!(args)->event) return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, name ": NULL event")

PJRT_Error *cx_PJRT_Event_IsReady(PJRT_Event_IsReady_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Event_IsReady_Args, is_ready);
  NEED_EVENT(args, "PJRT_Event_IsReady");
  pthread_mutex_lock(&args->event->m);
  args->is_ready = args->event->ready != 0;
  pthread_mutex_unlock(&args->event->m);
  return NULL;
}

PJRT_Error *cx_pjrt_event_wait(PJRT_Event *ev) {
  pthread_mutex_lock(&ev->m);
  while (!ev->ready) pthread_cond_wait(&ev->cv, &ev->m);
  PJRT_Error *e = cx_pjrt_error_copy(ev->error);
  pthread_mutex_unlock(&ev->m);
  return e;
}

PJRT_Error *cx_PJRT_Event_Error(PJRT_Event_Error_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Event_Error_Args, event);
  NEED_EVENT(args, "PJRT_Event_Error");
  return cx_pjrt_event_wait(args->event);
}

PJRT_Error *cx_PJRT_Event_Await(PJRT_Event_Await_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Event_Await_Args, event);
  NEED_EVENT(args, "PJRT_Event_Await");
  return cx_pjrt_event_wait(args->event);
}

PJRT_Error *cx_PJRT_Event_OnReady(PJRT_Event_OnReady_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Event_OnReady_Args, user_arg);
  NEED_EVENT(args, "PJRT_Event_OnReady");
  if (!args->callback) return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Event_OnReady: NULL callback");
  PJRT_Event *ev = args->event;
  pthread_mutex_lock(&ev->m);
  if (!ev->ready) {
    if (ev->ncbs == ev->capcbs) {
      int cap = ev->capcbs ? 2 * ev->capcbs : 4;
      cx_event_cb *n = realloc(ev->cbs, (size_t)cap * sizeof *n);
      if (!n) {
        pthread_mutex_unlock(&ev->m);
        return cx_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "PJRT_Event_OnReady: out of memory");
      }
      ev->cbs = n;
      ev->capcbs = cap;
    }
    ev->cbs[ev->ncbs++] = (cx_event_cb){args->callback, args->user_arg};
    pthread_mutex_unlock(&ev->m);
    return NULL;
  }
  PJRT_Error *e = cx_pjrt_error_copy(ev->error);
  pthread_mutex_unlock(&ev->m);
  args->callback(e, args->user_arg);
  return NULL;
}
