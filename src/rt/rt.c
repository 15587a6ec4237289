/* rt.c — the functions JIT code calls (rt/rt.h) besides the library routines: parallel_for
 * over the pool, interpreter fallback, trace spans; and what the routines share (names,
 * failures, trace arguments). A failure anywhere sets rt->status once; every later call of
 * that execution then returns at once, so the sequencer needs no error branches and checks
 * rt->status after its entry function returns. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "rt/rt.h"
#include "rt/threadpool.h"
#include "core/context.h"
#include "core/trace.h"
#include "ir/metadata.h"
#include "util/util.h"

cx_threadpool *cx_rt_pool_create(int nthreads) {
  /* OpenBLAS's kernels, and OpenBLAS on one thread (rt/blas_core.c): cxla splits GEMMs over
   * this pool itself (gemm.c, conv_chunks.c). With OpenBLAS's threads as well there were twice
   * as many threads as cores, and its idle workers, which spin in sched_yield long after a
   * GEMM, took the cores from the pool's kernels. The setting is process-wide. */
  cx_rt_blas_tune();
  return cx_threadpool_create(nthreads);
}

const char *cx_rt_name(const cx_rt *rt, int32_t id, const char *dflt) {
  return rt->names && id >= 0 && rt->names[id] ? rt->names[id] : dflt;
}

void cx_rt_fail(cx_rt *rt, cxla_status s, const char *fmt, ...) {
  if (rt->status != CXLA_OK) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rt->errmsg, sizeof rt->errmsg, fmt, ap);
  va_end(ap);
  rt->status = s;
}

cx_trace_args cx_rt_origin_args(const cx_rt *rt, int32_t id) {
  cx_trace_args a = {0};
  const cx_origin *o = rt->origins && id >= 0 ? &rt->origins[id] : NULL;
  if (o && o->op_name[0]) a.skey[a.ns] = "op_name", a.sval[a.ns++] = o->op_name;
  if (o && o->source[0]) a.skey[a.ns] = "source", a.sval[a.ns++] = o->source;
  return a;
}

void cx_rt_parallel_for(cx_rt *rt, cx_kernel_fn fn, void **args, int64_t total, int64_t grain, int32_t id) {
  if (rt->status != CXLA_OK) return;
  if (rt->ctx) cx_context_set_activity(rt->ctx, "running", cx_rt_name(rt, id, "kernel"));
  if (!rt->trace) {
    cx_threadpool_parallel_for(rt->pool, fn, args, total, grain);
    return;
  }
  int64_t t0 = cx_trace_now();
  const char *name = cx_rt_name(rt, id, "kernel");
  cx_trace_args a = cx_rt_origin_args(rt, id);
  int64_t chunks = cx_threadpool_parallel_for_traced(rt->pool, fn, args, total, grain, rt->trace, name, &a);
  a.n = 2, a.key[0] = "iterations", a.val[0] = total, a.key[1] = "chunks", a.val[1] = chunks;
  cx_trace_add(rt->trace, name, "kernel", t0, cx_trace_now(), &a);
}

/* The second phase of a split kernel: its iterations start at `from`. */
typedef struct shifted {
  cx_kernel_fn fn;
  void **args;
  int64_t from;
} shifted;

static void run_shifted(void **a, int64_t begin, int64_t end) {
  const shifted *sh = a[0];
  sh->fn(sh->args, sh->from + begin, sh->from + end);
}

void cx_rt_parallel_parts(cx_rt *rt, cx_kernel_fn fn, void **args, int64_t parts, int64_t parts_grain,
                          int64_t total, int64_t grain, int32_t id) {
  if (rt->status != CXLA_OK) return;
  const char *name = cx_rt_name(rt, id, "kernel");
  if (rt->ctx) cx_context_set_activity(rt->ctx, "running", name);
  shifted sh = {fn, args, parts};
  void *sa[1] = {&sh};
  int64_t t0 = rt->trace ? cx_trace_now() : 0;
  cx_trace_args a = rt->trace ? cx_rt_origin_args(rt, id) : (cx_trace_args){0};
  int64_t chunks = cx_threadpool_parallel_for_traced(rt->pool, fn, args, parts, parts_grain, rt->trace, name, &a);
  chunks += cx_threadpool_parallel_for_traced(rt->pool, run_shifted, sa, total, grain, rt->trace, name, &a);
  if (!rt->trace) return;
  a.n = 2, a.key[0] = "iterations", a.val[0] = parts + total, a.key[1] = "chunks", a.val[1] = chunks;
  cx_trace_add(rt->trace, name, "kernel", t0, cx_trace_now(), &a);
}

/* ---- fallback and spans ---- */

void cx_rt_interp_op(cx_rt *rt, int32_t instr_index, void **args, int32_t id) {
  if (rt->status != CXLA_OK) return;
  const char *name = cx_rt_name(rt, id, "fallback");
  if (!rt->fallback) {
    cx_rt_fail(rt, CXLA_ERR_INTERNAL, "%s: no interpreter fallback was provided for this executable", name);
    return;
  }
  int64_t t0 = rt->trace ? cx_trace_now() : 0;
  rt->errmsg[0] = 0;
  int r = rt->fallback(rt->exe, rt->rep, instr_index, args, rt->errmsg, sizeof rt->errmsg);
  if (r != 0) {
    /* A cxla_status passes through; any other non-zero value is a runtime error. */
    rt->status = r > 0 && r <= CXLA_ERR_INTERNAL ? (cxla_status)r : CXLA_ERR_RUNTIME;
    if (!rt->errmsg[0]) snprintf(rt->errmsg, sizeof rt->errmsg, "%s: interpreter fallback failed", name);
  }
  if (rt->trace) {
    cx_trace_args ta = cx_rt_origin_args(rt, id);
    ta.n = 1, ta.key[0] = "instruction", ta.val[0] = instr_index;
    cx_trace_add(rt->trace, name, "fallback", t0, cx_trace_now(), &ta);
  }
}

/* The sequencer brackets copies and control flow; copies are named "copy..." by it. */
void cx_rt_trace_begin(cx_rt *rt, int32_t id) {
  /* Recorded even after a failure, so that begin/end pairs always match. */
  if (!rt->trace) return;
  const char *name = cx_rt_name(rt, id, "step");
  cx_trace_begin(rt->trace, name, strncmp(name, "copy", 4) ? "control" : "copy");
}

void cx_rt_trace_end(cx_rt *rt, int32_t id) {
  (void)id;
  if (rt->trace) cx_trace_end(rt->trace);
}
