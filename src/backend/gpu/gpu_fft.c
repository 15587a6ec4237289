/* gpu_fft.c — ffts on cuFFT: one plan per fft step, made when the executable is loaded (the
 * batch of contiguous row-major transforms XLA's fft is, cuFFT's own layout), with a work
 * area of the executable's rather than cuFFT's own allocation. cuFFT's inverse transforms
 * are unnormalized, XLA's IFFT and IRFFT divided by the product of fft_length: cuBLAS's scal
 * divides the output. C2R may overwrite its input, which is the operand's buffer: it runs on
 * a copy, kept after the work area. */
#include <string.h>
#include "backend/gpu/gpu_state.h"

static int cufft_type(const cx_gpu_fft *f) {
  switch ((cx_fft_type)f->type) {
  case CX_FFT_RFFT: return f->f64 ? CX_FFT_D2Z : CX_FFT_R2C;
  case CX_FFT_IRFFT: return f->f64 ? CX_FFT_Z2D : CX_FFT_C2R;
  default: return f->f64 ? CX_FFT_Z2Z : CX_FFT_C2C;
  }
}
/* bytes of the step's whole input */
static size_t in_bytes(const cx_gpu_fft *f) {
  size_t part = f->f64 ? 8 : 4;
  return (size_t)(f->in_dist * f->batch) * (f->type == CX_FFT_RFFT ? part : 2 * part);
}

cxla_status cx_gpu_fft_load(cxla_context *ctx, gpu_state *st) {
  const cx_gpu_prog *p = &st->prog;
  if (!p->nffts) return CXLA_OK;
  if (st->build_mode & CX_GPU_LLVM_IMAGE) st->fft = cx_cufft_emu();
  else CX_TRY(cx_cufft_get(ctx, &st->fft));
  const cx_cufft *cf = st->fft;
  if (!(st->fft_plans = cx_malloc(sizeof *st->fft_plans * (size_t)p->nsteps))) return cx_oom(ctx);
  for (int i = 0; i < p->nsteps; i++) st->fft_plans[i] = -1;
  size_t copy = 0;
  for (int i = 0; i < p->nsteps; i++) {
    const cx_gpu_step *s = &p->steps[i];
    if (s->kind != CX_GPU_FFT) continue;
    const cx_gpu_fft *f = &s->fft;
    int plan = -1, n[3] = {f->n[0], f->n[1], f->n[2]};
    size_t work = 0;
    int r = cf->Create(&plan);
    if (r) return cx_cufft_error(ctx, r, "cufftCreate");
    st->fft_plans[i] = plan;
    if ((r = cf->SetAutoAllocation(plan, 0)) ||
        (r = cf->MakePlanMany(plan, f->rank, n, NULL, 1, (int)f->in_dist, NULL, 1, (int)f->out_dist, cufft_type(f),
                              (int)f->batch, &work)))
      return cx_cufft_error(ctx, r, s->in->name);
    if (work > st->fft_work_size) st->fft_work_size = work;
    if (f->type == CX_FFT_IRFFT && in_bytes(f) > copy) copy = in_bytes(f);
  }
  st->fft_work_size = (st->fft_work_size + 255) / 256 * 256;
  st->fft_ws_size = st->fft_work_size + copy;
  if (st->fft_ws_size) CX_TRY(cx_gpu_alloc(ctx, st->device, st->fft_ws_size, &st->fft_ws, &st->fft_ws_got));
  for (int i = 0; i < p->nsteps; i++) {
    int r = st->fft_plans[i] >= 0 && st->fft_work_size ? cf->SetWorkArea(st->fft_plans[i], (void *)(uintptr_t)st->fft_ws) : 0;
    if (r) return cx_cufft_error(ctx, r, "cufftSetWorkArea");
  }
  return CXLA_OK;
}

void cx_gpu_fft_unload(gpu_state *st) {
  for (int i = 0; st->fft_plans && i < st->prog.nsteps; i++)
    if (st->fft_plans[i] >= 0) st->fft->Destroy(st->fft_plans[i]);
  cx_free(st->fft_plans);
  cx_gpu_free(st->device, st->fft_ws, st->fft_ws_got);
  st->fft_plans = NULL, st->fft_ws = 0, st->fft_ws_size = st->fft_work_size = 0;
}

cxla_status cx_gpu_fft_run(cxla_context *ctx, gpu_state *st, int step, CUstream stream, CUdeviceptr out,
                           CUdeviceptr in) {
  const cx_gpu_step *s = &st->prog.steps[step];
  const cx_gpu_fft *f = &s->fft;
  const cx_cufft *cf = st->fft;
  int plan = st->fft_plans[step], r = cf->SetStream(plan, stream);
  if (r) return cx_cufft_error(ctx, r, "cufftSetStream");
  void *o = (void *)(uintptr_t)out, *x = (void *)(uintptr_t)in;
  if (f->type == CX_FFT_IRFFT) { /* C2R may overwrite its input */
    CUdeviceptr c = st->fft_ws + st->fft_work_size;
    CUresult e = st->cu->MemcpyDtoDAsync(c, in, in_bytes(f), stream);
    if (e) return cx_cuda_error(ctx, st->cu, e, "cuMemcpyDtoDAsync (the C2R input's copy)");
    x = (void *)(uintptr_t)c;
  }
  int dir = f->type == CX_FFT_IFFT ? CX_FFT_INVERSE : CX_FFT_FORWARD;
  switch ((cx_fft_type)f->type) {
  case CX_FFT_RFFT: r = f->f64 ? cf->ExecD2Z(plan, x, o) : cf->ExecR2C(plan, x, o); break;
  case CX_FFT_IRFFT: r = f->f64 ? cf->ExecZ2D(plan, x, o) : cf->ExecC2R(plan, x, o); break;
  default: r = f->f64 ? cf->ExecZ2Z(plan, x, o, dir) : cf->ExecC2C(plan, x, o, dir); break;
  }
  if (r) return cx_cufft_error(ctx, r, s->in->name);
  if (f->scale == 1) return CXLA_OK;
  /* every number of the output, both parts of complex ones */
  int64_t parts = f->batch * f->out_dist * (f->type == CX_FFT_IRFFT ? 1 : 2);
  double sd = f->scale;
  float sf = (float)f->scale;
  if ((r = st->sv->BlasSetStream(st->blas_handle, stream)) ||
      (r = st->sv->scal[f->f64](st->blas_handle, (int)parts, f->f64 ? (const void *)&sd : &sf, o, 1)))
    return cx_solver_error(ctx, r, "cublas scal (the inverse fft's 1/N)");
  return CXLA_OK;
}
