/* gpu_exec.c — one execution on the GPU: arguments copied to the device once, every step
 * (kernel launches, device-to-device copies) on one stream with every intermediate value in
 * device memory, the result leaves copied back at the end. */
#include <string.h>
#include "backend/gpu/gpu_state.h"
#include "runtime/context.h"
#include "runtime/trace.h"

/* The trace's thread id of GPU 0's stream (CPU threads are numbered from 1). */
enum { GPU_TRACE_TID = 1000 };

typedef struct run {
  gpu_state *st;
  cxla_context *ctx;
  CUstream stream;
  CUdeviceptr *params, *outs;   /* per parameter leaf / result leaf */
  cx_trace *trace;              /* with --trace: events[i] is recorded before step i, [nsteps] after */
  CUevent *events;
} run;

static int leaf_literals(cxla_literal *l, cxla_literal **out, int *k, int cap) {
  if (l->shape.type == CXLA_TUPLE) {
    for (int i = 0; i < l->nelems; i++)
      if (!leaf_literals(l->elems[i], out, k, cap)) return 0;
    return 1;
  }
  if (!cx_type_is_array(l->shape.type)) return 1;
  if (*k >= cap) return 0;
  out[(*k)++] = l;
  return 1;
}

static CUdeviceptr slot_ptr(const run *r, int i) {
  const cx_slot *sl = &r->st->prog.bufs.slots[i];
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
  if (s->total <= 0) return CXLA_OK;
  enum { MAX_ARGS = 256 }; /* the emitter's kernels take at most CX_EMIT_MAX_ARGS pointers */
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
  cx_gpu_grid(total, &block, &grid);
  e = cu->LaunchKernel(r->st->fns[s->kernel], grid, 1, 1, block, 1, 1, 0, r->stream, argv, NULL);
  return e ? cx_cuda_error(r->ctx, cu, e, r->st->prog.kernels[s->kernel]) : CXLA_OK;
}

/* ---- kernel times: CUDA events on the stream, placed on the trace's timeline so that the
 * last one ends when the stream was seen to finish ---- */

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
  for (int i = 0; i < p->nsteps; i++) {
    float t0 = 0, t1 = 0;
    if ((e = cu->EventElapsedTime(&t0, r->events[0], r->events[i])) ||
        (e = cu->EventElapsedTime(&t1, r->events[0], r->events[i + 1])))
      return cx_cuda_error(r->ctx, cu, e, "cuEventElapsedTime");
    const cx_gpu_step *s = &p->steps[i];
    cx_trace_args a = {0};
    if (s->kind == CX_GPU_GEMM) {
      const cx_gemm_plan *g = &s->gemm;
      a = (cx_trace_args){.n = 4, .key = {"m", "n", "k", "batch"}, .val = {g->m, g->n, g->k, g->batch}};
    } else if (s->kind == CX_GPU_LAUNCH) {
      unsigned block, grid;
      cx_gpu_grid(s->total, &block, &grid);
      a = (cx_trace_args){.n = 3, .key = {"threads", "block", "grid"}, .val = {s->total, block, grid}};
    } else {
      a = (cx_trace_args){.n = 1, .key = {"bytes"}, .val = {p->bufs.slots[s->dst].size}};
    }
    cx_trace_add_on(r->trace, GPU_TRACE_TID, s->in && s->in->name ? s->in->name : "?",
                    s->kind == CX_GPU_COPY ? "copy" : s->kind == CX_GPU_GEMM ? "library" : "kernel", base + (int64_t)((double)t0 * 1e6),
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

static cxla_status alloc_leaves(run *r, cxla_literal **leaves, int n, CUdeviceptr *dev, int upload) {
  const cx_cuda *cu = r->st->cu;
  for (int i = 0; i < n; i++) {
    size_t bytes = (size_t)cx_shape_bytes(&leaves[i]->shape);
    if (!bytes) continue;
    CUresult e = cu->MemAlloc(&dev[i], bytes);
    if (e) return cx_cuda_error(r->ctx, cu, e, "cuMemAlloc");
    if (upload && (e = cu->MemcpyHtoD(dev[i], leaves[i]->data, bytes))) return cx_cuda_error(r->ctx, cu, e, "cuMemcpyHtoD");
  }
  return CXLA_OK;
}

static cxla_status execute_on(run *r, int nargs, cxla_literal *const *args, cxla_literal *res) {
  gpu_state *st = r->st;
  const cx_cuda *cu = st->cu;
  int np = 0, no = 0, nout = st->prog.bufs.noutputs;
  cxla_literal **pl = cx_calloc((size_t)st->nparam_leaves + 1, sizeof *pl), **ol = cx_calloc((size_t)nout + 1, sizeof *ol);
  r->params = cx_calloc((size_t)st->nparam_leaves + 1, sizeof *r->params);
  r->outs = cx_calloc((size_t)nout + 1, sizeof *r->outs);
  cxla_status s = pl && ol && r->params && r->outs ? CXLA_OK : cx_oom(r->ctx);
  for (int i = 0; i < nargs && s == CXLA_OK; i++)
    if (!leaf_literals(args[i], pl, &np, st->nparam_leaves)) s = cx_error(r->ctx, CXLA_ERR_INTERNAL, "argument %d: leaf count", i);
  if (s == CXLA_OK && (np != st->nparam_leaves || !leaf_literals(res, ol, &no, nout) || no != nout))
    s = cx_error(r->ctx, CXLA_ERR_INTERNAL, "gpu backend: arguments or result do not match the compiled signature");
  if (s == CXLA_OK) s = alloc_leaves(r, pl, np, r->params, 1);
  if (s == CXLA_OK) s = alloc_leaves(r, ol, no, r->outs, 0);
  if (s == CXLA_OK && r->trace) s = events_create(r);
  for (int i = 0; i < st->prog.nsteps && s == CXLA_OK; i++) {
    s = mark(r, i);
    if (s == CXLA_OK) s = step(r, &st->prog.steps[i]);
  }
  if (s == CXLA_OK) s = mark(r, st->prog.nsteps);
  CUresult e = s == CXLA_OK ? cu->StreamSynchronize(r->stream) : 0;
  if (e) s = cx_cuda_error(r->ctx, cu, e, "running the kernels (cuStreamSynchronize)");
  if (s == CXLA_OK && r->events) s = events_trace(r, cx_trace_now());
  events_destroy(r);
  for (int i = 0; i < no && s == CXLA_OK; i++) {
    size_t bytes = (size_t)cx_shape_bytes(&ol[i]->shape);
    if (bytes && (e = cu->MemcpyDtoH(ol[i]->data, r->outs[i], bytes))) s = cx_cuda_error(r->ctx, cu, e, "cuMemcpyDtoH");
  }
  for (int i = 0; r->params && i < st->nparam_leaves; i++)
    if (r->params[i]) cu->MemFree(r->params[i]);
  for (int i = 0; r->outs && i < nout; i++)
    if (r->outs[i]) cu->MemFree(r->outs[i]);
  cx_free(pl);
  cx_free(ol);
  cx_free(r->params);
  cx_free(r->outs);
  return s;
}

cxla_status cx_gpu_execute(void *state, cxla_context *ctx, int nargs, cxla_literal *const *args, cxla_literal **out) {
  gpu_state *st = state;
  *out = NULL;
  cxla_literal *res = cx_literal_new_uninit(&st->prog.m->entry->root->shape);
  if (!res) return cx_oom(ctx);
  run r = {.st = st, .ctx = ctx, .trace = cx_context_trace(ctx)};
  pthread_mutex_lock(&st->mu); /* the arena is shared by every execution */
  CUresult e = st->cu->CtxPushCurrent(st->cuctx);
  cxla_status s = e ? cx_cuda_error(ctx, st->cu, e, "cuCtxPushCurrent") : CXLA_OK;
  if (s == CXLA_OK) {
    if ((e = st->cu->StreamCreate(&r.stream, 0))) s = cx_cuda_error(ctx, st->cu, e, "cuStreamCreate");
    if (s == CXLA_OK) s = execute_on(&r, nargs, args, res);
    if (r.stream) st->cu->StreamDestroy(r.stream);
    CUcontext c;
    st->cu->CtxPopCurrent(&c);
  }
  pthread_mutex_unlock(&st->mu);
  if (s != CXLA_OK) {
    cxla_literal_destroy(res);
    return s;
  }
  *out = res;
  return CXLA_OK;
}
