/* emu.h — the grid emulation behind `--backend=gpu-emu`: the gpu backend with its driver
 * swapped for one that runs on the host. Everything above the driver table (gpu_build.c's
 * kernels and steps, gpu_exec.c's arena, constants and launch grid) is the gpu backend's own
 * code; only cuda.c's libcuda is replaced:
 *   emu_driver.c  the driver table: memory is host heap blocks, copies are memcpy (checked
 *                 against the allocations), a stream runs in order, a launch calls the kernel
 *                 once per (block, thread) of the grid in a scrambled order;
 *   emu_module.c  "module load": the image is the optimised LLVM IR the PTX would be made
 *                 from, compiled for the host with the cpu backend's JIT after two rewrites:
 *                 the PTX special registers (tid, ntid, ctaid, ...) read the emulated
 *                 thread's coordinates, and every global-memory access is checked against
 *                 the live device allocations first (a kernel out of bounds is an error,
 *                 CUDA_ERROR_ILLEGAL_ADDRESS, naming the kernel, thread and address). */
#ifndef CX_GPU_EMU_H
#define CX_GPU_EMU_H
#include <stdint.h>
#include "backend/gpu/cuda.h"

/* The emulated driver (one per process). */
const cx_cuda *cx_cuda_emu(void);
/* The emulated GPU's memory for cuMemAlloc, in bytes (0, the default: as much as the host
 * gives): past it cuMemAlloc is CUDA_ERROR_OUT_OF_MEMORY, as on a full GPU (tests). */
void cx_emu_set_memory_limit(size_t bytes);
/* Bytes cuMemAlloc has handed out and not taken back, in the whole process. */
size_t cx_emu_memory_allocated(void);

/* ---- between emu_driver.c and emu_module.c ---- */

/* A kernel's launch entry: unpacks cuLaunchKernel's params array and calls the kernel. */
typedef void (*cx_emu_entry)(void **params);

enum { CX_EMU_MAX_PARAMS = 260 }; /* the emitter's kernels have at most CX_EMIT_MAX_ARGS + 1 */

typedef struct cx_emu_fn { /* a CUfunction */
  cx_emu_entry entry;
  char name[64];
  int warp;               /* it shuffles: a warp's lanes run as cooperating contexts */
  int nparams;            /* its parameters and their sizes (a captured launch copies them) */
  unsigned short param_bytes[CX_EMU_MAX_PARAMS];
} cx_emu_fn;

typedef struct cx_emu_module cx_emu_module;
/* Compiles the IR text for the host; 0, or -1 with the reason in log. Registers the module's
 * global arrays as device memory (the kernels may read them). */
int cx_emu_module_load(const char *ir, cx_emu_module **out, char *log, size_t loglen);
void cx_emu_module_free(cx_emu_module *m);
/* Kernel `name` (owned by m), or NULL. */
const cx_emu_fn *cx_emu_module_function(const cx_emu_module *m, const char *name);

/* Device memory ranges the kernels may touch (emu_driver.c keeps the table). */
int cx_emu_range_add(const void *base, size_t bytes);
void cx_emu_range_remove(const void *base);
/* 1 if [p, p+bytes) lies inside one live range (what the emulated libraries check: they
 * compute at the call, so every stream's queued copies run first). */
int cx_emu_device_ok(CUdeviceptr p, size_t bytes);
/* The same check alone (what a queued copy makes when it runs). */
int cx_emu_device_live(CUdeviceptr p, size_t bytes);
/* The message cuGetErrorString gives this thread for CUDA_ERROR_ILLEGAL_ADDRESS. */
void cx_emu_fault(const char *why);

/* ---- emu_stream.c: streams, events and pinned host memory ----
 * Kernels, device copies and memsets run when issued; host<->device copies are queued on
 * their stream and run when something needs them (the stream's next immediate operation, a
 * synchronisation, a stream waiting for an event after them), so a missing wait or a reuse of
 * staging memory too early gives wrong results or a sticky error. */
CUresult cx_emu_stream_create(CUstream *s, unsigned flags);
CUresult cx_emu_stream_destroy(CUstream s);
/* s is live; runs what s queued (the caller's work then comes after it); its sticky error */
CUresult cx_emu_stream_begin(CUstream s);
CUresult cx_emu_stream_sync(CUstream s);
CUresult cx_emu_stream_wait_event(CUstream s, CUevent e, unsigned flags);
/* every stream's queue run (a schedule the GPU could have taken) */
void cx_emu_streams_settle(void);
CUresult cx_emu_htod_async(CUdeviceptr dst, const void *src, size_t bytes, CUstream s);
CUresult cx_emu_dtoh_async(void *dst, CUdeviceptr src, size_t bytes, CUstream s);
CUresult cx_emu_event_create(CUevent *e, unsigned flags);
CUresult cx_emu_event_record(CUevent e, CUstream s);
CUresult cx_emu_event_query(CUevent e);
CUresult cx_emu_event_sync(CUevent e);
CUresult cx_emu_event_elapsed(float *ms, CUevent a, CUevent b);
CUresult cx_emu_event_destroy(CUevent e);
CUresult cx_emu_mem_host_alloc(void **p, size_t bytes, unsigned flags);
CUresult cx_emu_mem_free_host(void *p);
CUresult cx_emu_pointer_attribute(void *data, int attr, CUdeviceptr p);
/* 1 if [p, p+bytes) lies inside one block of pinned host memory */
int cx_emu_pinned_ok(const void *p, size_t bytes);
/* Pinned host memory cuMemHostAlloc may hand out (0, the default: as much as the host gives);
 * past it CUDA_ERROR_OUT_OF_MEMORY (tests); and how much it has handed out now. */
void cx_emu_set_pinned_limit(size_t bytes);
size_t cx_emu_pinned_allocated(void);

/* What the rewritten kernels call: the value of special register `which` (cx_emu_sreg_names'
 * index) for the emulated thread, and the check of one global-memory access. */
uint32_t cx_emu_sreg(uint32_t which);
void cx_emu_access(const void *p, uint64_t bytes, uint32_t store);
/* shfl.sync.bfly.b32: the value `v` of lane (this lane xor lane_mask), every lane of the warp
 * taking part (member_mask must be the full warp, clamp 0x1f: what the emitter writes). */
uint32_t cx_emu_shfl_bfly(uint32_t member_mask, uint32_t v, uint32_t lane_mask, uint32_t clamp);
extern const char *const cx_emu_sreg_names[]; /* NULL-terminated: "tid.x", ... */

/* The driver version the emulation reports (default 12040, which runs conditional nodes):
 * tests set an older one to see the gpu backend fall back to reading predicates back. */
void cx_emu_set_driver_version(int version);

/* ---- emu_graph.c: CUDA graphs, stream capture into them, conditional nodes ----
 * A graph is its nodes in the order they were added, which is how they run: cxla adds them as
 * one chain (each node's dependency the node before), and a dependency on a node that is not
 * earlier in the same graph is refused. Capture is per host thread (the emulated streams are
 * one handle): while a thread captures, its kernel launches, device-to-device copies and
 * memsets become nodes, and calls that would wait for the stream or the host fail with
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, as on the driver. */
int cx_emu_capturing(void);
CUresult cx_emu_capture_kernel(const cx_emu_fn *fn, const unsigned grid[3], const unsigned block[3], void **params);
CUresult cx_emu_capture_copy(CUdeviceptr dst, CUdeviceptr src, size_t bytes);
CUresult cx_emu_capture_memset(CUdeviceptr dst, unsigned char value, size_t n);
/* the device runtime's cudaGraphSetConditional, which the kernels call */
void cx_emu_graph_set_conditional(uint64_t handle, uint32_t value);
/* the driver table's entry points (cuda.h's cx_cuda) */
CUresult cx_emu_graph_create(CUgraph *g, unsigned flags);
CUresult cx_emu_graph_destroy(CUgraph g);
CUresult cx_emu_graph_instantiate(CUgraphExec *e, CUgraph g, unsigned long long flags);
CUresult cx_emu_graph_exec_destroy(CUgraphExec e);
/* cuGraphExecUpdate_v2: g must match e's graph node for node (kinds, kernels' functions,
 * copies' sizes, conditional nodes' types and body counts, recursively; grids, addresses,
 * arguments and handles may differ), else CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE with the
 * driver's result code in info; then e runs g (which must outlive it here, as the graph
 * instantiated must) */
CUresult cx_emu_graph_exec_update(CUgraphExec e, CUgraph g, cx_cu_graph_update_info *info);
/* graphs instantiated and executables updated so far in the process (tests) */
void cx_emu_graph_counts(long *instantiated, long *updated);
CUresult cx_emu_graph_launch(CUgraphExec e, CUstream s);
CUresult cx_emu_graph_handle_create(CUgraphConditionalHandle *h, CUgraph g, CUcontext c, unsigned dflt, unsigned flags);
CUresult cx_emu_graph_add_node(CUgraphNode *n, CUgraph g, const CUgraphNode *deps, const void *edge_data, size_t ndeps,
                               cx_cu_graph_node_params *params);
CUresult cx_emu_capture_begin(CUstream s, CUgraph g, const CUgraphNode *deps, const void *edge_data, size_t ndeps,
                              int mode);
CUresult cx_emu_capture_end(CUstream s, CUgraph *g);
CUresult cx_emu_capture_info(CUstream s, int *status, unsigned long long *id, CUgraph *g, const CUgraphNode **deps,
                             const void **edge_data, size_t *ndeps);

/* ---- emu_math.c ---- */

/* An NVVM math intrinsic (as libdevice's code calls them) and the host function of the same
 * signature that the rewritten kernels call instead, under jit_name. */
typedef struct cx_emu_math_fn {
  const char *intrinsic, *jit_name;
  void *fn;
} cx_emu_math_fn;
extern const cx_emu_math_fn cx_emu_math_fns[]; /* ends with a NULL intrinsic */
/* The same for inline PTX: `intrinsic` is the assembly text as cx_emu_asm_key writes it. */
extern const cx_emu_math_fn cx_emu_asm_fns[];
/* text[0..n) without its spaces, tabs and newlines, into key (truncated to keylen). */
void cx_emu_asm_key(const char *text, size_t n, char *key, size_t keylen);

/* ---- emu_warp.c ---- */

/* A warp's lane contexts and stacks, made once per launch (NULL: out of memory). */
typedef struct cx_emu_warp cx_emu_warp;
cx_emu_warp *cx_emu_warp_new(void);
void cx_emu_warp_free(cx_emu_warp *w);
/* Runs one warp of fn (nlanes <= 32 threads) as cooperating contexts; enter(arg, lane) is
 * called before a lane runs or resumes (it sets the lane's special registers). 0; 1 when a
 * lane faulted (cx_emu_access wrote the message); -1 with why when the lanes misuse a
 * shuffle. */
int cx_emu_warp_run(cx_emu_warp *w, const cx_emu_fn *fn, void **params, int nlanes, void (*enter)(void *arg, int lane),
                    void *arg, char *why, size_t whylen);
/* In a warp run: parks the calling lane for good as faulted (does not return). 0 otherwise. */
int cx_emu_warp_fault(void);

#endif
