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

static cxla_module *parse_artifact(const char *name) {
  char path[512];
  size_t len;
  unsigned char *b = slurp(prog_path(path, sizeof path, name, ".mlirbc"), &len);
  CHECK_MSG(b, "cannot read %s", path);
  if (!b) return NULL;
  cxla_module *m = NULL;
  cxla_status s = cxla_module_parse_stablehlo(test_ctx(), b, len, path, &m);
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
                  double rtol, double atol) {
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = backend;
  cxla_literal *r = NULL;
  cxla_status s = cxla_module_run(m, &o, nin, in, &r);
  CHECK_MSG(s == CXLA_OK, "%s (%s, %s): %s", name, what, backend, cxla_context_errmsg(test_ctx()));
  if (s != CXLA_OK) return 0;
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
  cxla_literal_destroy(r);
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
  unsigned char *text = slurp(prog_path(path, sizeof path, name, ".hlo"), &len);
  cxla_module *h = NULL;
  CHECK_MSG(text && cxla_module_parse(test_ctx(), (char *)text, len, path, &h) == CXLA_OK, "%s.hlo: %s", name,
            cxla_context_errmsg(test_ctx()));
  free(text);
  int ok = 0;
  cxla_literal *in[64];
  int nin = 0;
  if (a && h) {
    CHECK_EQ_INT(cxla_module_num_parameters(a), cxla_module_num_parameters(h));
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
      ok &= agrees(name, "artifact", a, "interp", in, nin, rtol, atol);
      ok &= agrees(name, "artifact", a, "cpu", in, nin, rtol, atol);
      ok &= agrees(name, "hlo", h, "interp", in, nin, rtol, atol);
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

/* The artifact's text: the ENTRY returns a tuple of all of main's results, and the donated
 * argument (donate_argnums=0) is in the header. */
TEST(stablehlo_entry_and_donation) {
  cxla_module *m = parse_artifact("donate");
  if (!m) return;
  char *t = cxla_module_to_string(m);
  CHECK(t != NULL);
  if (t) {
    CHECK_MSG(strstr(t, "input_output_alias={ {0}: (0, {}, may-alias) }") || strstr(t, "buffer_donor={ (0, {}) }"),
              "no donation in the header: %.300s", t);
    CHECK_STR_CONTAINS(t, "ROOT tuple");
  }
  free(t);
  cxla_shape rs;
  CHECK_OK(cxla_module_result_shape(m, &rs));
  CHECK_EQ_INT(rs.type, CXLA_TUPLE);
  CHECK_EQ_INT(rs.ntuple, 2);
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
