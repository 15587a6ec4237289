/* fft.c — fft on the cpu, the sequencer's side: a plan per fft instruction (rt/fft.h) and one
 * call of the routine that runs it (cx_rt_fft, rt/fft.c).
 *
 * Plans are made when compiling, one per distinct transform (kind, precision, fft_length),
 * for a single transform of the 1-3 innermost dims. FFTW's planner is not thread-safe: plans
 * are made and kept in a process-wide list under one lock, and live as long as the process
 * (like FFTW's wisdom), so every executable of any context can share them and none has to
 * free them.
 *
 * Plans use SIMD, so they are made for SIMD-aligned arrays (the routine copies an unaligned
 * transform). The other way, FFTW_UNALIGNED plans, gives up SIMD altogether: 2.6x slower for
 * c64[64,4096] (bench/README.md). Plans are FFTW_ESTIMATE's: FFTW_MEASURE's are 20-40% faster
 * but take 0.15-1.5 s to make per shape on this machine, at compile time. */
#include <fftw3.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/sequencer_int.h"
#include "rt/fft.h"
#include "rt/rt.h"

static pthread_mutex_t g_planner = PTHREAD_MUTEX_INITIALIZER;
static cx_fft_plan *g_plans;

/* FFTW_ESTIMATE: planning reads no array, only whether in and out differ and their
 * alignment, so two small distinct aligned arrays stand in. */
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
  /* the plan outlives every executable */
  LLVMValueRef plan = cx_seq_addr(s, p);
  LLVMValueRef args[6] = {s->rt, plan, cx_cg_i64(g, batch), cx_seq_slot(s, x), cx_seq_slot(s, y),
                          LLVMConstInt(I32, (unsigned long long)id, 1)};
  LLVMBuildCall2(s->b, ft, f, args, 6, "");
  return s->g->status;
}
