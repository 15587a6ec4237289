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
