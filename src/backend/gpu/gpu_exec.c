/* gpu_exec.c — one execution on the GPU: every step (kernel launches, cuBLASLt calls,
 * device-to-device copies, loops and conditionals) on the device's stream with every value in
 * device memory. Arguments on the device are read in place, those on the host copied in; the
 * result stays on the device in memory from the device's cache (or, for a leaf computed in a
 * donated argument, in that argument's memory). */
#include <string.h>
#include "backend/gpu/gpu_graph.h"
#include "backend/gpu/gpu_run.h"
#include "backend/gpu/gpu_state.h"
#include "core/context.h"
#include "core/trace.h"
#include "ir/custom_call.h"
#include "ir/literal.h"

/* The trace's thread id of GPU 0's stream (CPU threads are numbered from 1). */
enum { GPU_TRACE_TID = 1000 };

typedef cx_gpu_run run;

static CUdeviceptr slot_ptr(const run *r, int i) {
  const cx_gpu_prog *p = &r->st->prog;
  if (i >= p->bufs.nslots) return r->st->scratch + (CUdeviceptr)p->scratch_off[i - p->bufs.nslots];
  const cx_slot *sl = &p->bufs.slots[i];
  switch (sl->kind) {
  case CX_SLOT_TEMP: return r->st->arena + (CUdeviceptr)sl->offset;
  case CX_SLOT_PARAM: return r->params[r->st->param_base[sl->param] + sl->leaf];
  case CX_SLOT_OUTPUT: return r->outs[sl->leaf];
  case CX_SLOT_CONST: return r->st->consts[i];
  }
  return 0;
}

static cxla_status step(run *r, const cx_gpu_step *s) {
  const cx_cuda *cu = r->st->cu;
  CUresult e;
  if (s->kind == CX_GPU_COPY) {
    int64_t bytes = r->st->prog.bufs.slots[s->dst].size;
    e = cu->MemcpyDtoDAsync(slot_ptr(r, s->dst), slot_ptr(r, s->src), (size_t)bytes, r->stream);
    return e ? cx_cuda_error(r->ctx, cu, e, "cuMemcpyDtoDAsync") : CXLA_OK;
  }
  if (s->kind == CX_GPU_GEMM)
    return cx_gpu_gemm_run(r->ctx, r->st, (int)(s - r->st->prog.steps), r->stream, slot_ptr(r, s->slots[0]),
                           slot_ptr(r, s->slots[1]), slot_ptr(r, s->slots[2]));
  enum { MAX_ARGS = 256 }; /* the emitter's kernels take at most CX_EMIT_MAX_ARGS pointers */
  if (s->kind == CX_GPU_FFT)
    return cx_gpu_fft_run(r->ctx, r->st, (int)(s - r->st->prog.steps), r->stream, slot_ptr(r, s->slots[0]),
                          slot_ptr(r, s->slots[1]));
  if (s->kind == CX_GPU_CONV) {
    CUdeviceptr ptrs[3] = {slot_ptr(r, s->slots[0]), slot_ptr(r, s->slots[1]), slot_ptr(r, s->slots[2])};
    return cx_gpu_conv_run(r->ctx, r->st, (int)(s - r->st->prog.steps), r->stream, ptrs);
  }
  if (s->kind == CX_GPU_INFEED || s->kind == CX_GPU_OUTFEED || s->kind == CX_GPU_CALLBACK) return cx_gpu_host_run(r, s);
  if (s->kind == CX_GPU_LINALG || s->kind == CX_GPU_RAGGED || s->kind == CX_GPU_HOST_LA) {
    CUdeviceptr ptrs[16];
    if (s->nargs > 16) return cx_error(r->ctx, CXLA_ERR_INTERNAL, "gpu backend: %d library arguments", s->nargs);
    for (int i = 0; i < s->nargs; i++) ptrs[i] = slot_ptr(r, s->slots[i]);
    int at = (int)(s - r->st->prog.steps);
    return s->kind == CX_GPU_LINALG ? cx_gpu_linalg_run(r->ctx, r->st, at, r->stream, ptrs)
           : s->kind == CX_GPU_HOST_LA ? cx_gpu_host_linalg_run(r->ctx, r->st, at, r->stream, ptrs)
                                    : cx_gpu_ragged_run(r->ctx, r->st, at, r->stream, ptrs);
  }
  if (s->total <= 0) return CXLA_OK;
  CUdeviceptr ptrs[MAX_ARGS];
  void *argv[MAX_ARGS + 1];
  if (s->nargs > MAX_ARGS) return cx_error(r->ctx, CXLA_ERR_INTERNAL, "gpu backend: %d kernel arguments", s->nargs);
  for (int i = 0; i < s->nargs; i++) {
    ptrs[i] = slot_ptr(r, s->slots[i]);
    argv[i] = &ptrs[i];
  }
  int64_t total = s->total;
  argv[s->nargs] = &total;
  unsigned block, grid;
  cx_gpu_grid(total / (s->vec > 1 ? s->vec : 1), &block, &grid);
  e = cu->LaunchKernel(r->st->fns[s->kernel], grid, 1, 1, block, 1, 1, 0, r->stream, argv, NULL);
  return e ? cx_cuda_error(r->ctx, cu, e, r->st->prog.kernels[s->kernel]) : CXLA_OK;
}

CUdeviceptr cx_gpu_run_slot(const cx_gpu_run *r, int slot) { return slot_ptr(r, slot); }
cxla_status cx_gpu_run_step(cx_gpu_run *r, const cx_gpu_step *s) { return step(r, s); }

/* ---- kernel times: CUDA events on the stream, placed on the trace's timeline so that the
 * last one ends when the stream was seen to finish ---- */

/* the step after step i's construct (a loop or conditional owns the steps up to its end) */
static int step_end(const cx_gpu_step *s, int i) { return s->kind == CX_GPU_WHILE || s->kind == CX_GPU_COND ? s->end : i + 1; }

static cxla_status events_create(run *r) {
  int n = r->st->prog.nsteps + 1;
  if (!(r->events = cx_calloc((size_t)n, sizeof *r->events))) return cx_oom(r->ctx);
  for (int i = 0; i < n; i++) {
    CUresult e = r->st->cu->EventCreate(&r->events[i], 0);
    if (e) return cx_cuda_error(r->ctx, r->st->cu, e, "cuEventCreate");
  }
  return CXLA_OK;
}

static cxla_status mark(run *r, int i) {
  if (!r->events) return CXLA_OK;
  CUresult e = r->st->cu->EventRecord(r->events[i], r->stream);
  return e ? cx_cuda_error(r->ctx, r->st->cu, e, "cuEventRecord") : CXLA_OK;
}

static cxla_status events_trace(run *r, int64_t done_ns) {
  const cx_cuda *cu = r->st->cu;
  const cx_gpu_prog *p = &r->st->prog;
  float total = 0;
  CUresult e = cu->EventElapsedTime(&total, r->events[0], r->events[p->nsteps]);
  if (e) return cx_cuda_error(r->ctx, cu, e, "cuEventElapsedTime");
  int64_t base = done_ns - (int64_t)((double)total * 1e6);
  for (int i = 0, next; i < p->nsteps; i = next) { /* a loop or conditional is one event */
    next = step_end(&p->steps[i], i);
    float t0 = 0, t1 = 0;
    if ((e = cu->EventElapsedTime(&t0, r->events[0], r->events[i])) ||
        (e = cu->EventElapsedTime(&t1, r->events[0], r->events[next])))
      return cx_cuda_error(r->ctx, cu, e, "cuEventElapsedTime");
    const cx_gpu_step *s = &p->steps[i];
    cx_trace_args a = {0};
    if (s->kind == CX_GPU_WHILE || s->kind == CX_GPU_COND) {
      a = (cx_trace_args){.n = 1, .key = {"steps"}, .val = {next - i - 1}};
    } else if (s->kind == CX_GPU_GEMM) {
      const cx_gemm_plan *g = &s->gemm;
      a = (cx_trace_args){.n = 4, .key = {"m", "n", "k", "batch"}, .val = {g->m, g->n, g->k, g->batch}};
    } else if (s->kind == CX_GPU_LINALG) {
      a = (cx_trace_args){.n = 3, .key = {"batch", "m", "n"}, .val = {s->la.batch, s->la.m, s->la.n}};
    } else if (s->kind == CX_GPU_HOST_LA) { /* the cpu's LAPACK routine between copies, and why */
      int t = cx_cc_target_of(s->in);
      const char *why = t < 0 ? NULL : cx_gpu_lapack_host_reason((int)cx_cc_info_of((cx_cc_target)t)->kind);
      a = (cx_trace_args){.n = 3, .key = {"batch", "m", "n"}, .val = {s->la.batch, s->la.m, s->la.n}, .ns = why ? 1 : 0,
                          .skey = {"why"}, .sval = {why}};
    } else if (s->kind == CX_GPU_RAGGED) {
      a = (cx_trace_args){.n = 1, .key = {"groups"}, .val = {s->ragged[6]}};
    } else if (s->kind == CX_GPU_FFT) {
      int64_t points = s->fft.type == CX_FFT_RFFT ? s->fft.in_dist : s->fft.out_dist;
      a = (cx_trace_args){.n = 2, .key = {"batch", "points"}, .val = {s->fft.batch, points}};
    } else if (s->kind == CX_GPU_CONV) {
      a = (cx_trace_args){.n = 3, .key = {"cudnn_call", "groups", "filter_repacked"},
                          .val = {s->conv.kind, s->conv.groups, s->conv.repack}};
    } else if (s->kind == CX_GPU_INFEED || s->kind == CX_GPU_OUTFEED || s->kind == CX_GPU_CALLBACK) {
      a = (cx_trace_args){.n = 1, .key = {"leaves"}, .val = {s->nargs}};
    } else if (s->kind == CX_GPU_LAUNCH) {
      unsigned block, grid;
      int64_t threads = s->total / (s->vec > 1 ? s->vec : 1);
      cx_gpu_grid(threads, &block, &grid);
      a = (cx_trace_args){.n = 3, .key = {"threads", "block", "grid"}, .val = {threads, block, grid}};
    } else {
      a = (cx_trace_args){.n = 1, .key = {"bytes"}, .val = {p->bufs.slots[s->dst].size}};
    }
    cx_trace_add_on(r->trace, GPU_TRACE_TID, s->in && s->in->name ? s->in->name : "?",
                    s->kind == CX_GPU_COPY ? "copy"
                    : s->kind == CX_GPU_GEMM || s->kind == CX_GPU_LINALG || s->kind == CX_GPU_FFT ||
                             s->kind == CX_GPU_RAGGED || s->kind == CX_GPU_CONV ? "library"
                    : s->kind == CX_GPU_LAUNCH ? "kernel"
                    : s->kind == CX_GPU_HOST_LA ? "host"
                    : s->kind == CX_GPU_INFEED || s->kind == CX_GPU_OUTFEED ? "feed"
                    : s->kind == CX_GPU_CALLBACK ? "callback" : "control", base + (int64_t)((double)t0 * 1e6),
                    base + (int64_t)((double)t1 * 1e6), &a);
  }
  return CXLA_OK;
}

static void events_destroy(run *r) {
  for (int i = 0; r->events && i <= r->st->prog.nsteps; i++)
    if (r->events[i]) r->st->cu->EventDestroy(r->events[i]);
  cx_free(r->events);
  r->events = NULL;
}

/* ---- control flow: as a CUDA graph (gpu_graph.h) where it can, else the host reads the
 * predicate or branch index back and picks the steps ---- */

static cxla_status run_steps(run *r, int begin, int end, int top);

static cxla_status read_selector(run *r, const cx_gpu_step *s, int32_t *v) {
  const cx_cuda *cu = r->st->cu;
  const cx_slot *sl = &r->st->prog.bufs.slots[s->sel];
  uint8_t pred = 0;
  *v = 0;
  CUresult e = cu->StreamSynchronize(r->stream);
  if (!e) e = sl->size == 1 ? cu->MemcpyDtoH(&pred, slot_ptr(r, s->sel), 1) : cu->MemcpyDtoH(v, slot_ptr(r, s->sel), 4);
  if (e) return cx_cuda_error(r->ctx, cu, e, s->kind == CX_GPU_WHILE ? "reading a loop predicate" : "reading a branch index");
  if (sl->size == 1) *v = pred != 0;
  return CXLA_OK;
}

static cxla_status run_loop(run *r, const cx_gpu_step *s, int i) {
  if (cx_gpu_graph_usable(r, s)) return cx_gpu_graph_run(r, i);
  int64_t max = r->st->max_loop_iterations, trips = 0;
  if (s->trips >= 0) { /* known when compiling: the body queued that many times, nothing read back */
    if (max > 0 && s->trips > max)
      return cx_error(r->ctx, CXLA_ERR_RUNTIME, "while loop %s did not finish within %lld iterations "
                      "(--max-loop-iterations)", s->in->name, (long long)max);
    for (int64_t t = 0; t < s->trips; t++) CX_TRY(run_steps(r, s->body, s->end, 0));
    return CXLA_OK;
  }
  for (;;) {
    int32_t go;
    CX_TRY(run_steps(r, i + 1, s->body, 0));
    CX_TRY(read_selector(r, s, &go));
    if (!go) return CXLA_OK;
    if (max > 0 && trips++ >= max) /* as the interpreter: the body may run max times */
      return cx_error(r->ctx, CXLA_ERR_RUNTIME, "while loop %s did not finish within %lld iterations "
                      "(--max-loop-iterations)", s->in->name, (long long)max);
    CX_TRY(run_steps(r, s->body, s->end, 0));
  }
}

/* pred: true runs branch 0, false branch 1; s32: out of range runs the last branch */
static cxla_status run_branch(run *r, const cx_gpu_step *s) {
  if (cx_gpu_graph_usable(r, s)) return cx_gpu_graph_run(r, (int)(s - r->st->prog.steps));
  int32_t k;
  CX_TRY(read_selector(r, s, &k));
  if (r->st->prog.bufs.slots[s->sel].size == 1) k = k ? 0 : 1;
  else if (k < 0 || k >= s->nbranch) k = s->nbranch - 1;
  return run_steps(r, s->slots[k], s->slots[k + 1], 0);
}

/* steps [begin, end); top: the execution's own steps, each between two trace events */
static cxla_status run_steps(run *r, int begin, int end, int top) {
  const cx_gpu_step *steps = r->st->prog.steps;
  for (int i = begin; i < end; i = step_end(&steps[i], i)) {
    if (top) CX_TRY(mark(r, i));
    const cx_gpu_step *s = &steps[i];
    CX_TRY(s->kind == CX_GPU_WHILE ? run_loop(r, s, i) : s->kind == CX_GPU_COND ? run_branch(r, s) : step(r, s));
  }
  return CXLA_OK;
}

/* Where each parameter leaf is: an argument on the device is read in place; one on the host
 * is copied into a value of its own (tmp[p], released after the execution). */
static cxla_status place_params(run *r, int nargs, const cx_dev_arg *args, cx_dev_value **tmp, cx_dev_value **src) {
  gpu_state *st = r->st;
  for (int p = 0; p < nargs; p++) {
    cx_dev_value *v = args[p].dev;
    if (!v) {
      CX_TRY(cx_gpu_upload(r->ctx, st->device, args[p].host, &tmp[p]));
      v = tmp[p];
    }
    src[p] = v;
    if (v->nleaves != st->param_base[p + 1] - st->param_base[p])
      return cx_error(r->ctx, CXLA_ERR_INTERNAL, "gpu backend: argument %d does not match the compiled signature", p);
    for (int k = 0; k < v->nleaves; k++) r->params[st->param_base[p] + k] = v->addr[k];
  }
  return CXLA_OK;
}

/* The result: fresh leaves from the device's cache, except those buffer assignment computes
 * in a donated parameter's memory, which move from the argument to the result. */
static cxla_status make_result(run *r, cx_dev_value **src, cx_dev_value **out) {
  gpu_state *st = r->st;
  const cx_buffers *b = &st->prog.bufs;
  unsigned char *taken = cx_calloc((size_t)b->noutputs + 1, 1);
  if (!taken) return cx_oom(r->ctx);
  for (int i = 0; i < b->nslots; i++)
    if (b->slots[i].kind == CX_SLOT_PARAM && b->slots[i].out_leaf >= 0) taken[b->slots[i].out_leaf] = 1;
  cxla_status s = cx_gpu_value_new(r->ctx, st->device, &st->prog.m->entry->root->shape, taken, out);
  for (int i = 0; i < b->nslots && s == CXLA_OK; i++) {
    const cx_slot *sl = &b->slots[i];
    if (sl->kind != CX_SLOT_PARAM || sl->out_leaf < 0) continue;
    cx_dev_value *from = src[sl->param];
    (*out)->addr[sl->out_leaf] = from->addr[sl->leaf];
    (*out)->size[sl->out_leaf] = from->size[sl->leaf];
    from->addr[sl->leaf] = 0; /* the argument was donated: its leaf is the result's now */
  }
  cx_free(taken);
  if (s == CXLA_OK) r->outs = (*out)->addr;
  return s;
}

static cxla_status execute_on(run *r, int nargs, const cx_dev_arg *args, cx_dev_value **out) {
  gpu_state *st = r->st;
  const cx_cuda *cu = st->cu;
  cx_dev_value *stack[32] = {0}, *srcs[32] = {0};
  cx_dev_value **tmp = nargs <= 32 ? stack : cx_calloc((size_t)nargs, sizeof *tmp);
  cx_dev_value **src = nargs <= 32 ? srcs : cx_calloc((size_t)nargs, sizeof *src);
  r->params = cx_calloc((size_t)st->nparam_leaves + 1, sizeof *r->params);
  cxla_status s = tmp && src && r->params ? CXLA_OK : cx_oom(r->ctx);
  if (s == CXLA_OK && nargs != st->prog.m->entry->nparams)
    s = cx_error(r->ctx, CXLA_ERR_INTERNAL, "gpu backend: %d arguments for %d parameters", nargs,
                 st->prog.m->entry->nparams);
  if (s == CXLA_OK) s = place_params(r, nargs, args, tmp, src);
  if (s == CXLA_OK) s = make_result(r, src, out);
  if (s == CXLA_OK && r->trace) s = events_create(r);
  if (s == CXLA_OK && st->prog.rng_bytes) { /* every execution counts an rng's runs from 0 (interp/rng.c) */
    CUresult z = cu->MemsetD8Async(st->scratch + (CUdeviceptr)st->prog.rng_off, 0, (size_t)st->prog.rng_bytes, r->stream);
    if (z) s = cx_cuda_error(r->ctx, cu, z, "zeroing the rng run counters (cuMemsetD8Async)");
  }
  if (s == CXLA_OK) s = run_steps(r, 0, st->prog.nsteps, 1);
  if (s == CXLA_OK) s = mark(r, st->prog.nsteps);
  if (s == CXLA_OK) s = cx_gpu_graph_check(r); /* --max-loop-iterations in a graph's loops */
  /* what this execution used is before this marker: an upload into its memory waits for it */
  if (s == CXLA_OK) s = cx_gpu_mark(r->ctx, st->device);
  /* Results stay on the device, ordered on its stream before anything that reads them; only a
   * trace (kernel times) waits here. */
  CUresult e = s == CXLA_OK && r->events ? cu->StreamSynchronize(r->stream) : 0;
  if (e) s = cx_cuda_error(r->ctx, cu, e, "running the kernels (cuStreamSynchronize)");
  if (s == CXLA_OK && r->events) s = events_trace(r, cx_trace_now());
  events_destroy(r);
  for (int p = 0; tmp && p < nargs; p++) cx_gpu_value_release(tmp[p]);
  if (tmp != stack) cx_free(tmp);
  if (src != srcs) cx_free(src);
  cx_free(r->params);
  if (s != CXLA_OK) {
    cx_gpu_value_release(*out);
    *out = NULL;
  }
  return s;
}

cxla_status cx_gpu_execute_dev(void *state, cxla_context *ctx, int nargs, const cx_dev_arg *args, cx_dev_value **out) {
  gpu_state *st = state;
  *out = NULL;
  run r = {.st = st, .ctx = ctx, .trace = cx_context_trace(ctx), .stream = st->device->stream};
  pthread_mutex_lock(&st->mu); /* the arena is shared by every execution */
  CUresult e = st->cu->CtxPushCurrent(st->device->cuctx);
  cxla_status s = e ? cx_cuda_error(ctx, st->cu, e, "cuCtxPushCurrent") : CXLA_OK;
  if (s == CXLA_OK) {
    s = execute_on(&r, nargs, args, out);
    CUcontext c;
    st->cu->CtxPopCurrent(&c);
  }
  pthread_mutex_unlock(&st->mu);
  return s;
}

cxla_status cx_gpu_execute(void *state, cxla_context *ctx, int nargs, cxla_literal *const *args, cxla_literal **out) {
  gpu_state *st = state;
  *out = NULL;
  cx_dev_arg stack[32] = {{0}}, *a = nargs <= 32 ? stack : cx_calloc((size_t)nargs, sizeof *a);
  if (!a) return cx_oom(ctx);
  for (int i = 0; i < nargs; i++) a[i] = (cx_dev_arg){.host = args[i]};
  cx_dev_value *v = NULL;
  cxla_status s = cx_gpu_execute_dev(st, ctx, nargs, a, &v);
  if (a != stack) cx_free(a);
  cxla_literal *res = s == CXLA_OK ? cx_literal_new_uninit(&v->shape) : NULL;
  if (s == CXLA_OK && !res) s = cx_oom(ctx);
  if (s == CXLA_OK) s = cx_gpu_download(ctx, v, res);
  cx_gpu_value_release(v);
  if (s != CXLA_OK) {
    cxla_literal_destroy(res);
    return s;
  }
  *out = res;
  return CXLA_OK;
}
