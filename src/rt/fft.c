/* fft.c — the fft routine compiled code calls (cx_rt_fft), through FFTW (Debian's libfftw3:
 * fftwf_ for c64/f32, fftw_ for c128/f64): the plan the sequencer made when compiling
 * (backend/cpu/fft.c) applied to every transform of the batch (the leading dims), in parallel
 * on the pool, with FFTW's new-array execute calls, the only FFTW calls that are thread-safe.
 * A transform whose input or output is not SIMD-aligned (an odd-length row of a batch, a
 * caller's array) goes through an aligned scratch copy.
 *
 * Semantics are XLA's: forward FFT unnormalized, IFFT and IRFFT divided by the product of
 * fft_length (FFTW's backward transforms are not: the routine scales), RFFT the first N/2 + 1
 * frequencies of the last dim (FFTW's r2c layout), IRFFT FFTW's c2r, which ignores the
 * imaginary parts of the 0th and (even N) N/2-th frequencies as XLA does. c2r overwrites its
 * input, so it runs on a copy. */
#include <fftw3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/trace.h"
#include "rt/fft.h"
#include "rt/rt.h"
#include "rt/threadpool.h"
#include "util/util.h"

typedef struct fft_job {
  const cx_fft_plan *p;
  const char *in;
  char *out;
  _Atomic int oom;
} fft_job;

/* Whether FFTW may run the plan on p: the planning arrays' alignment, which its SIMD needs. */
static int aligned(const cx_fft_plan *plan, const void *p) {
  return plan->f64 ? fftw_alignment_of((double *)(uintptr_t)p) == 0 : fftwf_alignment_of((float *)(uintptr_t)p) == 0;
}

/* Kernel ABI: args[0] is the job, the range is transforms of the batch. */
static void fft_range(void **args, int64_t begin, int64_t end) {
  fft_job *j = args[0];
  const cx_fft_plan *p = j->p;
  size_t in_bytes = (size_t)p->in_dist * p->in_esize, out_bytes = (size_t)p->out_dist * p->out_esize;
  /* c2r destroys its input; an in-place call (never planned) runs from a copy too; so does an
   * unaligned input, and an unaligned output is written to scratch first */
  int always = p->type == CX_FFT_IRFFT || j->in == j->out;
  char *raw = NULL, *sin = NULL, *sout = NULL; /* one allocation, two aligned halves, made when needed */
  for (int64_t b = begin; b < end; b++) {
    void *src = (void *)(j->in + (size_t)b * in_bytes), *dst = j->out + (size_t)b * out_bytes;
    int copy_in = always || !aligned(p, src), copy_out = !aligned(p, dst);
    if ((copy_in || copy_out) && !raw) {
      size_t ib = (in_bytes + FFT_ALIGN - 1) / FFT_ALIGN * FFT_ALIGN;
      if (!(raw = cx_malloc(ib + out_bytes + 2 * FFT_ALIGN))) {
        j->oom = 1;
        return;
      }
      sin = raw + (FFT_ALIGN - (uintptr_t)raw % FFT_ALIGN);
      sout = sin + ib;
    }
    if (copy_in) src = memcpy(sin, src, in_bytes);
    void *res = dst;
    if (copy_out) dst = sout;
    switch ((cx_fft_type)p->type) {
    case CX_FFT_FFT: case CX_FFT_IFFT:
      if (p->f64) fftw_execute_dft(p->plan, src, dst);
      else fftwf_execute_dft(p->plan, src, dst);
      break;
    case CX_FFT_RFFT:
      if (p->f64) fftw_execute_dft_r2c(p->plan, src, dst);
      else fftwf_execute_dft_r2c(p->plan, src, dst);
      break;
    case CX_FFT_IRFFT:
      if (p->f64) fftw_execute_dft_c2r(p->plan, src, dst);
      else fftwf_execute_dft_c2r(p->plan, src, dst);
      break;
    }
    if (p->scale != 1.0) { /* every output number, both parts of complex ones */
      int64_t n = (int64_t)(out_bytes / (p->f64 ? 8 : 4));
      if (p->f64)
        for (int64_t i = 0; i < n; i++) ((double *)dst)[i] *= p->scale;
      else
        for (int64_t i = 0; i < n; i++) ((float *)dst)[i] = (float)(((float *)dst)[i] * p->scale);
    }
    if (copy_out) memcpy(res, dst, out_bytes);
  }
  cx_free(raw);
}

/* About this many complex multiply-adds (N log N per transform) per hand-off to the pool. */
#define FFT_CHUNK_WORK 65536

void cx_rt_fft(cx_rt *rt, const void *plan, int64_t batch, const void *in, void *out, int32_t id) {
  if (rt->status != CXLA_OK) return;
  const cx_fft_plan *p = plan;
  const char *name = rt->names && id >= 0 && rt->names[id] ? rt->names[id] : "fft";
  int64_t t0 = rt->trace ? cx_trace_now() : 0;
  fft_job job = {.p = p, .in = in, .out = out};
  if (batch > 0) {
    void *args[1] = {&job};
    double work = (double)p->out_dist * (double)(64 - __builtin_clzll((unsigned long long)p->out_dist | 1));
    int64_t grain = (int64_t)(FFT_CHUNK_WORK / work);
    cx_threadpool_parallel_for(rt->pool, fft_range, args, batch, grain > 1 ? grain : 1);
  }
  if (job.oom) {
    snprintf(rt->errmsg, sizeof rt->errmsg, "%s: out of memory for the transform's copy", name);
    rt->status = CXLA_ERR_OUT_OF_MEMORY;
  }
  if (rt->trace) {
    cx_trace_args ta = cx_rt_origin_args(rt, id);
    ta.n = 2, ta.key[0] = "batch", ta.key[1] = "points";
    ta.val[0] = batch, ta.val[1] = p->type == CX_FFT_RFFT ? p->in_dist : p->out_dist;
    cx_trace_add(rt->trace, name, "library", t0, cx_trace_now(), &ta);
  }
}
