/* test_runtime_pool.c — the thread pool and cx_rt_parallel_for: every index of [0, total) is
 * run exactly once, chunks respect the grain, concurrent and nested callers work, failures
 * stop later calls; prints the per-call overhead. */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>
#include "rt/rt.h"
#include "rt/threadpool.h"
#include "test.h"
#include "util/util.h"

typedef struct {
  atomic_int *hits;       /* per index */
  atomic_llong calls;     /* chunks run */
  atomic_llong min_len;   /* shortest chunk */
  atomic_llong bad_range; /* chunks outside [0, total) or empty */
  int64_t total;
} cover;

static void mark(void **args, int64_t begin, int64_t end) {
  cover *c = args[0];
  atomic_fetch_add(&c->calls, 1);
  if (begin < 0 || end > c->total || begin >= end) {
    atomic_fetch_add(&c->bad_range, 1);
    return;
  }
  long long len = end - begin, cur = atomic_load(&c->min_len);
  while (len < cur && !atomic_compare_exchange_weak(&c->min_len, &cur, len)) {}
  for (int64_t i = begin; i < end; i++) atomic_fetch_add(&c->hits[i], 1);
}

/* Runs one parallel_for and checks coverage; returns the number of failures seen. */
static int check_cover(cx_threadpool *p, int64_t total, int64_t grain) {
  cover c = {.total = total};
  c.hits = calloc((size_t)(total > 0 ? total : 1), sizeof *c.hits);
  atomic_init(&c.calls, 0);
  atomic_init(&c.min_len, INT64_MAX);
  atomic_init(&c.bad_range, 0);
  void *args[1] = {&c};
  int64_t n = cx_threadpool_parallel_for(p, mark, args, total, grain);
  int fails = 0;
  for (int64_t i = 0; i < total && !fails; i++)
    if (atomic_load(&c.hits[i]) != 1) {
      test_fail(__FILE__, __LINE__, "threads %d total %lld grain %lld: index %lld run %d times",
                cx_threadpool_size(p), (long long)total, (long long)grain, (long long)i, atomic_load(&c.hits[i]));
      fails++;
    }
  int64_t g = grain < 1 ? 1 : grain;
  if (atomic_load(&c.bad_range)) fails++, test_fail(__FILE__, __LINE__, "empty or out-of-range chunk");
  if (n != atomic_load(&c.calls)) fails++, test_fail(__FILE__, __LINE__, "returned %lld chunks, ran %lld", (long long)n, (long long)atomic_load(&c.calls));
  if (total <= 0 && n != 0) fails++, test_fail(__FILE__, __LINE__, "total %lld ran %lld chunks", (long long)total, (long long)n);
  /* Split runs have every chunk >= grain; an unsplit run is one chunk of everything. */
  if (n > 1 && atomic_load(&c.min_len) < g)
    fails++, test_fail(__FILE__, __LINE__, "total %lld grain %lld: a chunk of %lld", (long long)total, (long long)g, (long long)atomic_load(&c.min_len));
  if (total > 0 && total < 2 * g && n != 1) fails++, test_fail(__FILE__, __LINE__, "total %lld < 2*grain %lld split into %lld", (long long)total, (long long)g, (long long)n);
  if (n > 1 && cx_threadpool_size(p) == 1) fails++, test_fail(__FILE__, __LINE__, "a 1-thread pool split the range");
  free(c.hits);
  return fails;
}

TEST(runtime_pool_covers_every_index_once) {
  static const int64_t totals[] = {0, -3, 1, 2, 3, 7, 8, 63, 64, 65, 1000, 4097, 100003};
  static const int64_t grains[] = {-1, 0, 1, 2, 3, 7, 64, 1000, 200000};
  int sizes[] = {0, 1, 2, 3, 8};
  for (int s = 0; s < 5; s++) {
    cx_threadpool *p = sizes[s] ? cx_threadpool_create(sizes[s]) : NULL;
    if (sizes[s]) CHECK(p != NULL);
    if (sizes[s] > 0 && p) CHECK(cx_threadpool_size(p) >= 1 && cx_threadpool_size(p) <= sizes[s]);
    int fails = 0;
    for (int t = 0; t < CX_ARRAY_LEN(totals) && fails < 3; t++)
      for (int g = 0; g < CX_ARRAY_LEN(grains) && fails < 3; g++) fails += check_cover(p, totals[t], grains[g]);
    cx_threadpool_destroy(p);
  }
}

TEST(runtime_pool_default_size_is_all_cpus) {
  cx_threadpool *p = cx_threadpool_create(0);
  CHECK(p != NULL);
  CHECK_EQ_INT(cx_threadpool_size(p), cx_threadpool_ncpus());
  CHECK(cx_threadpool_ncpus() >= 1);
  cx_threadpool_destroy(p);
  CHECK_EQ_INT(cx_threadpool_size(NULL), 1);
  cx_threadpool_destroy(NULL);
}

/* Chunks that take a while must be spread over several threads. */
static _Atomic(pthread_t) seen[64];
static atomic_int nseen;
static void note_thread(void **args, int64_t begin, int64_t end) {
  (void)args;
  pthread_t me = pthread_self();
  int n = atomic_load(&nseen), found = 0;
  for (int i = 0; i < n && i < 64; i++) found |= pthread_equal(atomic_load(&seen[i]), me);
  if (!found) {
    int slot = atomic_fetch_add(&nseen, 1);
    if (slot < 64) atomic_store(&seen[slot], me);
  }
  struct timespec ts = {0, 200000 * (end - begin)};
  nanosleep(&ts, NULL);
}

TEST(runtime_pool_uses_several_threads) {
  cx_threadpool *p = cx_threadpool_create(4);
  if (!p) { CHECK(p != NULL); return; }
  int distinct = 0;
  for (int round = 0; round < 5 && distinct < 2; round++) {
    atomic_store(&nseen, 0);
    cx_threadpool_parallel_for(p, note_thread, NULL, 16, 1);
    distinct = atomic_load(&nseen);
  }
  CHECK_MSG(distinct >= 2, "16 chunks of 0.2 ms ran on %d thread(s) of a %d-thread pool", distinct, cx_threadpool_size(p));
  cx_threadpool_destroy(p);
}

/* Which thread ran each of a job's chunks (one chunk = one iteration here). */
static _Atomic(pthread_t) chunk_owner[8];
static void note_chunk(void **args, int64_t begin, int64_t end) {
  (void)args;
  for (int64_t i = begin; i < end; i++) atomic_store(&chunk_owner[i], pthread_self());
  struct timespec ts = {0, 100000 * (end - begin)};
  nanosleep(&ts, NULL);
}

/* Each thread runs a contiguous range of the chunks, the poster the first: on two threads, the
 * worker's chunks are one run that starts at the middle (its own range, front first), extended
 * downwards only by what it took from the end of the poster's; and the poster has chunk 0 (a
 * thief could take it only while the poster is descheduled between posting and running). */
TEST(runtime_pool_threads_keep_their_own_range) {
  cx_threadpool *p = cx_threadpool_create(2);
  if (!p || cx_threadpool_size(p) != 2) {
    CHECK_MSG(p && cx_threadpool_size(p) == 2, "no 2-thread pool");
    cx_threadpool_destroy(p);
    return;
  }
  pthread_t me = pthread_self();
  int poster_first = 0, worker_rounds = 0, rounds = 20;
  for (int round = 0; round < rounds; round++) {
    CHECK_EQ_INT((int)cx_threadpool_parallel_for(p, note_chunk, NULL, 8, 1), 8);
    int lo = 8, hi = -1, nworker = 0;
    for (int c = 0; c < 8; c++)
      if (!pthread_equal(atomic_load(&chunk_owner[c]), me)) {
        nworker++;
        if (c < lo) lo = c;
        if (c > hi) hi = c;
      }
    poster_first += pthread_equal(atomic_load(&chunk_owner[0]), me) != 0;
    if (!nworker) continue;
    worker_rounds++;
    CHECK_MSG(hi - lo + 1 == nworker && lo <= 4 && hi >= 4,
              "round %d: the worker ran %d chunks between %d and %d, not one run through chunk 4", round, nworker,
              lo, hi);
  }
  CHECK_MSG(worker_rounds > 0, "the worker ran no chunk of 8 x 0.1 ms in %d rounds", rounds);
  CHECK_MSG(poster_first * 2 >= rounds, "the poster ran chunk 0 in only %d of %d rounds", poster_first, rounds);
  cx_threadpool_destroy(p);
}

/* Several user threads post jobs on one pool at once. */
typedef struct {
  cx_threadpool *p;
  int fails;
  int id;
} caller;

static void *caller_main(void *arg) {
  caller *c = arg;
  for (int i = 0; i < 60; i++) c->fails += check_cover(c->p, 97 + 13 * ((i + c->id) % 50), 1 + (i % 5));
  return NULL;
}

TEST(runtime_pool_concurrent_callers) {
  cx_threadpool *p = cx_threadpool_create(3);
  if (!p) { CHECK(p != NULL); return; }
  pthread_t th[6];
  caller cs[6];
  for (int i = 0; i < 6; i++) {
    cs[i] = (caller){p, 0, i};
    CHECK(pthread_create(&th[i], NULL, caller_main, &cs[i]) == 0);
  }
  for (int i = 0; i < 6; i++) {
    pthread_join(th[i], NULL);
    CHECK_EQ_INT(cs[i].fails, 0);
  }
  cx_threadpool_destroy(p);
}

/* A chunk that itself calls parallel_for on the same pool (re-entrant use) completes. */
typedef struct {
  cx_threadpool *p;
  atomic_int inner_fails;
} nest;
static void outer_chunk(void **args, int64_t begin, int64_t end) {
  nest *n = args[0];
  for (int64_t i = begin; i < end; i++) atomic_fetch_add(&n->inner_fails, check_cover(n->p, 50 + i, 2));
}

TEST(runtime_pool_nested_calls_do_not_deadlock) {
  cx_threadpool *p = cx_threadpool_create(3);
  if (!p) { CHECK(p != NULL); return; }
  nest n = {p};
  atomic_init(&n.inner_fails, 0);
  void *args[1] = {&n};
  CHECK(cx_threadpool_parallel_for(p, outer_chunk, args, 24, 1) > 1);
  CHECK_EQ_INT(atomic_load(&n.inner_fails), 0);
  cx_threadpool_destroy(p);
}

/* The same reduction on 1 thread and on many gives the same (order-independent) answer. */
static void square_into(void **args, int64_t begin, int64_t end) {
  const int64_t *in = args[0];
  int64_t *out = args[1];
  for (int64_t i = begin; i < end; i++) out[i] = in[i] * in[i];
}

TEST(runtime_pool_one_thread_matches_many) {
  enum { N = 50000 };
  int64_t *in = malloc(N * sizeof *in), *a = calloc(N, sizeof *a), *b = calloc(N, sizeof *b);
  for (int i = 0; i < N; i++) in[i] = i * 7 - 3;
  cx_threadpool *one = cx_threadpool_create(1), *many = cx_threadpool_create(6);
  void *aa[2] = {in, a}, *bb[2] = {in, b};
  CHECK_EQ_INT(cx_threadpool_parallel_for(one, square_into, aa, N, 16), 1);
  CHECK(cx_threadpool_parallel_for(many, square_into, bb, N, 16) > 1);
  CHECK(!memcmp(a, b, N * sizeof *a));
  CHECK_EQ_INT(a[N - 1], 349990LL * 349990LL); /* (7 * 49999 - 3)^2 */
  CHECK_EQ_INT(a[0], 9);
  cx_threadpool_destroy(one);
  cx_threadpool_destroy(many);
  free(in);
  free(a);
  free(b);
}

static void count_calls(void **args, int64_t begin, int64_t end) {
  atomic_fetch_add((atomic_llong *)args[0], end - begin);
}

TEST(runtime_parallel_for_inline_and_after_failure) {
  atomic_llong n;
  atomic_init(&n, 0);
  void *args[1] = {&n};
  cx_rt rt = {0};
  cx_rt_parallel_for(&rt, count_calls, args, 1000, 10, 0); /* no pool: inline */
  CHECK_EQ_INT(atomic_load(&n), 1000);
  rt.pool = cx_threadpool_create(2);
  cx_rt_parallel_for(&rt, count_calls, args, 1000, 10, 0);
  CHECK_EQ_INT(atomic_load(&n), 2000);
  rt.status = CXLA_ERR_RUNTIME; /* an earlier failure: later calls do nothing */
  cx_rt_parallel_for(&rt, count_calls, args, 1000, 10, 0);
  CHECK_EQ_INT(atomic_load(&n), 2000);
  cx_threadpool_destroy(rt.pool);
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Busy work of about (end - begin) * 0.1 us, so that every thread gets to join. */
static void busy(void **args, int64_t begin, int64_t end) {
  (void)args;
  double until = now_us() + (double)(end - begin) * 0.1;
  while (now_us() < until) {}
}

/* Not a pass/fail measure (machines differ); printed for the record. Overhead = time per call
 * minus the ideal time of its work spread evenly over the pool's threads. */
TEST(runtime_pool_overhead_per_call) {
  cx_threadpool *p = cx_threadpool_create(0);
  if (!p) { CHECK(p != NULL); return; }
  enum { CALLS = 5000, UNITS = 400 }; /* 40 us of work per call */
  int T = cx_threadpool_size(p);
  double ideal = UNITS * 0.1 / T;
  for (int i = 0; i < 200; i++) cx_threadpool_parallel_for(p, busy, NULL, UNITS, 1);
  double t0 = now_us();
  for (int i = 0; i < CALLS; i++) cx_threadpool_parallel_for(p, busy, NULL, UNITS, 1);
  double hot = (now_us() - t0) / CALLS;
  /* After a pause longer than the spin, workers are asleep and must be woken. */
  double cold = 0;
  for (int i = 0; i < 50; i++) {
    usleep(2000);
    double t1 = now_us();
    cx_threadpool_parallel_for(p, busy, NULL, UNITS, 1);
    cold += now_us() - t1;
  }
  cold /= 50;
  printf("    parallel_for, %d threads, %.1f us of work per call (ideal %.1f us): %.2f us/call back to back "
         "(overhead %.2f us), %.2f us/call from sleep (overhead %.2f us)\n",
         T, UNITS * 0.1, ideal, hot, hot - ideal, cold, cold - ideal);
  CHECK(hot > 0);
  cx_threadpool_destroy(p);
}

/* Polls until the pool has `want` sleeping workers; 0 if that takes over 5 s. */
static int wait_sleepers(cx_threadpool *p, int want) {
  for (int i = 0; i < 5000; i++) {
    if (cx_threadpool_sleepers(p) == want) return 1;
    usleep(1000);
  }
  return 0;
}

/* The idle spin is the pool's setting: a long one keeps the workers awake after a job, 0 sends
 * them to sleep at once; destroying a pool whose workers spin long does not wait for the spin. */
TEST(runtime_pool_idle_spin_is_settable) {
  cx_threadpool *p = cx_threadpool_create(3);
  if (!p) { CHECK(p != NULL); return; }
  int workers = cx_threadpool_size(p) - 1;
  cx_threadpool_set_idle_spin(p, (int64_t)10 * 1000000000); /* 10 s */
  cx_threadpool_parallel_for(p, busy, NULL, 64, 1); /* wakes every sleeper */
  CHECK_MSG(wait_sleepers(p, 0), "workers woken by a job never left their sleep");
  usleep(50000);
  CHECK_MSG(cx_threadpool_sleepers(p) == 0, "%d worker(s) asleep 50 ms after a job, with a 10 s idle spin",
            cx_threadpool_sleepers(p));
  cx_threadpool_set_idle_spin(p, 0);
  cx_threadpool_parallel_for(p, busy, NULL, 64, 1); /* ends their long spin */
  CHECK_MSG(wait_sleepers(p, workers), "with no idle spin, %d of %d workers asleep after 5 s",
            cx_threadpool_sleepers(p), workers);
  cx_threadpool_set_idle_spin(p, (int64_t)10 * 1000000000);
  cx_threadpool_parallel_for(p, busy, NULL, 64, 1);
  double t0 = now_us();
  cx_threadpool_destroy(p);
  double took = now_us() - t0;
  CHECK_MSG(took < 2e6, "destroy waited %.0f ms for spinning workers", took / 1e3);
}

/* While an execution holds the pool, idle workers spin past the idle spin (up to 5 ms), so the
 * next kernel after a stretch the executing thread ran alone finds them awake; without a hold
 * they sleep after the idle spin, and an idle spin of 0 sends them to sleep even under a hold. */
TEST(runtime_pool_hold_keeps_workers_awake) {
  cx_threadpool *p = cx_threadpool_create(2);
  if (!p) { CHECK(p != NULL); return; }
  cx_threadpool_set_idle_spin(p, 200000); /* 200 us */
  cx_threadpool_hold(p, 1);
  double t0 = now_us();
  cx_threadpool_parallel_for(p, busy, NULL, 64, 1);
  usleep(2000);
  int asleep = cx_threadpool_sleepers(p);
  double took = now_us() - t0;
  if (took < 4000) /* a loaded machine may oversleep past the 5 ms: then nothing to say */
    CHECK_MSG(asleep == 0, "%d worker(s) asleep %.1f ms after a job, under a hold, with a 200 us idle spin", asleep,
              took / 1e3);
  cx_threadpool_hold(p, 0);
  cx_threadpool_parallel_for(p, busy, NULL, 64, 1);
  CHECK_MSG(wait_sleepers(p, 1), "without a hold, the worker never slept after its 200 us idle spin");
  cx_threadpool_set_idle_spin(p, 0);
  cx_threadpool_hold(p, 1);
  cx_threadpool_parallel_for(p, busy, NULL, 64, 1);
  CHECK_MSG(wait_sleepers(p, 1), "with no idle spin, a hold kept the worker awake");
  cx_threadpool_hold(p, 0);
  cx_threadpool_destroy(p);
}
