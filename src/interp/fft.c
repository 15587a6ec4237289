/* fft.c — fft on the interpreter: the plain discrete Fourier transform, in double, one
 * transformed dimension at a time (it is separable), each line by its defining sum
 *   X[j] = sum_k x[k] e^(-+2 pi i jk/N)      (O(N^2); the reference, not a fast algorithm)
 * with the twiddles e^(2 pi i m/N) computed once per length from m/N exactly reduced.
 * FFT is the forward sum, IFFT the backward one divided by the product of fft_length (XLA's
 * and numpy's convention). RFFT transforms the real signal and keeps the first N/2 + 1
 * frequencies of the last dimension. IRFFT undoes it: backward transforms of the other
 * dimensions, then the real signal of the half spectrum along the last one,
 *   x[n] = Re X[0] + (-1)^n Re X[N/2] (N even) + 2 sum_{0<k<N/2} Re(X[k] e^(2 pi i kn/N)),
 * so the imaginary parts of the 0th and (even N) N/2-th frequencies are ignored, as FFTW's
 * complex-to-real transform (and XLA) ignore them. */
#include <math.h>
#include <string.h>
#include "interp/index_util.h"

typedef struct fft_work {
  double *re, *im;           /* the array being transformed, row-major over dims */
  int rank;
  int64_t dims[CXLA_MAX_RANK];
  double *cs, *sn, *lre, *lim; /* twiddles and one line, of the longest length */
} fft_work;

/* e^(2 pi i m/N) for m < N: the angle from m/N reduced to [-1/2, 1/2] keeps it exact. */
static void twiddles(int64_t n, double *cs, double *sn) {
  for (int64_t m = 0; m < n; m++) {
    double f = (double)(2 * m > n ? m - n : m) / (double)n;
    cs[m] = cos(2 * M_PI * f);
    sn[m] = sin(2 * M_PI * f);
  }
}

/* The DFT along dimension d of every line, forward (sign -1) or backward (+1). */
static void dft_dim(fft_work *w, int d, int sign) {
  int64_t n = w->dims[d], inner = 1, total = 1;
  for (int k = d + 1; k < w->rank; k++) inner *= w->dims[k];
  for (int k = 0; k < w->rank; k++) total *= w->dims[k];
  if (n <= 1 || total == 0) return;
  twiddles(n, w->cs, w->sn);
  for (int64_t outer = 0; outer < total / (n * inner); outer++)
    for (int64_t in = 0; in < inner; in++) {
      int64_t base = outer * n * inner + in;
      for (int64_t k = 0; k < n; k++) {
        w->lre[k] = w->re[base + k * inner];
        w->lim[k] = w->im[base + k * inner];
      }
      for (int64_t j = 0; j < n; j++) {
        double sr = 0, si = 0;
        for (int64_t k = 0; k < n; k++) {
          int64_t m = (j * k) % n; /* j, k < n <= 2^31 in practice: no overflow below 2^62 */
          double c = w->cs[m], s = sign * w->sn[m];
          sr += w->lre[k] * c - w->lim[k] * s;
          si += w->lre[k] * s + w->lim[k] * c;
        }
        w->re[base + j * inner] = sr;
        w->im[base + j * inner] = si;
      }
    }
}

/* The real signal of length n from each line of half spectra along the last dimension (of
 * h = n/2 + 1 entries) of w, into out (row-major, last dim n). */
static void half_to_real(fft_work *w, int64_t n, double *out) {
  int last = w->rank - 1;
  int64_t h = w->dims[last], lines = 1;
  for (int k = 0; k < last; k++) lines *= w->dims[k];
  twiddles(n, w->cs, w->sn);
  for (int64_t l = 0; l < lines; l++) {
    const double *xr = w->re + l * h, *xi = w->im + l * h;
    for (int64_t t = 0; t < n; t++) {
      double s = xr[0];
      int64_t k = 1;
      for (; 2 * k < n; k++) {
        int64_t m = (k * t) % n;
        s += 2 * (xr[k] * w->cs[m] - xi[k] * w->sn[m]);
      }
      if (2 * k == n) s += (t % 2 ? -1 : 1) * xr[k];
      out[l * n + t] = s;
    }
  }
}

cxla_status cx_interp_fft(cx_interp *st, cx_instr *in, cxla_literal *const *ops, cxla_literal **out) {
  *out = NULL;
  const cx_attrs *a = &in->a;
  const cx_shape *xs = &ops[0]->shape;
  int r = a->fft_length.n;
  if (in->nops != 1 || r < 1 || r > 3 || xs->rank < r) return cx_hv_bad(st, in, "malformed fft");
  int inverse = a->fft_type == CX_FFT_IFFT || a->fft_type == CX_FFT_IRFFT;
  int64_t total = cx_shape_elems(xs), longest = 1, norm = 1;
  fft_work w = {.rank = xs->rank};
  memcpy(w.dims, xs->dims, sizeof xs->dims[0] * (size_t)xs->rank);
  for (int i = 0; i < r; i++) {
    norm *= a->fft_length.v[i];
    if (a->fft_length.v[i] > longest) longest = a->fft_length.v[i];
    if (xs->dims[xs->rank - r + i] > longest) longest = xs->dims[xs->rank - r + i];
  }
  cxla_literal *res = cx_hv_literal(st, in, &in->shape);
  if (!res) return cx_hv_oom(st, in);
  int64_t nout = cx_shape_elems(&in->shape);
  if (total > CX_HV_MAX / 16 || nout > CX_HV_MAX / 16) {
    cxla_literal_destroy(res);
    return cx_hv_bad(st, in, "fft too large");
  }
  w.re = cx_malloc(sizeof(double) * (size_t)(total ? total : 1));
  w.im = cx_malloc(sizeof(double) * (size_t)(total ? total : 1));
  w.cs = cx_malloc(sizeof(double) * 4 * (size_t)longest);
  double *real = a->fft_type == CX_FFT_IRFFT ? cx_malloc(sizeof(double) * (size_t)(nout ? nout : 1)) : NULL;
  if (!w.re || !w.im || !w.cs || (a->fft_type == CX_FFT_IRFFT && !real)) {
    cx_free(w.re), cx_free(w.im), cx_free(w.cs), cx_free(real);
    cxla_literal_destroy(res);
    return cx_hv_oom(st, in);
  }
  w.sn = w.cs + longest, w.lre = w.sn + longest, w.lim = w.lre + longest;
  for (int64_t i = 0; i < total; i++) cx_load_complex(xs->type, ops[0]->data, i, &w.re[i], &w.im[i]);
  /* IRFFT: the other dims backward first, then the last one to the real signal */
  int ncomplex = a->fft_type == CX_FFT_IRFFT ? r - 1 : r;
  for (int i = 0; i < ncomplex; i++) dft_dim(&w, xs->rank - r + i, inverse ? 1 : -1);
  if (a->fft_type == CX_FFT_IRFFT && nout) half_to_real(&w, a->fft_length.v[r - 1], real);
  double scale = inverse && norm ? 1.0 / (double)norm : 1.0;
  cxla_type rt = in->shape.type;
  if (a->fft_type == CX_FFT_IRFFT) {
    for (int64_t i = 0; i < nout; i++) cx_store_f64(rt, res->data, i, real[i] * scale);
  } else if (a->fft_type == CX_FFT_RFFT) { /* the first h frequencies of every last-dim line */
    int64_t n = xs->rank ? xs->dims[xs->rank - 1] : 1, h = in->shape.dims[in->shape.rank - 1];
    for (int64_t i = 0; i < nout; i++) {
      int64_t src = (i / h) * n + i % h;
      cx_store_complex(rt, res->data, i, w.re[src], w.im[src]);
    }
  } else {
    for (int64_t i = 0; i < nout; i++) cx_store_complex(rt, res->data, i, w.re[i] * scale, w.im[i] * scale);
  }
  cx_free(w.re), cx_free(w.im), cx_free(w.cs), cx_free(real);
  *out = res;
  return CXLA_OK;
}
