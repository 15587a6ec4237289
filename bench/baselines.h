/* baselines.h — plain-C peers of the benchmarks (baselines.c: gcc -O3 -march=native -fopenmp;
 * baseline_fast.c: the same plus -ffast-math). All run on bl_set_threads(n) OpenMP threads. */
#ifndef BENCH_BASELINES_H
#define BENCH_BASELINES_H

void bl_set_threads(int n);
int bl_threads(void);
void bl_first_touch(float *p, long n);
void bl_triad(float *a, const float *b, const float *c, float s, long n);
void bl_chain9(float *out, const float *x, const float *y, long n);
void bl_bias_relu(float *c, const float *bias, int m, int n);
void bl_bias_softmax(float *c, const float *bias, int m, int n);
void bl_softmax_rows(float *out, const float *x, int rows, int cols);
void bl_softmax_rows_fast(float *out, const float *x, int rows, int cols);
void bl_layernorm_rows(float *out, const float *x, const float *g, const float *b, int rows, int cols);
void bl_layernorm_rows_fast(float *out, const float *x, const float *g, const float *b, int rows, int cols);
double bl_log_softmax_xent(float *logp, const float *x, const int *labels, int rows, int cols);
float bl_log_softmax_xent_fast(float *logp, const float *x, const int *labels, int rows, int cols);

#endif
