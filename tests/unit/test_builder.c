/* test_builder.c — the builder API: every op's result shape (worked out by hand from XLA's
 * semantics), sticky errors, argument validation, and an MLP run on the interpreter with a
 * hand-computed result. Shapes come from the verifier and values from the interpreter, so
 * these tests also pin down what the builder hands them. */
#include "test.h"
#include "util/util.h"

#define CX_N(a) CX_ARRAY_LEN(a)

static const int64_t D23[2] = {2, 3}, D32[2] = {3, 2}, D3[1] = {3};

static cxla_shape arr(cxla_type t, int rank, const int64_t *dims) {
  cxla_shape s = {t, rank, dims, 0, NULL};
  return s;
}

static void shape_text(const cxla_shape *s, char *buf, size_t n) {
  size_t k = 0;
  if (s->type == CXLA_TUPLE) {
    k += (size_t)snprintf(buf + k, n - k, "(");
    for (int i = 0; i < s->ntuple && k < n; i++) {
      char sub[128];
      shape_text(&s->elems[i], sub, sizeof sub);
      k += (size_t)snprintf(buf + k, n - k, "%s%s", i ? ", " : "", sub);
    }
    if (k < n) snprintf(buf + k, n - k, ")");
    return;
  }
  const char *name = cxla_type_name(s->type);
  k += (size_t)snprintf(buf + k, n - k, "%s[", name ? name : "invalid");
  for (int d = 0; d < s->rank && k < n; d++) k += (size_t)snprintf(buf + k, n - k, "%s%lld", d ? "," : "", (long long)s->dims[d]);
  if (k < n) snprintf(buf + k, n - k, "]");
}

/* Checks that op x of b has the shape printed as `want` ("f32[2,3]", "(s32[], f32[3])"). */
#define CHECK_SHAPE(b, x, want) check_shape((b), (x), #x, (want), __FILE__, __LINE__)
static void check_shape(cxla_builder *b, cxla_op x, const char *what, const char *want, const char *file, int line) {
  cxla_shape s;
  char got[256] = "?";
  if (x.id == 0) {
    test_fail(file, line, "%s failed: %s", what, cxla_context_errmsg(test_ctx()));
    return;
  }
  if (cxla_builder_get_shape(b, x, &s) == CXLA_OK) shape_text(&s, got, sizeof got);
  if (strcmp(got, want)) test_fail(file, line, "%s has shape %s, expected %s", what, got, want);
}

/* A built module prints as HLO text that parses back to the same text, so the attributes the
 * builder fills are the ones the parser would have produced. */
static void check_roundtrip(cxla_module *m, const char *file, int line) {
  char *text = cxla_module_to_string(m), *again = NULL;
  cxla_module *m2 = NULL;
  if (!text) { test_fail(file, line, "to_string: %s", cxla_context_errmsg(test_ctx())); return; }
  if (cxla_module_parse(test_ctx(), text, strlen(text), "built.hlo", &m2) != CXLA_OK)
    test_fail(file, line, "printed module does not parse: %s\n%s", cxla_context_errmsg(test_ctx()), text);
  else if (!(again = cxla_module_to_string(m2)) || strcmp(text, again))
    test_fail(file, line, "re-printed text differs:\n%s\n---\n%s", text, again ? again : "(null)");
  free(again);
  free(text);
  cxla_module_destroy(m2);
}
#define CHECK_ROUNDTRIP(m) check_roundtrip((m), __FILE__, __LINE__)

/* A finished scalar computation (a, b) -> a OP b of type t. */
static cxla_computation *scalar_binary(cxla_module *m, const char *name, const char *op, cxla_type t) {
  cxla_builder *b = cxla_builder_create(m, name);
  cxla_shape s = arr(t, 0, NULL);
  cxla_op x = cxla_builder_parameter(b, 0, &s, NULL), y = cxla_builder_parameter(b, 1, &s, NULL);
  cxla_computation *c = NULL;
  cxla_status st = cxla_builder_finish(b, cxla_builder_binary(b, op, x, y), 0, &c);
  CHECK_MSG(st == CXLA_OK, "computation %s: %s", name, cxla_context_errmsg(test_ctx()));
  return c;
}

TEST(builder_elementwise_every_op) {
  cxla_module *m = cxla_module_create(test_ctx(), "ew");
  cxla_builder *b = cxla_builder_create(m, "main");
  cxla_shape fs = arr(CXLA_F32, 2, D23), is = arr(CXLA_S32, 2, D23);
  cxla_op f = cxla_builder_parameter(b, 0, &fs, "f"), g = cxla_builder_parameter(b, 1, &fs, "g");
  cxla_op i = cxla_builder_parameter(b, 2, &is, "i"), j = cxla_builder_parameter(b, 3, &is, "j");
  cxla_op (*const funary[])(cxla_builder *, cxla_op) = {
      cxla_builder_abs, cxla_builder_negate, cxla_builder_sign, cxla_builder_exp, cxla_builder_expm1,
      cxla_builder_log, cxla_builder_log1p, cxla_builder_logistic, cxla_builder_sqrt, cxla_builder_rsqrt,
      cxla_builder_cbrt, cxla_builder_sin, cxla_builder_cos, cxla_builder_tan, cxla_builder_tanh,
      cxla_builder_floor, cxla_builder_ceil, cxla_builder_round_afz, cxla_builder_round_even, cxla_builder_erf,
      cxla_builder_copy};
  for (int k = 0; k < CX_N(funary); k++) CHECK_SHAPE(b, funary[k](b, f), "f32[2,3]");
  CHECK_SHAPE(b, cxla_builder_is_finite(b, f), "pred[2,3]");
  CHECK_SHAPE(b, cxla_builder_not(b, i), "s32[2,3]");
  CHECK_SHAPE(b, cxla_builder_popcnt(b, i), "s32[2,3]");
  CHECK_SHAPE(b, cxla_builder_clz(b, i), "s32[2,3]");
  cxla_op (*const fbinary[])(cxla_builder *, cxla_op, cxla_op) = {
      cxla_builder_add, cxla_builder_sub, cxla_builder_mul, cxla_builder_div, cxla_builder_rem,
      cxla_builder_pow, cxla_builder_atan2, cxla_builder_max, cxla_builder_min};
  for (int k = 0; k < CX_N(fbinary); k++) CHECK_SHAPE(b, fbinary[k](b, f, g), "f32[2,3]");
  cxla_op (*const ibinary[])(cxla_builder *, cxla_op, cxla_op) = {
      cxla_builder_and, cxla_builder_or, cxla_builder_xor, cxla_builder_shl, cxla_builder_shr_arith,
      cxla_builder_shr_logical};
  for (int k = 0; k < CX_N(ibinary); k++) CHECK_SHAPE(b, ibinary[k](b, i, j), "s32[2,3]");
  cxla_op p = cxla_builder_compare(b, f, g, CXLA_LT, NULL);
  CHECK_SHAPE(b, p, "pred[2,3]");
  CHECK_SHAPE(b, cxla_builder_compare(b, f, g, CXLA_EQ, "TOTALORDER"), "pred[2,3]");
  CHECK_SHAPE(b, cxla_builder_compare(b, i, j, CXLA_GE, "SIGNED"), "pred[2,3]");
  CHECK_SHAPE(b, cxla_builder_and(b, p, p), "pred[2,3]");
  CHECK_SHAPE(b, cxla_builder_select(b, p, f, g), "f32[2,3]");
  CHECK_SHAPE(b, cxla_builder_clamp(b, f, g, f), "f32[2,3]");
  CHECK_SHAPE(b, cxla_builder_convert(b, f, CXLA_F16), "f16[2,3]");
  CHECK_SHAPE(b, cxla_builder_convert(b, i, CXLA_PRED), "pred[2,3]");
  CHECK_SHAPE(b, cxla_builder_bitcast_convert(b, f, CXLA_S32), "s32[2,3]");
  cxla_op bytes = cxla_builder_bitcast_convert(b, f, CXLA_U8); /* narrower: a trailing dim of 4 */
  CHECK_SHAPE(b, bytes, "u8[2,3,4]");
  CHECK_SHAPE(b, cxla_builder_bitcast_convert(b, bytes, CXLA_F32), "f32[2,3]");
  CHECK_SHAPE(b, cxla_builder_reduce_precision(b, f, 5, 10), "f32[2,3]");
  /* The generic calls draw from the op table by HLO name. */
  CHECK_SHAPE(b, cxla_builder_unary(b, "exponential", f), "f32[2,3]");
  CHECK_SHAPE(b, cxla_builder_unary(b, "count-leading-zeros", i), "s32[2,3]");
  CHECK_SHAPE(b, cxla_builder_binary(b, "shift-right-logical", i, j), "s32[2,3]");
  CHECK_SHAPE(b, cxla_builder_binary(b, "atan2", f, g), "f32[2,3]");
  CHECK_OK(cxla_builder_status(b));
  CHECK_OK(cxla_builder_finish(b, f, 1, NULL));
  CHECK_ROUNDTRIP(m);
  char *text = cxla_module_to_string(m);
  CHECK_STR_CONTAINS(text, "atan2.");            /* API-built instructions are named op.N */
  CHECK_STR_CONTAINS(text, "count-leading-zeros.");
  free(text);
  cxla_module_destroy(m);
}

TEST(builder_generic_names_rejected) {
  static const struct { const char *op; int binary; const char *msg; } cases[] = {
      {"dot", 1, "'dot' is not an elementwise op"},
      {"nope", 0, "unknown op 'nope'"},
      {"add", 0, "'add' takes 2 operands, not 1"},
      {"negate", 1, "'negate' takes 1 operands, not 2"},
      {"compare", 1, "'compare' needs attributes: use cxla_builder_compare"},
      {"convert", 0, "'convert' needs attributes: use cxla_builder_convert"},
      {"broadcast", 0, "'broadcast' is not an elementwise op"},
  };
  for (int k = 0; k < CX_N(cases); k++) {
    cxla_module *m = cxla_module_create(test_ctx(), "g");
    cxla_builder *b = cxla_builder_create(m, "main");
    cxla_shape s = arr(CXLA_F32, 1, D3);
    cxla_op x = cxla_builder_parameter(b, 0, &s, "x");
    cxla_op r = cases[k].binary ? cxla_builder_binary(b, cases[k].op, x, x) : cxla_builder_unary(b, cases[k].op, x);
    CHECK_EQ_INT(r.id, 0);
    CHECK_EQ_INT(cxla_builder_status(b), CXLA_ERR_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), cases[k].msg);
    CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "builder main: ");
    cxla_builder_destroy(b);
    cxla_module_destroy(m);
  }
}

TEST(builder_shape_ops) {
  cxla_module *m = cxla_module_create(test_ctx(), "shapes");
  cxla_builder *b = cxla_builder_create(m, "main");
  cxla_shape fs = arr(CXLA_F32, 2, D23), vs = arr(CXLA_F32, 1, D3), ss = arr(CXLA_S32, 0, NULL);
  cxla_op x = cxla_builder_parameter(b, 0, &fs, "x"), v = cxla_builder_parameter(b, 1, &vs, "v");
  cxla_op k = cxla_builder_parameter(b, 2, &ss, "k");
  int64_t d1[1] = {1}, d6[1] = {6}, perm[2] = {1, 0};
  CHECK_SHAPE(b, cxla_builder_broadcast(b, v, 2, D23, d1), "f32[2,3]");
  CHECK_SHAPE(b, cxla_builder_broadcast(b, cxla_builder_constant_scalar(b, CXLA_F32, 0), 2, D32, NULL), "f32[3,2]");
  CHECK_SHAPE(b, cxla_builder_reshape(b, x, 1, d6), "f32[6]");
  CHECK_SHAPE(b, cxla_builder_transpose(b, x, perm), "f32[3,2]");
  int64_t st[2] = {0, 1}, li[2] = {2, 3}, sd[2] = {2, 2};
  CHECK_SHAPE(b, cxla_builder_slice(b, x, st, li, NULL), "f32[2,2]");
  CHECK_SHAPE(b, cxla_builder_slice(b, x, st, li, sd), "f32[1,1]");
  cxla_op idx[2] = {k, k};
  int64_t sz[2] = {1, 2};
  cxla_op ds = cxla_builder_dynamic_slice(b, x, idx, sz);
  CHECK_SHAPE(b, ds, "f32[1,2]");
  CHECK_SHAPE(b, cxla_builder_dynamic_update_slice(b, x, ds, idx), "f32[2,3]");
  cxla_op two[2] = {x, x};
  CHECK_SHAPE(b, cxla_builder_concatenate(b, 2, two, 0), "f32[4,3]");
  CHECK_SHAPE(b, cxla_builder_concatenate(b, 2, two, 1), "f32[2,6]");
  int64_t lo[2] = {1, 0}, hi[2] = {0, 2}, in[2] = {0, 1};
  cxla_op zero = cxla_builder_constant_scalar(b, CXLA_F32, 0);
  CHECK_SHAPE(b, cxla_builder_pad(b, x, zero, lo, hi, in), "f32[3,7]"); /* 3+0+2+1*2 = 7 */
  int64_t neg[2] = {-1, 0};
  CHECK_SHAPE(b, cxla_builder_pad(b, x, zero, neg, neg, NULL), "f32[0,3]");
  CHECK_SHAPE(b, cxla_builder_reverse(b, x, 1, d1), "f32[2,3]");
  int64_t id[2] = {4, 5};
  CHECK_SHAPE(b, cxla_builder_iota(b, CXLA_S32, 2, id, 1), "s32[4,5]");
  cxla_op pair[2] = {x, k};
  cxla_op t = cxla_builder_tuple(b, 2, pair);
  CHECK_SHAPE(b, t, "(f32[2,3], s32[])");
  CHECK_SHAPE(b, cxla_builder_get_tuple_element(b, t, 1), "s32[]");
  CHECK_SHAPE(b, cxla_builder_tuple(b, 0, NULL), "()");
  int64_t cd[2] = {2, 2};
  float cv[4] = {1, 2, 3, 4};
  cxla_literal *lit = cxla_literal_from_data(test_ctx(), CXLA_F32, 2, cd, cv, sizeof cv);
  CHECK_SHAPE(b, cxla_builder_constant(b, lit), "f32[2,2]");
  cxla_literal_destroy(lit);
  CHECK_SHAPE(b, cxla_builder_constant_scalar(b, CXLA_U8, 7), "u8[]");
  cxla_shape ts_el[2] = {arr(CXLA_F32, 1, D3), arr(CXLA_PRED, 0, NULL)};
  cxla_shape ts = {CXLA_TUPLE, 0, NULL, 2, ts_el};
  CHECK_SHAPE(b, cxla_builder_parameter(b, 3, &ts, NULL), "(f32[3], pred[])");
  CHECK_OK(cxla_builder_finish(b, t, 1, NULL));
  CHECK_ROUNDTRIP(m);
  cxla_module_destroy(m);
}

TEST(builder_reductions_and_library_ops) {
  cxla_module *m = cxla_module_create(test_ctx(), "calls");
  cxla_computation *add = scalar_binary(m, "add_f32", "add", CXLA_F32);
  cxla_computation *ge = NULL, *neg = NULL;
  { /* (a, b) -> a >= b: select for select-and-scatter, and a sort comparator */
    cxla_builder *c = cxla_builder_create(m, "ge_f32");
    cxla_shape s = arr(CXLA_F32, 0, NULL);
    cxla_op a = cxla_builder_parameter(c, 0, &s, NULL), bb = cxla_builder_parameter(c, 1, &s, NULL);
    CHECK_OK(cxla_builder_finish(c, cxla_builder_compare(c, a, bb, CXLA_GE, NULL), 0, &ge));
    c = cxla_builder_create(m, "neg_f32");
    a = cxla_builder_parameter(c, 0, &s, NULL);
    CHECK_OK(cxla_builder_finish(c, cxla_builder_negate(c, a), 0, &neg));
  }
  cxla_builder *b = cxla_builder_create(m, "main");
  cxla_shape fs = arr(CXLA_F32, 2, D23);
  int64_t d46[2] = {4, 6}, d5[1] = {5};
  cxla_shape big = arr(CXLA_F32, 2, d46), vec5 = arr(CXLA_F32, 1, d5);
  cxla_op x = cxla_builder_parameter(b, 0, &fs, "x"), y = cxla_builder_parameter(b, 1, &big, "y");
  cxla_op v = cxla_builder_parameter(b, 2, &vec5, "v");
  cxla_op zero = cxla_builder_constant_scalar(b, CXLA_F32, 0);
  int64_t dim1[1] = {1}, both[2] = {0, 1};
  CHECK_SHAPE(b, cxla_builder_reduce(b, 1, &x, &zero, 1, dim1, add), "f32[2]");
  CHECK_SHAPE(b, cxla_builder_reduce(b, 1, &x, &zero, 2, both, add), "f32[]");
  CHECK_SHAPE(b, cxla_builder_map(b, 1, &x, neg), "f32[2,3]");
  CHECK_SHAPE(b, cxla_builder_sort(b, 1, &v, 0, 1, ge), "f32[5]");
  cxla_window_dim w[2] = {{2, 2, 0, 0, 0, 0, 0}, {2, 2, 0, 0, 0, 0, 0}};
  CHECK_SHAPE(b, cxla_builder_reduce_window(b, 1, &y, &zero, w, add), "f32[2,3]");
  cxla_op src = cxla_builder_parameter(b, 3, &fs, "src");
  CHECK_SHAPE(b, cxla_builder_select_and_scatter(b, y, src, zero, w, ge, add), "f32[4,6]");
  int64_t d34[2] = {3, 4};
  cxla_shape ws = arr(CXLA_F32, 2, d34);
  cxla_op wt = cxla_builder_parameter(b, 4, &ws, "w");
  CHECK_SHAPE(b, cxla_builder_matmul(b, x, wt), "f32[2,4]");
  int64_t d523[3] = {5, 2, 3}, d534[3] = {5, 3, 4}, zero_i[1] = {0}, two_i[1] = {2}, one_i[1] = {1};
  cxla_shape bl = arr(CXLA_F32, 3, d523), br = arr(CXLA_F32, 3, d534);
  cxla_op bx = cxla_builder_parameter(b, 5, &bl, "bx"), by = cxla_builder_parameter(b, 6, &br, "by");
  cxla_dot_dims dd = {1, 1, zero_i, zero_i, two_i, one_i};
  CHECK_SHAPE(b, cxla_builder_dot(b, bx, by, &dd), "f32[5,2,4]");
  int64_t img[4] = {1, 5, 5, 2}, ker[4] = {3, 3, 2, 4};
  cxla_shape is = arr(CXLA_F32, 4, img), ks = arr(CXLA_F32, 4, ker);
  cxla_op im = cxla_builder_parameter(b, 7, &is, "img"), kn = cxla_builder_parameter(b, 8, &ks, "ker");
  cxla_window_dim cw[2] = {{3, 1, 1, 1, 1, 1, 0}, {3, 2, 0, 0, 1, 1, 0}};
  /* dim 1: (5 + 2 - 3) / 1 + 1 = 5; dim 2: (5 - 3) / 2 + 1 = 2 */
  CHECK_SHAPE(b, cxla_builder_convolution(b, im, kn, "b01f_01io->b01f", cw, 1, 1), "f32[1,5,2,4]");
  int64_t d53[2] = {5, 3}, d21[2] = {2, 1}, ss13[2] = {1, 3};
  cxla_shape os = arr(CXLA_F32, 2, d53), ixs = arr(CXLA_S32, 2, d21);
  cxla_op opnd = cxla_builder_parameter(b, 9, &os, "table"), ix = cxla_builder_parameter(b, 10, &ixs, "ix");
  cxla_gather_dims gd = {1, 1, 1, 0, one_i, zero_i, zero_i, NULL, NULL, 1, 2, ss13};
  cxla_op gathered = cxla_builder_gather(b, opnd, ix, &gd);
  CHECK_SHAPE(b, gathered, "f32[2,3]");
  cxla_scatter_dims sd = {1, 1, 1, 0, one_i, zero_i, zero_i, NULL, NULL, 1};
  CHECK_SHAPE(b, cxla_builder_scatter(b, opnd, ix, gathered, &sd, add), "f32[5,3]");
  CHECK_OK(cxla_builder_finish(b, x, 1, NULL));
  CHECK_ROUNDTRIP(m);
  cxla_module_destroy(m);
}

/* Variadic scatter: two operands updated at the same indices by a two-output combiner, run on
 * the interpreter against values worked out by hand. */
TEST(builder_variadic_scatter_runs_on_interp) {
  cxla_module *m = cxla_module_create(test_ctx(), "vscatter");
  cxla_computation *comb = NULL;
  {
    cxla_builder *c = cxla_builder_create(m, "comb");
    cxla_shape s = arr(CXLA_F32, 0, NULL);
    cxla_op p[4];
    for (int i = 0; i < 4; i++) p[i] = cxla_builder_parameter(c, i, &s, NULL);
    cxla_op outs[2] = {cxla_builder_add(c, p[0], p[2]), cxla_builder_mul(c, p[1], p[3])};
    CHECK_OK(cxla_builder_finish(c, cxla_builder_tuple(c, 2, outs), 0, &comb));
  }
  cxla_builder *b = cxla_builder_create(m, "main");
  int64_t d4[1] = {4}, d21[2] = {2, 1}, d2[1] = {2};
  cxla_shape s4 = arr(CXLA_F32, 1, d4), sx = arr(CXLA_S32, 2, d21), s2 = arr(CXLA_F32, 1, d2);
  cxla_op ops[2] = {cxla_builder_parameter(b, 0, &s4, "a"), cxla_builder_parameter(b, 1, &s4, "b")};
  cxla_op ix = cxla_builder_parameter(b, 2, &sx, "ix");
  cxla_op ups[2] = {cxla_builder_parameter(b, 3, &s2, "u"), cxla_builder_parameter(b, 4, &s2, "v")};
  int64_t zero_i[1] = {0};
  cxla_scatter_dims sd = {0, 1, 1, 0, NULL, zero_i, zero_i, NULL, NULL, 1};
  cxla_op r = cxla_builder_scatter_n(b, 2, ops, ix, ups, &sd, comb);
  CHECK_SHAPE(b, r, "(f32[4], f32[4])");
  CHECK_OK(cxla_builder_finish(b, r, 1, NULL));
  CHECK_ROUNDTRIP(m);
  const char *in[5] = {"f32[4] {0, 0, 0, 0}", "f32[4] {1, 1, 1, 1}", "s32[2,1] {{1}, {3}}", "f32[2] {10, 20}",
                       "f32[2] {2, 3}"};
  cxla_literal *args[5] = {0}, *out = NULL;
  for (int i = 0; i < 5; i++) CHECK_OK(cxla_literal_parse(test_ctx(), in[i], &args[i]));
  CHECK_OK(cxla_module_run(m, NULL, 5, args, &out));
  if (out) {
    char *t = cxla_literal_to_string(out);
    CHECK_STR_CONTAINS(t, "{0, 10, 0, 20}");
    CHECK_STR_CONTAINS(t, "{1, 2, 1, 3}");
    free(t);
  }
  cxla_literal_destroy(out);
  for (int i = 0; i < 5; i++) cxla_literal_destroy(args[i]);
  /* a bad operand count is an error at the call */
  cxla_builder *e = cxla_builder_create(m, "bad");
  cxla_op none = cxla_builder_scatter_n(e, 0, ops, ix, ups, &sd, comb);
  CHECK(none.id == 0 || cxla_builder_status(e) != CXLA_OK);
  CHECK(cxla_builder_status(e) == CXLA_ERR_INVALID_ARGUMENT);
  cxla_builder_destroy(e);
  cxla_module_destroy(m);
}

TEST(builder_control_flow) {
  cxla_module *m = cxla_module_create(test_ctx(), "control");
  cxla_shape is = arr(CXLA_S32, 0, NULL), vs = arr(CXLA_F32, 1, D3);
  cxla_shape st_el[2] = {is, vs};
  cxla_shape st = {CXLA_TUPLE, 0, NULL, 2, st_el};
  cxla_computation *cond = NULL, *body = NULL, *dbl = NULL, *half = NULL;
  { /* cond: i < 10 */
    cxla_builder *c = cxla_builder_create(m, "cond");
    cxla_op p = cxla_builder_parameter(c, 0, &st, NULL);
    cxla_op i = cxla_builder_get_tuple_element(c, p, 0);
    CHECK_OK(cxla_builder_finish(c, cxla_builder_compare(c, i, cxla_builder_constant_scalar(c, CXLA_S32, 10), CXLA_LT, NULL),
                                 0, &cond));
  }
  { /* body: (i + 1, v + v) */
    cxla_builder *c = cxla_builder_create(m, "body");
    cxla_op p = cxla_builder_parameter(c, 0, &st, NULL);
    cxla_op i = cxla_builder_get_tuple_element(c, p, 0), v = cxla_builder_get_tuple_element(c, p, 1);
    cxla_op next[2] = {cxla_builder_add(c, i, cxla_builder_constant_scalar(c, CXLA_S32, 1)), cxla_builder_add(c, v, v)};
    CHECK_OK(cxla_builder_finish(c, cxla_builder_tuple(c, 2, next), 0, &body));
  }
  for (int k = 0; k < 2; k++) {
    cxla_builder *c = cxla_builder_create(m, k ? "half" : "double");
    cxla_op v = cxla_builder_parameter(c, 0, &vs, NULL);
    cxla_op r = k ? cxla_builder_mul(c, v, cxla_builder_broadcast(c, cxla_builder_constant_scalar(c, CXLA_F32, 0.5), 1, D3, NULL))
                  : cxla_builder_add(c, v, v);
    CHECK_OK(cxla_builder_finish(c, r, 0, k ? &half : &dbl));
  }
  cxla_builder *b = cxla_builder_create(m, "main");
  cxla_op v = cxla_builder_parameter(b, 0, &vs, "v");
  cxla_shape ps = arr(CXLA_PRED, 0, NULL);
  cxla_op p = cxla_builder_parameter(b, 1, &ps, "p");
  cxla_op n = cxla_builder_parameter(b, 2, &is, "n");
  cxla_op init[2] = {cxla_builder_constant_scalar(b, CXLA_S32, 0), v};
  cxla_op w = cxla_builder_while(b, cxla_builder_tuple(b, 2, init), cond, body);
  CHECK_SHAPE(b, w, "(s32[], f32[3])");
  CHECK_SHAPE(b, cxla_builder_call(b, 1, &v, dbl), "f32[3]");
  cxla_op ops2[2] = {v, v};
  cxla_computation *br[2] = {dbl, half};
  CHECK_SHAPE(b, cxla_builder_conditional(b, p, 2, ops2, br), "f32[3]");
  CHECK_SHAPE(b, cxla_builder_conditional(b, n, 2, ops2, br), "f32[3]");
  CHECK_OK(cxla_builder_finish(b, cxla_builder_get_tuple_element(b, w, 1), 1, NULL));
  CHECK_EQ_INT(cxla_module_num_parameters(m), 3);
  CHECK_STR_CONTAINS(cxla_module_parameter_name(m, 1), "p");
  CHECK_ROUNDTRIP(m);
  cxla_module_destroy(m);
}

TEST(builder_sticky_error) {
  cxla_module *m = cxla_module_create(test_ctx(), "sticky");
  cxla_builder *b = cxla_builder_create(m, "main");
  cxla_shape a = arr(CXLA_F32, 2, D23), c = arr(CXLA_F32, 2, D32);
  cxla_op x = cxla_builder_parameter(b, 0, &a, "x"), y = cxla_builder_parameter(b, 1, &c, "y");
  CHECK_OK(cxla_builder_status(b));
  cxla_op bad = cxla_builder_add(b, x, y);
  CHECK_EQ_INT(bad.id, 0);
  CHECK_EQ_INT(cxla_builder_status(b), CXLA_ERR_VERIFY);
  char first[1024];
  snprintf(first, sizeof first, "%s", cxla_context_errmsg(test_ctx()));
  CHECK_MSG(!strncmp(first, "builder main: add: ", 19), "message '%s'", first);
  CHECK_STR_CONTAINS(first, "f32[2,3]");
  CHECK_STR_CONTAINS(first, "f32[3,2]");
  CHECK_MSG(!strstr(first, "<builder>") && !strstr(first, "add add."), "message '%s' is not reworded", first);
  /* Later calls, even valid ones, do nothing and keep the first message. */
  CHECK_EQ_INT(cxla_builder_negate(b, x).id, 0);
  CHECK_EQ_INT(cxla_builder_parameter(b, 2, &a, NULL).id, 0);
  cxla_context_set_flags(test_ctx(), "--bogus"); /* overwrite the context message */
  cxla_computation *out = (cxla_computation *)1;
  CHECK_EQ_INT(cxla_builder_finish(b, x, 1, &out), CXLA_ERR_VERIFY);
  CHECK(out == NULL);
  CHECK_MSG(!strcmp(cxla_context_errmsg(test_ctx()), first), "finish says '%s'", cxla_context_errmsg(test_ctx()));
  CHECK_EQ_INT(cxla_module_num_parameters(m), -1); /* nothing was added */
  cxla_module_destroy(m);
}

/* Shape errors found by the verifier surface at the call, as "builder NAME: OP: ...". */
TEST(builder_verifier_errors_at_the_call) {
  static const char *const ops[] = {"bitcast-convert", "dot", "reduce", "transpose"};
  for (int k = 0; k < CX_N(ops); k++) {
    cxla_module *m = cxla_module_create(test_ctx(), "v");
    cxla_computation *add = scalar_binary(m, "add_f32", "add", CXLA_F32);
    cxla_builder *b = cxla_builder_create(m, "main");
    cxla_shape fs = arr(CXLA_F32, 2, D23);
    cxla_op x = cxla_builder_parameter(b, 0, &fs, "x"), zero = cxla_builder_constant_scalar(b, CXLA_F32, 0), r;
    int64_t dim5[1] = {5}, perm[2] = {0, 0};
    switch (k) {
    case 0: r = cxla_builder_bitcast_convert(b, x, CXLA_F64); break; /* last dim 3, ratio 2 */
    case 1: r = cxla_builder_matmul(b, x, x); break;                  /* 3 vs 2 */
    case 2: r = cxla_builder_reduce(b, 1, &x, &zero, 1, dim5, add); break;
    default: r = cxla_builder_transpose(b, x, perm); break;
    }
    CHECK_EQ_INT(r.id, 0);
    CHECK_EQ_INT(cxla_builder_status(b), CXLA_ERR_VERIFY);
    char want[64];
    snprintf(want, sizeof want, "builder main: %s: ", ops[k]);
    const char *msg = cxla_context_errmsg(test_ctx());
    CHECK_MSG(!strncmp(msg, want, strlen(want)), "message '%s' does not start with '%s'", msg, want);
    cxla_builder_destroy(b);
    cxla_module_destroy(m);
  }
}

TEST(builder_argument_checks) {
  cxla_module *m = cxla_module_create(test_ctx(), "args");
  cxla_module *other = cxla_module_create(test_ctx(), "other");
  cxla_computation *foreign = scalar_binary(other, "add_f32", "add", CXLA_F32);
  cxla_shape s = arr(CXLA_F32, 1, D3);
  int n = 0;
#define EXPECT_FAIL(call, want_code, want_msg)                                              \
  do {                                                                                      \
    cxla_builder *b = cxla_builder_create(m, "main");                                       \
    cxla_builder *b2 = cxla_builder_create(m, "helper");                                    \
    cxla_op x = cxla_builder_parameter(b, 0, &s, "x");                                      \
    cxla_op z = cxla_builder_parameter(b2, 0, &s, "z");                                     \
    (void)x; (void)z;                                                                       \
    cxla_op r_ = (call);                                                                    \
    CHECK_MSG(r_.id == 0, "%s succeeded", #call);                                           \
    CHECK_MSG(cxla_builder_status(b) == (want_code), "%s: status %d", #call, (int)cxla_builder_status(b)); \
    CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), want_msg);                          \
    cxla_builder_destroy(b);                                                                \
    cxla_builder_destroy(b2);                                                               \
    n++;                                                                                    \
  } while (0)
  cxla_op none = {0}, junk = {12345};
  int64_t d1[1] = {0};
  EXPECT_FAIL(cxla_builder_parameter(b, 1, NULL, NULL), CXLA_ERR_INVALID_ARGUMENT, "parameter: shape is NULL");
  EXPECT_FAIL(cxla_builder_parameter(b, -1, &s, NULL), CXLA_ERR_INVALID_ARGUMENT, "parameter number -1");
  cxla_shape holey = {CXLA_TUPLE, 0, NULL, 2, NULL}, nodims = {CXLA_F32, 2, NULL, 0, NULL};
  EXPECT_FAIL(cxla_builder_parameter(b, 1, &holey, NULL), CXLA_ERR_INVALID_ARGUMENT, "parameter: bad shape");
  EXPECT_FAIL(cxla_builder_parameter(b, 1, &nodims, NULL), CXLA_ERR_INVALID_ARGUMENT, "parameter: bad shape");
  EXPECT_FAIL(cxla_builder_parameter(b, 1, &s, "x"), CXLA_ERR_INVALID_ARGUMENT, "name 'x' is already used");
  EXPECT_FAIL(cxla_builder_parameter(b, 1, &s, "bad name"), CXLA_ERR_INVALID_ARGUMENT, "not a valid HLO name");
  EXPECT_FAIL(cxla_builder_negate(b, none), CXLA_ERR_INVALID_ARGUMENT, "negate: operand 0 is the invalid op");
  EXPECT_FAIL(cxla_builder_add(b, x, z), CXLA_ERR_INVALID_ARGUMENT, "add: operand 1 belongs to another builder");
  EXPECT_FAIL(cxla_builder_abs(b, junk), CXLA_ERR_INVALID_ARGUMENT, "abs: operand 0");
  EXPECT_FAIL(cxla_builder_concatenate(b, -1, &x, 0), CXLA_ERR_INVALID_ARGUMENT, "negative operand count");
  EXPECT_FAIL(cxla_builder_tuple(b, 2, NULL), CXLA_ERR_INVALID_ARGUMENT, "operand array is NULL");
  EXPECT_FAIL(cxla_builder_reduce(b, 1, &x, &x, 1, d1, foreign), CXLA_ERR_INVALID_ARGUMENT,
              "to_apply computation add_f32 belongs to another module");
  EXPECT_FAIL(cxla_builder_map(b, 1, &x, NULL), CXLA_ERR_INVALID_ARGUMENT, "to_apply computation is NULL");
  EXPECT_FAIL(cxla_builder_compare(b, x, x, (cxla_compare_dir)9, NULL), CXLA_ERR_INVALID_ARGUMENT, "direction");
  EXPECT_FAIL(cxla_builder_compare(b, x, x, CXLA_EQ, "FUZZY"), CXLA_ERR_INVALID_ARGUMENT, "comparison type 'FUZZY'");
  EXPECT_FAIL(cxla_builder_reshape(b, x, -1, NULL), CXLA_ERR_INVALID_ARGUMENT, "rank -1 out of range");
  EXPECT_FAIL(cxla_builder_transpose(b, x, NULL), CXLA_ERR_INVALID_ARGUMENT, "array argument of 1 entries is NULL");
  EXPECT_FAIL(cxla_builder_convolution(b, x, x, "bf_io->bf", NULL, 1, 1), CXLA_ERR_INVALID_ARGUMENT,
              "convolution: dim_labels 'bf_io->bf' have rank 2, operands have rank 1");
  EXPECT_FAIL(cxla_builder_convert(b, x, CXLA_TUPLE), CXLA_ERR_INVALID_ARGUMENT, "not an array element type");
  EXPECT_FAIL(cxla_builder_conditional(b, x, 0, NULL, NULL), CXLA_ERR_INVALID_ARGUMENT, "at least one branch");
  CHECK_EQ_INT(n, 20);
  /* A NULL builder is harmless. */
  CHECK_EQ_INT(cxla_builder_add(NULL, none, none).id, 0);
  CHECK_EQ_INT(cxla_builder_status(NULL), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_EQ_INT(cxla_builder_finish(NULL, none, 0, NULL), CXLA_ERR_INVALID_ARGUMENT);
  CHECK(cxla_builder_create(NULL, "x") == NULL);
  cxla_module_destroy(other);
  cxla_module_destroy(m);
}

TEST(builder_finish_checks) {
  cxla_module *m = cxla_module_create(test_ctx(), "fin");
  cxla_shape s = arr(CXLA_F32, 1, D3);
  cxla_builder *b = cxla_builder_create(m, "main");
  cxla_op x = cxla_builder_parameter(b, 0, &s, NULL);
  CHECK_OK(cxla_builder_finish(b, x, 1, NULL));
  b = cxla_builder_create(m, "second");
  x = cxla_builder_parameter(b, 0, &s, NULL);
  CHECK_EQ_INT(cxla_builder_finish(b, x, 1, NULL), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "builder second: finish: module fin already has an ENTRY computation (main)");
  b = cxla_builder_create(m, "main");
  CHECK_EQ_INT(cxla_builder_status(b), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "already has a computation named main");
  cxla_builder_destroy(b);
  b = cxla_builder_create(m, "gap");
  x = cxla_builder_parameter(b, 0, &s, NULL);
  cxla_builder_parameter(b, 2, &s, NULL);
  CHECK_EQ_INT(cxla_builder_finish(b, x, 0, NULL), CXLA_ERR_VERIFY);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "builder gap: finish: parameter numbers must be 0..1");
  b = cxla_builder_create(m, "noroot");
  cxla_op none = {0};
  CHECK_EQ_INT(cxla_builder_finish(b, none, 0, NULL), CXLA_ERR_INVALID_ARGUMENT);
  b = cxla_builder_create(m, "9lives");
  CHECK_EQ_INT(cxla_builder_status(b), CXLA_ERR_INVALID_ARGUMENT);
  cxla_builder_destroy(b);
  cxla_module_destroy(m);
}

/* x(2x3) -> relu(x W1 + b1) W2 + b2, and the sum of all outputs; values worked out by hand:
 * xW1 = {{4,-1,1,6.5},{0,-1,1,1.5}}; +b1 -> {{4.5,-.5,-1,6.5},{.5,-.5,-1,1.5}};
 * relu -> {{4.5,0,0,6.5},{.5,0,0,1.5}}; W2 -> {{-2,6.5},{-1,1.5}}; +b2 -> {{-1,5.5},{0,.5}}. */
TEST(builder_mlp_runs_on_interp) {
  cxla_module *m = cxla_module_create(test_ctx(), "mlp");
  cxla_computation *add = scalar_binary(m, "add_f32", "add", CXLA_F32);
  cxla_builder *b = cxla_builder_create(m, "main");
  int64_t d34[2] = {3, 4}, d4[1] = {4}, d42[2] = {4, 2}, d2[1] = {2}, d22[2] = {2, 2}, one[1] = {1}, both[2] = {0, 1};
  cxla_shape sx = arr(CXLA_F32, 2, D23), sw1 = arr(CXLA_F32, 2, d34), sb1 = arr(CXLA_F32, 1, d4);
  cxla_shape sw2 = arr(CXLA_F32, 2, d42), sb2 = arr(CXLA_F32, 1, d2);
  cxla_op x = cxla_builder_parameter(b, 0, &sx, "x"), w1 = cxla_builder_parameter(b, 1, &sw1, "w1");
  cxla_op b1 = cxla_builder_parameter(b, 2, &sb1, "b1"), w2 = cxla_builder_parameter(b, 3, &sw2, "w2");
  cxla_op b2 = cxla_builder_parameter(b, 4, &sb2, "b2");
  int64_t d24[2] = {2, 4};
  cxla_op h = cxla_builder_add(b, cxla_builder_matmul(b, x, w1), cxla_builder_broadcast(b, b1, 2, d24, one));
  cxla_op zero = cxla_builder_constant_scalar(b, CXLA_F32, 0);
  h = cxla_builder_max(b, h, cxla_builder_broadcast(b, zero, 2, d24, NULL));
  cxla_op y = cxla_builder_add(b, cxla_builder_matmul(b, h, w2), cxla_builder_broadcast(b, b2, 2, d22, one));
  cxla_op parts[2] = {y, cxla_builder_reduce(b, 1, &y, &zero, 2, both, add)};
  CHECK_OK(cxla_builder_finish(b, cxla_builder_tuple(b, 2, parts), 1, NULL));
  float xv[6] = {1, 2, 3, -1, 0, 1};
  float w1v[12] = {1, 0, -1, 0.5f, 0, 1, 1, 0, 1, -1, 0, 2};
  float b1v[4] = {0.5f, 0.5f, -2, 0}, w2v[8] = {1, 0, 2, 1, 0, 3, -1, 1}, b2v[2] = {1, -1};
  cxla_literal *args[5] = {
      cxla_literal_from_data(test_ctx(), CXLA_F32, 2, D23, xv, sizeof xv),
      cxla_literal_from_data(test_ctx(), CXLA_F32, 2, d34, w1v, sizeof w1v),
      cxla_literal_from_data(test_ctx(), CXLA_F32, 1, d4, b1v, sizeof b1v),
      cxla_literal_from_data(test_ctx(), CXLA_F32, 2, d42, w2v, sizeof w2v),
      cxla_literal_from_data(test_ctx(), CXLA_F32, 1, d2, b2v, sizeof b2v)};
  cxla_literal *out = NULL;
  CHECK_OK(cxla_module_run(m, NULL, 5, args, &out));
  if (out) {
    CHECK_EQ_INT(cxla_literal_tuple_size(out), 2);
    cxla_literal *yv = cxla_literal_tuple_get(out, 0), *sum = cxla_literal_tuple_get(out, 1);
    const double want[4] = {-1, 5.5, 0, 0.5};
    for (int i = 0; yv && i < 4; i++) CHECK_NEAR(cxla_literal_get_f64(yv, i), want[i], 1e-6);
    if (sum) CHECK_NEAR(cxla_literal_get_f64(sum, 0), 5, 1e-6);
  }
  cxla_literal_destroy(out);
  for (int i = 0; i < 5; i++) cxla_literal_destroy(args[i]);
  cxla_module_destroy(m);
}

TEST(builder_out_of_memory_never_crashes) {
  int ok_seen = 0;
  for (int k = 0; k < 60; k++) {
    cxla_module *m = cxla_module_create(test_ctx(), "oom");
    if (!m) continue;
    cx_alloc_fail_after(k);
    cxla_builder *b = cxla_builder_create(m, "main");
    cxla_shape s = arr(CXLA_F32, 2, D23);
    cxla_op x = cxla_builder_parameter(b, 0, &s, "x");
    cxla_op y = cxla_builder_exp(b, cxla_builder_add(b, x, x));
    int64_t perm[2] = {1, 0};
    y = cxla_builder_transpose(b, y, perm);
    cxla_status st = b ? cxla_builder_finish(b, y, 1, NULL) : CXLA_ERR_OUT_OF_MEMORY;
    cx_alloc_fail_after(-1);
    CHECK_MSG(st == CXLA_OK || st == CXLA_ERR_OUT_OF_MEMORY, "k=%d: %s", k, cxla_context_errmsg(test_ctx()));
    ok_seen |= st == CXLA_OK;
    cxla_module_destroy(m);
  }
  CHECK(ok_seen);
}

/* ---- dim_labels (src/ir/conv_dims.c), shared with the HLO parser ---- */
#include "ir/conv_dims.h"

TEST(conv_dim_labels_parse_and_print) {
  cx_conv_dims d;
  char err[256];
  static const char nhwc[] = "b01f_01io->b01f";
  CHECK(cx_parse_dim_labels(nhwc, strlen(nhwc), 4, &d, err, sizeof err));
  CHECK_EQ_INT(d.nspatial, 2);
  CHECK(d.in_batch == 0 && d.in_spatial[0] == 1 && d.in_spatial[1] == 2 && d.in_feature == 3);
  CHECK(d.k_spatial[0] == 0 && d.k_spatial[1] == 1 && d.k_in == 2 && d.k_out == 3);
  CHECK(d.out_batch == 0 && d.out_feature == 3 && d.out_spatial[1] == 2);
  static const char odd[] = "f1b0_o01i->0fb1"; /* any permutation; digits name spatial dims */
  CHECK(cx_parse_dim_labels(odd, strlen(odd), -1, &d, err, sizeof err));
  CHECK(d.in_feature == 0 && d.in_spatial[1] == 1 && d.in_batch == 2 && d.in_spatial[0] == 3);
  CHECK(d.k_out == 0 && d.k_spatial[0] == 1 && d.k_in == 3);
  CHECK(d.out_spatial[0] == 0 && d.out_feature == 1 && d.out_batch == 2 && d.out_spatial[1] == 3);
  cx_sb sb;
  cx_sb_init(&sb);
  cx_print_dim_labels(&sb, &d);
  CHECK(sb.buf && !strcmp(sb.buf, odd));
  cx_sb_free(&sb);
  /* Only the given length counts: the text may be a slice of a longer line. */
  static const char line[] = "bf_io->bf, window={}";
  CHECK(cx_parse_dim_labels(line, 9, 2, &d, err, sizeof err) && d.nspatial == 0);
  static const struct { const char *text; int rank; const char *why; } bad[] = {
      {"b01f01io->b01f", -1, "must look like b01f_01io->b01f"},
      {"b01f_01io-b01f", -1, "must look like"},
      {"b01f_01i->b01f", -1, "must have the same length"},
      {"b01f_01io->b01f", 3, "have rank 4, operands have rank 3"},
      {"b00f_01io->b01f", -1, "input labels 'b00f' name spatial dim 0 twice"},
      {"b01f_01ii->b01f", -1, "kernel labels '01ii' name 'i' twice"},
      {"b01x_01io->b01f", -1, "input labels 'b01x': unexpected 'x'"},
      {"b02f_01io->b01f", -1, "spatial dim 2 out of range for 2 spatial dims"},
      {"b_i->b", -1, "rank 1 out of range"},
      {"bf_io->bo", -1, "output labels 'bo': unexpected 'o'"},
  };
  for (int i = 0; i < CX_N(bad); i++) {
    err[0] = 0;
    CHECK_MSG(!cx_parse_dim_labels(bad[i].text, strlen(bad[i].text), bad[i].rank, &d, err, sizeof err),
              "'%s' parsed", bad[i].text);
    CHECK_MSG(strstr(err, bad[i].why) != NULL, "'%s': error '%s' lacks '%s'", bad[i].text, err, bad[i].why);
  }
}
