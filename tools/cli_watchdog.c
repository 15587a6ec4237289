/* cli_watchdog.c — `cxla run --timeout=SECONDS`: when the time is up, say what was running
 * and stop. A module that runs too long is one of three things, and each wants another fix:
 * a slow compile (the phase is "compiling"), a while loop that keeps iterating (its iteration
 * count still grows: maybe endless, and --max-loop-iterations turns it into an error), or a
 * slow kernel (a kernel is named and no loop iterates). The watchdog samples the context's
 * activity twice to tell the last two apart. A slow run on the interpreter is named as such:
 * under --check the reference is often what takes long (it computes one element at a time),
 * not the compiled code. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"

static struct {
  cxla_context *ctx;
  double seconds;
  atomic_int done;
  pthread_t thread;
  int started;
} wd;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void nap_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static void *watch(void *arg) {
  (void)arg;
  double end = now_s() + wd.seconds;
  while (!atomic_load(&wd.done) && now_s() < end) nap_ms(20);
  if (atomic_load(&wd.done)) return NULL;
  char what[256], again[256];
  int64_t n0 = 0, n1 = 0;
  cxla_context_activity(wd.ctx, what, sizeof what, &n0);
  nap_ms(300);
  if (atomic_load(&wd.done)) return NULL;
  cxla_context_activity(wd.ctx, again, sizeof again, &n1);
  if (!strncmp(again, "compiling", 9))
    fprintf(stderr, "cxla: error: timed out after %g s %s: a slow compile\n", wd.seconds, again);
  else if (n1 > n0)
    fprintf(stderr,
            "cxla: error: timed out after %g s in a while loop that keeps iterating (%lld iterations so far, %lld in "
            "the last 0.3 s; now %s): an endless loop? --max-loop-iterations=N stops loops with an error\n",
            wd.seconds, (long long)n1, (long long)(n1 - n0), again);
  else if (strstr(again, " on interp"))
    fprintf(stderr,
            "cxla: error: timed out after %g s %s: a slow reference run (the interpreter computes one element at a "
            "time; no loop is iterating; %lld iterations so far)\n",
            wd.seconds, again, (long long)n1);
  else
    fprintf(stderr, "cxla: error: timed out after %g s %s: a slow kernel (no loop is iterating; %lld iterations so far)\n",
            wd.seconds, again, (long long)n1);
  fflush(stdout);
  fflush(stderr);
  _exit(CLI_FAIL); /* the work cannot be interrupted safely; the user asked for it to end */
}

int cli_watchdog_start(cxla_context *ctx, double seconds) {
  wd.ctx = ctx;
  wd.seconds = seconds;
  atomic_store(&wd.done, 0);
  wd.started = pthread_create(&wd.thread, NULL, watch, NULL) == 0;
  return wd.started ? CLI_OK : cli_error("cannot start the --timeout watchdog");
}

void cli_watchdog_stop(void) {
  if (!wd.started) return;
  atomic_store(&wd.done, 1);
  pthread_join(wd.thread, NULL);
  wd.started = 0;
}
