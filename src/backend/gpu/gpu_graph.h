/* gpu_graph.h — loops and conditionals as CUDA graphs with conditional nodes, so that a loop
 * whose trip count the compiler does not know, or a conditional, runs without the host reading
 * its predicate or branch index back (as XLA's GPU command buffers do). A WHILE becomes a
 * WHILE node and a COND one IF node per branch; a one-thread control kernel, captured before
 * each node, reads the predicate or index from device memory and sets the node's condition
 * with the device runtime's cudaGraphSetConditional (resolved by the driver's JIT).
 * --max-loop-iterations: the control kernel counts a loop's trips in device memory; past the
 * limit it stops every loop of the execution and writes which loop overran, which the host
 * reads once after the execution. */
#ifndef CX_GPU_GRAPH_H
#define CX_GPU_GRAPH_H
#include "backend/gpu/gpu_run.h"

/* At build time (CX_GPU_GRAPHS): marks the loops and conditionals that can run as graphs
 * (step.graph: their steps are only kernels, copies, loops and conditionals; a library call
 * (cuBLASLt, cuSOLVER, cuFFT) keeps the read-back path), numbers their loops' trip counters
 * (step.ctl) and adds the control kernel to mod (prog.graph_kernel). */
cxla_status cx_gpu_graph_plan(cxla_context *ctx, cx_gpu_prog *p, LLVMModuleRef mod);

/* With the module's context current: the control memory and the capture stream (nothing when
 * no step is marked). */
cxla_status cx_gpu_graph_load(cxla_context *ctx, gpu_state *st);
void cx_gpu_graph_unload(gpu_state *st);

/* 1 when step s runs as a graph in this execution (marked, loaded, and no --trace: a trace
 * times every step with events, which the read-back path keeps). */
int cx_gpu_graph_usable(const cx_gpu_run *r, const cx_gpu_step *s);
/* Queues construct i (a WHILE or COND step) as its graph: captured and instantiated the first
 * time, again when a parameter or result leaf moved since. */
cxla_status cx_gpu_graph_run(cx_gpu_run *r, int i);
/* After the execution's steps: when a graph ran under --max-loop-iterations, waits for the
 * stream and fails as the read-back path does if a loop went past the limit. */
cxla_status cx_gpu_graph_check(cx_gpu_run *r);

#endif
