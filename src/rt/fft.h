/* fft.h — the plan of one fft transform (a run of rt/fft.c's cx_rt_fft executes it on every
 * transform of a batch), made when compiling by the sequencer (backend/cpu/fft.c) and kept for
 * the life of the process. */
#ifndef CX_RT_FFT_H
#define CX_RT_FFT_H
#include <stddef.h>
#include <stdint.h>
#include "ir/ir.h" /* cx_fft_type */

typedef struct cx_fft_plan {
  int type, f64, rank;          /* cx_fft_type; double precision; transformed dims */
  int n[3];                     /* fft_length */
  int64_t in_dist, out_dist;    /* elements of one transform's input and output */
  size_t in_esize, out_esize;
  double scale;                 /* 1 / prod(n) for the inverse kinds, else 1 */
  void *plan;                   /* fftw_plan or fftwf_plan */
  struct cx_fft_plan *next;
} cx_fft_plan;

/* Plans use SIMD and are made for arrays aligned so; the routine runs a transform whose input
 * or output is not aligned so through an aligned scratch copy. */
#define FFT_ALIGN 64

#endif
