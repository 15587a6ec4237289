/* baseline_fast.c — a hand-written row softmax as a speed peer: one pass for the max, one that
 * writes exp(x - max) and sums it, one that scales, all on one row while it is in L1/L2, so
 * DRAM sees one read and one write of the matrix. Built with gcc -O3 -march=native
 * -ffast-math -fopenmp so that expf vectorises through glibc's libmvec (bench/run.sh). */
#include <math.h>
#include "baselines.h"

void bl_softmax_rows_fast(float *restrict out, const float *restrict x, int rows, int cols) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; r++) {
    const float *xr = x + (long)r * cols;
    float *o = out + (long)r * cols;
    float m = -INFINITY;
    for (int j = 0; j < cols; j++) m = fmaxf(m, xr[j]);
    float s = 0.0f;
    for (int j = 0; j < cols; j++) {
      float e = expf(xr[j] - m);
      o[j] = e;
      s += e;
    }
    float inv = 1.0f / s;
    for (int j = 0; j < cols; j++) o[j] *= inv;
  }
}

/* Layer norm as a speed peer: a pass for the mean, one for the variance, one that writes. */
void bl_layernorm_rows_fast(float *restrict out, const float *restrict x, const float *restrict g,
                            const float *restrict b, int rows, int cols) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; r++) {
    const float *xr = x + (long)r * cols;
    float *o = out + (long)r * cols;
    float s = 0.0f, v = 0.0f;
    for (int j = 0; j < cols; j++) s += xr[j];
    float mu = s / cols;
    for (int j = 0; j < cols; j++) v += (xr[j] - mu) * (xr[j] - mu);
    float inv = 1.0f / sqrtf(v / cols + 1e-5f);
    for (int j = 0; j < cols; j++) o[j] = (xr[j] - mu) * inv * g[j] + b[j];
  }
}

/* Log-softmax + mean cross-entropy against integer labels as a speed peer. */
float bl_log_softmax_xent_fast(float *restrict logp, const float *restrict x, const int *restrict labels, int rows,
                               int cols) {
  float total = 0.0f;
#pragma omp parallel for schedule(static) reduction(+ : total)
  for (int r = 0; r < rows; r++) {
    const float *xr = x + (long)r * cols;
    float *o = logp + (long)r * cols;
    float m = -INFINITY, s = 0.0f;
    for (int j = 0; j < cols; j++) m = fmaxf(m, xr[j]);
    for (int j = 0; j < cols; j++) s += expf(xr[j] - m);
    float ls = logf(s) + m;
    for (int j = 0; j < cols; j++) o[j] = xr[j] - ls;
    if (labels[r] >= 0 && labels[r] < cols) total += o[labels[r]];
  }
  return -total / rows;
}
