/* bench_main.h — what the benchmark groups share: the configuration, the result table and
 * small helpers (bench_main.c). Groups: bench_mem.c (chain9, scaling, alloc), bench_rows.c
 * (softmax: the row reductions), bench_blas.c
 * (gemm, dense, mlp), bench_compile.c (compile times). */
#ifndef BENCH_MAIN_H
#define BENCH_MAIN_H
#include <stddef.h>
#include "bench_util.h"

typedef struct bench_cfg {
  int threads;         /* for cxla, OpenMP and OpenBLAS alike */
  int rounds;
  int gap_us;
  const char *hlo_dir;
  const char *only;    /* comma-separated group names, or NULL for all */
  const char *label;   /* printed above the table (e.g. what a diagnostic run changed) */
  int smoke;           /* --smoke: each group once at tiny sizes, a failure is the exit status */
  int thread_clock;    /* --clock=thread-cpu: calls timed by the thread's CPU time (--threads=1) */
} bench_cfg;
extern bench_cfg cfg;

typedef struct bench_row {
  char bench[96], cx[64], base[64], goal[24], check[40];
  double ratio_best, ratio_median;
  const char *met;
} bench_row;

/* A table row; goal_ratio NAN (or goal NULL) when the row has no numeric goal on the ratio. */
void add_row(const char *bench, const char *cx, const char *base, double rb, double rm, const char *goal,
             double goal_ratio, const char *check);
/* Overrides the met? cell of the last row (goals that are not on a ratio). */
void bench_row_set_met(const char *met);
void print_contenders(const char *group, bu_contender *c, int nc, double units_per_call, const char *unit);
void fmt_rate(char *out, size_t n, const bu_contender *c, double units_per_call, const char *unit);
double ratio_best(const bu_contender *cx, const bu_contender *base);
double ratio_median(const bu_contender *cx, const bu_contender *base);
void check_result(char *out, size_t n, bu_cxla *b, const float *ref, int64_t count, double tol);
/* The same for leaf `leaf` of a tuple result (-1: an array result). */
void check_result_leaf(char *out, size_t n, bu_cxla *b, int leaf, const float *ref, int64_t count, double tol);
bu_opts opts_for(double min_sample_ms);
void set_all_threads(int n);
char *hlo_path(const char *name);
/* The sizes the groups run at: the measured ones, or tiny ones under --smoke (hlo_path then
 * hands out copies of the modules rewritten to the same tiny shapes). */
long bench_elems(void);     /* chain9's length, and softmax's element count */
int bench_softmax_side(void);
int bench_gemm_side(void);
/* Counts a wrong or failed cxla result (the exit status under --smoke). */
void bench_fail(const char *what);
cxla_context *new_context(void);

void group_chain9(void);
void group_softmax(void);
void group_scaling(void);
void group_alloc(void);
void group_gemm(void);
void group_dense(void);
void group_mlp(void);
void group_compile(void);
void group_disk_cache(void); /* bench_compile.c: cold compile against a warm --cache-dir */

#endif
