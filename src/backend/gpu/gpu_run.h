/* gpu_run.h — one execution in progress on the GPU (gpu_exec.c), as gpu_graph.c sees it: the
 * executable, the stream its steps go to, and where every parameter and result leaf is. */
#ifndef CX_GPU_RUN_H
#define CX_GPU_RUN_H
#include "backend/gpu/gpu_state.h"
#include "core/trace.h"

typedef struct cx_gpu_run {
  gpu_state *st;
  cxla_context *ctx;
  CUstream stream;
  CUdeviceptr *params, *outs;   /* per parameter leaf / result leaf */
  cx_trace *trace;              /* with --trace: events[i] is recorded before step i, [nsteps] after */
  CUevent *events;
  int graph_ran;                /* a CUDA graph with loops ran (gpu_graph.c checks its limit) */
} cx_gpu_run;

/* The device address of slot `slot` in this execution (scratch slots past the assignment's). */
CUdeviceptr cx_gpu_run_slot(const cx_gpu_run *r, int slot);
/* Queues one step that is not a loop or conditional on r->stream. */
cxla_status cx_gpu_run_step(cx_gpu_run *r, const cx_gpu_step *s);
/* gpu_host.c: an INFEED, OUTFEED or CALLBACK step (the host's side of it, in program order) */
cxla_status cx_gpu_host_run(cx_gpu_run *r, const cx_gpu_step *s);

#endif
