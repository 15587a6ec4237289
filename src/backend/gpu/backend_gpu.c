/* backend_gpu.c — `--backend=gpu`: compile (cx_gpu_build's PTX for the newest target the
 * GPU can run, JIT-compiled by its driver) and the executable's device resources. With no
 * driver or no GPU, compiling fails with CXLA_ERR_DEVICE and a message saying which.
 * `--backend=gpu-emu` is the same backend over the emulated driver (emu.h), loading the
 * kernels' LLVM IR instead of their PTX. */
#include <stdio.h>
#include <string.h>
#include "backend/backend.h"
#include "backend/gpu/emu.h"
#include "backend/gpu/gpu_graph.h"
#include "backend/gpu/gpu_state.h"

static void gpu_destroy(void *state) {
  gpu_state *st = state;
  if (!st) return;
  cx_gpu_device *d = st->device;
  if (d && st->cu->CtxPushCurrent(d->cuctx) == 0) {
    /* the device's stream may still run this executable's kernels */
    st->cu->StreamSynchronize(d->stream);
    for (int i = 0; st->consts && st->consts_got && i < st->prog.bufs.nslots; i++)
      cx_gpu_free(d, st->consts[i], st->consts_got[i]);
    cx_gpu_free(d, st->arena, st->arena_got);
    cx_gpu_free(d, st->scratch, st->scratch_got);
    cx_gpu_gemm_unload(st);
    cx_gpu_fft_unload(st);
    cx_gpu_conv_unload(st);
    cx_gpu_linalg_unload(st);
    cx_gpu_host_linalg_unload(st);
    cx_gpu_graph_unload(st);
    if (st->mod) st->cu->ModuleUnload(st->mod);
    CUcontext c;
    st->cu->CtxPopCurrent(&c);
  }
  cx_gpu_device_unref(d);
  cx_free(st->fns);
  cx_free(st->param_base);
  cx_free(st->consts);
  cx_free(st->consts_got);
  cx_gpu_prog_free(&st->prog);
  pthread_mutex_destroy(&st->mu);
  cx_free(st);
}

/* device 0's PTX target (and the GPU's name for the log line) */
static cxla_status pick_target(cxla_context *ctx, gpu_state *st, cx_nvptx_arch *arch, char *name, int len) {
  const cx_cuda *cu = st->cu;
  int n = 0, major = 0, minor = 0;
  CUresult r = cu->DeviceGetCount(&n);
  if (r) return cx_cuda_error(ctx, cu, r, "cuDeviceGetCount");
  if (n < 1) return cx_error(ctx, CXLA_ERR_DEVICE, "gpu backend: the CUDA driver sees no GPU");
  CUdevice dev;
  if ((r = cu->DeviceGet(&dev, 0)) || (r = cu->DeviceGetAttribute(&major, CX_CU_ATTR_CC_MAJOR, dev)) ||
      (r = cu->DeviceGetAttribute(&minor, CX_CU_ATTR_CC_MINOR, dev)))
    return cx_cuda_error(ctx, cu, r, "querying GPU 0");
  if (cu->DeviceGetName(name, len, dev)) snprintf(name, (size_t)len, "GPU 0");
  const char *why = NULL;
  if (cx_nvptx_pick(major, minor, cu->driver_version, arch, &why))
    return cx_error(ctx, CXLA_ERR_DEVICE, "gpu backend: %s: %s", name, why);
  return CXLA_OK;
}

/* the driver's JIT compiles the PTX for this GPU; its error log goes into the message */
static cxla_status load(cxla_context *ctx, gpu_state *st) {
  const cx_cuda *cu = st->cu;
  static _Thread_local char log[4096];
  log[0] = 0;
  int opts[2] = {CX_CU_JIT_ERROR_LOG_BUFFER, CX_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[2] = {log, (void *)(uintptr_t)sizeof log};
  CUresult r = cu->ModuleLoadDataEx(&st->mod, st->prog.ptx, 2, opts, vals);
  if (r) {
    cx_cuda_error(ctx, cu, r, "loading the PTX (cuModuleLoadDataEx)");
    return cx_error(ctx, CXLA_ERR_DEVICE, "gpu backend: the driver could not JIT-compile the PTX for %s: %.3000s",
                    st->prog.arch.sm, log);
  }
  const cx_gpu_prog *p = &st->prog;
  st->fns = cx_calloc((size_t)p->nkernels + 1, sizeof *st->fns);
  st->consts = cx_calloc((size_t)p->bufs.nslots + 1, sizeof *st->consts);
  st->consts_got = cx_calloc((size_t)p->bufs.nslots + 1, sizeof *st->consts_got);
  if (!st->fns || !st->consts || !st->consts_got) return cx_oom(ctx);
  for (int i = 0; i < p->nkernels; i++)
    if ((r = cu->ModuleGetFunction(&st->fns[i], st->mod, p->kernels[i]))) return cx_cuda_error(ctx, cu, r, p->kernels[i]);
  int synced = 0;
  for (int i = 0; i < p->bufs.nslots; i++) { /* constants live on the device for the executable's life */
    const cx_slot *sl = &p->bufs.slots[i];
    if (sl->kind != CX_SLOT_CONST || sl->size <= 0) continue;
    CX_TRY(cx_gpu_alloc(ctx, st->device, (size_t)sl->size, &st->consts[i], &st->consts_got[i]));
    /* a cached block may still be read by kernels queued before it was freed: the copy below
     * is not ordered with the device's stream */
    if (!synced++ && (r = cu->StreamSynchronize(st->device->stream))) return cx_cuda_error(ctx, cu, r, "cuStreamSynchronize");
    if ((r = cu->MemcpyHtoD(st->consts[i], sl->constant->data, (size_t)sl->size)))
      return cx_cuda_error(ctx, cu, r, "cuMemcpyHtoD (constants)");
  }
  if (p->scratch_size > 0) CX_TRY(cx_gpu_alloc(ctx, st->device, (size_t)p->scratch_size, &st->scratch, &st->scratch_got));
  if (p->bufs.arena_size > 0) CX_TRY(cx_gpu_alloc(ctx, st->device, (size_t)p->bufs.arena_size, &st->arena, &st->arena_got));
  CX_TRY(cx_gpu_gemm_load(ctx, st));
  CX_TRY(cx_gpu_linalg_load(ctx, st)); /* a missing library is refused here, naming it, not mid-run */
  CX_TRY(cx_gpu_host_linalg_load(ctx, st));
  CX_TRY(cx_gpu_graph_load(ctx, st));
  CX_TRY(cx_gpu_conv_load(ctx, st));
  return cx_gpu_fft_load(ctx, st);
}

static cxla_status compile_state(cxla_context *ctx, cx_module *m, const cx_flags *flags, gpu_state *st,
                                 const cx_device_mem *mem, cx_stats *stats) {
  cx_nvptx_arch arch;
  char name[128];
  CX_TRY(pick_target(ctx, st, &arch, name, (int)sizeof name));
  CX_TRY(cx_gpu_device_get(ctx, st->cu, mem, &st->device));
  st->tf32 = flags->gpu_tf32;
  st->max_loop_iterations = flags->max_loop_iterations;
  /* loops and conditionals as CUDA graphs: a driver with conditional nodes, unless turned off */
  unsigned graphs = flags->gpu_graphs && st->cu->driver_version >= CX_CU_GRAPHS_DRIVER && st->cu->GraphCreate ? CX_GPU_GRAPHS : 0;
  CX_TRY(cx_gpu_build(ctx, m, flags, &arch, st->build_mode | graphs, &st->prog));
  const cx_comp *e = st->prog.m->entry;
  if (!(st->param_base = cx_calloc((size_t)e->nparams + 1, sizeof *st->param_base))) return cx_oom(ctx);
  for (int p = 0; p < e->nparams; p++) st->param_base[p + 1] = st->param_base[p] + cx_shape_leaf_count(&e->params[p]->shape);
  st->nparam_leaves = st->param_base[e->nparams];
  CUresult r = st->cu->CtxPushCurrent(st->device->cuctx);
  if (r) return cx_cuda_error(ctx, st->cu, r, "cuCtxPushCurrent");
  cxla_status s = load(ctx, st);
  CUcontext c;
  st->cu->CtxPopCurrent(&c);
  /* which target ran where: a GPU newer than cxla runs the newest PTX cxla knows */
  cx_sb_printf(&stats->counts,
               "gpu=\"%s\" ptx_target=%s ptx_isa=%d.%d kernels=%d kernels_reused=%d gemms=%d solver_calls=%d solver_batched=%d host_linalg=%d ffts=%d cudnn_convs=%d "
               "conv_fallbacks=%d loops_counted=%d loops_graph=%d conds_graph=%d ",
               name, arch.sm, arch.ptx / 10, arch.ptx % 10, st->prog.nkernels, st->prog.nreused, st->prog.ngemms, st->prog.nlinalg,
               st->prog.nlinalg_batched, st->prog.nhost_linalg,
               st->prog.nffts, st->prog.nconvs_dnn, st->prog.nconv_fallbacks, st->prog.nloops_known, st->prog.nloops_graph,
               st->prog.nconds_graph);
  /* why cuDNN declined the first convolution it did not take (the emitter computes those) */
  if (st->prog.nconv_fallbacks) cx_sb_printf(&stats->counts, "conv_fallback=\"%s\" ", st->prog.conv_fallback);
  return s;
}

static cxla_status compile_on(cxla_context *ctx, cx_module *m, const cx_flags *flags, void **state, cx_stats *stats,
                              const cx_cuda *cu, cxla_status s, unsigned mode, const cx_device_mem *mem) {
  *state = NULL;
  gpu_state *st = s == CXLA_OK ? cx_calloc(1, sizeof *st) : NULL;
  if (s == CXLA_OK && !st) s = cx_oom(ctx);
  if (s != CXLA_OK) {
    cx_module_free(m);
    return s;
  }
  st->cu = cu;
  st->build_mode = mode;
  pthread_mutex_init(&st->mu, NULL);
  s = compile_state(ctx, m, flags, st, mem, stats);
  if (!st->prog.m) cx_module_free(m); /* cx_gpu_build owns it once called */
  if (s != CXLA_OK) {
    gpu_destroy(st);
    return s;
  }
  *state = st;
  return CXLA_OK;
}

/* ---- device memory: buffers of either backend live on its (emulated) GPU ---- */

static const cx_device_mem gpu_mem, emu_mem;

/* a pointer the context's slot keeps alive: no reference of the caller's */
static cxla_status device_borrowed(cxla_context *ctx, const cx_cuda *cu, const cx_device_mem *mem, void **out) {
  cx_gpu_device *d;
  CX_TRY(cx_gpu_device_get(ctx, cu, mem, &d));
  cx_gpu_device_unref(d);
  *out = d;
  return CXLA_OK;
}
static cxla_status gpu_device(cxla_context *ctx, void **out) {
  const cx_cuda *cu = NULL;
  *out = NULL;
  CX_TRY(cx_cuda_get(ctx, &cu));
  return device_borrowed(ctx, cu, &gpu_mem, out);
}
static cxla_status emu_device(cxla_context *ctx, void **out) { return device_borrowed(ctx, cx_cuda_emu(), &emu_mem, out); }
static void retain(void *device) { cx_gpu_device_ref(device); }
static void *device_of(void *state) { return ((gpu_state *)state)->device; }
static cxla_status gpu_stats(cxla_context *ctx, cx_mem_stats *out) {
  const cx_cuda *cu = NULL;
  CX_TRY(cx_cuda_get(ctx, &cu));
  return cx_gpu_mem_stats(ctx, cu, &gpu_mem, out);
}
static cxla_status emu_stats(cxla_context *ctx, cx_mem_stats *out) { return cx_gpu_mem_stats(ctx, cx_cuda_emu(), &emu_mem, out); }

static const cx_device_mem gpu_mem = {
  .device = gpu_device, .upload = cx_gpu_upload, .download = cx_gpu_download, .clone = cx_gpu_clone, .retain = retain, .release = cx_gpu_value_release,
  .device_of = device_of, .execute = cx_gpu_execute_dev, .stats = gpu_stats};
static const cx_device_mem emu_mem = {
  .device = emu_device, .upload = cx_gpu_upload, .download = cx_gpu_download, .clone = cx_gpu_clone, .retain = retain, .release = cx_gpu_value_release,
  .device_of = device_of, .execute = cx_gpu_execute_dev, .stats = emu_stats};

static cxla_status gpu_compile(cxla_context *ctx, cx_module *m, const cx_flags *flags, void **state, cx_stats *stats) {
  const cx_cuda *cu = NULL;
  cxla_status s = cx_cuda_get(ctx, &cu);
  return compile_on(ctx, m, flags, state, stats, cu, s, 0, &gpu_mem);
}

static cxla_status emu_compile(cxla_context *ctx, cx_module *m, const cx_flags *flags, void **state, cx_stats *stats) {
  return compile_on(ctx, m, flags, state, stats, cx_cuda_emu(), CXLA_OK, CX_GPU_LLVM_IMAGE, &emu_mem);
}

static const cx_module *gpu_compiled(void *state) { return ((gpu_state *)state)->prog.m; }

/* Temporaries: the arena, the scratch of long sorts and the libraries' workspaces (cuBLASLt,
 * cuSOLVER, cuFFT, cuDNN's with the repacked filters), each made once when the executable is
 * loaded; code: what the driver was given (gpu-emu: the kernels' LLVM IR text). */
static void gpu_footprint(void *state, cxla_footprint *out) {
  gpu_state *st = state;
  out->temp_bytes = st->prog.bufs.arena_size + st->prog.scratch_size + (int64_t)st->lt_workspace_size +
                    (int64_t)st->la_ws_size + (int64_t)st->fft_ws_size + (int64_t)st->dnn_ws_size;
  out->alias_bytes = cx_buffers_alias_bytes(&st->prog.bufs);
  out->code_bytes = st->prog.ptx ? (int64_t)strlen(st->prog.ptx) : 0;
}

const cx_backend cx_backend_gpu = {.name = "gpu", .compile = gpu_compile, .execute = cx_gpu_execute,
                                   .destroy = gpu_destroy, .needs_device = 1, .mem = &gpu_mem,
                                   .footprint = gpu_footprint, .compiled = gpu_compiled};

/* needs_device although it needs none: it refuses what the gpu backend refuses (dots,
 * control flow, ...), so the suites that run every backend on everything leave it to its own
 * (test_gpu_emu.c) */
const cx_backend cx_backend_gpu_emu = {.name = "gpu-emu", .compile = emu_compile, .execute = cx_gpu_execute,
                                       .destroy = gpu_destroy, .needs_device = 1, .mem = &emu_mem,
                                       .footprint = gpu_footprint, .compiled = gpu_compiled};
