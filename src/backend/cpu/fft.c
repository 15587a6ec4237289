/* fft.c — fft on the cpu through FFTW (Debian's libfftw3: fftwf_ for c64/f32, fftw_ for
 * c128/f64): the call the sequencer emits for every fft instruction (cx_seq_fft) and the
 * runtime routine it calls (cx_rt_fft).
 *
 * Plans are made when compiling, one per distinct transform (kind, precision, fft_length),
 * for a single transform of the 1-3 innermost dims; a run executes it on every transform of
 * the batch (the leading dims), in parallel on the pool, with FFTW's new-array execute calls,
 * the only FFTW calls that are thread-safe. FFTW's planner is not: plans are made and kept in
 * a process-wide list under one lock, and live as long as the process (like FFTW's wisdom), so
 * every executable of any context can share them and none has to free them.
 *
 * Plans use SIMD, so they are made for SIMD-aligned arrays, and a transform whose input or
 * output is not aligned so (an odd-length row of a batch, a caller's array) goes through an
 * aligned scratch copy. The other way, FFTW_UNALIGNED plans, gives up SIMD altogether: 2.6x
 * slower for c64[64,4096] (bench/README.md). Plans are FFTW_ESTIMATE's: FFTW_MEASURE's are
 * 20-40% faster but take 0.15-1.5 s to make per shape on this machine, at compile time.
 *
 * Semantics are XLA's: forward FFT unnormalized, IFFT and IRFFT divided by the product of
 * fft_length (FFTW's backward transforms are not: the routine scales), RFFT the first N/2 + 1
 * frequencies of the last dim (FFTW's r2c layout), IRFFT FFTW's c2r, which ignores the
 * imaginary parts of the 0th and (even N) N/2-th frequencies as XLA does. c2r overwrites its
 * input, so it runs on a copy. */
#include <fftw3.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rt/rt.h"
#include "backend/cpu/sequencer_int.h"
#include "rt/threadpool.h"
#include "core/trace.h"

typedef struct cx_fft_plan {
  int type, f64, rank;          /* cx_fft_type; double precision; transformed dims */
  int n[3];                     /* fft_length */
  int64_t in_dist, out_dist;    /* elements of one transform's input and output */
  size_t in_esize, out_esize;
  double scale;                 /* 1 / prod(n) for the inverse kinds, else 1 */
  void *plan;                   /* fftw_plan or fftwf_plan */
  struct cx_fft_plan *next;
} cx_fft_plan;

static pthread_mutex_t g_planner = PTHREAD_MUTEX_INITIALIZER;
static cx_fft_plan *g_plans;

/* FFTW_ESTIMATE: planning reads no array, only whether in and out differ and their
 * alignment, so two small distinct aligned arrays stand in. */
#define FFT_ALIGN 64
static _Alignas(FFT_ALIGN) double g_dummy_in[8];
static _Alignas(FFT_ALIGN) double g_dummy_out[8];

static void *make_plan(const cx_fft_plan *p) {
  unsigned flags = FFTW_ESTIMATE;
  void *in = g_dummy_in, *out = g_dummy_out;
  switch ((cx_fft_type)p->type) {
  case CX_FFT_FFT: case CX_FFT_IFFT: {
    int sign = p->type == CX_FFT_FFT ? FFTW_FORWARD : FFTW_BACKWARD;
    return p->f64 ? (void *)fftw_plan_dft(p->rank, p->n, in, out, sign, flags)
                  : (void *)fftwf_plan_dft(p->rank, p->n, in, out, sign, flags);
  }
  case CX_FFT_RFFT:
    return p->f64 ? (void *)fftw_plan_dft_r2c(p->rank, p->n, in, out, flags)
                  : (void *)fftwf_plan_dft_r2c(p->rank, p->n, in, out, flags);
  case CX_FFT_IRFFT:
    return p->f64 ? (void *)fftw_plan_dft_c2r(p->rank, p->n, in, out, flags)
                  : (void *)fftwf_plan_dft_c2r(p->rank, p->n, in, out, flags);
  }
  return NULL;
}

/* The plan for fft instruction `in` (found or made under the lock), or NULL and why. */
static const cx_fft_plan *plan_for(const cx_instr *in, const char **why) {
  const cx_attrs *a = &in->a;
  cx_fft_plan key = {.type = a->fft_type, .rank = a->fft_length.n};
  cxla_type part = cx_type_part(in->ops[0]->shape.type);
  if (key.rank < 1 || key.rank > 3 || (part != CXLA_F32 && part != CXLA_F64)) return *why = "malformed fft", NULL;
  key.f64 = part == CXLA_F64;
  int64_t prod = 1, half = 1;
  for (int i = 0; i < key.rank; i++) {
    int64_t n = a->fft_length.v[i];
    if (n < 1 || n > INT32_MAX) return *why = "FFTW takes lengths from 1 to 2^31 - 1", NULL;
    key.n[i] = (int)n;
    prod *= n;
    half *= i + 1 < key.rank ? n : n / 2 + 1;
  }
  int real_in = key.type == CX_FFT_RFFT, real_out = key.type == CX_FFT_IRFFT;
  key.in_dist = real_out ? half : prod;
  key.out_dist = real_in ? half : prod;
  key.in_esize = cxla_type_size(in->ops[0]->shape.type);
  key.out_esize = cxla_type_size(in->shape.type);
  key.scale = key.type == CX_FFT_IFFT || real_out ? 1.0 / (double)prod : 1.0;
  pthread_mutex_lock(&g_planner);
  cx_fft_plan *p = g_plans;
  for (; p; p = p->next)
    if (p->type == key.type && p->f64 == key.f64 && p->rank == key.rank && !memcmp(p->n, key.n, sizeof key.n)) break;
  if (!p && (p = malloc(sizeof *p))) { /* malloc: kept until exit, out of cxla's allocator's accounting */
    *p = key;
    if ((p->plan = make_plan(p))) {
      p->next = g_plans;
      g_plans = p;
    } else {
      free(p);
      p = NULL;
    }
  }
  pthread_mutex_unlock(&g_planner);
  if (!p) *why = "FFTW could not plan this transform";
  return p;
}

/* ---- the runtime routine ---- */

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

/* ---- the sequencer's side: one cx_rt_fft call per fft instruction, with its plan ---- */

cxla_status cx_seq_fft(cx_seq *s, cx_instr *in) {
  const char *why = NULL;
  int64_t nin = cx_shape_elems(&in->ops[0]->shape), nout = cx_shape_elems(&in->shape);
  if (nin == 0 || nout == 0) return s->g->status; /* nothing to compute or to write */
  const cx_fft_plan *p = plan_for(in, &why);
  if (!p) return cx_seq_fallback(s, in, why);
  int x = cx_seq_leaf_slot(s, in->ops[0], 0), y = cx_seq_leaf_slot(s, in, 0);
  if (x < 0 || y < 0) return s->g->status;
  int64_t batch = nout / p->out_dist;
  char name[256];
  static const char *const kinds[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
  snprintf(name, sizeof name, "%s [%s %lld x %d-D]", in->name ? in->name : "fft", kinds[p->type], (long long)batch,
           p->rank);
  int32_t id = cx_seq_name(s, name);
  if (id < 0) return s->g->status;
  cx_kernel_origin(in, &s->out->origins[id]);
  cx_cg *g = s->g;
  LLVMTypeRef P = g->t_ptr, I32 = g->t_i32, I64 = g->t_i64;
  LLVMTypeRef ps[6] = {P, P, I64, P, P, I32};
  LLVMTypeRef ft = LLVMFunctionType(g->t_void, ps, 6, 0);
  LLVMValueRef f = LLVMGetNamedFunction(g->mod, "cx_rt_fft");
  if (!f) f = LLVMAddFunction(g->mod, "cx_rt_fft", ft);
  /* the plan outlives every executable: its address is a constant of the code */
  LLVMValueRef plan = LLVMConstIntToPtr(cx_cg_i64(g, (int64_t)(intptr_t)p), P);
  LLVMValueRef args[6] = {s->rt, plan, cx_cg_i64(g, batch), cx_seq_slot(s, x), cx_seq_slot(s, y),
                          LLVMConstInt(I32, (unsigned long long)id, 1)};
  LLVMBuildCall2(s->b, ft, f, args, 6, "");
  return s->g->status;
}
