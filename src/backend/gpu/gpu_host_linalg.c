/* gpu_host_linalg.c — the LAPACK custom-calls no NVIDIA library computes as the target defines
 * them (gpu_build.c's k_lapack says why for each): a HOST_LA step copies its operands from the
 * device on the executable's stream, waits for the stream, runs the cpu backend's routine
 * (rt/lapack.c's cx_rt_linalg, the code the cpu backend's JIT calls, so the results, layouts
 * and info words are the cpu's), and queues the copies of its results back. The host waits in
 * the middle of the execution, as a ragged-dot's group sizes or cholesky's info words make it
 * wait; a loop holding one takes the read-back path (gpu_graph.c captures no library step). */
#include <string.h>
#include "backend/gpu/gpu_state.h"

enum { ALIGN = 64 };

static size_t up(size_t x) { return (x + ALIGN - 1) / ALIGN * ALIGN; }
static size_t slot_bytes(const cx_gpu_prog *p, int slot) {
  return slot >= 0 && slot < p->bufs.nslots && p->bufs.slots[slot].size > 0 ? (size_t)p->bufs.slots[slot].size : 0;
}

/* the host bytes a step needs: every result and operand leaf in a region of its own (a result
 * computed in its operand's device memory still gets both, as the cpu routine copies) */
static size_t step_bytes(const cx_gpu_prog *p, const cx_gpu_step *s) {
  size_t n = 0;
  for (int i = 0; i < s->nargs; i++) n += up(slot_bytes(p, s->slots[i]));
  return n;
}

cxla_status cx_gpu_host_linalg_load(cxla_context *ctx, gpu_state *st) {
  const cx_gpu_prog *p = &st->prog;
  size_t need = 0;
  for (int i = 0; i < p->nsteps; i++)
    if (p->steps[i].kind == CX_GPU_HOST_LA && step_bytes(p, &p->steps[i]) > need) need = step_bytes(p, &p->steps[i]);
  if (!need) return CXLA_OK;
  if (!(st->host_la = cx_malloc(need))) return cx_oom(ctx);
  st->host_la_size = need;
  return CXLA_OK;
}

void cx_gpu_host_linalg_unload(gpu_state *st) {
  cx_free(st->host_la);
  st->host_la = NULL, st->host_la_size = 0;
}

cxla_status cx_gpu_host_linalg_run(cxla_context *ctx, gpu_state *st, int step, CUstream stream, const CUdeviceptr *ptrs) {
  const cx_gpu_prog *p = &st->prog;
  const cx_gpu_step *s = &p->steps[step];
  const cx_cuda *cu = st->cu;
  enum { MAX_ARGS = 16 };
  void *bufs[MAX_ARGS];
  int nout = p->bufs.nleaves[s->in->id];
  if (s->nargs > MAX_ARGS || nout > s->nargs || step_bytes(p, s) > st->host_la_size)
    return cx_error(ctx, CXLA_ERR_INTERNAL, "gpu backend: %s: a host step of %d buffers", s->in->name, s->nargs);
  char *at = st->host_la;
  CUresult e = 0;
  for (int i = 0; i < s->nargs; i++) {
    size_t bytes = slot_bytes(p, s->slots[i]);
    bufs[i] = at;
    if (i >= nout && bytes && !e) e = cu->MemcpyDtoHAsync(at, ptrs[i], bytes, stream);
    at += up(bytes);
  }
  if (!e) e = cu->StreamSynchronize(stream);
  if (e) return cx_cuda_error(ctx, cu, e, "copying a host step's operands (cuMemcpyDtoHAsync)");
  const char *name = s->in->name ? s->in->name : "linalg";
  cx_rt rt = {.ctx = ctx, .names = &name};
  cx_rt_linalg(&rt, &s->la, bufs, 0);
  if (rt.status != CXLA_OK) return cx_error(ctx, rt.status, "gpu backend: %s", rt.errmsg);
  for (int i = 0; i < nout; i++) {
    size_t bytes = slot_bytes(p, s->slots[i]);
    /* pageable memory: the call returns once the bytes are staged, so the next step may reuse them */
    if (bytes && (e = cu->MemcpyHtoDAsync(ptrs[i], bufs[i], bytes, stream)))
      return cx_cuda_error(ctx, cu, e, "copying a host step's results (cuMemcpyHtoDAsync)");
  }
  return CXLA_OK;
}
