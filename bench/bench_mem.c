/* bench_mem.c — the memory-bound groups: the 9-op elementwise chain against a STREAM triad
 * (gcc -O3 -march=native -fopenmp, same thread count, same 16M-element arrays), its and the row
 * softmax's 1-thread vs N-thread scaling, and the cost of a fresh output (the row reductions
 * themselves: bench_rows.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "baselines.h"
#include "bench_main.h"

#define N_ELEMS bench_elems() /* chain9 length; softmax is side x side, the same count */

typedef struct triad {
  int threads;
  float *a, *b, *c;
  long n;
  int fresh;   /* 1: write into a new calloc'd array each call, as cxla's execute does;
                * 2: a new mmap'd array with MADV_HUGEPAGE; 3: mmap + MAP_POPULATE */
  float *out;  /* the fresh array of the last call */
} triad;

static void triad_release(void *p);

static void triad_call(void *p) {
  triad *t = p;
  bl_set_threads(t->threads);
  float *a = t->a;
  size_t bytes = (size_t)t->n * sizeof *a;
  if (t->fresh) {
    triad_release(t);
    if (t->fresh == 1) a = t->out = calloc((size_t)t->n, sizeof *a);
    else {
      void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | (t->fresh == 3 ? MAP_POPULATE : 0), -1, 0);
      a = t->out = p == MAP_FAILED ? NULL : p;
      if (a && t->fresh == 2) madvise(a, bytes, MADV_HUGEPAGE);
    }
    if (!a) return;
  }
  bl_triad(a, t->b, t->c, 3.0f, t->n);
}

static void triad_release(void *p) {
  triad *t = p;
  if (t->fresh == 1) free(t->out);
  else if (t->out) munmap(t->out, (size_t)t->n * sizeof(float));
  t->out = NULL;
}

static int triad_init(triad *t, int threads, int fresh) {
  memset(t, 0, sizeof *t);
  t->threads = threads;
  t->n = N_ELEMS;
  t->fresh = fresh;
  t->a = malloc(N_ELEMS * sizeof(float));
  t->b = malloc(N_ELEMS * sizeof(float));
  t->c = malloc(N_ELEMS * sizeof(float));
  if (!t->a || !t->b || !t->c) return 1;
  bl_set_threads(threads);
  bl_first_touch(t->a, t->n); /* pages land where the static split will use them */
  bl_first_touch(t->b, t->n);
  bl_first_touch(t->c, t->n);
  bu_fill(t->b, t->n, 7, -1, 1);
  bu_fill(t->c, t->n, 8, -1, 1);
  return 0;
}

static void triad_free(triad *t) {
  free(t->a);
  free(t->b);
  free(t->c);
  triad_release(t);
}

typedef struct chain_c {
  int threads;
  float *out;
  const float *x, *y;
} chain_c;

static void chain_c_call(void *p) {
  chain_c *c = p;
  bl_set_threads(c->threads);
  bl_chain9(c->out, c->x, c->y, N_ELEMS);
}

void group_chain9(void) {
  int T = cfg.threads;
  cxla_context *ctx = new_context();
  if (!ctx) return;
  int64_t dims[1] = {N_ELEMS};
  cxla_literal *in[2] = {bu_literal(ctx, 1, dims, 1, -2, 2), bu_literal(ctx, 1, dims, 2, -2, 2)};
  bu_cxla on, off;
  bu_cxla_open(&on, ctx, hlo_path("chain9.hlo"), "--fusion=on", T, -1, in);
  bu_cxla_open(&off, ctx, hlo_path("chain9.hlo"), "--fusion=off", T, -1, in);
  cxla_context_set_flags(ctx, "--fusion=on");
  triad tr, trf;
  float *ref = malloc(N_ELEMS * sizeof(float));
  if (triad_init(&tr, T, 0) || triad_init(&trf, T, 1) || !ref) {
    fprintf(stderr, "bench: out of memory\n");
    exit(1);
  }
  bl_first_touch(ref, N_ELEMS);
  chain_c cc = {T, ref, cxla_literal_data(in[0]), cxla_literal_data(in[1])};
  bu_contender c[] = {
      {.name = "cxla chain9 (fusion on)", .fn = bu_cxla_call, .after = bu_cxla_release, .arg = &on, .fail_flag = &on.failed},
      {.name = "cxla chain9 --fusion=off", .fn = bu_cxla_call, .after = bu_cxla_release, .arg = &off, .fail_flag = &off.failed},
      {.name = "STREAM triad a=b+s*c (gcc -O3, OpenMP)", .fn = triad_call, .arg = &tr},
      {.name = "triad into a fresh calloc'd output", .fn = triad_call, .after = triad_release, .arg = &trf},
      {.name = "chain9 as one C loop (gcc -O3, OpenMP)", .fn = chain_c_call, .arg = &cc},
  };
  int nc = (int)(sizeof c / sizeof c[0]);
  bu_opts o = opts_for(5);
  bu_interleave(c, nc, &o);
  double bytes = 12.0 * N_ELEMS;
  print_contenders("chain9: 9 elementwise ops, 2 x f32[16M] in, 1 out; 12 B/elem", c, nc, bytes, "GB/s");
  char chk[40], chk_off[40], a[48], b[64];
  check_result(chk, sizeof chk, &on, ref, N_ELEMS, 1e-5);
  check_result(chk_off, sizeof chk_off, &off, ref, N_ELEMS, 1e-5);
  fmt_rate(a, sizeof a, &c[0], bytes, "GB/s");
  fmt_rate(b, sizeof b, &c[2], bytes, "GB/s triad");
  add_row("chain9 16M f32 vs STREAM triad (GB/s, 12 B/elem)", a, b, ratio_best(&c[0], &c[2]), ratio_median(&c[0], &c[2]),
          "≥ 0.85", 0.85, chk);
  fmt_rate(a, sizeof a, &c[0], 0, NULL);
  fmt_rate(b, sizeof b, &c[1], 0, NULL);
  add_row("chain9 fused vs --fusion=off (time)", a, strcat(b, " unfused"), ratio_best(&c[0], &c[1]),
          ratio_median(&c[0], &c[1]), "≥ 3×", 3.0, chk_off);
  fmt_rate(a, sizeof a, &c[0], bytes, "GB/s");
  fmt_rate(b, sizeof b, &c[4], bytes, "GB/s gcc loop");
  add_row("chain9 vs the same 9 ops as one gcc -O3 loop", a, b, ratio_best(&c[0], &c[4]), ratio_median(&c[0], &c[4]),
          "(info)", NAN, NULL);
  fmt_rate(b, sizeof b, &c[3], bytes, "GB/s triad+calloc");
  add_row("chain9 vs triad writing a fresh calloc'd output", a, b, ratio_best(&c[0], &c[3]), ratio_median(&c[0], &c[3]),
          "(info)", NAN, NULL);
  bu_contenders_free(c, (int)(sizeof c / sizeof c[0]));
  bu_cxla_close(&on);
  bu_cxla_close(&off);
  triad_free(&tr);
  triad_free(&trf);
  free(ref);
  cxla_literal_destroy(in[0]);
  cxla_literal_destroy(in[1]);
  cxla_context_destroy(ctx);
}

/* cxla and the triad at 1 thread and at cfg.threads: the speed-up of each. */
void group_scaling(void) {
  int T = cfg.threads;
  if (T < 2) return;
  cxla_context *ctx = new_context();
  if (!ctx) return;
  int64_t d1[1] = {N_ELEMS}, d2[2] = {bench_softmax_side(), bench_softmax_side()};
  cxla_literal *xy[2] = {bu_literal(ctx, 1, d1, 1, -2, 2), bu_literal(ctx, 1, d1, 2, -2, 2)};
  cxla_literal *sx[1] = {bu_literal(ctx, 2, d2, 3, -5, 5)};
  bu_cxla ch1, chT, sm1, smT;
  bu_cxla_open(&ch1, ctx, hlo_path("chain9.hlo"), NULL, 1, -1, xy);
  bu_cxla_open(&chT, ctx, hlo_path("chain9.hlo"), NULL, T, -1, xy);
  bu_cxla_open(&sm1, ctx, hlo_path("softmax.hlo"), NULL, 1, -1, sx);
  bu_cxla_open(&smT, ctx, hlo_path("softmax.hlo"), NULL, T, -1, sx);
  triad t1, tT;
  if (triad_init(&t1, 1, 0) || triad_init(&tT, T, 0)) {
    fprintf(stderr, "bench: out of memory\n");
    exit(1);
  }
  char nT[4][64];
  snprintf(nT[0], 64, "cxla chain9, %d threads", T);
  snprintf(nT[1], 64, "cxla softmax, %d threads", T);
  snprintf(nT[2], 64, "triad, %d threads", T);
  bu_contender c[] = {
      {.name = "cxla chain9, 1 thread", .fn = bu_cxla_call, .after = bu_cxla_release, .arg = &ch1, .fail_flag = &ch1.failed},
      {.name = nT[0], .fn = bu_cxla_call, .after = bu_cxla_release, .arg = &chT, .fail_flag = &chT.failed},
      {.name = "cxla softmax, 1 thread", .fn = bu_cxla_call, .after = bu_cxla_release, .arg = &sm1, .fail_flag = &sm1.failed},
      {.name = nT[1], .fn = bu_cxla_call, .after = bu_cxla_release, .arg = &smT, .fail_flag = &smT.failed},
      {.name = "triad, 1 thread", .fn = triad_call, .arg = &t1},
      {.name = nT[2], .fn = triad_call, .arg = &tT},
  };
  int nc = (int)(sizeof c / sizeof c[0]);
  bu_opts o = opts_for(5);
  bu_interleave(c, nc, &o);
  if (ch1.failed || chT.failed || sm1.failed || smT.failed) bench_fail("scaling: a cxla contender failed");
  print_contenders("scaling: 1 thread vs all (chain9/triad GB/s at 12 B/elem; softmax lines: x2/3 for 8 B/elem)", c, nc,
                   12.0 * N_ELEMS, "GB/s");
  char a[48], b[64], name[96];
  for (int i = 0; i < 2; i++) {
    bu_contender *one = &c[2 * i], *all = &c[2 * i + 1];
    snprintf(a, sizeof a, "%.2f× (%s)", one->failed || all->failed ? NAN : one->median / all->median,
             i ? "softmax" : "chain9");
    snprintf(b, sizeof b, "%.2f× (triad)", c[4].median / c[5].median);
    snprintf(name, sizeof name, "%s speed-up 1 → %d threads vs triad's (median)", i ? "softmax" : "chain9", T);
    double rb = one->failed || all->failed ? NAN : (one->best / all->best) / (c[4].best / c[5].best);
    double rm = one->failed || all->failed ? NAN : (one->median / all->median) / (c[4].median / c[5].median);
    add_row(name, a, b, rb, rm, "(info)", NAN, NULL);
  }
  bu_contenders_free(c, (int)(sizeof c / sizeof c[0]));
  bu_cxla_close(&ch1);
  bu_cxla_close(&chT);
  bu_cxla_close(&sm1);
  bu_cxla_close(&smT);
  triad_free(&t1);
  triad_free(&tT);
  cxla_literal_destroy(xy[0]);
  cxla_literal_destroy(xy[1]);
  cxla_literal_destroy(sx[0]);
  cxla_context_destroy(ctx);
}

/* What a fresh 64 MiB output costs: the triad into a kept array and into new ones, the way
 * cxla's execute allocates its result (calloc: mmap'd, zero pages faulted in by the kernel
 * that writes them) and two alternatives a runtime could use. */
void group_alloc(void) {
  int T = cfg.threads;
  triad t[4];
  for (int i = 0; i < 4; i++)
    if (triad_init(&t[i], T, i)) {
      fprintf(stderr, "bench: out of memory\n");
      exit(1);
    }
  bu_contender c[] = {
      {.name = "triad into a kept (already faulted) array", .fn = triad_call, .arg = &t[0]},
      {.name = "triad into a fresh calloc (cxla's result)", .fn = triad_call, .after = triad_release, .arg = &t[1]},
      {.name = "triad into fresh mmap + MADV_HUGEPAGE", .fn = triad_call, .after = triad_release, .arg = &t[2]},
      {.name = "triad into fresh mmap + MAP_POPULATE", .fn = triad_call, .after = triad_release, .arg = &t[3]},
  };
  bu_opts o = opts_for(5);
  bu_interleave(c, 4, &o);
  print_contenders("alloc: the cost of a fresh 64 MiB output per call (triad, 12 B/elem)", c, 4, 12.0 * N_ELEMS, "GB/s");
  char a[48], b[64];
  fmt_rate(a, sizeof a, &c[1], 0, NULL);
  fmt_rate(b, sizeof b, &c[0], 0, NULL);
  add_row("triad: fresh calloc'd output vs kept array (time)", a, b, ratio_best(&c[1], &c[0]), ratio_median(&c[1], &c[0]),
          "(info)", NAN, NULL);
  fmt_rate(a, sizeof a, &c[2], 0, NULL);
  add_row("triad: fresh MADV_HUGEPAGE output vs kept array", a, b, ratio_best(&c[2], &c[0]), ratio_median(&c[2], &c[0]),
          "(info)", NAN, NULL);
  bu_contenders_free(c, 4);
  for (int i = 0; i < 4; i++) triad_free(&t[i]);
}
