/* trace.h — Chrome trace ("Trace Event Format", JSON object form) of compile phases and of
 * every kernel, library, fallback and copy call. Loadable by Perfetto and chrome://tracing.
 *
 * Events are complete ("ph":"X") events with ts/dur in microseconds of CLOCK_MONOTONIC, the
 * process id, and a small per-OS-thread id (1 for the first thread that records anything).
 * Recording appends to one mutex-protected vector (an event is a few words; names are interned
 * so the executable that named them may be gone when the file is written). The file is written
 * in one go by cx_trace_write (the context does it when destroyed, and the CLI before that to
 * report errors), so it is complete, valid JSON whenever it exists. */
#ifndef CX_TRACE_H
#define CX_TRACE_H
#include <stdint.h>
#include "util/util.h"

typedef struct cx_trace cx_trace;

/* Most events kept; later ones are counted in "otherData": {"dropped_events": N}. */
#define CX_TRACE_MAX_EVENTS (1 << 20)

/* Up to four integer and two string arguments shown in the event's "args" (keys are static
 * strings; string values are copied). */
typedef struct cx_trace_args {
  int n;
  const char *key[4];
  int64_t val[4];
  int ns;
  const char *skey[2];
  const char *sval[2];
} cx_trace_args;

/* A trace that cx_trace_write will write to `path` (copied). NULL when memory runs out. */
cx_trace *cx_trace_create(const char *path);
void cx_trace_destroy(cx_trace *t);

/* CLOCK_MONOTONIC in nanoseconds (the clock of every event). */
int64_t cx_trace_now(void);
/* Records a complete event [t0, t1) on the calling thread. cat is a static string ("compile",
 * "kernel", "library", "fallback", "copy", "execute"); name is copied. NULL t: no-op. */
void cx_trace_add(cx_trace *t, const char *name, const char *cat, int64_t t0, int64_t t1,
                  const cx_trace_args *args);
/* Same, recorded on the thread whose cx_trace_thread_id() was tid (a worker that timed
 * itself and left the recording to the thread that joined it). */
void cx_trace_add_on(cx_trace *t, int32_t tid, const char *name, const char *cat, int64_t t0, int64_t t1,
                     const cx_trace_args *args);
/* The calling thread's id in traces (no allocation, no lock). */
int32_t cx_trace_thread_id(void);
/* Same with cx_now_ms() timestamps (compile phases are timed that way). */
void cx_trace_add_ms(cx_trace *t, const char *name, const char *cat, double t0_ms, double t1_ms);

/* A begin/end pair on one thread (nested pairs allowed, 64 deep): begin remembers name and
 * start, end records the event. name must stay valid until the matching end. */
void cx_trace_begin(cx_trace *t, const char *name, const char *cat);
void cx_trace_end(cx_trace *t);

/* Events recorded so far (kept ones) and dropped ones. */
int64_t cx_trace_count(cx_trace *t, int64_t *dropped);
/* 1 if events were recorded since the last successful write. */
int cx_trace_dirty(cx_trace *t);
/* Writes {"traceEvents":[...]} to the trace's path; CXLA_ERR_IO "cannot write trace FILE: ..."
 * on failure (message in ctx). */
cxla_status cx_trace_write(cx_trace *t, cxla_context *ctx);

#endif
