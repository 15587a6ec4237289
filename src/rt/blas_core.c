/* blas_core.c — OpenBLAS's kernels for the CPU this process runs on.
 *
 * Debian's OpenBLAS is built for every x86 core (DYNAMIC_ARCH) and picks its kernels when it
 * loads, from the CPU's family and model numbers. A model newer than the release knows (0.3.21,
 * Debian 12, does not know Sapphire or Emerald Rapids; virtual machines may report models of
 * their own) falls back to Prescott's SSE3 kernels: on the development machines, a 128x512x784
 * f32 GEMM ran at 32 GFLOP/s on one core instead of the 138 that the AVX-512 (SkylakeX)
 * kernels reach, which made every GEMM and convolution four times slower than it should be.
 *
 * So when OpenBLAS chose kernels without AVX2 on a CPU that has AVX2 (or AVX-512), cxla asks it
 * to choose again with OPENBLAS_CORETYPE, the variable OpenBLAS documents for exactly this,
 * through its exported gotoblas_dynamic_quit/init. Nothing happens when the user set
 * OPENBLAS_CORETYPE, when OpenBLAS's choice already uses AVX2, or when the BLAS is not a
 * DYNAMIC_ARCH OpenBLAS (the functions are looked up, not linked). It runs once, when the first
 * thread pool is made or the first execution without a pool starts, before cxla's first GEMM.
 *
 * Every call also sets OpenBLAS to one thread where something else set it to more: cxla splits
 * GEMMs over its own pool (rt/gemm.c), and an execution on one thread (--threads=1, no pool)
 * must not wake OpenBLAS's threads either: their spinning in sched_yield took 60% of jax's
 * transformer step at --threads=1 (151 -> 63 ms min with OpenBLAS on one thread).
 *
 * Setting one thread leaves the workers OpenBLAS's pthread build started when it loaded: idle,
 * they spin for their first 2^28 cycles (about 0.1 s) and after every job before they sleep, so
 * a new process compiled beside a spinning worker (and oneDNN's set-up thread) on two cores.
 * So the call that sets one thread also stops them, through blas_thread_shutdown_, the function
 * OpenBLAS itself runs before a fork (exported, looked up, like the functions above); OpenBLAS
 * starts them again by itself if anything later asks it for a threaded call. The cpu backend
 * calls this at the start of every compile, so that the compile runs without them. Like the
 * thread count, this is process-wide, and it assumes what the count already does: that no
 * other thread of the program is inside a threaded OpenBLAS call at that moment (a program
 * that calls OpenBLAS on threads of its own, Debian's numpy among them, whose libblas.so.3 is
 * a front for this same libopenblas.so.0, does so between cxla's compiles and executions). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "rt/threadpool.h" /* cx_rt_blas_tune, which cx_rt_pool_create and executions without a pool call */

/* OpenBLAS's kernel sets that use no AVX2 (its names, as openblas_get_corename gives them). */
static const char *const k_pre_avx2[] = {"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Sandybridge",
                                         "Atom", "Katmai", "Coppermine", "Northwood", "Banias", "Athlon",
                                         "Opteron", "Opteron_SSE3", "Barcelona", "Bobcat", "Bulldozer",
                                         "Piledriver", "Steamroller", "Excavator", "Nano", NULL};

static int is_pre_avx2(const char *core) {
  for (int i = 0; core && k_pre_avx2[i]; i++)
    if (!strcasecmp(core, k_pre_avx2[i])) return 1;
  return 0;
}

/* The best kernel set this CPU (and its OS, which must save the wide registers) can run. */
static const char *best_core(void) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
  return NULL;
}

static void choose(void) {
  char *(*corename)(void) = (char *(*)(void))dlsym(RTLD_DEFAULT, "openblas_get_corename");
  void (*quit)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gotoblas_dynamic_quit");
  void (*init)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gotoblas_dynamic_init");
  const char *now = corename ? corename() : NULL;
  const char *best = best_core();
  if (!now || !quit || !init || !best || getenv("OPENBLAS_CORETYPE") || !is_pre_avx2(now)) return;
  if (setenv("OPENBLAS_CORETYPE", best, 0) != 0) return;
  quit();
  init();
  unsetenv("OPENBLAS_CORETYPE");
}

static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* OpenBLAS's own (linked: cxla links OpenBLAS; declared here as rt.c does). */
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);

static void stop_workers(void) {
  int (*shutdown)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "blas_thread_shutdown_");
  if (shutdown) shutdown();
}

void cx_rt_blas_tune(void) {
  pthread_once(&g_once, choose);
  if (openblas_get_num_threads() != 1) {
    openblas_set_num_threads(1);
    stop_workers();
  }
}
