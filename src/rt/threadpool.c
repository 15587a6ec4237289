/* threadpool.c — a pthread pool with dynamically chunked parallel_for.
 *
 * Design (see threadpool.h for the contract):
 *  - A job lives on the stack of the thread that posts it. It is listed in the pool's FIFO of
 *    jobs with unclaimed chunks; workers join the oldest listed job, claim chunks until none
 *    are left, then unlist it and leave. The chunks are dealt out in contiguous ranges, one per
 *    thread (the poster's first, worker i's the (i+2)-th): each thread runs its own range
 *    front to back, then takes what is left of the others' from their end (job.ranges says
 *    why). Joining and leaving happen
 *    under the pool mutex and are counted in job->helpers, so the poster knows when no worker
 *    can touch its job any more: it unlists the job itself, then waits for helpers == 0.
 *  - Jobs from several threads are served concurrently (not serialised), and the poster always
 *    works on its own job, so progress never depends on a free worker: nested or concurrent
 *    parallel_for calls cannot deadlock.
 *  - Idle workers spin for a while (cx_threadpool_set_idle_spin, 200 us unless set), then sleep
 *    on a condition variable. Kernels of one execution come back to back, and so do the
 *    executions of a training loop driven from Python, whose own 20-50 us between two steps
 *    outlasted a 30 us spin: a woken worker then came tens of microseconds late to the step's
 *    first GEMM, whose poster ran both shares itself (train_peers.py's MLP step: medians 0.63-0.70
 *    ms at 30 us, 0.41-0.62 ms at 200 us).
 *    The poster wakes only as many sleepers as the job has chunks to share. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>
#include "rt/threadpool.h"
#include "util/fpenv.h"
#include "core/trace.h"
#include "util/util.h"

/* Chunks per thread: more than one so that a thread slowed by the OS (or busy with another
 * job) does not hold everyone up; few enough that claiming costs nothing next to a chunk. */
#define CHUNKS_PER_THREAD 4
/* Participants with a range of their own: the poster has the first, worker i the (i+2)-th (a
 * pool of more threads shares them round). */
#define MAX_RANGES 16
/* How long a poster spins for its helpers to leave before it sleeps (they are finishing a chunk). */
#define HELPERS_SPIN_NS 30000
/* An idle worker's spin before it sleeps, unless cx_threadpool_set_idle_spin says otherwise. */
#define IDLE_SPIN_NS 200000
/* ... and its spin while an execution is in progress (cx_threadpool_hold), when that is longer:
 * a while loop of small kernels runs on the executing thread alone for longer than the idle
 * spin, and the worker asleep at its end came late to the next parallel kernel (compare_jax's
 * scan, 4096 trips then a 4 MB fill: 1.04 ms a run, against 0.84 on one thread). */
#define HOLD_SPIN_NS 5000000

/* The chunks [lo, hi) of one participant's range, packed as lo | hi << 32 so that one
 * compare-and-swap claims from either end: the owner takes from the front, others from the back. */
typedef struct range {
  _Alignas(64) atomic_ullong lohi;
} range;

typedef struct worker {
  struct cx_threadpool *p;
  int index; /* 0 for the first worker: its range is a job's second */
} worker;

typedef struct job {
  cx_kernel_fn fn;
  void **args;
  int64_t base, rem, nchunks;   /* chunk c covers [c*base + min(c, rem), next chunk's begin) */
  /* Each participant's contiguous share of the chunks. A kernel's rows and the GEMM shares of
   * the product that reads them next then fall to the same thread, whose L2 cache still holds
   * them: with chunks claimed first come, first served, a thread read half of what it needed
   * from the other core's cache (the transformer step: 4% slower). A thread that has run its
   * own range takes chunks from the end of the others', so a late or slow one holds no one up. */
  range ranges[MAX_RANGES];
  int nranges;
  atomic_int helpers;           /* workers inside run_chunks (changed under the pool mutex) */
  int listed;                   /* in the pool's list (under the mutex) */
  struct job *link;
  cx_trace *trace;              /* when tracing: each thread's share is one event */
  const char *name;
  const cx_trace_args *targs;
  unsigned fpenv;               /* the poster's floating-point control word (util/fpenv.h) */
} job;

struct cx_threadpool {
  pthread_mutex_t mu;
  pthread_cond_t work_cv; /* workers sleep here while no job is listed */
  pthread_cond_t done_cv; /* posters sleep here until their helpers have left */
  job *head, *tail;       /* listed jobs, oldest first */
  atomic_uint epoch;      /* bumped per posted job, so spinning workers notice without the lock */
  atomic_llong idle_spin_ns; /* an idle worker's spin before it sleeps */
  atomic_int holds;       /* executions in progress (cx_threadpool_hold) */
  int sleepers, stop;
  int nworkers;
  pthread_t *threads;
  worker *workers;        /* each thread's argument */
};

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int64_t chunk_begin(const job *j, int64_t c) {
  return c * j->base + (c < j->rem ? c : j->rem);
}

/* Claims a chunk of range r: its first when `front`, else its last; -1 when it has none left. */
static int64_t claim(range *r, int front) {
  unsigned long long v = atomic_load_explicit(&r->lohi, memory_order_relaxed);
  for (;;) {
    unsigned long long lo = v & 0xffffffffu, hi = v >> 32;
    if (lo >= hi) return -1;
    unsigned long long nv = front ? (lo + 1) | hi << 32 : lo | (hi - 1) << 32;
    if (atomic_compare_exchange_weak_explicit(&r->lohi, &v, nv, memory_order_relaxed, memory_order_relaxed))
      return (int64_t)(front ? lo : hi - 1);
  }
}

/* Runs chunks until none is left: those of range `me` first, then the others' from their end. */
static void run_chunks(job *j, int me) {
  int64_t t0 = j->trace ? cx_trace_now() : 0, ran = 0, iters = 0;
  for (int k = 0; k < j->nranges; k++) {
    int r = (me + k) % j->nranges;
    for (int64_t c; (c = claim(&j->ranges[r], k == 0)) >= 0;) {
      int64_t b = chunk_begin(j, c), e = chunk_begin(j, c + 1);
      j->fn(j->args, b, e);
      ran++, iters += e - b;
    }
  }
  if (!j->trace || !ran || j->nchunks == 1) return; /* one chunk: the kernel's own event says it */
  /* the chunks this thread ran, on this thread's track of the timeline */
  cx_trace_args a = j->targs ? *j->targs : (cx_trace_args){0};
  a.n = 2, a.key[0] = "chunks", a.val[0] = ran, a.key[1] = "iterations", a.val[1] = iters;
  cx_trace_add(j->trace, j->name, "chunks", t0, cx_trace_now(), &a);
}

/* Under the mutex. */
static void unlist(cx_threadpool *p, job *j) {
  if (!j->listed) return;
  job **pp = &p->head, *prev = NULL;
  while (*pp != j) {
    prev = *pp;
    pp = &(*pp)->link;
  }
  *pp = j->link;
  if (p->tail == j) p->tail = prev;
  j->listed = 0;
  j->link = NULL;
}

/* Spins until the epoch moves away from e (1) or the idle spin passes (0). */
static int spin_for_work(cx_threadpool *p, unsigned e) {
  int64_t idle = atomic_load_explicit(&p->idle_spin_ns, memory_order_relaxed), t0 = now_ns();
  int64_t until = t0 + idle, held = t0 + (idle > HOLD_SPIN_NS ? idle : HOLD_SPIN_NS);
  for (int i = 1;; i++) {
    if (atomic_load_explicit(&p->epoch, memory_order_relaxed) != e) return 1;
    cpu_relax();
    if ((i & 63) == 0) {
      int64_t t = now_ns();
      /* a zero idle spin gives the cores back at once, execution or not */
      if (t > until && (!idle || !atomic_load_explicit(&p->holds, memory_order_relaxed) || t > held)) return 0;
    }
  }
}

static void *worker_main(void *arg) {
  const worker *w = arg;
  cx_threadpool *p = w->p;
  pthread_mutex_lock(&p->mu);
  while (!p->stop) {
    job *j = p->head;
    if (!j) {
      unsigned e = atomic_load(&p->epoch);
      pthread_mutex_unlock(&p->mu);
      int moved = spin_for_work(p, e);
      pthread_mutex_lock(&p->mu);
      if (moved || p->head || p->stop) continue;
      /* The check above and the wait are under the mutex that posters hold while listing a
       * job and reading `sleepers`, so no wake-up is lost. */
      p->sleepers++;
      pthread_cond_wait(&p->work_cv, &p->mu);
      p->sleepers--;
      continue;
    }
    atomic_fetch_add(&j->helpers, 1);
    pthread_mutex_unlock(&p->mu);
    unsigned own = cx_fpenv_get(); /* the job runs in its poster's environment (FTZ/DAZ) */
    if (own != j->fpenv) cx_fpenv_set(j->fpenv);
    run_chunks(j, (w->index + 1) % j->nranges);
    if (own != j->fpenv) cx_fpenv_set(own);
    pthread_mutex_lock(&p->mu);
    unlist(p, j); /* every chunk is claimed: nobody else should join */
    if (atomic_fetch_sub(&j->helpers, 1) == 1) pthread_cond_broadcast(&p->done_cv);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

int cx_threadpool_ncpus(void) {
  /* The affinity mask is what this process may really use (taskset, cgroups); sysconf's
   * online count is the fallback. */
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

cx_threadpool *cx_threadpool_create(int nthreads) {
  if (nthreads <= 0) nthreads = cx_threadpool_ncpus();
  cx_threadpool *p = cx_calloc(1, sizeof *p);
  if (!p) return NULL;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->work_cv, NULL);
  pthread_cond_init(&p->done_cv, NULL);
  atomic_init(&p->epoch, 0);
  atomic_init(&p->idle_spin_ns, IDLE_SPIN_NS);
  atomic_init(&p->holds, 0);
  if (nthreads > 1 && (!(p->threads = cx_calloc((size_t)(nthreads - 1), sizeof *p->threads)) ||
                       !(p->workers = cx_calloc((size_t)(nthreads - 1), sizeof *p->workers)))) {
    cx_threadpool_destroy(p);
    return NULL;
  }
  /* A refused thread (EAGAIN under a process limit) only makes the pool smaller. */
  for (int i = 0; i < nthreads - 1; i++) {
    p->workers[p->nworkers] = (worker){p, p->nworkers};
    if (pthread_create(&p->threads[p->nworkers], NULL, worker_main, &p->workers[p->nworkers]) != 0) break;
    p->nworkers++;
  }
  return p;
}

void cx_threadpool_destroy(cx_threadpool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->stop = 1;
  atomic_fetch_add(&p->epoch, 1); /* spinning workers look up too */
  pthread_cond_broadcast(&p->work_cv);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < p->nworkers; i++) pthread_join(p->threads[i], NULL);
  cx_free(p->threads);
  cx_free(p->workers);
  pthread_cond_destroy(&p->work_cv);
  pthread_cond_destroy(&p->done_cv);
  pthread_mutex_destroy(&p->mu);
  cx_free(p);
}

int cx_threadpool_size(const cx_threadpool *p) { return p ? p->nworkers + 1 : 1; }

void cx_threadpool_set_idle_spin(cx_threadpool *p, int64_t ns) {
  if (p) atomic_store_explicit(&p->idle_spin_ns, ns < 0 ? 0 : ns, memory_order_relaxed);
}

void cx_threadpool_hold(cx_threadpool *p, int on) {
  if (p) atomic_fetch_add_explicit(&p->holds, on ? 1 : -1, memory_order_relaxed);
}

int cx_threadpool_sleepers(cx_threadpool *p) {
  if (!p) return 0;
  pthread_mutex_lock(&p->mu);
  int n = p->sleepers;
  pthread_mutex_unlock(&p->mu);
  return n;
}

int64_t cx_threadpool_parallel_for(cx_threadpool *p, cx_kernel_fn fn, void **args, int64_t total,
                                   int64_t grain) {
  return cx_threadpool_parallel_for_traced(p, fn, args, total, grain, NULL, NULL, NULL);
}

int64_t cx_threadpool_parallel_for_traced(cx_threadpool *p, cx_kernel_fn fn, void **args, int64_t total,
                                          int64_t grain, cx_trace *trace, const char *name,
                                          const cx_trace_args *targs) {
  if (total <= 0) return 0;
  if (grain < 1) grain = 1;
  int64_t nthreads = cx_threadpool_size(p);
  int64_t nchunks = total / grain; /* so that every chunk has >= grain iterations */
  if (nchunks > nthreads * CHUNKS_PER_THREAD) nchunks = nthreads * CHUNKS_PER_THREAD;
  if (nchunks <= 1 || nthreads <= 1) nchunks = 1;
  job j = {.fn = fn, .args = args, .base = total / nchunks, .rem = total % nchunks, .nchunks = nchunks,
           .trace = trace, .name = name, .targs = targs};
  /* (at most nthreads * CHUNKS_PER_THREAD chunks: a range's two 32-bit halves hold them) */
  j.nranges = (int)(nthreads < nchunks ? nthreads : nchunks);
  if (j.nranges > MAX_RANGES) j.nranges = MAX_RANGES;
  for (int r = 0; r < j.nranges; r++)
    atomic_init(&j.ranges[r].lohi, (unsigned long long)(nchunks * r / j.nranges) |
                                       (unsigned long long)(nchunks * (r + 1) / j.nranges) << 32);
  if (nchunks == 1) {
    run_chunks(&j, 0);
    return 1;
  }
  atomic_init(&j.helpers, 0);
  j.fpenv = cx_fpenv_get();

  pthread_mutex_lock(&p->mu);
  j.listed = 1;
  if (p->tail) p->tail->link = &j;
  else p->head = &j;
  p->tail = &j;
  atomic_fetch_add(&p->epoch, 1);
  int wake = p->sleepers < nchunks - 1 ? p->sleepers : (int)(nchunks - 1);
  for (int i = 0; i < wake; i++) pthread_cond_signal(&p->work_cv);
  pthread_mutex_unlock(&p->mu);

  run_chunks(&j, 0);

  /* Helpers still running their last chunk usually finish within microseconds. */
  int64_t until = now_ns() + HELPERS_SPIN_NS;
  for (int i = 1; atomic_load(&j.helpers) > 0; i++) {
    cpu_relax();
    if ((i & 63) == 0 && now_ns() > until) break;
  }
  pthread_mutex_lock(&p->mu);
  unlist(p, &j);
  while (atomic_load(&j.helpers) > 0) pthread_cond_wait(&p->done_cv, &p->mu);
  pthread_mutex_unlock(&p->mu);
  return nchunks;
}
