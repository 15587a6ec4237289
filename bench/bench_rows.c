/* bench_rows.c — the `softmax` group: row reductions that the row fusion makes one kernel each
 * (softmax, layer norm, log-softmax cross-entropy; docs/design/cpu-backend.md), against the
 * STREAM triad (12 B/elem) and a hand-written C peer (gcc -O3 -ffast-math, OpenMP). Each reads
 * its matrix once and writes one matrix, so its traffic is counted as 8 B/elem; the goal
 * is 0.8 of the triad's bandwidth on the 4096² shapes. Every cxla result is checked against a
 * reference summed in double (baselines.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "baselines.h"
#include "bench_main.h"

typedef enum { ROW_SOFTMAX, ROW_LAYERNORM, ROW_XENT } row_kind;

typedef struct row_case {
  const char *name, *hlo;
  int side, smoke_side; /* the module's f32[side,side] (under --smoke: smoke_side) */
  row_kind kind;
  double goal;          /* on the ratio to the triad's bandwidth; NAN: none */
} row_case;

static const row_case k_cases[] = {
    {"softmax", "softmax.hlo", 4096, 256, ROW_SOFTMAX, 0.8},
    {"softmax", "softmax_1024.hlo", 1024, 64, ROW_SOFTMAX, NAN},
    {"layer norm", "layernorm.hlo", 4096, 256, ROW_LAYERNORM, 0.8},
    {"log-softmax cross-entropy", "softmax_xent.hlo", 4096, 256, ROW_XENT, 0.8},
};

typedef struct triad_t {
  float *a, *b, *c;
  long n;
  int threads;
} triad_t;

static void triad_call(void *p) {
  triad_t *t = p;
  bl_set_threads(t->threads);
  bl_triad(t->a, t->b, t->c, 3.0f, t->n);
}

typedef struct peer {
  const row_case *rc;
  int threads, side;
  float *out;
  const float *x, *g, *b;
  const int *labels;
} peer;

static void peer_call(void *p) {
  peer *s = p;
  bl_set_threads(s->threads);
  if (s->rc->kind == ROW_SOFTMAX) bl_softmax_rows_fast(s->out, s->x, s->side, s->side);
  else if (s->rc->kind == ROW_LAYERNORM) bl_layernorm_rows_fast(s->out, s->x, s->g, s->b, s->side, s->side);
  else (void)bl_log_softmax_xent_fast(s->out, s->x, s->labels, s->side, s->side);
}

static float *fresh(long n) {
  float *p = malloc((size_t)n * sizeof *p);
  if (!p) {
    fprintf(stderr, "bench: out of memory\n");
    exit(1);
  }
  bl_first_touch(p, n);
  return p;
}

static void run_case(const row_case *rc, triad_t *tr) {
  int T = cfg.threads, side = cfg.smoke ? rc->smoke_side : rc->side;
  long n = (long)side * side;
  cxla_context *ctx = new_context();
  if (!ctx) return;
  int64_t dims[2] = {side, side}, d1 = side;
  cxla_literal *in[3] = {bu_literal(ctx, 2, dims, 3, -5, 5), NULL, NULL};
  if (rc->kind == ROW_LAYERNORM) in[1] = bu_literal(ctx, 1, &d1, 4, 0.5f, 1.5f), in[2] = bu_literal(ctx, 1, &d1, 5, -1, 1);
  if (rc->kind == ROW_XENT) {
    in[1] = cxla_literal_create(ctx, CXLA_S32, 1, &d1);
    int *l = in[1] ? cxla_literal_data(in[1]) : NULL;
    for (int i = 0; l && i < side; i++) l[i] = (int)((7L * i + 3) % side);
  }
  bu_cxla cx;
  bu_cxla_open(&cx, ctx, hlo_path(rc->hlo), NULL, T, -1, in);
  float *ref = fresh(n), *out = fresh(n);
  const float *x = cxla_literal_data(in[0]);
  const float *g = in[1] && rc->kind == ROW_LAYERNORM ? cxla_literal_data(in[1]) : NULL;
  const float *b = in[2] ? cxla_literal_data(in[2]) : NULL;
  const int *labels = rc->kind == ROW_XENT && in[1] ? cxla_literal_data(in[1]) : NULL;
  double loss = 0;
  if (rc->kind == ROW_SOFTMAX) bl_softmax_rows(ref, x, side, side);
  else if (rc->kind == ROW_LAYERNORM) bl_layernorm_rows(ref, x, g, b, side, side);
  else loss = bl_log_softmax_xent(ref, x, labels, side, side);
  peer pc = {rc, T, side, out, x, g, b, labels};
  char cname[96], title[160];
  snprintf(cname, sizeof cname, "cxla %s f32[%d,%d]", rc->name, side, side);
  bu_contender c[] = {
      {.name = cname, .fn = bu_cxla_call, .after = bu_cxla_release, .arg = &cx, .fail_flag = &cx.failed},
      {.name = "STREAM triad a=b+s*c (12 B/elem)", .fn = triad_call, .arg = tr},
      {.name = "the same in C (gcc -O3 -ffast-math, OpenMP)", .fn = peer_call, .arg = &pc},
  };
  int nc = (int)(sizeof c / sizeof c[0]);
  bu_opts o = opts_for(5);
  bu_interleave(c, nc, &o);
  snprintf(title, sizeof title, "softmax group: %s of f32[%d,%d]; 8 B/elem (triad line: x1.5 for its 12 B/elem)", rc->name,
           side, side);
  print_contenders(title, c, nc, 8.0 * n, "GB/s");
  /* the C peer's error against the reference, before cxla's result is checked */
  char chk[48], chk_c[40], a[48], bb[64], row[96];
  snprintf(chk_c, sizeof chk_c, "C: err %.1e", bu_max_err(out, ref, n, rc->kind == ROW_SOFTMAX ? 1e-9 : 1e-3));
  /* layer norm's and log-softmax's values are O(1)-O(10): a norm-wise tolerance as softmax's */
  double tol = rc->kind == ROW_SOFTMAX ? 1e-4 : 1e-5;
  check_result_leaf(chk, sizeof chk, &cx, rc->kind == ROW_XENT ? 1 : -1, ref, n, tol);
  if (rc->kind == ROW_XENT && !cx.failed) { /* and the loss */
    float lref = (float)loss;
    char chk_l[40];
    check_result_leaf(chk_l, sizeof chk_l, &cx, 0, &lref, 1, 1e-5);
    if (strncmp(chk_l, "err", 3)) snprintf(chk, sizeof chk, "loss %s", chk_l);
  }
  fmt_rate(a, sizeof a, &c[0], 8.0 * n, "GB/s");
  fmt_rate(bb, sizeof bb, &c[1], 12.0 * tr->n, "GB/s triad");
  /* bandwidth ratio: each side's own byte count over its own time */
  double rb = c[0].failed ? NAN : (8.0 * n / c[0].best) / (12.0 * tr->n / c[1].best);
  double rm = c[0].failed ? NAN : (8.0 * n / c[0].median) / (12.0 * tr->n / c[1].median);
  snprintf(row, sizeof row, "%s %d² vs STREAM triad (GB/s, 8 B/elem)", rc->name, side);
  add_row(row, a, bb, rb, rm, isnan(rc->goal) ? "(info)" : "≥ 0.8", rc->goal, chk);
  fmt_rate(bb, sizeof bb, &c[2], 8.0 * n, "GB/s C");
  snprintf(row, sizeof row, "%s %d² vs the same in C (time)", rc->name, side);
  add_row(row, a, bb, ratio_best(&c[0], &c[2]), ratio_median(&c[0], &c[2]), "(info)", NAN, chk_c);
  bu_contenders_free(c, nc);
  bu_cxla_close(&cx);
  free(ref);
  free(out);
  for (int i = 0; i < 3; i++) cxla_literal_destroy(in[i]);
  cxla_context_destroy(ctx);
}

void group_softmax(void) {
  triad_t tr = {NULL, NULL, NULL, bench_elems(), cfg.threads};
  bl_set_threads(tr.threads);
  tr.a = fresh(tr.n), tr.b = fresh(tr.n), tr.c = fresh(tr.n);
  bu_fill(tr.b, tr.n, 7, -1, 1);
  bu_fill(tr.c, tr.n, 8, -1, 1);
  for (size_t i = 0; i < sizeof k_cases / sizeof k_cases[0]; i++) run_case(&k_cases[i], &tr);
  free(tr.a);
  free(tr.b);
  free(tr.c);
}
