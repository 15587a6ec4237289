/* test_train_replicas.c — data-parallel training steps (cxla_optimizer.replicas, docs/train.md):
 * the small MLP's step built for 2 replicas, each device given half of a batch of 6, run on 2
 * threads (cxla_executable_execute_replicas) on the interpreter and the cpu, against the one
 * device step on the whole batch: the devices end with the same bits, and loss, weights and
 * state equal the whole batch's to rounding (the batch sums split in two differ from one sum
 * in their last bits). Also: one all-reduce in the module, and what is refused. */
#include "train_helpers.h"

enum { NW = 4, HALF = TH_MLP_BATCH / 2, STEPS = 2 };
static const int k_wrt[NW] = {0, 1, 2, 3};

/* th_mlp_text for a batch of 3: its shapes and its mean's factor -1/3. */
static char *half_batch_text(void) {
  const char *src = th_mlp_text;
  char *out = malloc(strlen(src) + 64), *o = out;
  while (out && *src) {
    if (!strncmp(src, "f32[6", 5)) o += sprintf(o, "f32[3"), src += 5;
    else if (!strncmp(src, "-0.16666667", 11)) o += sprintf(o, "-0.33333334"), src += 11;
    else *o++ = *src++;
  }
  if (out) *o = 0;
  return out;
}

static void init_opt(cxla_optimizer *o, int which, int replicas, int steps) {
  cxla_optimizer_init(o, which == 2 ? CXLA_OPTIMIZER_ADAM : CXLA_OPTIMIZER_SGD);
  o->learning_rate = which == 2 ? 0.01 : 0.1;
  if (which == 1) o->momentum = 0.9;
  o->replicas = replicas;
  o->steps_per_call = steps;
}

/* Step s's batch x[6,16] (seeded) and one-hot y[6,4], rows [r0, r0 + n); K > 1 stacks K steps. */
static void batch(cxla_literal **x, cxla_literal **y, int K, int s0, int r0, int n) {
  int64_t dx[3] = {K, n, 16}, dy[3] = {K, n, 4};
  *x = cxla_literal_create(test_ctx(), CXLA_F32, K > 1 ? 3 : 2, K > 1 ? dx : dx + 1);
  *y = cxla_literal_create(test_ctx(), CXLA_F32, K > 1 ? 3 : 2, K > 1 ? dy : dy + 1);
  for (int k = 0; *x && *y && k < K; k++) {
    uint64_t s = 91 + (uint64_t)(s0 + k);
    for (int i = 0; i < TH_MLP_BATCH * 16; i++) {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      int r = i / 16;
      if (r >= r0 && r < r0 + n)
        cxla_literal_set_f64(*x, (k * n + r - r0) * 16 + i % 16, (double)(s >> 40) / (double)(1 << 24) * 2 - 1);
    }
    for (int r = r0; r < r0 + n; r++)
      for (int c = 0; c < 4; c++) cxla_literal_set_f64(*y, (k * n + r - r0) * 4 + c, c == (r + s0 + k) % 4);
  }
}

/* STEPS steps of `step` (K per call) on n devices (device d: rows [d * 6/n, ...) of each
 * batch), from carry[0..nc); res[d][0] the losses of the last call, res[d][1 + i] carry i
 * after. 0 on an error (recorded). */
static int train(cxla_module *step, const char *backend, int n, int K, int nc, cxla_literal *const *carry,
                 cxla_literal *res[][16]) {
  cxla_compile_options co;
  cxla_compile_options_init(&co);
  co.backend = backend;
  cxla_executable *e = NULL;
  CHECK_OK(cxla_compile(step, &co, &e));
  int ok = e != NULL, na = nc + 2;
  cxla_literal *cur[2][16] = {{0}};
  for (int d = 0; d < n; d++)
    for (int i = 0; i < nc; i++) cur[d][i] = carry[i];
  for (int s = 0; ok && s < STEPS; s += K) {
    cxla_buffer *args[2 * 16] = {0}, *out[2] = {0};
    for (int d = 0; d < n; d++) {
      cxla_literal *x, *y;
      batch(&x, &y, K, s, d * TH_MLP_BATCH / n, TH_MLP_BATCH / n);
      for (int i = 0; i < na; i++)
        CHECK_OK(cxla_buffer_from_literal(test_ctx(), backend, i < nc ? cur[d][i] : i == nc ? x : y, &args[d * na + i]));
      cxla_literal_destroy(x);
      cxla_literal_destroy(y);
    }
    cxla_status st = cxla_executable_execute_replicas(e, n, na, args, out);
    CHECK_MSG(st == CXLA_OK, "%s on %d devices: %s", backend, n, cxla_context_errmsg(test_ctx()));
    ok = st == CXLA_OK;
    for (int d = 0; d < n; d++) {
      cxla_literal *parts[16] = {0};
      cxla_buffer *pb[16] = {0};
      if (ok) CHECK_OK(cxla_buffer_untuple(out[d], 1 + nc, pb));
      for (int i = 0; i <= nc; i++) {
        if (pb[i]) CHECK_OK(cxla_buffer_to_literal(pb[i], &parts[i]));
        cxla_buffer_destroy(pb[i]);
      }
      ok = ok && parts[0] && parts[nc];
      for (int i = 0; i <= nc; i++) {
        if (i && cur[d][i - 1] != carry[i - 1]) cxla_literal_destroy(cur[d][i - 1]);
        if (i) cur[d][i - 1] = parts[i];
        cxla_literal_destroy(res[d][i]);
        res[d][i] = i ? NULL : parts[0];
      }
      cxla_buffer_destroy(out[d]);
    }
    for (int k = 0; k < n * na; k++) cxla_buffer_destroy(args[k]);
  }
  for (int d = 0; d < n; d++)
    for (int i = 0; i < nc; i++) {
      if (ok) res[d][1 + i] = cur[d][i];
      else if (cur[d][i] != carry[i]) cxla_literal_destroy(cur[d][i]);
    }
  cxla_executable_destroy(e);
  return ok;
}

static void free_res(cxla_literal *res[][16], int n) {
  for (int d = 0; d < n; d++)
    for (int i = 0; i < 16; i++) cxla_literal_destroy(res[d][i]), res[d][i] = NULL;
}

/* Elementwise within rel + abs tolerance; returns the largest difference seen. */
static double near(const char *what, int which, int i, cxla_literal *got, cxla_literal *want, double tol) {
  double worst = 0;
  int64_t n = cxla_literal_element_count(want);
  CHECK_MSG(got && cxla_literal_element_count(got) == n, "%s (optimizer %d) %d: shapes differ", what, which, i);
  for (int64_t k = 0; got && k < n && k < cxla_literal_element_count(got); k++) {
    double a = cxla_literal_get_f64(got, k), b = cxla_literal_get_f64(want, k), d = fabs(a - b);
    worst = d > worst ? d : worst;
    CHECK_MSG(d <= tol * (1 + fabs(b)), "%s (optimizer %d): result %d[%lld]: %.9g on 2 replicas, %.9g on the whole batch",
              what, which, i, (long long)k, a, b);
  }
  return worst;
}

/* SGD, momentum and Adam; one step per call and two (the all-reduce inside the loop body). */
TEST(train_replicas_match_whole_batch) {
  char *half = half_batch_text();
  static const char *const backends[] = {"interp", "cpu"};
  for (int which = 0; half && which < 3; which++)
    for (int K = 1; K <= STEPS; K++)
      for (int b = 0; b < 2; b++) {
        cxla_optimizer one, two;
        init_opt(&one, which, 1, K);
        init_opt(&two, which, 2, K);
        cxla_module *s1 = th_step(th_mlp_text, k_wrt, NW, &one), *s2 = th_step(half, k_wrt, NW, &two);
        if (!s1 || !s2) {
          cxla_module_destroy(s1);
          cxla_module_destroy(s2);
          continue;
        }
        int nc = cxla_module_num_parameters(s1) - 2;
        CHECK(nc == cxla_module_num_parameters(s2) - 2);
        cxla_literal *carry[16] = {0}, *r1[2][16] = {{0}}, *r2[2][16] = {{0}};
        for (int i = 0; i < nc; i++) carry[i] = th_param_lit(s1, i, (uint64_t)i + 3, i >= NW);
        if (train(s1, backends[b], 1, K, nc, carry, r1) && train(s2, backends[b], 2, K, nc, carry, r2)) {
          for (int i = 0; i <= nc; i++) {
            size_t nb = cxla_literal_size_bytes(r2[0][i]);
            CHECK_MSG(nb == cxla_literal_size_bytes(r2[1][i]) &&
                          !memcmp(cxla_literal_data(r2[0][i]), cxla_literal_data(r2[1][i]), nb),
                      "%s, optimizer %d, K %d: result %d differs between the two devices", backends[b], which, K, i);
            /* Adam divides by the root of the second moment: relative rounding of a gradient
             * stays relative in its step, so the same tolerance holds for all three */
            near(backends[b], which, i, r2[0][i], r1[0][i], 1e-5);
          }
        }
        free_res(r1, 1);
        free_res(r2, 2);
        for (int i = 0; i < nc; i++) cxla_literal_destroy(carry[i]);
        cxla_module_destroy(s1);
        cxla_module_destroy(s2);
      }
  free(half);
}

static int count(const char *s, const char *what) {
  int n = 0;
  for (const char *p = s; p && (p = strstr(p, what)); p++) n++;
  return n;
}

/* One all-reduce (every value is f32) over both replicas; none without replicas. */
TEST(train_replicas_one_all_reduce) {
  for (int r = 1; r <= 2; r++) {
    cxla_optimizer o;
    init_opt(&o, 2, r, 1);
    cxla_module *s = th_step(th_mlp_text, k_wrt, NW, &o);
    char *text = s ? cxla_module_to_string(s) : NULL;
    CHECK_MSG(text && count(text, " all-reduce(") == (r == 2), "replicas %d: %d all-reduces in\n%s", r,
              count(text, " all-reduce("), text ? text : "");
    CHECK_MSG(r == 1 || count(text, "replica_groups={{0,1}}") == 1, "no replica_groups={{0,1}} in\n%s", text ? text : "");
    free(text);
    cxla_module_destroy(s);
  }
}

TEST(train_replicas_refused) {
  static const int bad[] = {-1, 1025};
  for (int i = 0; i < 2; i++) {
    cxla_optimizer o;
    init_opt(&o, 0, bad[i], 1);
    cxla_module *m = th_parse(th_mlp_text), *s = NULL;
    cxla_status st = m ? cxla_module_train_step(m, k_wrt, NW, &o, &s) : CXLA_ERR_INVALID_ARGUMENT;
    CHECK_MSG(st == CXLA_ERR_INVALID_ARGUMENT && !s && strstr(cxla_context_errmsg(test_ctx()), "replicas"),
              "replicas %d: %s: %s", bad[i], cxla_status_str(st), cxla_context_errmsg(test_ctx()));
    cxla_module_destroy(m);
  }
  /* a 2-replica step run as one device: its all-reduce's group names 2 replicas */
  cxla_optimizer o;
  init_opt(&o, 0, 2, 1);
  cxla_module *s = th_step(th_mlp_text, k_wrt, NW, &o);
  cxla_literal *args[6] = {0};
  for (int i = 0; s && i < 6; i++) args[i] = th_param_lit(s, i, (uint64_t)i + 1, 0);
  cxla_compile_options co;
  cxla_compile_options_init(&co);
  co.backend = "cpu";
  cxla_literal *r = NULL;
  cxla_status st = s ? cxla_module_run(s, &co, 6, args, &r) : CXLA_ERR_INVALID_ARGUMENT;
  CHECK_MSG(st == CXLA_ERR_INVALID_ARGUMENT && strstr(cxla_context_errmsg(test_ctx()), "name 2 replicas"),
            "one device: %s: %s", cxla_status_str(st), cxla_context_errmsg(test_ctx()));
  cxla_literal_destroy(r);
  for (int i = 0; i < 6; i++) cxla_literal_destroy(args[i]);
  cxla_module_destroy(s);
}
