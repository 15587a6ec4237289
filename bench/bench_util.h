/* bench_util.h — interleaved timing of several contenders in one process, and a thin layer
 * over the public cxla API (compile a .hlo file, execute it on fixed input buffers). */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H
#include <stdint.h>
#include "cxla.h"

/* The peers' idle threads spin about as long as cxla's pool (200 us) before they sleep:
 * libgomp's default (GOMP_SPINCOUNT 300000 pauses, about 8 ms at 26 ns a pause on Zen 4) and
 * OpenBLAS's (2^28 TSC cycles of sched_yield) outlasted the gap between contenders, and the
 * spinning threads took the second core from the cxla call timed next (softmax 4096² median
 * 13.7 against 22.4 GB/s). Sets GOMP_SPINCOUNT=8000 (208 us) and OPENBLAS_THREAD_TIMEOUT=19
 * (2^19 cycles, about 150 us) where the
 * environment does not already say, then executes the program again (both libraries read them
 * when they load). Returns a line for the report, e.g. "GOMP_SPINCOUNT=8000 ...". */
const char *bu_bound_peer_spin(char **argv);

double bu_now_ms(void);
double bu_cpu_ms(void); /* CPU time of the whole process */

/* One thing to time: fn(arg) is one call; after(arg), if set, runs untimed after each call
 * (e.g. freeing the result cxla handed back). A sample is `k` back-to-back calls (k picked in
 * the warm-up so that a sample lasts at least the minimum sample time), each timed on its own;
 * best/median/worst are over all timed calls of all samples. */
typedef struct bu_contender {
  const char *name;
  void (*fn)(void *arg);
  void (*after)(void *arg);
  void *arg;
  int k;
  int n;               /* timed calls */
  double *samples;     /* ms per call (malloc'd by bu_interleave; bu_contenders_free) */
  double best, median, worst;
  int failed;          /* the contender is skipped from then on */
  const int *fail_flag; /* optional: a flag fn sets when a call fails (bu_cxla.failed) */
} bu_contender;

typedef struct bu_opts {
  int rounds;          /* samples per contender */
  double warmup_ms;    /* at least this much warm-up per contender (and 2 calls) */
  double min_sample_ms;
  int gap_us;          /* sleep before each sample so the previous contender's threads idle */
} bu_opts;

/* 1: time each call by the calling thread's CPU time instead of the wall clock. Only meaningful
 * when every contender runs on the calling thread (one thread: cxla, OpenMP and OpenBLAS then
 * run inline), and then robust to other processes taking the core (a loaded shared machine);
 * the time the kernel itself spends waiting for memory is still counted. */
void bu_use_thread_clock(int on);

/* Warms every contender up, then takes opts->rounds samples of each, interleaved: round r runs
 * the contenders in an order rotated by r, so none always follows the same neighbour. */
void bu_interleave(bu_contender *c, int nc, const bu_opts *opts);
void bu_contenders_free(bu_contender *c, int nc);

/* ---- cxla ---- */
#define BU_MAX_ARGS 64 /* a training step takes weights, optimiser state and a batch */
typedef struct bu_cxla {
  cxla_context *ctx;
  cxla_executable *e;
  int nargs;
  cxla_buffer *args[BU_MAX_ARGS];
  cxla_buffer *result; /* of the last call */
  double compile_ms;   /* wall clock around cxla_compile */
  double compile_cpu_ms; /* process CPU time over the same span (less inflated by other load) */
  char stats[1024];    /* cxla_executable_compile_stats */
  int failed;
  char path[256];
} bu_cxla;

/* Parses `path`, applies `flags` (may be NULL) to ctx, compiles for the cpu backend with
 * `threads` (0: all cores) and opt_level (-1: default), and makes argument buffers from
 * `inputs` (one literal per parameter; NULL: seeded random values in [-1, 1)). Prints the
 * error and returns nonzero on failure. */
int bu_cxla_open(bu_cxla *b, cxla_context *ctx, const char *path, const char *flags, int threads,
                 int opt_level, cxla_literal *const *inputs);
void bu_cxla_close(bu_cxla *b);
/* Contender callbacks: one execution (the previous result is freed first when still held), and
 * freeing the result. */
void bu_cxla_call(void *b);
void bu_cxla_release(void *b);
/* Data of the last result (array results only). */
const float *bu_cxla_result_f32(bu_cxla *b, cxla_literal **hold);
/* The same of leaf `leaf` of a tuple result (-1: the result is an array). */
const float *bu_cxla_result_leaf_f32(bu_cxla *b, int leaf, cxla_literal **hold);

/* Fills a literal or array with uniform values in [lo, hi) from a fixed seed. */
void bu_fill(float *p, int64_t n, uint64_t seed, float lo, float hi);
cxla_literal *bu_literal(cxla_context *ctx, int rank, const int64_t *dims, uint64_t seed, float lo, float hi);

/* Largest |a-b| / (atol + |b|) over n elements. */
double bu_max_err(const float *a, const float *b, int64_t n, double atol);
/* The same, also giving the index of the worst element and how many exceed tol. */
double bu_max_err_at(const float *a, const float *b, int64_t n, double atol, double tol, int64_t *where,
                     int64_t *nbad);

/* Reads a file into a NUL-terminated malloc'd string (NULL on error). */
char *bu_read_text(const char *path, size_t *len);

#endif
