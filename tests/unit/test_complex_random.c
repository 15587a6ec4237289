/* test_complex_random.c — random graphs of complex numbers, cpu against the interpreter. The
 * random graph generator (randgraph*.c) tracks value ranges and error bounds of real numbers
 * only, so complex graphs get a small generator of their own: c64 and c128 parameters, every
 * elementwise op defined on them (with abs, real, imag, complex, compare + select, convert
 * between the two widths), complex constants and re-indexing ops (transpose, reverse), over
 * random shapes, with NaN, infinities, zeros and huge values among the inputs. Elementwise
 * complex ops agree bit for bit between the backends (both compute the same formulas in
 * double and round once), so such graphs must match exactly (any NaN matching any NaN); graphs
 * with sums, dots and FFTs (FFT, IFFT, and RFFT / IRFFT through real and back, over 1 or 2
 * innermost dims; of moderate values: the backends sum in different orders) match within
 * docs/numerics.md's tolerances. */
#include <stdarg.h>
#include <string.h>
#include "interp/interp.h"
#include "ir/literal.h"
#include "test_cpu_helpers.h"
#include "util/util.h"

typedef struct val {
  int id;              /* the instruction is v<id> */
  int c128;            /* else c64 */
  int rank;
  int64_t dims[3];
} val;

typedef struct cgen {
  uint64_t s;
  cx_sb sb;
  val pool[128];       /* the complex values */
  int n, next_id, inexact;
  int fft; /* an FFT was taken: its exact zeros (the imaginary parts of a real signal's DC and
            * Nyquist bins) come out as +-0 or +-ulps, so sign and sqrt (discontinuous there) are
            * left out from then on */
} cgen;

static uint64_t rnd(cgen *g) {
  uint64_t z = (g->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static int below(cgen *g, int n) { return (int)(rnd(g) % (uint64_t)n); }

static const char *ctype(int c128) { return c128 ? "c128" : "c64"; }
static const char *rtype(int c128) { return c128 ? "f64" : "f32"; }

static void shape_str(const val *v, const char *t, char *buf, size_t n) {
  size_t k = (size_t)snprintf(buf, n, "%s[", t);
  for (int d = 0; d < v->rank; d++) k += (size_t)snprintf(buf + k, n - k, "%s%lld", d ? "," : "", (long long)v->dims[d]);
  snprintf(buf + k, n - k, "]");
}

/* Writes "v<id> = <type>[dims] <rhs>" for a value of v's dims; a complex one (type NULL: v's
 * own) joins the pool. Returns the id. */
static int emit(cgen *g, val v, const char *type, const char *fmt, ...) CX_PRINTF(4, 5);
static int emit(cgen *g, val v, const char *type, const char *fmt, ...) {
  char sh[64], rhs[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rhs, sizeof rhs, fmt, ap);
  va_end(ap);
  v.id = g->next_id++;
  shape_str(&v, type ? type : ctype(v.c128), sh, sizeof sh);
  cx_sb_printf(&g->sb, "  v%d = %s %s\n", v.id, sh, rhs);
  if (!type && g->n < CX_ARRAY_LEN(g->pool)) g->pool[g->n++] = v;
  return v.id;
}

static const char *const k_unary[] = {"negate", "sign", "exponential", "exponential-minus-one", "log",
                                      "log-plus-one", "sqrt", "rsqrt", "cbrt", "sine", "cosine", "tanh",
                                      "logistic", "copy", "tan"};
static const char *const k_binary[] = {"add", "subtract", "multiply", "divide", "power", "atan2"};
/* with sums and dots: ops that keep values of moderate size, so that the order of a sum (which
 * the backends choose differently) stays within the tolerance */
static const char *const k_tame_unary[] = {"sign", "sqrt", "negate", "copy"}; /* continuous ones last */
static const char *const k_tame_binary[] = {"add", "subtract", "multiply"};

/* A pool value of x's type and dims (x itself when none comes up). */
static val partner(cgen *g, val x) {
  for (int tries = 0; tries < 8; tries++) {
    val y = g->pool[below(g, g->n)];
    if (y.c128 == x.c128 && y.rank == x.rank && !memcmp(y.dims, x.dims, sizeof x.dims[0] * (size_t)x.rank)) return y;
  }
  return x;
}

/* An FFT of x over its last (or last two) dims: FFT / IFFT in place, or RFFT of x's real part
 * (then IRFFT back to real, when the length allows, and convert to complex). */
static void fft_step(cgen *g, val x) {
  static const char *const kinds[] = {"FFT", "IFFT"};
  int nd = x.rank >= 2 && below(g, 3) == 0 ? 2 : 1;
  char len[48];
  if (nd == 2) snprintf(len, sizeof len, "%lld,%lld", (long long)x.dims[x.rank - 2], (long long)x.dims[x.rank - 1]);
  else snprintf(len, sizeof len, "%lld", (long long)x.dims[x.rank - 1]);
  if (below(g, 2)) {
    emit(g, x, NULL, "fft(v%d), fft_type=%s, fft_length={%s}", x.id, kinds[below(g, 2)], len);
    return;
  }
  int re = emit(g, x, rtype(x.c128), "real(v%d)", x.id);
  val h = x;
  h.dims[x.rank - 1] = x.dims[x.rank - 1] / 2 + 1;
  int f = emit(g, h, NULL, "fft(v%d), fft_type=RFFT, fft_length={%s}", re, len);
  if (below(g, 2)) {
    int back = emit(g, x, rtype(x.c128), "fft(v%d), fft_type=IRFFT, fft_length={%s}", f, len);
    emit(g, x, NULL, "convert(v%d)", back);
  }
}

static void step(cgen *g, int sums) {
  val x = g->pool[g->n - 1 - below(g, g->n < 4 ? g->n : 4)]; /* recent values first */
  int r = below(g, sums ? 14 : 10);
  if (r >= 12) {
    if (x.rank > 0) fft_step(g, x);
    g->inexact = g->fft = 1;
    return;
  }
  switch (r) {
  case 0: case 1: case 2:
    emit(g, x, NULL, "%s(v%d)", sums ? k_tame_unary[(g->fft ? 2 : 0) + below(g, CX_ARRAY_LEN(k_tame_unary) - (g->fft ? 2 : 0))]
                                     : k_unary[below(g, CX_ARRAY_LEN(k_unary))], x.id);
    break;
  case 3: case 4:
    emit(g, x, NULL, "%s(v%d, v%d)", sums ? k_tame_binary[below(g, CX_ARRAY_LEN(k_tame_binary))]
                                          : k_binary[below(g, CX_ARRAY_LEN(k_binary))], x.id, partner(g, x).id);
    break;
  case 5: { /* through real numbers and back */
    int re = emit(g, x, rtype(x.c128), "%s(v%d)", below(g, 2) ? "real" : "abs", x.id);
    int im = emit(g, x, rtype(x.c128), "imag(v%d)", partner(g, x).id);
    emit(g, x, NULL, "complex(v%d, v%d)", re, im);
    break;
  }
  case 6: { /* select where two values compare equal (or not) */
    val y = partner(g, x);
    int p = emit(g, x, "pred", "compare(v%d, v%d), direction=%s", x.id, y.id, below(g, 2) ? "EQ" : "NE");
    emit(g, x, NULL, "select(v%d, v%d, v%d)", p, x.id, y.id);
    break;
  }
  case 7: { /* the other width */
    val y = x;
    y.c128 = !x.c128;
    emit(g, y, NULL, "convert(v%d)", x.id);
    break;
  }
  case 8: { /* a complex constant times x */
    val s = {.c128 = x.c128};
    int k = emit(g, s, ctype(x.c128), "constant((%g, %d))", below(g, 9) - 4 + 0.5 * below(g, 2), below(g, 7) - 3);
    int b = emit(g, x, ctype(x.c128), "broadcast(v%d), dimensions={}", k);
    emit(g, x, NULL, "multiply(v%d, v%d)", x.id, b);
    break;
  }
  case 9: /* re-index */
    if (x.rank >= 2) {
      val y = x;
      y.dims[x.rank - 1] = x.dims[x.rank - 2];
      y.dims[x.rank - 2] = x.dims[x.rank - 1];
      emit(g, y, NULL, "transpose(v%d), dimensions={%s}", x.id, x.rank == 2 ? "1,0" : "0,2,1");
    } else if (x.rank == 1) {
      emit(g, x, NULL, "reverse(v%d), dimensions={0}", x.id);
    }
    break;
  default: /* a sum over the first dimension, or a dot of rank-1 or rank-2 values */
    if (x.rank == 0 || x.rank == 3 || below(g, 2)) {
      if (x.rank == 0) break;
      val y = {.c128 = x.c128, .rank = x.rank - 1};
      memcpy(y.dims, x.dims + 1, sizeof y.dims[0] * (size_t)y.rank);
      val s = {.c128 = x.c128};
      int z = emit(g, s, ctype(x.c128), "constant((0, 0))");
      emit(g, y, NULL, "reduce(v%d, v%d), dimensions={0}, to_apply=add_%s", x.id, z, ctype(x.c128));
    } else {
      val y = {.c128 = x.c128, .rank = 2 * (x.rank - 1)};
      for (int d = 0; d < x.rank - 1; d++) y.dims[d] = y.dims[x.rank - 1 + d] = x.dims[d];
      emit(g, y, NULL, "dot(v%d, v%d), lhs_contracting_dims={%d}, rhs_contracting_dims={%d}", x.id, partner(g, x).id,
           x.rank - 1, x.rank - 1);
    }
    g->inexact = 1;
    break;
  }
}

/* An input for v as literal text: parts in [-2, 2], and unless `plain` some NaN, infinities,
 * zeros, huge and tiny values. */
static char *input_for(cgen *g, const val *v, int plain) {
  static const double special[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e30, -1e-30};
  cx_shape s = cx_shape_array(v->c128 ? CXLA_C128 : CXLA_C64, v->rank, v->dims);
  cxla_literal *l = cx_literal_new(&s);
  if (!l) return NULL;
  int64_t n = 2 * cx_shape_elems(&s);
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = rnd(g);
    double x = r % 16 || plain ? (double)(r >> 11) * 0x1p-51 - 2 : special[(r >> 8) % CX_ARRAY_LEN(special)];
    cx_store_f64(cx_type_part(s.type), l->data, i, x);
  }
  char *t = cxla_literal_to_string(l);
  cxla_literal_destroy(l);
  return t;
}

/* Bit for bit, any NaN matching any NaN. */
static int same_bits(const cxla_literal *a, const cxla_literal *b, cx_sb *why) {
  if (a->shape.type == CXLA_TUPLE) {
    for (int i = 0; i < a->nelems; i++)
      if (!same_bits(a->elems[i], b->elems[i], why)) return 0;
    return 1;
  }
  cxla_type part = cx_type_part(a->shape.type);
  int64_t n = cx_shape_elems(&a->shape) * (cx_type_is_complex(a->shape.type) ? 2 : 1);
  size_t es = cxla_type_size(part);
  for (int64_t i = 0; i < n; i++) {
    double x = cx_load_f64(part, a->data, i), y = cx_load_f64(part, b->data, i);
    if ((isnan(x) && isnan(y)) || !memcmp((const char *)a->data + i * (int64_t)es, (const char *)b->data + i * (int64_t)es, es))
      continue;
    cx_sb_printf(why, "%s part %lld: %a vs %a", cxla_type_name(a->shape.type), (long long)i, x, y);
    return 0;
  }
  return 1;
}

static void run_seed(uint64_t seed, int sums) {
  cgen g = {.s = seed * 7919 + (uint64_t)sums};
  cx_sb_init(&g.sb);
  cx_sb_puts(&g.sb, "HloModule r\n\nadd_c64 {\n  x = c64[] parameter(0)\n  y = c64[] parameter(1)\n  ROOT s = c64[] add(x, y)\n}\n\n"
                    "add_c128 {\n  x = c128[] parameter(0)\n  y = c128[] parameter(1)\n  ROOT s = c128[] add(x, y)\n}\n\n"
                    "ENTRY e {\n");
  int nparams = 1 + below(&g, 3);
  val base = {.c128 = below(&g, 2), .rank = below(&g, 4)};
  for (int d = 0; d < base.rank; d++) base.dims[d] = 1 + below(&g, 6);
  char *inputs[3] = {0};
  for (int p = 0; p < nparams; p++) {
    val v = base;
    if (p && below(&g, 2)) v.c128 = !v.c128;
    emit(&g, v, NULL, "parameter(%d)", p);
    inputs[p] = input_for(&g, &v, sums);
  }
  for (int k = 6 + below(&g, 14); k > 0 && g.n < CX_ARRAY_LEN(g.pool) - 4; k--) step(&g, sums);
  int nout = g.n < 4 ? g.n : 4;
  cx_sb_puts(&g.sb, "  ROOT out = (");
  for (int k = 0; k < nout; k++) {
    char sh[64];
    const val *v = &g.pool[g.n - 1 - k];
    shape_str(v, ctype(v->c128), sh, sizeof sh);
    cx_sb_printf(&g.sb, "%s%s", k ? ", " : "", sh);
  }
  cx_sb_puts(&g.sb, ") tuple(");
  for (int k = 0; k < nout; k++) cx_sb_printf(&g.sb, "%sv%d", k ? ", " : "", g.pool[g.n - 1 - k].id);
  cx_sb_puts(&g.sb, ")\n}\n");
  const char *in[3] = {inputs[0], inputs[1], inputs[2]};
  cxla_literal *got = NULL, *want = NULL, *args[3] = {0};
  /* the tolerances matter for sums and dots only: elementwise results are compared bit for bit */
  int ok = cpu_check(g.sb.buf, nparams, in, NULL, 1e-4, 1e-4, NULL, &got);
  cx_module *m = ok && !g.inexact ? cpu_parse(g.sb.buf) : NULL;
  for (int p = 0; m && p < nparams; p++) args[p] = cpu_lit(in[p]);
  if (m && cx_interp_run(m, nparams, args, &want) == CXLA_OK) {
    cx_sb why;
    cx_sb_init(&why);
    ok = same_bits(got, want, &why);
    CHECK_MSG(ok, "seed %llu: cpu and interpreter differ: %s", (unsigned long long)seed, why.buf ? why.buf : "");
    cx_sb_free(&why);
  }
  if (!ok) fprintf(stdout, "    seed %llu:\n%s", (unsigned long long)seed, g.sb.buf);
  for (int p = 0; p < nparams; p++) cxla_literal_destroy(args[p]), free(inputs[p]);
  cxla_literal_destroy(want);
  cxla_literal_destroy(got);
  cx_module_free(m);
  cx_sb_free(&g.sb);
}

TEST(complex_random_graphs_bit_for_bit) {
  for (uint64_t seed = 1; seed <= 60; seed++) run_seed(seed, 0);
}

TEST(complex_random_graphs_with_sums_and_dots) {
  for (uint64_t seed = 1; seed <= 40; seed++) run_seed(seed, 1);
}
