/* test_linalg_cpu.c — cholesky, triangular-solve and the LAPACK custom-calls on the cpu backend
 * (OpenBLAS's LAPACK and BLAS) against the interpreter's reference algorithms, f32, f64, c64
 * and c128, batched, every option; compiled natively (no interpreter fallback). The targets
 * the gpu backend added last (sytrd, ormqr on cuSOLVER; gtsv, geqp3, gehrd, geev, gees and the
 * perturbed tridiagonal solve as host steps) run on gpu-emu as well and give the cpu's results. Where LAPACK's
 * answer is unique up to unit factors (eigenvectors, singular vectors: signs for real ones) the
 * two are compared by |dot products| and orthonormality; everything else element by element. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "interp/interp.h"
#include "interp/linalg.h"
#include "ir/types.h"
#include "test.h"
#include "text/hlo.h"
#include "util/util.h"

static uint64_t g_seed = 7;
static double rnd(void) {
  g_seed = g_seed * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(g_seed >> 11) / 9007199254740992.0 * 2 - 1;
}

/* "f32[b,m,n] {...}" of random values (complex ones for c64/c128); spd: each matrix B B^H + n I;
 * diag: + 4 I; junk: 1 adds 7 to the strict upper triangle, 2 to the strict lower one (the
 * triangle not read). */
static char *junk_matrices(const char *type, int b, int m, int n, int spd, int diag, int junk) {
  int cplx = type[0] == 'c';
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_printf(&sb, "%s[%d,%d,%d] {", type, b, m, n);
  double complex *x = cx_malloc(sizeof *x * (size_t)(m * n + 1));
  for (int k = 0; k < b; k++) {
    for (int i = 0; i < m * n; i++) {
      double re = rnd();
      x[i] = cplx ? cx_z_make(re, rnd()) : re;
    }
    cx_sb_puts(&sb, k ? ", {" : "{");
    for (int i = 0; i < m; i++) {
      cx_sb_puts(&sb, i ? ", {" : "{");
      for (int j = 0; j < n; j++) {
        double complex v = x[i * n + j] + (diag && i == j ? 4 : 0);
        if (spd) {
          v = i == j ? n : 0;
          for (int t = 0; t < n; t++) v += x[i * n + t] * conj(x[j * n + t]);
        }
        if ((junk == 1 && j > i) || (junk == 2 && j < i)) v += 7;
        if (cplx) cx_sb_printf(&sb, "%s(%.9g, %.9g)", j ? ", " : "", creal(v), cimag(v));
        else cx_sb_printf(&sb, "%s%.9g", j ? ", " : "", creal(v));
      }
      cx_sb_putc(&sb, '}');
    }
    cx_sb_putc(&sb, '}');
  }
  cx_sb_putc(&sb, '}');
  cx_free(x);
  return cx_sb_take(&sb);
}
/* "f32[b,n] {...}" of random values (complex ones for c64/c128). */
static char *vectors(const char *type, int b, int n) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_printf(&sb, "%s[%d,%d] {", type, b, n);
  for (int k = 0; k < b; k++) {
    cx_sb_puts(&sb, k ? ", {" : "{");
    for (int j = 0; j < n; j++) {
      double re = rnd();
      if (type[0] == 'c') cx_sb_printf(&sb, "%s(%.9g, %.9g)", j ? ", " : "", re, rnd());
      else cx_sb_printf(&sb, "%s%.9g", j ? ", " : "", re);
    }
    cx_sb_putc(&sb, '}');
  }
  cx_sb_putc(&sb, '}');
  return cx_sb_take(&sb);
}
static char *matrices(const char *type, int b, int m, int n, int spd, int diag) {
  return junk_matrices(type, b, m, n, spd, diag, 0);
}

/* the compile counts of the last run() */
static char g_counts[1024];

/* The result of `text` on `backend` for the literal inputs; *fallbacks the cpu's count. */
static cxla_literal *run(const char *text, const char *backend, int nargs, const char *const *inputs, int *fallbacks) {
  cxla_context *ctx = test_ctx();
  cxla_module *m = NULL;
  cxla_literal *args[4] = {0}, *res = NULL;
  cxla_executable *e = NULL;
  cxla_buffer *bufs[4] = {0}, *out = NULL;
  if (cxla_module_parse(ctx, text, strlen(text), "test.hlo", &m) != CXLA_OK) {
    CHECK_MSG(0, "parse: %s", cxla_context_errmsg(ctx));
    return NULL;
  }
  int ok = 1;
  for (int i = 0; i < nargs; i++) ok &= cx_parse_literal(ctx, inputs[i], strlen(inputs[i]), &args[i]) == CXLA_OK;
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = backend;
  ok = ok && cxla_compile(m, &o, &e) == CXLA_OK;
  if (ok) snprintf(g_counts, sizeof g_counts, "%s", cxla_executable_compile_counts(e));
  if (ok && fallbacks) {
    const char *c = strstr(cxla_executable_compile_counts(e), "fallbacks=");
    *fallbacks = c ? atoi(c + 10) : -1;
  }
  for (int i = 0; ok && i < nargs; i++) ok = cxla_buffer_from_literal(ctx, backend, args[i], &bufs[i]) == CXLA_OK;
  ok = ok && cxla_executable_execute(e, nargs, bufs, &out) == CXLA_OK && cxla_buffer_to_literal(out, &res) == CXLA_OK;
  CHECK_MSG(ok, "%s: %s", backend, cxla_context_errmsg(ctx));
  for (int i = 0; i < 4; i++) {
    cxla_buffer_destroy(bufs[i]);
    cxla_literal_destroy(args[i]);
  }
  cxla_buffer_destroy(out);
  cxla_executable_destroy(e);
  cxla_module_destroy(m);
  return res;
}

static const cxla_literal *leaf(const cxla_literal *l, int i) {
  return cxla_literal_tuple_size(l) < 0 ? l : cxla_literal_tuple_get((cxla_literal *)l, i);
}

/* Element i of a real or complex array. */
static double complex el(const cxla_literal *l, int64_t i) {
  double re, im;
  cx_load_complex(cxla_literal_type(l), cxla_literal_data((cxla_literal *)l), i, &re, &im);
  return cx_z_make(re, im);
}

/* Element by element (NaN matches NaN); tol relative to the largest magnitude. */
static void same(const cxla_literal *a, const cxla_literal *b, double tol, const char *what) {
  int64_t n = cxla_literal_element_count(a);
  CHECK_EQ_INT(cxla_literal_element_count(b), n);
  double big = 1e-30, err = 0;
  for (int64_t i = 0; i < n; i++) big = fmax(big, cabs(el(b, i)));
  for (int64_t i = 0; i < n; i++) {
    double complex x = el(a, i), y = el(b, i);
    if (isnan(creal(x)) || isnan(creal(y)))
      CHECK_MSG(isnan(creal(x)) && isnan(creal(y)), "%s: element %lld %g vs %g", what, (long long)i, creal(x), creal(y));
    else err = fmax(err, cabs(x - y));
  }
  CHECK_MSG(err <= tol * big, "%s: max difference %g (scale %g)", what, err, big);
}

/* Column vectors (stride between elements `es`, between vectors `vs`, `len` long) of a and b
 * agree up to a unit factor: |a_j^H b_j| = 1. nb batches of nv vectors, each matrix `per`
 * elements. */
static void same_up_to_sign(const cxla_literal *a, const cxla_literal *b, int64_t nb, int64_t per, int64_t nv,
                            int64_t len, int64_t es, int64_t vs, double tol, const char *what) {
  for (int64_t k = 0; k < nb; k++)
    for (int64_t j = 0; j < nv; j++) {
      double complex d = 0;
      for (int64_t i = 0; i < len; i++) d += conj(el(a, k * per + j * vs + i * es)) * el(b, k * per + j * vs + i * es);
      CHECK_MSG(fabs(cabs(d) - 1) <= tol, "%s: batch %lld vector %lld: |dot| = %.9g", what, (long long)k, (long long)j,
                cabs(d));
    }
}

/* Runs text on both backends; the cpu compile must call no interpreter. */
static void both(const char *text, int nargs, const char *const *in, cxla_literal **cpu, cxla_literal **ref) {
  int fb = -1;
  *cpu = run(text, "cpu", nargs, in, &fb);
  *ref = run(text, "interp", nargs, in, NULL);
  CHECK_MSG(fb == 0, "cpu compile falls back to the interpreter %d times:\n%s", fb, text);
}

/* The same module on gpu-emu gives the cpu's result: leaf by leaf within tol (0 for a host
 * step, which runs the cpu's own routine on the same values), through the step `counted`
 * ("solver_calls=1" or "host_linalg=1" in the compile counts). */
static void gpu_like_cpu(const char *text, int nargs, const char *const *in, const cxla_literal *cpu, double tol,
                         const char *counted) {
  cxla_literal *gpu = run(text, "gpu-emu", nargs, in, NULL);
  CHECK_MSG(strstr(g_counts, counted), "gpu-emu: no %s in %s", counted, g_counts);
  if (gpu && cpu) {
    int n = cxla_literal_tuple_size(cpu);
    CHECK_EQ_INT(cxla_literal_tuple_size(gpu), n);
    for (int i = 0; i < (n < 0 ? 1 : n) && cxla_literal_tuple_size(gpu) == n; i++)
      same(leaf(gpu, i), leaf(cpu, i), tol, text);
  }
  cxla_literal_destroy(gpu);
}
#define ON_GPU_HOST "host_linalg=1"
#define ON_CUSOLVER "solver_calls=1"

static const char *const k_types[4] = {"f32", "f64", "c64", "c128"};
static const char k_letter[4] = {'s', 'd', 'c', 'z'};
static const char *const k_real[4] = {"f32", "f64", "f32", "f64"}; /* eigen- and singular values */
static double tol_of(int t) { return t & 1 ? 1e-10 : 2e-4; }

TEST(linalg_cpu_cholesky_op) {
  for (int t = 0; t < 4; t++)
    for (int lower = 0; lower < 2; lower++)
      for (int n = 1; n <= 130; n += 43) {
        char text[512];
        snprintf(text, sizeof text, "HloModule m\nENTRY e {\n  a = %s[3,%d,%d] parameter(0)\n  ROOT c = %s[3,%d,%d] cholesky(a)%s\n}\n",
                 k_types[t], n, n, k_types[t], n, n, lower ? ", lower=true" : "");
        char *in = junk_matrices(k_types[t], 3, n, n, 1, 0, lower ? 1 : 2);
        cxla_literal *cpu, *ref;
        both(text, 1, (const char *const *)&in, &cpu, &ref);
        if (cpu && ref) same(cpu, ref, tol_of(t), text);
        cxla_literal_destroy(cpu);
        cxla_literal_destroy(ref);
        cx_free(in);
      }
  /* not positive definite, a zero last pivot, 1x1 zero and negative: XLA's NaN rules alike */
  const char *text = "HloModule m\nENTRY e {\n  a = f32[4,2,2] parameter(0)\n  b = f64[2,1,1] parameter(1)\n"
                     "  x = f32[4,2,2] cholesky(a), lower=true\n  y = f32[4,2,2] cholesky(a)\n"
                     "  z = f64[2,1,1] cholesky(b), lower=true\n  ROOT t = (f32[4,2,2], f32[4,2,2], f64[2,1,1]) tuple(x, y, z)\n}\n";
  const char *in[2] = {"f32[4,2,2] {{{1,1},{1,1}}, {{1,2},{2,1}}, {{4,-2},{-2,5}}, {{-1,0},{0,1}}}", "f64[2,1,1] {{{0}}, {{-2}}}"};
  cxla_literal *cpu, *ref;
  both(text, 2, in, &cpu, &ref);
  for (int i = 0; cpu && ref && i < 3; i++) same(leaf(cpu, i), leaf(ref, i), 1e-6, "cholesky corner cases");
  if (ref) {
    CHECK(isnan(cxla_literal_get_f64(leaf(ref, 0), 3)) && cxla_literal_get_f64(leaf(ref, 0), 2) == 1);
    CHECK(isnan(cxla_literal_get_f64(leaf(ref, 0), 4)) && cxla_literal_get_f64(leaf(ref, 0), 8) == 2);
    CHECK(cxla_literal_get_f64(leaf(ref, 2), 0) == 0 && isnan(cxla_literal_get_f64(leaf(ref, 2), 1)));
  }
  cxla_literal_destroy(cpu);
  cxla_literal_destroy(ref);
}

TEST(linalg_cpu_triangular_solve_op) {
  static const char *const tr[3] = {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
  for (int t = 0; t < 4; t++)
    for (int o = 0; o < 24; o++) {
      int left = o & 1, lower = (o >> 1) & 1, unit = (o >> 2) & 1, trans = o >> 3, m = 5, n = 3, k = left ? m : n;
      char text[640];
      snprintf(text, sizeof text,
               "HloModule m\nENTRY e {\n  a = %s[2,%d,%d] parameter(0)\n  b = %s[2,%d,%d] parameter(1)\n"
               "  ROOT x = %s[2,%d,%d] triangular-solve(a, b), left_side=%s, lower=%s, unit_diagonal=%s, transpose_a=%s\n}\n",
               k_types[t], k, k, k_types[t], m, n, k_types[t], m, n, left ? "true" : "false", lower ? "true" : "false",
               unit ? "true" : "false", tr[trans]);
      char *in[2] = {matrices(k_types[t], 2, k, k, 0, 1), matrices(k_types[t], 2, m, n, 0, 0)};
      cxla_literal *cpu, *ref;
      both(text, 2, (const char *const *)in, &cpu, &ref);
      if (cpu && ref) same(cpu, ref, tol_of(t), text);
      cxla_literal_destroy(cpu);
      cxla_literal_destroy(ref);
      cx_free(in[0]);
      cx_free(in[1]);
    }
}

/* One LAPACK custom-call: its text, for a [2,m,n] operand (plus a second operand). */
static char *cc_text(const char *target, const char *type, const char *result, const char *ops, const char *cfg) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_printf(&sb, "HloModule m\nENTRY e {\n%s  ROOT c = %s custom-call(%s), custom_call_target=\"%s\"%s%s\n}\n",
               strchr(ops, ',') ? "  a = PARAM0\n  b = PARAM1\n" : "  a = PARAM0\n", result, ops, target,
               cfg ? ", backend_config=" : "", cfg ? cfg : "");
  char *t = cx_sb_take(&sb);
  (void)type;
  return t;
}

/* Replaces PARAMi by "shape parameter(i)". */
static char *with_params(char *text, const char *p0, const char *p1) {
  cx_sb sb;
  cx_sb_init(&sb);
  for (const char *s = text; *s;) {
    if (!strncmp(s, "PARAM0", 6) || !strncmp(s, "PARAM1", 6)) {
      cx_sb_printf(&sb, "%s parameter(%c)", s[5] == '0' ? p0 : p1, s[5]);
      s += 6;
    } else {
      cx_sb_putc(&sb, *s++);
    }
  }
  cx_free(text);
  return cx_sb_take(&sb);
}

TEST(linalg_cpu_lapack_factorizations) {
  for (int t = 0; t < 4; t++) {
    const char *ty = k_types[t];
    char c = k_letter[t], tgt[64], res[256], shp[64], shp2[64];
    double tol = tol_of(t);
    /* potrf, both triangles */
    for (int up = 0; up < 2; up++) {
      snprintf(tgt, sizeof tgt, "lapack_%cpotrf_ffi", c);
      snprintf(shp, sizeof shp, "%s[2,6,6]", ty);
      snprintf(res, sizeof res, "(%s, s32[2])", shp);
      char *text = with_params(cc_text(tgt, ty, res, "a", up ? "{uplo = 85 : ui8}" : "{uplo = 76 : ui8}"), shp, NULL);
      char *in = junk_matrices(ty, 2, 6, 6, 1, 0, up ? 2 : 1);
      cxla_literal *cpu, *ref;
      both(text, 1, (const char *const *)&in, &cpu, &ref);
      if (cpu && ref) {
        same(leaf(cpu, 0), leaf(ref, 0), tol, text);
        same(leaf(cpu, 1), leaf(ref, 1), 0, "potrf info");
      }
      cxla_literal_destroy(cpu);
      cxla_literal_destroy(ref);
      cx_free(in);
      cx_free(text);
    }
    /* getrf and geqrf, tall and wide: LAPACK's pivots and reflectors exactly */
    static const int dims[3][2] = {{6, 4}, {4, 6}, {5, 5}};
    for (int d = 0; d < 3; d++) {
      int m = dims[d][0], n = dims[d][1], k = m < n ? m : n;
      snprintf(shp, sizeof shp, "%s[2,%d,%d]", ty, m, n);
      char *in = matrices(ty, 2, m, n, 0, 0);
      snprintf(tgt, sizeof tgt, "lapack_%cgetrf_ffi", c);
      snprintf(res, sizeof res, "(%s, s32[2,%d], s32[2])", shp, k);
      char *text = with_params(cc_text(tgt, ty, res, "a", "{}"), shp, NULL);
      cxla_literal *cpu, *ref;
      both(text, 1, (const char *const *)&in, &cpu, &ref);
      if (cpu && ref) {
        same(leaf(cpu, 0), leaf(ref, 0), tol, text);
        same(leaf(cpu, 1), leaf(ref, 1), 0, "getrf pivots");
        same(leaf(cpu, 2), leaf(ref, 2), 0, "getrf info");
      }
      cxla_literal_destroy(cpu);
      cxla_literal_destroy(ref);
      cx_free(text);
      snprintf(tgt, sizeof tgt, "lapack_%cgeqrf_ffi", c);
      snprintf(res, sizeof res, "(%s, %s[2,%d])", shp, ty, k);
      text = with_params(cc_text(tgt, ty, res, "a", NULL), shp, NULL);
      both(text, 1, (const char *const *)&in, &cpu, &ref);
      if (cpu && ref) {
        same(leaf(cpu, 0), leaf(ref, 0), tol, text);
        same(leaf(cpu, 1), leaf(ref, 1), tol, "geqrf tau");
      }
      cxla_literal_destroy(cpu);
      cxla_literal_destroy(ref);
      cx_free(text);
      if (m >= n) { /* orgqr of geqrf's reflectors (any a and tau in [1, 2] do) */
        snprintf(tgt, sizeof tgt, "lapack_%c%sgqr_ffi", c, t < 2 ? "or" : "un");
        snprintf(shp2, sizeof shp2, "%s[2,%d]", ty, n);
        text = with_params(cc_text(tgt, ty, shp, "a, b", NULL), shp, shp2);
        char *tau = vectors(ty, 2, n); /* any values do */
        const char *ins[2] = {in, tau};
        both(text, 2, ins, &cpu, &ref);
        if (cpu && ref) same(cpu, ref, tol, text);
        cxla_literal_destroy(cpu);
        cxla_literal_destroy(ref);
        cx_free(text);
        cx_free(tau);
      }
      cx_free(in);
    }
  }
}

TEST(linalg_cpu_lapack_trsm) {
  static const char sides[] = "LR", uplos[] = "LU", trans[] = "NTC", diags[] = "NU";
  for (int t = 0; t < 4; t++)
    for (int o = 0; o < 24; o++) {
      int side = o & 1, up = (o >> 1) & 1, dg = (o >> 2) & 1, tr = o >> 3, m = 4, n = 3, k = side ? n : m;
      char tgt[64], cfg[128], sa[64], sb[64];
      snprintf(tgt, sizeof tgt, "lapack_%ctrsm_ffi", k_letter[t]);
      snprintf(cfg, sizeof cfg, "{diag = %d : ui8, side = %d : ui8, trans_x = %d : ui8, uplo = %d : ui8}", diags[dg],
               sides[side], trans[tr], uplos[up]);
      snprintf(sa, sizeof sa, "%s[2,%d,%d]", k_types[t], k, k);
      snprintf(sb, sizeof sb, "%s[2,%d,%d]", k_types[t], m, n);
      char *text = with_params(cc_text(tgt, k_types[t], sb, "a, b", cfg), sa, sb);
      char *in[2] = {matrices(k_types[t], 2, k, k, 0, 1), matrices(k_types[t], 2, m, n, 0, 0)};
      cxla_literal *cpu, *ref;
      both(text, 2, (const char *const *)in, &cpu, &ref);
      if (cpu && ref) same(cpu, ref, tol_of(t), text);
      cxla_literal_destroy(cpu);
      cxla_literal_destroy(ref);
      cx_free(in[0]);
      cx_free(in[1]);
      cx_free(text);
    }
}

TEST(linalg_cpu_lapack_syevd) {
  for (int t = 0; t < 4; t++)
    for (int up = 0; up < 2; up++) {
      int n = 7;
      char tgt[64], shp[64], res[128];
      snprintf(tgt, sizeof tgt, "lapack_%c%sevd_ffi", k_letter[t], t < 2 ? "sy" : "he");
      snprintf(shp, sizeof shp, "%s[2,%d,%d]", k_types[t], n, n);
      snprintf(res, sizeof res, "(%s, %s[2,%d], s32[2])", shp, k_real[t], n);
      char *text = with_params(cc_text(tgt, k_types[t], res, "a", up ? "{mode = 86 : ui8, uplo = 85 : ui8}"
                                                                       : "{mode = 86 : ui8, uplo = 76 : ui8}"),
                               shp, NULL);
      /* random symmetric matrices: distinct eigenvalues, vectors unique up to sign */
      char *in = junk_matrices(k_types[t], 2, n, n, 1, 0, up ? 2 : 1);
      cxla_literal *cpu, *ref;
      both(text, 1, (const char *const *)&in, &cpu, &ref);
      if (cpu && ref) {
        same(leaf(cpu, 1), leaf(ref, 1), tol_of(t), "syevd eigenvalues");
        same_up_to_sign(leaf(cpu, 0), leaf(ref, 0), 2, n * n, n, n, n, 1, t & 1 ? 1e-9 : 1e-3, "syevd vectors");
        same(leaf(cpu, 2), leaf(ref, 2), 0, "syevd info");
      }
      cxla_literal_destroy(cpu);
      cxla_literal_destroy(ref);
      cx_free(in);
      cx_free(text);
    }
}

/* |U S V^H - A| of a cpu result, and the orthonormality of all of U's columns. */
static void check_svd_result(const cxla_literal *r, const char *in_text, int m, int n, int uc, int vr, double tol) {
  cxla_literal *a = NULL;
  CHECK_OK(cx_parse_literal(test_ctx(), in_text, strlen(in_text), &a));
  const cxla_literal *s = leaf(r, 1), *u = leaf(r, 2), *vt = leaf(r, 3);
  int k = m < n ? m : n;
  for (int b = 0; a && b < 2; b++) {
    double err = 0, orth = 0;
    for (int i = 0; i < m; i++)
      for (int j = 0; j < n; j++) {
        double complex x = 0;
        for (int q = 0; q < k; q++) x += el(u, b * m * uc + i * uc + q) * el(s, b * k + q) * el(vt, b * vr * n + q * n + j);
        err = fmax(err, cabs(x - el(a, b * m * n + i * n + j)));
      }
    for (int p = 0; p < uc; p++)
      for (int q = 0; q < uc; q++) {
        double complex d = 0;
        for (int i = 0; i < m; i++) d += conj(el(u, b * m * uc + i * uc + p)) * el(u, b * m * uc + i * uc + q);
        orth = fmax(orth, cabs(d - (p == q)));
      }
    CHECK_MSG(err < 10 * tol && orth < 10 * tol, "svd %dx%d: |USV^H - A| = %g, |U^H U - I| = %g", m, n, err, orth);
  }
  cxla_literal_destroy(a);
}

TEST(linalg_cpu_lapack_svd) {
  static const int dims[2][2] = {{6, 4}, {3, 5}};
  static const char modes[] = "ASN";
  for (int t = 0; t < 4; t++)
    for (int dc = 0; dc < 2; dc++)
      for (int d = 0; d < 2; d++)
        for (int md = 0; md < 3; md++) {
          int m = dims[d][0], n = dims[d][1], k = m < n ? m : n, full = modes[md] != 'S';
          int uc = full ? m : k, vr = full ? n : k;
          char tgt[64], shp[64], res[256], cfg[64];
          const char *ty = k_types[t];
          snprintf(tgt, sizeof tgt, "lapack_%c%s_ffi", k_letter[t], dc ? "gesdd" : "gesvd");
          snprintf(shp, sizeof shp, "%s[2,%d,%d]", ty, m, n);
          snprintf(res, sizeof res, "(%s, %s[2,%d], %s[2,%d,%d], %s[2,%d,%d], s32[2])", shp, k_real[t], k, ty, m, uc, ty,
                   vr, n);
          snprintf(cfg, sizeof cfg, "{mode = %d : ui8}", modes[md]);
          char *text = with_params(cc_text(tgt, ty, res, "a", cfg), shp, NULL);
          char *in = matrices(ty, 2, m, n, 0, 0);
          cxla_literal *cpu, *ref;
          both(text, 1, (const char *const *)&in, &cpu, &ref);
          if (cpu && ref) {
            same(leaf(cpu, 1), leaf(ref, 1), tol_of(t), "singular values");
            same(leaf(cpu, 4), leaf(ref, 4), 0, "svd info");
            if (modes[md] == 'N') {
              same(leaf(cpu, 2), leaf(ref, 2), 0, "mode N: u is zeros");
              same(leaf(cpu, 3), leaf(ref, 3), 0, "mode N: vt is zeros");
            } else {
              same_up_to_sign(leaf(cpu, 2), leaf(ref, 2), 2, m * uc, k, m, uc, 1, t & 1 ? 1e-9 : 1e-3, "left vectors");
              same_up_to_sign(leaf(cpu, 3), leaf(ref, 3), 2, vr * n, k, n, 1, n, t & 1 ? 1e-9 : 1e-3, "right vectors");
              check_svd_result(cpu, in, m, n, uc, vr, tol_of(t));
            }
          }
          cxla_literal_destroy(cpu);
          cxla_literal_destroy(ref);
          cx_free(in);
          cx_free(text);
        }
}

/* ---- geev: eigenvalues come in each side's own order (LAPACK's, the reference's Schur
 * form's), so they are matched as sets; vectors by residuals and |dot products| ---- */

/* Eigenvalue i of a geev result (the real types return real and imaginary parts apart). */
static double complex eigval(const cxla_literal *r, int real, int64_t i) {
  return real ? cx_z_make(creal(el(leaf(r, 0), i)), creal(el(leaf(r, 1), i))) : el(leaf(r, 0), i);
}

/* Max over the vectors of matrix b of |A v - w v| (right) or |u^H A - w u^H| (left), and of
 * |1 - |v||. */
static double eig_residual(const cxla_literal *a, const cxla_literal *r, int real, int b, int n, int left) {
  const cxla_literal *v = leaf(r, (real ? 2 : 1) + !left);
  int64_t base = (int64_t)b * n * n;
  double worst = 0;
  for (int j = 0; j < n; j++) {
    double complex lam = eigval(r, real, (int64_t)b * n + j);
    double norm = 0;
    for (int i = 0; i < n; i++) norm += pow(cabs(el(v, base + i * n + j)), 2);
    worst = fmax(worst, fabs(sqrt(norm) - 1));
    for (int i = 0; i < n; i++) {
      double complex x = 0;
      for (int k = 0; k < n; k++)
        x += left ? conj(el(v, base + k * n + j)) * el(a, base + k * n + i) : el(a, base + i * n + k) * el(v, base + k * n + j);
      x -= lam * (left ? conj(el(v, base + i * n + j)) : el(v, base + i * n + j));
      worst = fmax(worst, cabs(x));
    }
  }
  return worst;
}

static void check_geev(const cxla_literal *a, const cxla_literal *cpu, const cxla_literal *ref, int t, int n, int nb,
                       const int want[2]) {
  int real = t < 2, match[16], used[16];
  double tol = t & 1 ? 1e-10 : 2e-4;
  same(leaf(cpu, real ? 4 : 3), leaf(ref, real ? 4 : 3), 0, "geev info");
  for (int b = 0; b < nb; b++) {
    memset(used, 0, sizeof used);
    for (int i = 0; i < n; i++) { /* the nearest ref eigenvalue not yet matched */
      double complex x = eigval(cpu, real, (int64_t)b * n + i);
      int best = -1;
      for (int j = 0; j < n; j++)
        if (!used[j] && (best < 0 || cabs(eigval(ref, real, (int64_t)b * n + j) - x) <
                                         cabs(eigval(ref, real, (int64_t)b * n + best) - x)))
          best = j;
      used[best] = 1, match[i] = best;
      double d = cabs(eigval(ref, real, (int64_t)b * n + best) - x);
      CHECK_MSG(d <= 10 * tol * fmax(1, cabs(x)), "%s batch %d: eigenvalue %d (%g%+gi) is %g from the reference's",
                k_types[t], b, i, creal(x), cimag(x), d);
    }
    for (int side = 0; side < 2; side++) {
      const cxla_literal *vc = leaf(cpu, (real ? 2 : 1) + side), *vr = leaf(ref, (real ? 2 : 1) + side);
      int64_t base = (int64_t)b * n * n;
      if (!want[side]) {
        for (int64_t i = 0; i < n * n; i++)
          CHECK_MSG(el(vc, base + i) == 0 && el(vr, base + i) == 0, "%s: vectors not asked for are zeros", k_types[t]);
        continue;
      }
      double rc = eig_residual(a, cpu, real, b, n, !side), rr = eig_residual(a, ref, real, b, n, !side);
      CHECK_MSG(rc < 100 * tol && rr < 100 * tol, "%s batch %d %s vectors: residual cpu %g, reference %g", k_types[t], b,
                side ? "right" : "left", rc, rr);
      for (int i = 0; i < n; i++) {
        double complex d = 0;
        for (int k = 0; k < n; k++) d += conj(el(vc, base + k * n + i)) * el(vr, base + k * n + match[i]);
        CHECK_MSG(fabs(cabs(d) - 1) < 1000 * tol, "%s batch %d vector %d: |dot| with the reference's %g", k_types[t], b,
                  i, cabs(d));
      }
    }
  }
}

TEST(linalg_cpu_lapack_geev) {
  static const char *const modes[3] = {"VV", "NV", "VN"};
  for (int t = 0; t < 4; t++)
    for (int md = 0; md < 3; md++) {
      int n = 6, want[2] = {modes[md][0] == 'V', modes[md][1] == 'V'};
      const char *ty = k_types[t], *vt = t == 0 ? "c64" : t == 1 ? "c128" : ty;
      char tgt[64], shp[64], res[256], cfg[96];
      snprintf(tgt, sizeof tgt, "lapack_%cgeev_ffi", k_letter[t]);
      snprintf(shp, sizeof shp, "%s[2,%d,%d]", ty, n, n);
      if (t < 2) snprintf(res, sizeof res, "(%s[2,%d], %s[2,%d], %s[2,%d,%d], %s[2,%d,%d], s32[2])", ty, n, ty, n, vt, n, n, vt, n, n);
      else snprintf(res, sizeof res, "(%s[2,%d], %s[2,%d,%d], %s[2,%d,%d], s32[2])", ty, n, vt, n, n, vt, n, n);
      snprintf(cfg, sizeof cfg, "{compute_left = %d : ui8, compute_right = %d : ui8}", modes[md][0], modes[md][1]);
      char *text = with_params(cc_text(tgt, ty, res, "a", cfg), shp, NULL);
      char *in = matrices(ty, 2, n, n, 0, 0);
      cxla_literal *cpu, *ref, *a = NULL;
      both(text, 1, (const char *const *)&in, &cpu, &ref);
      CHECK_OK(cx_parse_literal(test_ctx(), in, strlen(in), &a));
      if (cpu && ref && a) check_geev(a, cpu, ref, t, n, 2, want);
      if (cpu) gpu_like_cpu(text, 1, (const char *const *)&in, cpu, 0, ON_GPU_HOST);
      cxla_literal_destroy(a);
      cxla_literal_destroy(cpu);
      cxla_literal_destroy(ref);
      cx_free(in);
      cx_free(text);
    }
}

/* A matrix with a non-finite entry is not decomposed (jaxlib's info -4), its values NaN; the
 * other matrices of the batch are. */
TEST(linalg_cpu_lapack_geev_nonfinite) {
  const char *text = "HloModule m\nENTRY e {\n  a = f64[2,2,2] parameter(0)\n"
                     "  ROOT c = (f64[2,2], f64[2,2], c128[2,2,2], c128[2,2,2], s32[2]) custom-call(a), "
                     "custom_call_target=\"lapack_dgeev_ffi\", backend_config={compute_left = 78 : ui8, compute_right = 86 : ui8}\n}\n";
  const char *in = "f64[2,2,2] {{{2, 1}, {0, 3}}, {{1, nan}, {0, 1}}}";
  cxla_literal *cpu, *ref;
  both(text, 1, &in, &cpu, &ref);
  for (int k = 0; k < 2; k++) {
    const cxla_literal *r = k ? ref : cpu;
    if (!r) continue;
    CHECK_EQ_INT((int)creal(el(leaf(r, 4), 0)), 0);
    CHECK_EQ_INT((int)creal(el(leaf(r, 4), 1)), -4);
    double lo = fmin(creal(el(leaf(r, 0), 0)), creal(el(leaf(r, 0), 1)));
    double hi = fmax(creal(el(leaf(r, 0), 0)), creal(el(leaf(r, 0), 1)));
    CHECK_MSG(lo == 2 && hi == 3 && el(leaf(r, 1), 0) == 0, "eigenvalues of [[2, 1], [0, 3]]: %g, %g", lo, hi);
    CHECK_MSG(isnan(creal(el(leaf(r, 0), 2))) && isnan(creal(el(leaf(r, 3), 4))), "a NaN matrix's results are NaN");
  }
  if (cpu) gpu_like_cpu(text, 1, &in, cpu, 0, ON_GPU_HOST);
  cxla_literal_destroy(cpu);
  cxla_literal_destroy(ref);
}

/* f16 and bf16: LAPACK has no 16-bit routines, so the cpu computes in f32 and rounds once; the
 * interpreter in double: they agree to the 16-bit type's precision. */
TEST(linalg_cpu_16bit_ops) {
  static const char *const types[2] = {"f16", "bf16"};
  for (int t = 0; t < 2; t++) {
    char text[640];
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n  a = %s[2,6,6] parameter(0)\n  b = %s[2,6,3] parameter(1)\n"
             "  c = %s[2,6,6] cholesky(a), lower=true\n"
             "  x = %s[2,6,3] triangular-solve(c, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE\n"
             "  ROOT r = (%s[2,6,6], %s[2,6,3]) tuple(c, x)\n}\n",
             types[t], types[t], types[t], types[t], types[t], types[t]);
    char *in[2] = {junk_matrices(types[t], 2, 6, 6, 1, 0, 1), matrices(types[t], 2, 6, 3, 0, 0)};
    cxla_literal *cpu, *ref;
    both(text, 2, (const char *const *)in, &cpu, &ref);
    for (int i = 0; cpu && ref && i < 2; i++) same(leaf(cpu, i), leaf(ref, i), t ? 2e-2 : 4e-3, text);
    cxla_literal_destroy(cpu);
    cxla_literal_destroy(ref);
    cx_free(in[0]);
    cx_free(in[1]);
  }
}

/* The tridiagonal system of dl, d, du (dl[b][0] and du[b][n-1] not part of it) times x,
 * against b: |A x - b| relative to |b|, the largest over the batch. */
static double gtsv_residual(const char *const *in, const cxla_literal *x, int nb, int n, int nrhs) {
  cxla_literal *v[4] = {0};
  double err = 0;
  int ok = 1;
  for (int i = 0; i < 4; i++) ok &= cx_parse_literal(test_ctx(), in[i], strlen(in[i]), &v[i]) == CXLA_OK;
  for (int b = 0; ok && b < nb; b++)
    for (int i = 0; i < n; i++)
      for (int j = 0; j < nrhs; j++) {
        double complex y = el(v[1], b * n + i) * el(x, (b * n + i) * nrhs + j);
        if (i > 0) y += el(v[0], b * n + i) * el(x, (b * n + i - 1) * nrhs + j);
        if (i + 1 < n) y += el(v[2], b * n + i) * el(x, (b * n + i + 1) * nrhs + j);
        err = fmax(err, cabs(y - el(v[3], (b * n + i) * nrhs + j)));
      }
  for (int i = 0; i < 4; i++) cxla_literal_destroy(v[i]);
  return ok ? err : INFINITY;
}

TEST(linalg_cpu_lapack_gtsv) {
  for (int t = 0; t < 4; t++)
    for (int n = 1; n <= 7; n += 3) {
      const char *ty = k_types[t];
      int nrhs = 3;
      char text[1024];
      snprintf(text, sizeof text,
               "HloModule m\nENTRY e {\n  dl = %s[2,%d] parameter(0)\n  d = %s[2,%d] parameter(1)\n  du = %s[2,%d] parameter(2)\n"
               "  b = %s[2,%d,%d] parameter(3)\n  ROOT c = (%s[2,%d], %s[2,%d], %s[2,%d], %s[2,%d,%d], s32[2]) "
               "custom-call(dl, d, du, b), custom_call_target=\"lapack_%cgtsv_ffi\"\n}\n",
               ty, n, ty, n, ty, n, ty, n, nrhs, ty, n, ty, n, ty, n, ty, n, nrhs, k_letter[t]);
      /* random values: rows swap wherever the subdiagonal is the larger */
      char *in[4] = {vectors(ty, 2, n), vectors(ty, 2, n), vectors(ty, 2, n), matrices(ty, 2, n, nrhs, 0, 0)};
      cxla_literal *cpu, *ref;
      both(text, 4, (const char *const *)in, &cpu, &ref);
      if (cpu && ref) {
        for (int i = 0; i < 4; i++) same(leaf(cpu, i), leaf(ref, i), 1e3 * tol_of(t), text);
        same(leaf(cpu, 4), leaf(ref, 4), 0, "gtsv info");
        CHECK_EQ_INT(cxla_literal_get_f64(leaf(ref, 4), 0), 0);
        double r = gtsv_residual((const char *const *)in, leaf(cpu, 3), 2, n, nrhs);
        CHECK_MSG(r < 1e4 * tol_of(t), "gtsv %s n=%d: |A x - b| = %g", ty, n, r);
        gpu_like_cpu(text, 4, (const char *const *)in, cpu, 0, ON_GPU_HOST);
      }
      cxla_literal_destroy(cpu);
      cxla_literal_destroy(ref);
      for (int i = 0; i < 4; i++) cx_free(in[i]);
    }
  /* singular: a zero first column (info 1), a zero last pivot (info 3); with pivoting (info 0) */
  const char *text = "HloModule m\nENTRY e {\n  dl = f64[3,3] parameter(0)\n  d = f64[3,3] parameter(1)\n"
                     "  du = f64[3,3] parameter(2)\n  b = f64[3,3,1] parameter(3)\n"
                     "  ROOT c = (f64[3,3], f64[3,3], f64[3,3], f64[3,3,1], s32[3]) custom-call(dl, d, du, b), "
                     "custom_call_target=\"lapack_dgtsv_ffi\"\n}\n";
  const char *in[4] = {"f64[3,3] {{9,0,1}, {9,1,1}, {9,2,3}}", "f64[3,3] {{0,1,1}, {1,2,1}, {1,1,1}}",
                       "f64[3,3] {{1,1,9}, {1,1,9}, {1,1,9}}", "f64[3,3,1] {{{1},{2},{3}}, {{1},{2},{3}}, {{1},{2},{3}}}"};
  cxla_literal *cpu, *ref;
  both(text, 4, in, &cpu, &ref);
  if (cpu && ref) {
    for (int i = 0; i < 5; i++) same(leaf(cpu, i), leaf(ref, i), 1e-12, "gtsv singular");
    gpu_like_cpu(text, 4, in, cpu, 0, ON_GPU_HOST);
    CHECK_EQ_INT(cxla_literal_get_f64(leaf(ref, 4), 0), 1);
    CHECK_EQ_INT(cxla_literal_get_f64(leaf(ref, 4), 1), 3);
    CHECK_EQ_INT(cxla_literal_get_f64(leaf(ref, 4), 2), 0);
  }
  cxla_literal_destroy(cpu);
  cxla_literal_destroy(ref);
}

TEST(linalg_cpu_lapack_ormqr) {
  for (int t = 0; t < 4; t++)
    for (int o = 0; o < 4; o++) {
      int left = o & 1, tr = o >> 1, m = 5, n = 4, nq = left ? m : n, ka = 3, k = 2;
      const char *ty = k_types[t];
      char text[1024];
      snprintf(text, sizeof text,
               "HloModule m\nENTRY e {\n  a = %s[2,%d,%d] parameter(0)\n  t = %s[2,%d] parameter(1)\n  c = %s[2,%d,%d] parameter(2)\n"
               "  ROOT r = %s[2,%d,%d] custom-call(a, t, c), custom_call_target=\"lapack_%c%smqr_ffi\", "
               "backend_config={left = %s, transpose = %s}\n}\n",
               ty, nq, ka, ty, k, ty, m, n, ty, m, n, k_letter[t], t < 2 ? "or" : "un", left ? "true" : "false",
               tr ? "true" : "false");
      /* any reflectors and factors do: Q need not be unitary to compare the two */
      char *in[3] = {matrices(ty, 2, nq, ka, 0, 0), vectors(ty, 2, k), matrices(ty, 2, m, n, 0, 0)};
      cxla_literal *cpu, *ref;
      both(text, 3, (const char *const *)in, &cpu, &ref);
      if (cpu && ref) same(cpu, ref, 10 * tol_of(t), text);
      if (cpu) gpu_like_cpu(text, 3, (const char *const *)in, cpu, tol_of(t), ON_CUSOLVER);
      cxla_literal_destroy(cpu);
      cxla_literal_destroy(ref);
      for (int i = 0; i < 3; i++) cx_free(in[i]);
    }
}

TEST(linalg_cpu_lapack_geqp3) {
  static const int dims[3][2] = {{6, 4}, {4, 6}, {5, 5}};
  for (int t = 0; t < 4; t++)
    for (int d = 0; d < 3; d++)
      for (int fixed = 0; fixed < 2; fixed++) {
        int m = dims[d][0], n = dims[d][1], k = m < n ? m : n;
        const char *ty = k_types[t];
        char text[1024];
        snprintf(text, sizeof text,
                 "HloModule m\nENTRY e {\n  a = %s[2,%d,%d] parameter(0)\n  p = s32[2,%d] parameter(1)\n"
                 "  ROOT r = (%s[2,%d,%d], s32[2,%d], %s[2,%d]) custom-call(a, p), custom_call_target=\"lapack_%cgeqp3_ffi\"\n}\n",
                 ty, m, n, n, ty, m, n, n, ty, k, k_letter[t]);
        /* jax passes zeros (every column free); non-zero marks a column to lead, unpivoted */
        char *in[2] = {matrices(ty, 2, m, n, 0, 0), NULL};
        cx_sb sb;
        cx_sb_init(&sb);
        cx_sb_printf(&sb, "s32[2,%d] {", n);
        for (int b = 0; b < 2; b++) {
          cx_sb_puts(&sb, b ? ", {" : "{");
          for (int j = 0; j < n; j++) cx_sb_printf(&sb, "%s%d", j ? "," : "", fixed && (j + b) % 3 == 2 ? 1 : 0);
          cx_sb_putc(&sb, '}');
        }
        cx_sb_putc(&sb, '}');
        in[1] = cx_sb_take(&sb);
        cxla_literal *cpu, *ref;
        both(text, 2, (const char *const *)in, &cpu, &ref);
        if (cpu && ref) {
          same(leaf(cpu, 1), leaf(ref, 1), 0, "geqp3 pivots");
          same(leaf(cpu, 0), leaf(ref, 0), tol_of(t), text);
          same(leaf(cpu, 2), leaf(ref, 2), tol_of(t), "geqp3 tau");
          if (fixed) CHECK_EQ_INT(cxla_literal_get_f64(leaf(ref, 1), 0), 3); /* batch 0's marked column 2 leads */
          gpu_like_cpu(text, 2, (const char *const *)in, cpu, 0, ON_GPU_HOST);
        }
        cxla_literal_destroy(cpu);
        cxla_literal_destroy(ref);
        cx_free(in[0]);
        cx_free(in[1]);
      }
}

TEST(linalg_cpu_lapack_gehrd) {
  static const int ranges[3][3] = {{6, 1, 6}, {6, 2, 5}, {1, 1, 1}}; /* n, low, high */
  for (int t = 0; t < 4; t++)
    for (int r = 0; r < 3; r++) {
      int n = ranges[r][0], nt = n - 1;
      const char *ty = k_types[t];
      char text[1024];
      snprintf(text, sizeof text,
               "HloModule m\nENTRY e {\n  a = %s[2,%d,%d] parameter(0)\n"
               "  ROOT r = (%s[2,%d,%d], %s[2,%d], s32[2]) custom-call(a), custom_call_target=\"lapack_%cgehrd_ffi\", "
               "backend_config={high = %d : i32, low = %d : i32}\n}\n",
               ty, n, n, ty, n, n, ty, nt, k_letter[t], ranges[r][2], ranges[r][1]);
      char *in = matrices(ty, 2, n, n, 0, 0);
      cxla_literal *cpu, *ref;
      both(text, 1, (const char *const *)&in, &cpu, &ref);
      if (cpu && ref) {
        same(leaf(cpu, 0), leaf(ref, 0), 10 * tol_of(t), text);
        same(leaf(cpu, 1), leaf(ref, 1), 10 * tol_of(t), "gehrd tau");
        same(leaf(cpu, 2), leaf(ref, 2), 0, "gehrd info");
        gpu_like_cpu(text, 1, (const char *const *)&in, cpu, 0, ON_GPU_HOST);
      }
      cxla_literal_destroy(cpu);
      cxla_literal_destroy(ref);
      cx_free(in);
    }
}

TEST(linalg_cpu_lapack_sytrd) {
  for (int t = 0; t < 4; t++)
    for (int up = 0; up < 2; up++)
      for (int n = 1; n <= 7; n += 3) {
        const char *ty = k_types[t];
        int nt = n - 1;
        char text[1024];
        snprintf(text, sizeof text,
                 "HloModule m\nENTRY e {\n  a = %s[2,%d,%d] parameter(0)\n"
                 "  ROOT r = (%s[2,%d,%d], %s[2,%d], %s[2,%d], %s[2,%d], s32[2]) custom-call(a), "
                 "custom_call_target=\"lapack_%c%strd_ffi\", backend_config={uplo = %d : ui8}\n}\n",
                 ty, n, n, ty, n, n, k_real[t], n, k_real[t], nt, ty, nt, k_letter[t], t < 2 ? "sy" : "he",
                 up ? 'U' : 'L');
        /* Hermitian, junk in the triangle not read: both must leave it as it was */
        char *in = junk_matrices(ty, 2, n, n, 1, 0, up ? 2 : 1);
        cxla_literal *cpu, *ref;
        both(text, 1, (const char *const *)&in, &cpu, &ref);
        if (cpu && ref) {
          for (int i = 0; i < 4; i++) same(leaf(cpu, i), leaf(ref, i), 10 * tol_of(t), text);
          same(leaf(cpu, 4), leaf(ref, 4), 0, "sytrd info");
          gpu_like_cpu(text, 1, (const char *const *)&in, cpu, tol_of(t), ON_CUSOLVER);
        }
        cxla_literal_destroy(cpu);
        cxla_literal_destroy(ref);
        cx_free(in);
      }
}

/* ---- gees: a Schur form is not unique (the order of the eigenvalues, the phases of z's
 * columns, the 2 x 2 blocks of the real form), so each backend's is checked for being one:
 * a = z t z^H, z^H z = I, t (quasi-)triangular with the eigenvalues it lists; the eigenvalues
 * of the two agree as sets ---- */

/* Eigenvalue i of a gees result (real types: wr and wi apart, after t and z). */
static double complex schur_eig(const cxla_literal *r, int real, int64_t i) {
  return real ? cx_z_make(creal(el(leaf(r, 2), i)), creal(el(leaf(r, 3), i))) : el(leaf(r, 2), i);
}

static void check_schur(const cxla_literal *a, const cxla_literal *r, int t, int n, int nb, int vectors,
                        const char *who) {
  int real = t < 2;
  double tol = 100 * tol_of(t);
  const cxla_literal *tt = leaf(r, 0), *z = leaf(r, 1);
  for (int b = 0; b < nb; b++) {
    int64_t base = (int64_t)b * n * n;
    CHECK_MSG(creal(el(leaf(r, real ? 5 : 4), b)) == 0 && creal(el(leaf(r, real ? 4 : 3), b)) == 0,
              "%s %s: info and sdim 0", who, k_types[t]);
    for (int i = 0; i < n; i++) { /* shape, and the eigenvalues t's blocks hold */
      for (int j = 0; j + (real ? 1 : 0) < i; j++)
        CHECK_MSG(el(tt, base + i * n + j) == 0, "%s %s: t[%d][%d] = %g", who, k_types[t], i, j,
                  cabs(el(tt, base + i * n + j)));
      int pair = real && i + 1 < n && el(tt, base + (i + 1) * n + i) != 0;
      CHECK_MSG(!pair || i + 2 >= n || el(tt, base + (i + 2) * n + i + 1) == 0, "%s: 2 x 2 blocks do not overlap", who);
      double complex w = el(tt, base + i * n + i);
      if (pair) {
        double complex p = (el(tt, base + i * n + i) - el(tt, base + (i + 1) * n + i + 1)) / 2;
        double complex disc = p * p + el(tt, base + i * n + i + 1) * el(tt, base + (i + 1) * n + i);
        CHECK_MSG(creal(disc) < 0, "%s %s: a 2 x 2 block holds a complex pair", who, k_types[t]);
        w = (el(tt, base + i * n + i) + el(tt, base + (i + 1) * n + i + 1)) / 2 + I * sqrt(-creal(disc));
      }
      double complex listed = schur_eig(r, real, (int64_t)b * n + i);
      CHECK_MSG(cabs(listed - w) <= tol * fmax(1, cabs(w)), "%s %s: eigenvalue %d listed %g%+gi, t holds %g%+gi", who,
                k_types[t], i, creal(listed), cimag(listed), creal(w), cimag(w));
      if (pair) {
        CHECK_MSG(cabs(schur_eig(r, real, (int64_t)b * n + i + 1) - conj(w)) <= tol * fmax(1, cabs(w)),
                  "%s: a pair's second eigenvalue is the conjugate", who);
        i++;
      }
    }
    double rec = 0, orth = 0;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        double complex x = 0, y = 0;
        for (int k = 0; k < n; k++) {
          y += conj(el(z, base + k * n + i)) * el(z, base + k * n + j);
          for (int l = 0; l < n; l++) x += el(z, base + i * n + k) * el(tt, base + k * n + l) * conj(el(z, base + j * n + l));
        }
        if (vectors) {
          rec = fmax(rec, cabs(x - el(a, base + i * n + j)));
          orth = fmax(orth, cabs(y - (i == j)));
        } else {
          CHECK_MSG(el(z, base + i * n + j) == 0, "%s: z is zeros with mode 'N'", who);
        }
      }
    CHECK_MSG(rec <= tol && orth <= tol, "%s %s batch %d: |z t z^H - a| %g, |z^H z - I| %g", who, k_types[t], b, rec, orth);
  }
}

TEST(linalg_cpu_lapack_gees) {
  for (int t = 0; t < 4; t++)
    for (int v = 0; v < 2; v++)
      for (int n = 1; n <= 7; n += 6) {
        const char *ty = k_types[t];
        char tgt[64], shp[64], res[256], cfg[96];
        snprintf(tgt, sizeof tgt, "lapack_%cgees_ffi", k_letter[t]);
        snprintf(shp, sizeof shp, "%s[3,%d,%d]", ty, n, n);
        if (t < 2) snprintf(res, sizeof res, "(%s, %s, %s[3,%d], %s[3,%d], s32[3], s32[3])", shp, shp, ty, n, ty, n);
        else snprintf(res, sizeof res, "(%s, %s, %s[3,%d], s32[3], s32[3])", shp, shp, ty, n);
        snprintf(cfg, sizeof cfg, "{mode = %d : ui8, sort = 78 : ui8}", v ? 'V' : 'N');
        char *text = with_params(cc_text(tgt, ty, res, "a", cfg), shp, NULL);
        char *in = matrices(ty, 3, n, n, 0, 0);
        cxla_literal *cpu, *ref, *a = NULL;
        both(text, 1, (const char *const *)&in, &cpu, &ref);
        CHECK_OK(cx_parse_literal(test_ctx(), in, strlen(in), &a));
        if (cpu && ref && a) {
          check_schur(a, cpu, t, n, 3, v, "cpu");
          gpu_like_cpu(text, 1, (const char *const *)&in, cpu, 0, ON_GPU_HOST);
          check_schur(a, ref, t, n, 3, v, "interp");
          for (int b = 0; b < 3; b++) { /* the eigenvalues as sets: each cpu one near a reference one */
            for (int i = 0; i < n; i++) {
              double complex x = schur_eig(cpu, t < 2, (int64_t)b * n + i);
              double best = INFINITY;
              for (int j = 0; j < n; j++) best = fmin(best, cabs(schur_eig(ref, t < 2, (int64_t)b * n + j) - x));
              CHECK_MSG(best <= 100 * tol_of(t) * fmax(1, cabs(x)), "%s: eigenvalue %g%+gi is %g from the reference's", ty,
                        creal(x), cimag(x), best);
            }
          }
        }
        cxla_literal_destroy(a);
        cxla_literal_destroy(cpu);
        cxla_literal_destroy(ref);
        cx_free(in);
        cx_free(text);
      }
}

/* A matrix with a non-finite entry: t holds NaN on both backends (LAPACK's info for it is its
 * own affair: jax makes t and z NaN when info != 0, and NaN already otherwise); the other
 * matrix of the batch is decomposed. */
TEST(linalg_cpu_lapack_gees_nonfinite) {
  const char *text = "HloModule m\nENTRY e {\n  a = f64[2,2,2] parameter(0)\n"
                     "  ROOT c = (f64[2,2,2], f64[2,2,2], f64[2,2], f64[2,2], s32[2], s32[2]) custom-call(a), "
                     "custom_call_target=\"lapack_dgees_ffi\", backend_config={mode = 86 : ui8, sort = 78 : ui8}\n}\n";
  const char *in = "f64[2,2,2] {{{2, 1}, {0, 3}}, {{1, 2}, {nan, 1}}}";
  cxla_literal *cpu, *ref;
  both(text, 1, &in, &cpu, &ref);
  for (int k = 0; k < 2; k++) {
    const cxla_literal *r = k ? ref : cpu;
    if (!r) continue;
    CHECK_MSG(el(leaf(r, 0), 0) == 2 && el(leaf(r, 0), 2) == 0 && el(leaf(r, 0), 3) == 3 && el(leaf(r, 1), 0) == 1,
              "[[2, 1], [0, 3]] is its own Schur form");
    CHECK_EQ_INT((int)creal(el(leaf(r, 5), 0)), 0);
    int nan = 0;
    for (int i = 4; i < 8; i++) nan |= isnan(creal(el(leaf(r, 0), i)));
    CHECK_MSG(nan, "%s: a NaN matrix's t holds NaN", k ? "interp" : "cpu");
  }
  if (cpu) gpu_like_cpu(text, 1, &in, cpu, 0, ON_GPU_HOST);
  cxla_literal_destroy(cpu);
  cxla_literal_destroy(ref);
}

/* ---- jax's perturbed tridiagonal solve: the cpu's kernel (jaxlib's fused form) against the
 * reference (factor, then solve), the solution's residual, and singular systems: large
 * finite values where gtsv gives info != 0 ---- */

static char *gtsv_perturbed_text(const char *ty, int nb, int n, int nrhs) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_printf(&sb,
               "HloModule m\nENTRY e {\n  dl = %s[%d,%d] parameter(0)\n  d = %s[%d,%d] parameter(1)\n"
               "  du = %s[%d,%d] parameter(2)\n  b = %s[%d,%d,%d] parameter(3)\n  ROOT x = %s[%d,%d,%d] "
               "custom-call(dl, d, du, b), custom_call_target=\"tridiagonal_solve_perturbed_ffi\"\n}\n",
               ty, nb, n, ty, nb, n, ty, nb, n, ty, nb, n, nrhs, ty, nb, n, nrhs);
  return cx_sb_take(&sb);
}

TEST(linalg_cpu_gtsv_perturbed) {
  for (int t = 0; t < 4; t++)
    for (int n = 1; n <= 10; n += 3) {
      const char *ty = k_types[t];
      int nrhs = 3;
      char *text = gtsv_perturbed_text(ty, 2, n, nrhs);
      /* random values: rows swap wherever the scaled subdiagonal is the larger */
      char *in[4] = {vectors(ty, 2, n), vectors(ty, 2, n), vectors(ty, 2, n), matrices(ty, 2, n, nrhs, 0, 0)};
      cxla_literal *cpu, *ref;
      both(text, 4, (const char *const *)in, &cpu, &ref);
      if (cpu && ref) {
        same(cpu, ref, 1e2 * tol_of(t), text);
        double r = gtsv_residual((const char *const *)in, cpu, 2, n, nrhs);
        CHECK_MSG(r < 1e4 * tol_of(t), "perturbed %s n=%d: |A x - b| = %g", ty, n, r);
        gpu_like_cpu(text, 4, (const char *const *)in, cpu, 0, ON_GPU_HOST);
      }
      cxla_literal_destroy(cpu);
      cxla_literal_destroy(ref);
      for (int i = 0; i < 4; i++) cx_free(in[i]);
      cx_free(text);
    }
  /* JAX's own cases (linalg_test.py): two that need pivoting, whose answers are exact
   * ([8, -3.5, 0, -4] and [5, -2, -5, 3]); [[1, 3], [1, 3]] (beside an identity) and the zero
   * matrix, singular: their values finite and above 1e6 in magnitude. The first element of dl and the last of du
   * are not the matrix's: junk there changes nothing. */
  for (int t = 0; t < 4; t++) {
    char *text = gtsv_perturbed_text(k_types[t], 4, 4, 1);
    const char *in[4][4] = {
        {"f32[4,4] {{9, 2, -2, 3}, {0, 1, -6, 1}, {0, 1, 0, 0}, {0, 0, 0, 0}}",
         "f32[4,4] {{1, 4, 1, -1}, {1, -1, 2, 1}, {1, 3, 1, 1}, {0, 0, 0, 0}}",
         "f32[4,4] {{2, -1, 1, 9}, {2, 1, -1, 0}, {3, 0, 0, 1}, {0, 0, 0, 0}}",
         "f32[4,4,1] {{{1}, {2}, {3}, {4}}, {{1}, {2}, {-1}, {-2}}, {{1}, {4}, {1}, {1}}, {{1}, {1}, {1}, {1}}}"}};
    char *typed[4];
    for (int i = 0; i < 4; i++) { /* the same values in type t: complex ones as (x, 0) */
      cx_sb sb;
      cx_sb_init(&sb);
      cx_sb_puts(&sb, k_types[t]);
      for (const char *c = in[0][i] + 3; *c; c++) {
        if (t >= 2 && strchr("-0123456789", *c) && (c[-1] == '{' || c[-1] == ' ')) { /* a value, not a dimension */
          size_t len = strspn(c, "-0123456789.");
          cx_sb_printf(&sb, "(%.*s, 0)", (int)len, c);
          c += len - 1;
        } else {
          cx_sb_putc(&sb, *c);
        }
      }
      typed[i] = cx_sb_take(&sb);
    }
    cxla_literal *cpu, *ref;
    both(text, 4, (const char *const *)typed, &cpu, &ref);
    static const double want[2][4] = {{8, -3.5, 0, -4}, {5, -2, -5, 3}};
    for (int k = 0; k < 2; k++) {
      const cxla_literal *r = k ? ref : cpu;
      if (!r) continue;
      for (int s = 0; s < 2; s++)
        for (int i = 0; i < 4; i++)
          CHECK_MSG(cabs(el(r, s * 4 + i) - want[s][i]) < 1e-5, "%s %s system %d: x[%d] = %g, not %g", k ? "interp" : "cpu",
                    k_types[t], s, i, creal(el(r, s * 4 + i)), want[s][i]);
      for (int i = 8; i < 16; i++) { /* rows 0 and 1 of system 2 are alike (its x[2], x[3] are 1); system 3 is zero */
        int big = i < 10 || i >= 12;
        CHECK_MSG(isfinite(creal(el(r, i))) && (big ? cabs(el(r, i)) > 1e6 : cabs(el(r, i) - 1) < 1e-5),
                  "%s %s singular: x[%d] = %g", k ? "interp" : "cpu", k_types[t], i, creal(el(r, i)));
      }
    }
    if (cpu && ref) same(cpu, ref, 1e-5, "singular systems, cpu and interp");
    if (cpu) gpu_like_cpu(text, 4, (const char *const *)typed, cpu, 0, ON_GPU_HOST);
    cxla_literal_destroy(cpu);
    cxla_literal_destroy(ref);
    for (int i = 0; i < 4; i++) cx_free(typed[i]);
    cx_free(text);
  }
}
