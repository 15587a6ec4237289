/* test_cpu_denormals.c — --cpu-flush-denormals: a cpu execution with FTZ and DAZ set, as
 * XLA:CPU runs (its client sets both around every execution), on the calling thread and on the
 * pool's workers for their share; the caller's environment comes back unchanged; off, denormals
 * are computed as IEEE says, as the interpreter does, whatever the caller's thread set. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util/fpenv.h"
#include "test.h"

enum { N = 1 << 20 }; /* enough elements that both threads of the pool take a share */
enum { EXCEPTION_FLAGS = 0x3f }; /* MXCSR's sticky status bits: an underflow raises one */

static const char text[] = "HloModule denormals\n"
                           "ENTRY main {\n"
                           "  x = f32[1048576] parameter(0)\n"
                           "  y = f32[1048576] parameter(1)\n"
                           "  ROOT m = f32[1048576] multiply(x, y)\n"
                           "}\n";

/* x * y for x = 1e-20 (a product of 1e-40: denormal) and y = 1 (x denormal, 1e-40: read as 0
 * under DAZ) in alternate halves of each 64-element block, so that every chunk of every thread
 * holds both kinds. Returns the elements that came out 0 and those exactly IEEE's product. */
static void run_from(unsigned caller_bits, const char *flags, const char *backend, int64_t *zeros, int64_t *ieee) {
  cxla_context *ctx = test_ctx();
  CHECK_OK(cxla_context_set_flags(ctx, flags));
  cxla_executable *exe = test_compile_text(text, "denormals", backend, 0);
  float *x = malloc(sizeof *x * N), *y = malloc(sizeof *y * N);
  *zeros = *ieee = -1;
  if (!exe || !x || !y) goto out;
  for (int64_t i = 0; i < N; i++) {
    int tiny = (i & 32) != 0;
    x[i] = tiny ? 1e-40f : 1e-20f;
    y[i] = tiny ? 1.0f : 1e-20f;
  }
  int64_t dims[1] = {N};
  cxla_arg args[2] = {{NULL, x, sizeof *x * N, CXLA_F32, 1, dims}, {NULL, y, sizeof *y * N, CXLA_F32, 1, dims}};
  cxla_buffer *res = NULL;
  unsigned own = cx_fpenv_get();
  cx_fpenv_set(own | caller_bits);
  unsigned before = cx_fpenv_get() & ~EXCEPTION_FLAGS;
  cxla_status st = cxla_executable_execute_args(exe, 2, args, &res);
  unsigned after = cx_fpenv_get() & ~EXCEPTION_FLAGS;
  cx_fpenv_set(own); /* the checks below compare denormals: IEEE */
  CHECK_OK(st);
  CHECK_MSG(after == before, "the caller's control word %#x became %#x", before, after);
  const float *r = res ? cxla_buffer_data(res) : NULL;
  if (r) {
    *zeros = *ieee = 0;
    for (int64_t i = 0; i < N; i++) {
      *zeros += r[i] == 0.0f;
      *ieee += r[i] == x[i] * y[i] && r[i] != 0.0f;
    }
  }
  cxla_buffer_destroy(res);
out:
  cxla_executable_destroy(exe);
  free(x);
  free(y);
}

static void run(const char *flags, const char *backend, int64_t *zeros, int64_t *ieee) {
  run_from(0, flags, backend, zeros, ieee);
}

TEST(cpu_flush_denormals_on_every_thread) {
#if defined(__x86_64__)
  int64_t zeros, ieee;
  run("--cpu-flush-denormals=on --threads=2", "cpu", &zeros, &ieee);
  CHECK_MSG(zeros == N && ieee == 0, "flushed: %lld of %d elements 0, %lld denormal", (long long)zeros, N,
            (long long)ieee);
  run("--cpu-flush-denormals=off --threads=2", "cpu", &zeros, &ieee);
  CHECK_MSG(zeros == 0 && ieee == N, "IEEE: %lld of %d elements 0, %lld denormal as IEEE's", (long long)zeros, N,
            (long long)ieee);
  run("--cpu-flush-denormals=on", "interp", &zeros, &ieee); /* the reference never flushes */
  CHECK_MSG(zeros == 0 && ieee == N, "interpreter: %lld of %d elements 0", (long long)zeros, N);
#endif
}

/* The flag decides, not the calling thread: a caller already running with FTZ and DAZ (a
 * framework's worker thread) gets IEEE results without the flag, as XLA:CPU's client sets its
 * own word around every execution; its word comes back afterwards. */
TEST(cpu_flush_denormals_the_flag_not_the_caller) {
#if defined(__x86_64__)
  unsigned flushing = CX_FPENV_FTZ | CX_FPENV_DAZ;
  int64_t zeros, ieee, izeros, iieee;
  run_from(flushing, "--cpu-flush-denormals=off --threads=2", "cpu", &zeros, &ieee);
  run_from(flushing, "--cpu-flush-denormals=on", "interp", &izeros, &iieee);
  CHECK_MSG(zeros == 0 && ieee == N, "a caller with FTZ and DAZ, flag off: %lld of %d elements 0", (long long)zeros, N);
  CHECK_MSG(izeros == 0 && iieee == N, "a caller with FTZ and DAZ, interpreter: %lld of %d elements 0",
            (long long)izeros, N);
#endif
}
