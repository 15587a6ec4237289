/* test_fft.c — fft: the verifier's shape rule (XLA's InferFftShape) and text form, the
 * interpreter's DFT on hand-worked transforms (more in tests/hlo/ops/fft.hlo), and the cpu
 * backend (FFTW, rt/fft.c) against the interpreter on every kind, both precisions,
 * ranks 1-3, batches, even, odd and prime lengths, lengths of 1, and empty arrays, compiled and
 * run from several threads at once (FFTW's planner is not thread-safe: cxla plans under a
 * lock); the cpu must run every fft natively. */
#include <pthread.h>
#include <string.h>
#include "ir/literal.h"
#include "test_cpu_helpers.h"
#include "text/hlo.h"
#include "util/util.h"
#include "verify_helpers.h"

static cx_instr *fft(const char *name, cx_instr *x, cx_fft_type t, int n, const int64_t *len) {
  cx_instr *f = vt_op(CX_OP_FFT, name, NULL, 1, x);
  f->a.fft_type = t;
  vt_ints(&f->a.fft_length, n, len);
  return f;
}

TEST(fft_verifier) {
  vt_begin();
  vt_comp("e");
  cx_instr *c = vt_param(0, "c", "c64[3,4,8]"), *r = vt_param(1, "r", "f64[3,4,8]"), *h = vt_param(2, "h", "c128[3,4,5]");
  CHECK_INFER(fft("a", c, CX_FFT_FFT, 1, (int64_t[]){8}), "c64[3,4,8]");
  CHECK_INFER(fft("b", c, CX_FFT_IFFT, 3, (int64_t[]){3, 4, 8}), "c64[3,4,8]");
  CHECK_INFER(fft("d", r, CX_FFT_RFFT, 2, (int64_t[]){4, 8}), "c128[3,4,5]");
  CHECK_INFER(fft("e", h, CX_FFT_IRFFT, 2, (int64_t[]){4, 8}), "f64[3,4,8]");
  CHECK_INFER(fft("f", h, CX_FFT_IRFFT, 1, (int64_t[]){9}), "f64[3,4,9]"); /* 9/2+1 = 5 */
  CHECK_INFER_ERR(fft("g", h, CX_FFT_IRFFT, 1, (int64_t[]){7}),
                  "IRFFT requires the innermost dimension to be fft_length/2+1, but dimension 2 of c128[3,4,5] is 5 and "
                  "should be 4");
  CHECK_INFER_ERR(fft("i", c, CX_FFT_RFFT, 1, (int64_t[]){8}), "RFFT requires f32 or f64 input type, found c64");
  CHECK_INFER_ERR(fft("j", r, CX_FFT_FFT, 1, (int64_t[]){8}), "FFT requires complex input type, found f64");
  CHECK_INFER_ERR(fft("k", c, CX_FFT_FFT, 1, (int64_t[]){4}),
                  "FFT requires the innermost dimensions to match fft_length, but dimension 2 of c64[3,4,8] is 8 and "
                  "should be 4");
  CHECK_INFER_ERR(fft("l", c, CX_FFT_FFT, 4, (int64_t[]){1, 3, 4, 8}), "FFT only supports ranks 1-3");
  CHECK_INFER_ERR(fft("m", c, CX_FFT_FFT, 0, NULL), "FFT only supports ranks 1-3");
  cx_instr *s = vt_param(3, "s", "c64[8]");
  CHECK_INFER_ERR(fft("n", s, CX_FFT_FFT, 2, (int64_t[]){1, 8}), "FFT of rank 2 requires input of at least that rank");
  cx_instr *z = vt_param(4, "z", "f32[2,0]");
  CHECK_INFER(fft("o", z, CX_FFT_RFFT, 1, (int64_t[]){0}), "c64[2,0]"); /* zero-sized dims keep their size */
  vt_end();
}

/* XLA's text: fft_type= and fft_length= both required; the result shape may be left out. */
TEST(fft_text) {
  const char *text = "HloModule m\nENTRY e {\n  x = f32[2,8] parameter(0)\n  ROOT f = fft(x), fft_type=RFFT, "
                     "fft_length={8}\n}\n";
  cx_module *m = NULL;
  CHECK_OK(cx_parse_module(test_ctx(), text, strlen(text), "t.hlo", &m));
  if (!m) return;
  cx_sb sb;
  cx_sb_init(&sb);
  cx_print_opts o = cx_print_opts_canonical();
  cx_print_module(&sb, m, &o);
  CHECK_STR_CONTAINS(sb.buf ? sb.buf : "", "ROOT f = c64[2,5] fft(x), fft_type=RFFT, fft_length={8}");
  cx_sb_free(&sb);
  cx_module_free(m);
  const char *bad[] = {"  ROOT f = c64[8] fft(x), fft_length={8}\n", "  ROOT f = c64[8] fft(x), fft_type=FFT\n",
                       "  ROOT f = c64[8] fft(x), fft_type=DCT, fft_length={8}\n"};
  const char *want[] = {"fft_type", "fft_length", "an FFT type (FFT, IFFT, RFFT, IRFFT)"};
  for (int i = 0; i < 3; i++) {
    char t[256];
    snprintf(t, sizeof t, "HloModule m\nENTRY e {\n  x = c64[8] parameter(0)\n%s}\n", bad[i]);
    CHECK(cx_parse_module(test_ctx(), t, strlen(t), "t.hlo", &m) == CXLA_ERR_PARSE && !m);
    CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), want[i]);
  }
}

/* A literal of the shape written in `shape` ("c64[2,8]") with values in [-1, 1), as text. */
static char *random_literal(const char *shape, uint64_t seed) {
  char text[256];
  snprintf(text, sizeof text, "HloModule s\nENTRY e {\n  ROOT p = %s parameter(0)\n}\n", shape);
  cx_module *m = cpu_parse(text);
  if (!m) return NULL;
  cx_shape s = m->entry->root->shape;
  s.has_layout = 0;
  cxla_literal *l = cx_literal_new(&s);
  cx_module_free(m);
  if (!l) return NULL;
  int64_t n = cx_shape_elems(&l->shape) * (cx_type_is_complex(l->shape.type) ? 2 : 1);
  cxla_type part = cx_type_part(l->shape.type);
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    cx_store_f64(part, l->data, i, (double)(seed >> 11) * 0x1p-52 - 1);
  }
  char *t = cxla_literal_to_string(l);
  cxla_literal_destroy(l);
  return t;
}

static const char *const k_kinds[] = {"FFT", "IFFT", "RFFT", "IRFFT"};

/* One fft on the cpu against the interpreter: input shape dims (rank r), lengths the last
 * nl of them (for IRFFT the operand's last dim is len/2+1). */
static void check_fft(int kind, int f64, int rank, const int64_t *dims, int nl, const char *flags, uint64_t seed) {
  char in[128], out[128], lens[64], body[512];
  const char *ct = f64 ? "c128" : "c64", *rt = f64 ? "f64" : "f32";
  int64_t idims[CXLA_MAX_RANK], odims[CXLA_MAX_RANK];
  memcpy(idims, dims, sizeof *dims * (size_t)rank);
  memcpy(odims, dims, sizeof *dims * (size_t)rank);
  int64_t last = dims[rank - 1], points = 1;
  if (kind == CX_FFT_IRFFT) idims[rank - 1] = last / 2 + 1;
  if (kind == CX_FFT_RFFT) odims[rank - 1] = last / 2 + 1;
  size_t k = 0, o = 0, q = 0;
  k += (size_t)snprintf(in + k, sizeof in - k, "%s[", kind == CX_FFT_RFFT ? rt : ct);
  o += (size_t)snprintf(out + o, sizeof out - o, "%s[", kind == CX_FFT_IRFFT ? rt : ct);
  for (int d = 0; d < rank; d++) {
    k += (size_t)snprintf(in + k, sizeof in - k, "%s%lld", d ? "," : "", (long long)idims[d]);
    o += (size_t)snprintf(out + o, sizeof out - o, "%s%lld", d ? "," : "", (long long)odims[d]);
  }
  snprintf(in + k, sizeof in - k, "]");
  snprintf(out + o, sizeof out - o, "]");
  for (int d = rank - nl; d < rank; d++) {
    q += (size_t)snprintf(lens + q, sizeof lens - q, "%s%lld", d > rank - nl ? "," : "", (long long)dims[d]);
    points *= dims[d];
  }
  snprintf(body, sizeof body, "HloModule m\nENTRY e {\n  x = %s parameter(0)\n  ROOT f = %s fft(x), fft_type=%s, fft_length={%s}\n}\n",
           in, out, k_kinds[kind], lens);
  char *input = random_literal(in, seed), *stats = NULL;
  const char *inputs[1] = {input};
  /* FFTW's error grows like u log N in the transform's norm: about sqrt(N) for values in [-1, 1] */
  double norm = kind == CX_FFT_IFFT || kind == CX_FFT_IRFFT ? 1 / sqrt((double)(points ? points : 1)) : sqrt((double)points);
  double rtol = f64 ? 1e-12 : 2e-5, atol = rtol * norm * 4;
  CHECK_MSG(input && cpu_check(body, 1, inputs, flags, rtol, atol, &stats, NULL), "%s", body);
  if (stats) CHECK_MSG(cpu_fallbacks(stats) == 0, "fft ran on the interpreter: %s", stats);
  free(stats);
  free(input);
}

TEST(fft_cpu_matches_interpreter) {
  static const int64_t shapes[][5] = {
    /* rank, fft dims, then dims */
    {1, 1, 8}, {1, 1, 7}, {1, 1, 1}, {2, 1, 3, 16}, {2, 1, 5, 12}, {2, 2, 4, 6}, {3, 2, 2, 5, 9},
    {3, 3, 3, 4, 5}, {2, 1, 2, 17}, {3, 1, 2, 3, 64},
  };
  for (int kind = 0; kind < 4; kind++)
    for (int f64 = 0; f64 < 2; f64++)
      for (size_t s = 0; s < CX_ARRAY_LEN(shapes); s++) {
        int rank = (int)shapes[s][0], nl = (int)shapes[s][1];
        check_fft(kind, f64, rank, &shapes[s][2], nl, NULL, s * 31 + (uint64_t)kind * 7 + (uint64_t)f64);
      }
  /* a big batch over the pool, and a long transform */
  check_fft(CX_FFT_FFT, 0, 2, (int64_t[]){300, 128}, 1, "--threads=4", 99);
  check_fft(CX_FFT_IRFFT, 1, 2, (int64_t[]){40, 200}, 1, "--threads=4", 98);
  check_fft(CX_FFT_RFFT, 0, 1, (int64_t[]){4096}, 1, NULL, 97);
}

/* Transforms of zero elements compile and give empty results on both backends. */
TEST(fft_empty) {
  const char *text = "HloModule m\nENTRY e {\n  x = c64[0,8] parameter(0)\n  y = f32[3,0] parameter(1)\n"
                     "  a = c64[0,8] fft(x), fft_type=IFFT, fft_length={8}\n"
                     "  b = c64[3,0] fft(y), fft_type=RFFT, fft_length={0}\n  ROOT t = (c64[0,8], c64[3,0]) tuple(a, b)\n}\n";
  const char *inputs[2] = {"c64[0,8] {}", "f32[3,0] {{}, {}, {}}"};
  CHECK(cpu_check(text, 2, inputs, NULL, 0, 0, NULL, NULL));
}

/* Several threads, each with its own context, compile and run fft modules at once (the same
 * lengths and new ones): plans are made under the planner's lock and executed concurrently;
 * every thread must get the result a lone cpu run gives, bit for bit. */
typedef struct fft_job {
  char text[256];
  char *input;
  cxla_literal *want;
  int ok;
} fft_job;

static cxla_literal *run_cpu(cxla_context *ctx, const char *text, const char *input) {
  cxla_module *m = NULL;
  cxla_literal *in = NULL, *res = NULL;
  cxla_executable *e = NULL;
  cxla_buffer *b = NULL, *out = NULL;
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = "cpu";
  if (cxla_module_parse(ctx, text, strlen(text), "t.hlo", &m) == CXLA_OK && cxla_literal_parse(ctx, input, &in) == CXLA_OK &&
      cxla_compile(m, &o, &e) == CXLA_OK && cxla_buffer_from_literal(ctx, "cpu", in, &b) == CXLA_OK &&
      cxla_executable_execute(e, 1, &b, &out) == CXLA_OK)
    cxla_buffer_to_literal(out, &res);
  cxla_buffer_destroy(b);
  cxla_buffer_destroy(out);
  cxla_executable_destroy(e);
  cxla_literal_destroy(in);
  cxla_module_destroy(m);
  return res;
}

static void *worker(void *arg) {
  fft_job *j = arg;
  cxla_context *ctx = NULL;
  if (cxla_context_create(&ctx) != CXLA_OK) return NULL;
  for (int rep = 0; rep < 3; rep++) {
    cxla_literal *got = run_cpu(ctx, j->text, j->input);
    j->ok += got && cx_literal_equal(got, j->want);
    cxla_literal_destroy(got);
  }
  cxla_context_destroy(ctx);
  return NULL;
}

TEST(fft_threads_plan_and_run_concurrently) {
  enum { N = 8 };
  fft_job jobs[N];
  pthread_t t[N];
  for (int i = 0; i < N; i++) {
    int n = 40 + 3 * (i % 4), f64 = i % 3 == 0;
    char in[64];
    snprintf(in, sizeof in, "%s[6,%d]", f64 ? "c128" : "c64", n);
    snprintf(jobs[i].text, sizeof jobs[i].text,
             "HloModule m\nENTRY e {\n  x = %s parameter(0)\n  ROOT f = %s fft(x), fft_type=%s, fft_length={%d}\n}\n", in,
             in, i % 2 ? "IFFT" : "FFT", n);
    jobs[i].input = random_literal(in, (uint64_t)i * 13 + 5);
    jobs[i].want = jobs[i].input ? run_cpu(test_ctx(), jobs[i].text, jobs[i].input) : NULL;
    jobs[i].ok = 0;
    CHECK(jobs[i].want);
  }
  for (int i = 0; i < N; i++) pthread_create(&t[i], NULL, worker, &jobs[i]);
  for (int i = 0; i < N; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < N; i++) {
    CHECK_MSG(jobs[i].ok == 3, "thread %d: %d of 3 runs gave the lone run's result", i, jobs[i].ok);
    free(jobs[i].input);
    cxla_literal_destroy(jobs[i].want);
  }
}
