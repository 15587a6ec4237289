/* baselines.c — the plain-C peers of the cxla benchmarks. Built on its own with
 * gcc -O3 -march=native -fopenmp (bench/run.sh), as the STREAM triad reference asks; the
 * driver (bench_main.c) is ordinary C11 -O2 and only calls these through baselines.h.
 * Every loop is an OpenMP static split over the thread count set by bl_set_threads, so the
 * baseline uses the same cores as cxla's pool. */
#include <math.h>
#include <omp.h>
#include <string.h>
#include "baselines.h"

void bl_set_threads(int n) { omp_set_num_threads(n > 0 ? n : 1); }

int bl_threads(void) { return omp_get_max_threads(); }

void bl_triad(float *restrict a, const float *restrict b, const float *restrict c, float s, long n) {
#pragma omp parallel for simd schedule(static)
  for (long i = 0; i < n; i++) a[i] = b[i] + s * c[i];
}

/* Touches every page of p from the thread that will later use it (static split). */
void bl_first_touch(float *p, long n) {
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++) p[i] = 0.0f;
}

/* bench/hlo/chain9.hlo written by hand as one fused loop: the best a C compiler does with the
 * same nine ops. */
void bl_chain9(float *restrict out, const float *restrict x, const float *restrict y, long n) {
#pragma omp parallel for simd schedule(static)
  for (long i = 0; i < n; i++) {
    float t = x[i] * 1.5f + 0.25f - y[i];
    t = t > 0.0f ? t : 0.0f;
    t = t * y[i] + x[i];
    t = t < 4.0f ? t : 4.0f;
    out[i] = t * 0.5f - x[i];
  }
}

/* c[m,n] = max(c + bias[n], 0) in place: the epilogue after a BLAS GEMM (small ones on one
 * thread: an OpenMP fork costs more than 16K elements take). */
void bl_bias_relu(float *restrict c, const float *restrict bias, int m, int n) {
#pragma omp parallel for schedule(static) if ((long)m * n >= 65536)
  for (int i = 0; i < m; i++) {
    float *row = c + (long)i * n;
#pragma omp simd
    for (int j = 0; j < n; j++) {
      float v = row[j] + bias[j];
      row[j] = v > 0.0f ? v : 0.0f;
    }
  }
}

/* Row softmax, the reference for checking cxla (expf is scalar here: not a speed peer). */
void bl_softmax_rows(float *restrict out, const float *restrict x, int rows, int cols) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; r++) {
    const float *xr = x + (long)r * cols;
    float *o = out + (long)r * cols;
    float m = -INFINITY;
    for (int j = 0; j < cols; j++) m = xr[j] > m ? xr[j] : m;
    double s = 0;
    for (int j = 0; j < cols; j++) {
      o[j] = expf(xr[j] - m);
      s += o[j];
    }
    float inv = (float)(1.0 / s);
    for (int j = 0; j < cols; j++) o[j] *= inv;
  }
}

/* c[m,n] += bias[n], then a row softmax in place: the MLP's last layer. */
void bl_bias_softmax(float *restrict c, const float *restrict bias, int m, int n) {
#pragma omp parallel for schedule(static) if ((long)m * n >= 65536)
  for (int i = 0; i < m; i++) {
    float *row = c + (long)i * n, mx = -INFINITY, s = 0.0f;
    for (int j = 0; j < n; j++) {
      row[j] += bias[j];
      mx = row[j] > mx ? row[j] : mx;
    }
    for (int j = 0; j < n; j++) s += row[j] = expf(row[j] - mx);
    for (int j = 0; j < n; j++) row[j] /= s;
  }
}

/* Layer norm over rows, the reference for checking cxla: mean and variance summed in double. */
void bl_layernorm_rows(float *restrict out, const float *restrict x, const float *restrict g, const float *restrict b,
                       int rows, int cols) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; r++) {
    const float *xr = x + (long)r * cols;
    float *o = out + (long)r * cols;
    double s = 0, v = 0;
    for (int j = 0; j < cols; j++) s += xr[j];
    double mu = s / cols;
    for (int j = 0; j < cols; j++) v += (xr[j] - mu) * (xr[j] - mu);
    double inv = 1.0 / sqrt(v / cols + 1e-5);
    for (int j = 0; j < cols; j++) o[j] = (float)((xr[j] - mu) * inv * g[j] + b[j]);
  }
}

/* Log-softmax over rows and the mean cross-entropy against integer labels, the reference for
 * checking cxla (bench/hlo/softmax_xent.hlo): logp = x - max - log(sum(exp(x - max))),
 * loss = -mean over rows of logp[label]. */
double bl_log_softmax_xent(float *restrict logp, const float *restrict x, const int *restrict labels, int rows, int cols) {
  double total = 0;
#pragma omp parallel for schedule(static) reduction(+ : total)
  for (int r = 0; r < rows; r++) {
    const float *xr = x + (long)r * cols;
    float *o = logp + (long)r * cols;
    float m = -INFINITY;
    for (int j = 0; j < cols; j++) m = xr[j] > m ? xr[j] : m;
    double s = 0;
    for (int j = 0; j < cols; j++) s += exp((double)xr[j] - m);
    double ls = log(s);
    for (int j = 0; j < cols; j++) o[j] = (float)((double)xr[j] - m - ls);
    if (labels[r] >= 0 && labels[r] < cols) total += o[labels[r]];
  }
  return -total / rows;
}
