/* test_stablehlo_translate.c — StableHLO portable artifacts translated to cx_modules, judged by
 * JAX. tests/stablehlo/programs/ (scripts/stablehlo_pairs.py) holds, per JAX program, the
 * artifact (VHLO bytecode), jaxlib's HLO text of the same lowering, the inputs and JAX's own
 * outputs: the translated artifact must compute JAX's outputs on the interpreter and on the cpu
 * backend, and so must the HLO text (which checks the data the comparison rests on). Also: the
 * refusals (a shape-polymorphic export, truncated bytes, textual MLIR) and the ENTRY's donation
 * header. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/literal.h"
#include "util/fpenv.h"
#include "test.h"

static unsigned char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
    free(s);
    s = NULL;
  }
  fclose(f);
  if (s) s[n] = 0;
  *len = (size_t)n;
  return s;
}

static const char *prog_path(char *buf, size_t n, const char *name, const char *suffix) {
  snprintf(buf, n, "%s/tests/stablehlo/programs/%s%s", test_srcdir(), name, suffix);
  return buf;
}

/* FTZ and DAZ for the cxla calls of check_program, as a framework's worker thread has them
 * (stablehlo_programs_from_a_thread_that_flushes); the test's own comparisons stay IEEE. */
static unsigned caller_bits;

static unsigned as_caller(void) {
  unsigned own = cx_fpenv_get();
  if (caller_bits) cx_fpenv_set(own | caller_bits);
  return own;
}

static void as_test(unsigned own) {
  unsigned mask = CX_FPENV_FTZ | CX_FPENV_DAZ, now = cx_fpenv_get();
  CHECK_MSG((now & mask) == ((own | caller_bits) & mask), "cxla changed its caller's FTZ/DAZ bits: %#x", now);
  cx_fpenv_set(own);
}

static cxla_module *parse_artifact(const char *name) {
  char path[512];
  size_t len;
  unsigned char *b = slurp(prog_path(path, sizeof path, name, ".mlirbc"), &len);
  CHECK_MSG(b, "cannot read %s", path);
  if (!b) return NULL;
  cxla_module *m = NULL;
  unsigned own = as_caller();
  cxla_status s = cxla_module_parse_stablehlo(test_ctx(), b, len, path, &m);
  as_test(own);
  CHECK_MSG(s == CXLA_OK, "%s: %s", name, cxla_context_errmsg(test_ctx()));
  free(b);
  return m;
}

/* The leaves of a result (a tuple's elements, or the array itself). */
static int leaves(cxla_literal *r, cxla_literal **out, int max) {
  if (cxla_literal_tuple_size(r) < 0) {
    out[0] = r;
    return 1;
  }
  int n = cxla_literal_tuple_size(r);
  for (int i = 0; i < n && i < max; i++) out[i] = cxla_literal_tuple_get(r, i);
  return n;
}

/* Runs m on `backend` with the inputs and compares each result leaf with JAX's output; returns
 * 1 when all agree. what: "artifact" or "hlo" for messages. */
static int agrees(const char *name, const char *what, cxla_module *m, const char *backend, cxla_literal **in, int nin,
                  double rtol, double atol, cxla_literal **keep) {
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = backend;
  cxla_literal *r = NULL;
  unsigned own = as_caller();
  cxla_status s = cxla_module_run(m, &o, nin, in, &r);
  as_test(own);
  CHECK_MSG(s == CXLA_OK, "%s (%s, %s): %s", name, what, backend, cxla_context_errmsg(test_ctx()));
  if (s != CXLA_OK) return 0;
  if (keep) *keep = NULL;
  cxla_literal *got[64];
  int n = leaves(r, got, 64), ok = 1, k = 0;
  for (; k < n && k < 64; k++) {
    char path[512];
    cxla_literal *want = NULL;
    snprintf(path, sizeof path, "%s/tests/stablehlo/programs/%s.out%d.npy", test_srcdir(), name, k);
    if (cxla_literal_read_npy(test_ctx(), path, &want) != CXLA_OK) {
      CHECK_MSG(0, "%s: %s", name, cxla_context_errmsg(test_ctx()));
      ok = 0;
      break;
    }
    cx_sb why;
    cx_sb_init(&why);
    int same = cx_literal_compare(got[k], want, rtol, atol, &why);
    CHECK_MSG(same, "%s (%s, %s): output %d differs from JAX's: %s", name, what, backend, k, why.buf ? why.buf : "");
    ok &= same;
    cx_sb_free(&why);
    cxla_literal_destroy(want);
  }
  char extra[512];
  snprintf(extra, sizeof extra, "%s/tests/stablehlo/programs/%s.out%d.npy", test_srcdir(), name, k);
  FILE *f = fopen(extra, "rb");
  CHECK_MSG(!f, "%s (%s): %d results, but JAX has more", name, what, n);
  if (f) {
    fclose(f);
    ok = 0;
  }
  if (keep) *keep = r;
  else cxla_literal_destroy(r);
  return ok;
}

/* One program: 1 when the artifact agrees with JAX on both backends (and the HLO text does). */
static int check_program(const char *name) {
  char path[512];
  double rtol = 1e-5, atol = 1e-5;
  size_t len;
  unsigned char *tol = slurp(prog_path(path, sizeof path, name, ".tol"), &len);
  if (tol) sscanf((char *)tol, "%lf %lf", &rtol, &atol);
  free(tol);
  cxla_module *a = parse_artifact(name);
  /* the translation prints as HLO text that parses back to the same text */
  unsigned own = as_caller();
  char *t1 = a ? cxla_module_to_string(a) : NULL, *t2 = NULL;
  cxla_module *back = NULL;
  int reread = t1 && cxla_module_parse(test_ctx(), t1, strlen(t1), name, &back) == CXLA_OK &&
               (t2 = cxla_module_to_string(back));
  as_test(own);
  CHECK_MSG(reread && !strcmp(t1, t2),
            "%s: the translation's HLO text does not parse back to itself: %s", name, cxla_context_errmsg(test_ctx()));
  free(t1);
  free(t2);
  cxla_module_destroy(back);
  /* jaxlib's HLO text of the program (none for a hand-written artifact: numpy's values only) */
  unsigned char *text = slurp(prog_path(path, sizeof path, name, ".hlo"), &len);
  int has_hlo = text != NULL || strncmp(name, "handwritten", 11);
  cxla_module *h = NULL;
  own = as_caller();
  int parsed = text && cxla_module_parse(test_ctx(), (char *)text, len, path, &h) == CXLA_OK;
  as_test(own);
  CHECK_MSG(!has_hlo || parsed, "%s.hlo: %s", name, cxla_context_errmsg(test_ctx()));
  free(text);
  int ok = 0;
  cxla_literal *in[64];
  int nin = 0;
  if (a && (h || !has_hlo)) {
    if (h) CHECK_EQ_INT(cxla_module_num_parameters(a), cxla_module_num_parameters(h));
    nin = cxla_module_num_parameters(a);
    ok = nin >= 0 && nin <= 64;
    for (int i = 0; ok && i < nin; i++) {
      snprintf(path, sizeof path, "%s/tests/stablehlo/programs/%s.in%d.npy", test_srcdir(), name, i);
      in[i] = NULL;
      ok = cxla_literal_read_npy(test_ctx(), path, &in[i]) == CXLA_OK;
      CHECK_MSG(ok, "%s: %s", name, cxla_context_errmsg(test_ctx()));
      if (!ok) nin = i;
    }
    if (ok) {
      cxla_literal *ra = NULL, *rh = NULL;
      ok &= agrees(name, "artifact", a, "interp", in, nin, rtol, atol, &ra);
      ok &= agrees(name, "artifact", a, "cpu", in, nin, rtol, atol, NULL);
      if (h) ok &= agrees(name, "hlo", h, "interp", in, nin, rtol, atol, &rh);
      /* and with each other, directly: the translation computes what jaxlib's HLO computes */
      if (ra && rh) {
        cx_sb why;
        cx_sb_init(&why);
        int same = cx_literal_compare(ra, rh, rtol, atol, &why);
        CHECK_MSG(same, "%s: the artifact and the HLO text differ on interp: %s", name, why.buf ? why.buf : "");
        ok &= same;
        cx_sb_free(&why);
      }
      cxla_literal_destroy(ra);
      cxla_literal_destroy(rh);
    }
    for (int i = 0; i < nin; i++) cxla_literal_destroy(in[i]);
  }
  cxla_module_destroy(a);
  cxla_module_destroy(h);
  return ok;
}

TEST(stablehlo_programs_agree_with_jax) {
  char path[512];
  size_t len;
  char *index = (char *)slurp(prog_path(path, sizeof path, "index", ".txt"), &len);
  CHECK_MSG(index, "cannot read %s", path);
  if (!index) return;
  int total = 0, agree = 0;
  char failed[1024] = "";
  for (char *line = strtok(index, "\n"); line; line = strtok(NULL, "\n")) {
    if (!*line) continue;
    total++;
    if (check_program(line)) agree++;
    else if (strlen(failed) + strlen(line) + 2 < sizeof failed) strcat(strcat(failed, " "), line);
  }
  free(index);
  CHECK_MSG(total >= 20, "only %d programs in the index", total);
  CHECK_MSG(agree == total, "%d of %d programs agree with JAX; differing:%s", agree, total, failed);
}

/* Frameworks call in from worker threads that flush denormals (XLA's and TensorFlow's pools set
 * FTZ and DAZ): reading, printing, folding and running (the interpreter, the cpu backend without
 * --cpu-flush-denormals) stay IEEE there, so a denormal constant is not read or printed as 0
 * (JAX's jnp.spacing of bf16 was 0 through the plugin), and the caller's word comes back. */
TEST(stablehlo_programs_from_a_thread_that_flushes) {
#if defined(__x86_64__)
  caller_bits = CX_FPENV_FTZ | CX_FPENV_DAZ;
  int ok = check_program("denormal_constants") && check_program("bf16") && check_program("elementwise");
  caller_bits = 0;
  CHECK_MSG(ok, "a program read and run from a thread with FTZ and DAZ differs from JAX's results");
#endif
}

/* A splat constant (one element standing for all; jax's expanded CHLO writes one per
 * coefficient of erf_inv's polynomials at the full shape) becomes a broadcast of its element,
 * not an array of copies; a constant of distinct values stays one. */
TEST(stablehlo_splat_constants_are_broadcasts) {
  char path[512];
  size_t len;
  snprintf(path, sizeof path, "%s/tests/stablehlo/artifacts/large_constant.mlirbc", test_srcdir());
  unsigned char *b = slurp(path, &len);
  CHECK_MSG(b, "cannot read %s", path);
  if (!b) return;
  cxla_module *m = NULL;
  CHECK_OK(cxla_module_parse_stablehlo(test_ctx(), b, len, path, &m));
  free(b);
  char *t = m ? cxla_module_to_string(m) : NULL;
  CHECK(t != NULL);
  if (t) {
    CHECK_STR_CONTAINS(t, "f32[3,4] broadcast(");
    CHECK_STR_CONTAINS(t, "pred[9] broadcast(");
    CHECK_STR_CONTAINS(t, "= f32[] constant(2.5)");
    CHECK_MSG(!strstr(t, "f32[3,4] constant("), "a splat kept as an array: %.400s", t);
    CHECK_STR_CONTAINS(t, "f32[20,30] constant({");
  }
  free(t);
  cxla_module_destroy(m);
}

/* The artifact's text: the ENTRY returns a tuple of all of main's results, and the donated
 * argument (donate_argnums=0) is in the header. */
TEST(stablehlo_entry_and_donation) {
  cxla_module *m = parse_artifact("donate");
  if (!m) return;
  char *t = cxla_module_to_string(m);
  CHECK(t != NULL);
  if (t) {
    /* as jaxlib's HLO text has it (donate.hlo's header) */
    CHECK_MSG(strstr(t, "HloModule jit_f, input_output_alias={ {0}: (0, {}, may-alias) }\n"), "header: %.300s", t);
    CHECK_STR_CONTAINS(t, "ROOT tuple");
  }
  free(t);
  cxla_shape rs;
  CHECK_OK(cxla_module_result_shape(m, &rs));
  CHECK_EQ_INT(rs.type, CXLA_TUPLE);
  CHECK_EQ_INT(rs.ntuple, 2);
  cxla_module_destroy(m);
}

/* jax.buffer_donor, tf.aliasing_output with one result, mhlo.layout_mode and mhlo.sharding on
 * arguments (a hand-written module: jax on one device emits only some of them). */
TEST(stablehlo_entry_argument_attributes) {
  cxla_module *m = parse_artifact("entry_attrs");
  if (!m) return;
  char *t = cxla_module_to_string(m);
  CHECK(t != NULL);
  if (t) {
    CHECK_STR_CONTAINS(t, "HloModule entry_attrs, input_output_alias={ {}: (1, {}, may-alias) }, buffer_donor={ (0, {}) }\n");
    CHECK_STR_CONTAINS(t, "f32[2,3]{0,1} parameter(2), sharding={replicated}");
  }
  free(t);
  /* the alias donates parameter 1: running consumes a copy, the caller's literals stay */
  cxla_literal *in[3] = {NULL, NULL, NULL};
  int64_t d4 = 4, d23[2] = {2, 3};
  in[0] = cxla_literal_create(test_ctx(), CXLA_F32, 1, &d4);
  in[1] = cxla_literal_create(test_ctx(), CXLA_F32, 1, &d4);
  in[2] = cxla_literal_create(test_ctx(), CXLA_F32, 2, d23);
  for (int i = 0; i < 4; i++) cxla_literal_set_f64(in[0], i, i), cxla_literal_set_f64(in[1], i, 10 * i);
  cxla_literal *r = NULL;
  CHECK_OK(cxla_module_run(m, NULL, 3, in, &r));
  for (int i = 0; r && i < 4; i++) CHECK_NEAR(cxla_literal_get_f64(r, i), 11.0 * i, 0);
  cxla_literal_destroy(r);
  for (int i = 0; i < 3; i++) cxla_literal_destroy(in[i]);
  cxla_module_destroy(m);
}

TEST(stablehlo_refuses_dynamic_shapes) {
  cxla_module *m = NULL;
  char path[512];
  size_t len;
  unsigned char *b = slurp(prog_path(path, sizeof path, "refuse_dynamic", ".mlirbc"), &len);
  CHECK(b != NULL);
  if (!b) return;
  CHECK_EQ_INT(cxla_module_parse_stablehlo(test_ctx(), b, len, "dyn.mlirbc", &m), CXLA_ERR_UNSUPPORTED);
  CHECK(m == NULL);
  const char *msg = cxla_context_errmsg(test_ctx());
  CHECK_STR_CONTAINS(msg, "dyn.mlirbc: error: ");
  CHECK_STR_CONTAINS(msg, "is dynamic");
  CHECK_STR_CONTAINS(msg, "dimension 0 of tensor<?x4xf32>");
  free(b);
}

/* Every prefix of an artifact is refused with an error (never a crash or a module), through
 * cxla_module_parse's sniffing as well. */
TEST(stablehlo_truncated_artifacts) {
  char path[512];
  size_t len;
  unsigned char *b = slurp(prog_path(path, sizeof path, "cond_case", ".mlirbc"), &len);
  CHECK(b != NULL);
  if (!b) return;
  for (size_t n = 4; n < len; n += (n < 64 ? 1 : 37)) {
    cxla_module *m = NULL;
    cxla_status s = cxla_module_parse(test_ctx(), (const char *)b, n, "cut.mlirbc", &m);
    CHECK_MSG(s != CXLA_OK && !m, "prefix of %zu bytes accepted", n);
    if (m) cxla_module_destroy(m);
    CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "cut.mlirbc");
  }
  free(b);
}

TEST(stablehlo_text_refused_with_hint) {
  const char *text = "module @jit_f {\n  func.func public @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {\n"
                     "    return %arg0 : tensor<3xf32>\n  }\n}\n";
  cxla_module *m = NULL;
  CHECK_EQ_INT(cxla_module_parse(test_ctx(), text, strlen(text), "f.mlir", &m), CXLA_ERR_PARSE);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "MLIR bytecode");
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "mlir_module_serialized");
  /* the public call's argument checks */
  CHECK_EQ_INT(cxla_module_parse_stablehlo(test_ctx(), NULL, 4, NULL, &m), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_EQ_INT(cxla_module_parse_stablehlo(test_ctx(), "ML\xefR", 4, NULL, NULL), CXLA_ERR_INVALID_ARGUMENT);
}

static cxla_literal *npy(const char *file) {
  char path[512];
  snprintf(path, sizeof path, "%s/tests/stablehlo/programs/%s", test_srcdir(), file);
  cxla_literal *l = NULL;
  CHECK_MSG(cxla_literal_read_npy(test_ctx(), path, &l) == CXLA_OK, "%s", cxla_context_errmsg(test_ctx()));
  return l;
}

/* Hand-written StableHLO collectives on 2 replicas (all_reduce of max, all_gather, a permute,
 * reduce_scatter, all_to_all, replica_id): each replica's results are numpy's. */
TEST(stablehlo_collectives_on_two_replicas) {
  cxla_module *m = parse_artifact("collectives");
  if (!m) return;
  static const char *const backends[] = {"interp", "cpu"};
  for (int b = 0; b < 2; b++) {
    cxla_compile_options o;
    cxla_compile_options_init(&o);
    o.backend = backends[b];
    cxla_executable *e = NULL;
    CHECK_OK(cxla_compile(m, &o, &e));
    if (!e) continue;
    cxla_buffer *args[2] = {NULL, NULL}, *res[2] = {NULL, NULL};
    for (int r = 0; r < 2; r++) {
      char f[64];
      snprintf(f, sizeof f, "collectives.r%d.in0.npy", r);
      cxla_literal *x = npy(f);
      if (x) CHECK_OK(cxla_buffer_from_literal(test_ctx(), backends[b], x, &args[r]));
      cxla_literal_destroy(x);
    }
    if (args[0] && args[1] && cxla_executable_execute_replicas(e, 2, 1, args, res) == CXLA_OK) {
      for (int r = 0; r < 2; r++) {
        cxla_literal *got = NULL;
        CHECK_OK(cxla_buffer_to_literal(res[r], &got));
        for (int k = 0; got && k < 6; k++) {
          char f[64];
          snprintf(f, sizeof f, "collectives.r%d.out%d.npy", r, k);
          cxla_literal *want = npy(f);
          cx_sb why;
          cx_sb_init(&why);
          CHECK_MSG(want && cx_literal_compare(cxla_literal_tuple_get(got, k), want, 0, 0, &why),
                    "%s: replica %d output %d: %s", backends[b], r, k, why.buf ? why.buf : "");
          cx_sb_free(&why);
          cxla_literal_destroy(want);
        }
        cxla_literal_destroy(got);
        cxla_buffer_destroy(res[r]);
      }
    } else {
      CHECK_MSG(0, "%s: %s", backends[b], cxla_context_errmsg(test_ctx()));
    }
    cxla_buffer_destroy(args[0]);
    cxla_buffer_destroy(args[1]);
    cxla_executable_destroy(e);
  }
  cxla_module_destroy(m);
}

/* infeed of two values, outfeed of a tuple: the queues hold numpy's values after the run. */
TEST(stablehlo_infeed_outfeed) {
  cxla_module *m = parse_artifact("feeds");
  if (!m) return;
  static const char *const backends[] = {"interp", "cpu"};
  for (int b = 0; b < 2; b++) {
    cxla_feeds_clear(test_ctx());
    cxla_literal *d[2] = {npy("feeds.infeed0.npy"), npy("feeds.infeed1.npy")};
    cxla_literal *x = npy("feeds.in0.npy"), *want = npy("feeds.out0.npy");
    if (!d[0] || !d[1] || !x || !want) return;
    cxla_literal *t = cxla_literal_tuple(test_ctx(), 2, d); /* takes d[0], d[1] */
    CHECK_OK(cxla_infeed_push(test_ctx(), t));
    cxla_compile_options o;
    cxla_compile_options_init(&o);
    o.backend = backends[b];
    cxla_literal *r = NULL;
    CHECK_MSG(cxla_module_run(m, &o, 1, &x, &r) == CXLA_OK, "%s: %s", backends[b], cxla_context_errmsg(test_ctx()));
    CHECK(r && cx_literal_compare(r, want, 0, 0, NULL));
    cxla_literal *out = NULL;
    CHECK_OK(cxla_outfeed_pop(test_ctx(), &out));
    if (out) {
      cxla_literal *o0 = npy("feeds.outfeed0.npy"), *o1 = npy("feeds.outfeed1.npy");
      CHECK_EQ_INT(cxla_literal_tuple_size(out), 2);
      CHECK(o0 && cx_literal_compare(cxla_literal_tuple_get(out, 0), o0, 0, 0, NULL));
      CHECK(o1 && cx_literal_compare(cxla_literal_tuple_get(out, 1), o1, 0, 0, NULL));
      cxla_literal_destroy(o0);
      cxla_literal_destroy(o1);
    }
    CHECK_EQ_INT(cxla_infeed_count(test_ctx()), 0);
    cxla_literal_destroy(out);
    cxla_literal_destroy(r);
    cxla_literal_destroy(t);
    cxla_literal_destroy(x);
    cxla_literal_destroy(want);
  }
  cxla_feeds_clear(test_ctx());
  cxla_module_destroy(m);
}

/* send/recv with the host load as HLO's send/send-done and recv/recv-done (channels and
 * is_host_transfer kept); compiling refuses them, as it refuses them in HLO text. */
TEST(stablehlo_send_recv_load_and_are_refused_when_compiling) {
  cxla_module *m = parse_artifact("sendrecv");
  if (!m) return;
  char *t = cxla_module_to_string(m);
  CHECK(t != NULL);
  if (t) {
    CHECK_STR_CONTAINS(t, "send(Arg_0.2, after-all.4), channel_id=5, is_host_transfer=true");
    CHECK_STR_CONTAINS(t, "= token[] send-done(send.6), channel_id=5, is_host_transfer=true");
    CHECK_STR_CONTAINS(t, "= (f32[3], token[]) recv-done(recv.10), channel_id=6, is_host_transfer=true");
  }
  free(t);
  cxla_executable *e = NULL;
  CHECK_EQ_INT(cxla_compile(m, NULL, &e), CXLA_ERR_UNSUPPORTED);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "a host transfer");
  cxla_module_destroy(m);
}
