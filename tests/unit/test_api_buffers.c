/* test_api_buffers.c — buffers without copies: the caller's arrays wrapped as arguments
 * (cxla_buffer_wrap), results read in place (cxla_buffer_data, cxla_buffer_shape,
 * cxla_buffer_untuple), the copying cxla_buffer_from_data, and how donation treats memory cxla
 * does not own; on both backends, with every bad input an error that says what is wrong. */
#include <stdint.h>
#include <stdlib.h>
#include "test.h"
#include "util/util.h"

static const char *const backends[2] = {"interp", "cpu"};

static const char pair_text[] = /* (x + y, x): one computed leaf, one that is a parameter */
    "HloModule pair\n"
    "ENTRY main {\n"
    "  x = f32[2,3] parameter(0)\n"
    "  y = f32[2,3] parameter(1)\n"
    "  a = f32[2,3] add(x, y)\n"
    "  ROOT t = (f32[2,3], f32[2,3]) tuple(a, x)\n"
    "}\n";

static const char scale_text[] = /* x * 2: may run in place over a donated x */
    "HloModule scale\n"
    "ENTRY main {\n"
    "  x = f32[1024] parameter(0)\n"
    "  two = f32[] constant(2)\n"
    "  b = f32[1024] broadcast(two), dimensions={}\n"
    "  ROOT r = f32[1024] multiply(x, b)\n"
    "}\n";

static cxla_executable *compile_text(const char *text, const char *backend, uint64_t donate) {
  return test_compile_text(text, "buffers.hlo", backend, donate);
}

static const char *errmsg(void) { return cxla_context_errmsg(test_ctx()); }

TEST(api_buffers_wrap_in_untuple_out) {
  for (int k = 0; k < 2; k++) {
    cxla_executable *e = compile_text(pair_text, backends[k], 0);
    float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {10, 20, 30, 40, 50, 60};
    int64_t dims[2] = {2, 3};
    cxla_buffer *bx = NULL, *by = NULL, *r = NULL, *el[2] = {NULL, NULL};
    CHECK_OK(cxla_buffer_wrap(test_ctx(), backends[k], CXLA_F32, 2, dims, x, sizeof x, &bx));
    CHECK_OK(cxla_buffer_wrap(test_ctx(), backends[k], CXLA_F32, 2, dims, y, sizeof y, &by));
    if (!e || !bx || !by) goto done;
    CHECK(cxla_buffer_data(bx) == (void *)x); /* no copy in */
    CHECK_EQ_INT(cxla_buffer_size_bytes(bx), sizeof x);
    cxla_buffer *args[2] = {bx, by};
    CHECK_OK(cxla_executable_execute(e, 2, args, &r));
    if (!r) goto done;
    cxla_shape s;
    CHECK_OK(cxla_buffer_shape(r, &s));
    CHECK(s.type == CXLA_TUPLE && s.ntuple == 2 && s.elems && s.elems[1].type == CXLA_F32 && s.elems[1].rank == 2 &&
          s.elems[1].dims[0] == 2 && s.elems[1].dims[1] == 3);
    CHECK(cxla_buffer_data(r) == NULL && cxla_buffer_size_bytes(r) == 0); /* a tuple has no data of its own */
    CHECK_OK(cxla_buffer_untuple(r, 2, el));
    if (!el[0] || !el[1]) goto done;
    const float *sum = cxla_buffer_data(el[0]), *same = cxla_buffer_data(el[1]);
    for (int i = 0; sum && same && i < 6; i++) {
      CHECK_NEAR(sum[i], x[i] + y[i], 0);
      CHECK_NEAR(same[i], x[i], 0);
    }
    CHECK_MSG(same != x, "%s: a result leaf is the caller's memory", backends[k]);
    CHECK_NEAR(x[5], 6, 0); /* the caller's memory is only read */
    CHECK_OK(cxla_buffer_shape(el[0], &s));
    CHECK(s.type == CXLA_F32 && s.rank == 2 && s.dims[1] == 3 && s.ntuple == 0 && !s.elems);
    /* a result is read in place: writing through the pointer is the value */
    ((float *)cxla_buffer_data(el[0]))[0] = -7;
    cxla_literal *l = NULL;
    CHECK_OK(cxla_buffer_to_literal(el[0], &l));
    if (l) CHECK_NEAR(cxla_literal_get_f64(l, 0), -7, 0);
    cxla_literal_destroy(l);
    /* the emptied tuple */
    CHECK(cxla_buffer_data(r) == NULL);
    CHECK(cxla_buffer_shape(r, &s) == CXLA_ERR_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(errmsg(), "holds no value");
    cxla_buffer *none[2] = {r, r};
    CHECK(cxla_buffer_untuple(r, 2, none) == CXLA_ERR_INVALID_ARGUMENT && !none[0] && !none[1]);
    cxla_buffer *again[2] = {r, by}, *r2 = NULL;
    CHECK(cxla_executable_execute(e, 2, again, &r2) == CXLA_ERR_INVALID_ARGUMENT && !r2);
    CHECK_STR_CONTAINS(errmsg(), "argument 0 (parameter 'x') holds no value");
  done:
    cxla_buffer_destroy(el[0]);
    cxla_buffer_destroy(el[1]);
    cxla_buffer_destroy(r);
    cxla_buffer_destroy(bx);
    cxla_buffer_destroy(by);
    cxla_executable_destroy(e);
  }
}

TEST(api_buffers_wrap_errors) {
  cxla_context *ctx = test_ctx();
  int64_t dims[2] = {2, 3}, neg[1] = {-1};
  double *mem = calloc(8, sizeof *mem);
  if (!mem) return;
  cxla_buffer *b = (cxla_buffer *)&b;
  CHECK(cxla_buffer_wrap(NULL, NULL, CXLA_F32, 2, dims, mem, 24, &b) == CXLA_ERR_INVALID_ARGUMENT);
  CHECK(cxla_buffer_wrap(ctx, NULL, CXLA_F32, 2, dims, mem, 24, NULL) == CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(errmsg(), "out is NULL");
  struct {
    const char *backend;
    cxla_type type;
    int rank;
    const int64_t *dims;
    const void *data;
    size_t nbytes;
    const char *msg;
  } bad[] = {
      {"tpu", CXLA_F32, 2, dims, mem, 24, "unknown backend 'tpu'"},
      {NULL, CXLA_TUPLE, 2, dims, mem, 24, "not an array element type"},
      {NULL, CXLA_INVALID, 2, dims, mem, 24, "not an array element type"},
      {NULL, CXLA_F32, -1, dims, mem, 24, "rank -1 is out of range"},
      {NULL, CXLA_F32, 17, dims, mem, 24, "rank 17 is out of range"},
      {NULL, CXLA_F32, 2, NULL, mem, 24, "dims is NULL"},
      {NULL, CXLA_F32, 1, neg, mem, 4, "dimension 0 is negative"},
      {NULL, CXLA_F32, 2, dims, mem, 20, "f32[2,3] is 24 bytes, nbytes is 20"},
      {NULL, CXLA_F32, 2, dims, NULL, 24, "data is NULL"},
      {NULL, CXLA_F32, 2, dims, (char *)mem + 2, 24, "is not aligned to 4 bytes (f32 elements)"},
      {NULL, CXLA_F64, 2, dims, (char *)mem + 4, 48, "is not aligned to 8 bytes (f64 elements)"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    b = (cxla_buffer *)&b;
    CHECK_MSG(cxla_buffer_wrap(ctx, bad[i].backend, bad[i].type, bad[i].rank, bad[i].dims, bad[i].data, bad[i].nbytes,
                               &b) != CXLA_OK && b == NULL,
              "bad wrap %zu was accepted", i);
    CHECK_STR_CONTAINS(errmsg(), bad[i].msg);
    if (i == 9) CHECK_STR_CONTAINS(errmsg(), "cxla_buffer_wrap: data");
    /* the copying call refuses the same, except misalignment, which a copy does not mind */
    b = (cxla_buffer *)&b;
    cxla_status s = cxla_buffer_from_data(ctx, bad[i].backend, bad[i].type, bad[i].rank, bad[i].dims, bad[i].data,
                                          bad[i].nbytes, &b);
    if (i >= 9) {
      CHECK_OK(s);
      CHECK(b && cxla_buffer_data(b) != bad[i].data);
    } else {
      CHECK_MSG(s != CXLA_OK && b == NULL, "bad from_data %zu was accepted", i);
      CHECK_STR_CONTAINS(errmsg(), bad[i].msg);
      b = NULL;
    }
    cxla_buffer_destroy(b);
  }
  /* pred (1 byte) has no alignment; an empty array needs no memory */
  b = NULL;
  CHECK_OK(cxla_buffer_wrap(ctx, NULL, CXLA_PRED, 1, dims, (char *)mem + 1, 2, &b));
  cxla_buffer_destroy(b);
  int64_t zero[1] = {0};
  b = NULL;
  CHECK_OK(cxla_buffer_wrap(ctx, "cpu", CXLA_F32, 1, zero, NULL, 0, &b));
  CHECK(b && cxla_buffer_data(b) != NULL && cxla_buffer_size_bytes(b) == 0);
  cxla_buffer_destroy(b);
  free(mem);
}

TEST(api_buffers_from_data_copies) {
  float x[4] = {1, 2, 3, 4};
  int64_t dims[1] = {4};
  cxla_buffer *b = NULL;
  CHECK_OK(cxla_buffer_from_data(test_ctx(), "cpu", CXLA_F32, 1, dims, x, sizeof x, &b));
  x[0] = 99;
  const float *d = cxla_buffer_data(b);
  CHECK(d && d != x && d[0] == 1 && d[3] == 4);
  cxla_buffer_destroy(b);
}

TEST(api_buffers_wrong_shape_argument) {
  for (int k = 0; k < 2; k++) {
    cxla_executable *e = compile_text(pair_text, backends[k], 0);
    float x[6] = {0};
    int64_t tdims[2] = {3, 2}, dims[2] = {2, 3};
    cxla_buffer *bx = NULL, *by = NULL, *r = NULL;
    CHECK_OK(cxla_buffer_wrap(test_ctx(), backends[k], CXLA_F32, 2, dims, x, sizeof x, &bx));
    CHECK_OK(cxla_buffer_wrap(test_ctx(), backends[k], CXLA_F32, 2, tdims, x, sizeof x, &by));
    cxla_buffer *args[2] = {bx, by};
    if (e && bx && by) {
      CHECK(cxla_executable_execute(e, 2, args, &r) == CXLA_ERR_INVALID_ARGUMENT && !r);
      CHECK_STR_CONTAINS(errmsg(), "argument 1 (parameter 'y'): expected f32[2,3], got f32[3,2]");
      args[1] = NULL;
      CHECK(cxla_executable_execute(e, 2, args, &r) == CXLA_ERR_INVALID_ARGUMENT && !r);
      CHECK_STR_CONTAINS(errmsg(), "argument 1 (parameter 'y') is NULL");
    }
    cxla_buffer_destroy(bx);
    cxla_buffer_destroy(by);
    cxla_executable_destroy(e);
  }
}

/* Donation consumes memory and may hand it to the result: refused for the caller's memory,
 * which stays as it was and usable; a copy cxla owns is donated, and its memory outlives the
 * call for whoever still reads it. */
TEST(api_buffers_donation_of_wrapped_memory) {
  for (int k = 0; k < 2; k++) {
    cxla_executable *e = compile_text(scale_text, backends[k], 1), *plain = compile_text(scale_text, backends[k], 0);
    CHECK_EQ_INT(cxla_executable_donated_parameters(e), 1);
    CHECK_EQ_INT(cxla_executable_donated_parameters(plain), 0);
    float *x = malloc(1024 * sizeof *x);
    int64_t dims[1] = {1024};
    cxla_buffer *bx = NULL, *owned = NULL, *r = NULL;
    if (!x || !e || !plain) goto done;
    for (int i = 0; i < 1024; i++) x[i] = (float)i;
    CHECK_OK(cxla_buffer_wrap(test_ctx(), backends[k], CXLA_F32, 1, dims, x, 1024 * sizeof *x, &bx));
    if (!bx) goto done;
    CHECK(cxla_executable_execute(e, 1, &bx, &r) == CXLA_ERR_INVALID_ARGUMENT && !r);
    CHECK_STR_CONTAINS(errmsg(), "argument 0 (parameter 'x') is donated, but wraps the caller's memory");
    CHECK(cxla_buffer_data(bx) == (void *)x && x[1023] == 1023); /* not consumed, not written */
    CHECK_OK(cxla_executable_execute(plain, 1, &bx, &r));
    if (r) CHECK_NEAR(((float *)cxla_buffer_data(r))[1023], 2046, 0);
    cxla_buffer_destroy(r);
    r = NULL;
    CHECK_OK(cxla_buffer_from_data(test_ctx(), backends[k], CXLA_F32, 1, dims, x, 1024 * sizeof *x, &owned));
    if (!owned) goto done;
    void *before = cxla_buffer_data(owned);
    CHECK_OK(cxla_executable_execute(e, 1, &owned, &r));
    CHECK(cxla_buffer_data(owned) == NULL && cxla_buffer_size_bytes(owned) == 0);
    cxla_shape s;
    CHECK(cxla_buffer_shape(owned, &s) == CXLA_ERR_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(errmsg(), "was donated");
    if (r) {
      const float *rd = cxla_buffer_data(r);
      CHECK_NEAR(rd[5], 10, 0);
      if (k == 1) CHECK_MSG(rd == before, "cpu: the result is not in the donated buffer's memory");
    }
    /* The donated buffer goes first: the result keeps the memory it took over. */
    cxla_buffer_destroy(owned);
    owned = NULL;
    if (r) CHECK_NEAR(((float *)cxla_buffer_data(r))[1023], 2046, 0);
  done:
    cxla_buffer_destroy(r);
    cxla_buffer_destroy(owned);
    cxla_buffer_destroy(bx);
    cxla_executable_destroy(e);
    cxla_executable_destroy(plain);
    free(x);
  }
}

TEST(api_buffers_nested_tuple_shape) {
  static const char text[] =
      "HloModule nested\n"
      "ENTRY main {\n"
      "  x = f32[2] parameter(0)\n"
      "  i = s32[] constant(7)\n"
      "  p = pred[3] constant({1, 0, 1})\n"
      "  in = (f32[2], s32[]) tuple(x, i)\n"
      "  ROOT t = ((f32[2], s32[]), pred[3]) tuple(in, p)\n"
      "}\n";
  for (int k = 0; k < 2; k++) {
    cxla_executable *e = compile_text(text, backends[k], 0);
    float x[2] = {1.5f, -2};
    int64_t dims[1] = {2};
    cxla_buffer *bx = NULL, *r = NULL, *outer[3] = {0}, *inner[2] = {0};
    CHECK_OK(cxla_buffer_wrap(test_ctx(), NULL, CXLA_F32, 1, dims, x, sizeof x, &bx));
    if (e && bx) CHECK_OK(cxla_executable_execute(e, 1, &bx, &r));
    if (!r) goto done;
    cxla_shape s;
    CHECK_OK(cxla_buffer_shape(r, &s));
    CHECK(s.type == CXLA_TUPLE && s.ntuple == 2);
    CHECK(s.elems[0].type == CXLA_TUPLE && s.elems[0].ntuple == 2 && s.elems[0].elems[1].type == CXLA_S32 &&
          s.elems[0].elems[1].rank == 0);
    CHECK(s.elems[1].type == CXLA_PRED && s.elems[1].rank == 1 && s.elems[1].dims[0] == 3);
    cxla_shape again;
    CHECK_OK(cxla_buffer_shape(r, &again)); /* made once, the same storage */
    CHECK(again.elems == s.elems);
    CHECK(cxla_buffer_untuple(r, 3, outer) == CXLA_ERR_INVALID_ARGUMENT && !outer[0]);
    CHECK_STR_CONTAINS(errmsg(), "the tuple has 2 elements, n is 3");
    CHECK(cxla_buffer_untuple(r, -1, outer) == CXLA_ERR_INVALID_ARGUMENT);
    CHECK(cxla_buffer_untuple(r, 2, NULL) == CXLA_ERR_INVALID_ARGUMENT);
    CHECK_OK(cxla_buffer_untuple(r, 2, outer));
    if (!outer[0] || !outer[1]) goto done;
    CHECK(cxla_buffer_untuple(outer[1], 1, inner) == CXLA_ERR_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(errmsg(), "the buffer holds pred[3], not a tuple");
    CHECK_OK(cxla_buffer_untuple(outer[0], 2, inner));
    if (inner[0] && inner[1]) {
      CHECK_NEAR(((float *)cxla_buffer_data(inner[0]))[1], -2, 0);
      CHECK_EQ_INT(*(int32_t *)cxla_buffer_data(inner[1]), 7);
      CHECK_EQ_INT(cxla_buffer_size_bytes(inner[1]), 4);
    }
    const uint8_t *p = cxla_buffer_data(outer[1]);
    CHECK(p && p[0] == 1 && p[1] == 0 && p[2] == 1);
  done:
    for (int i = 0; i < 2; i++) {
      cxla_buffer_destroy(outer[i]);
      cxla_buffer_destroy(inner[i]);
    }
    cxla_buffer_destroy(r);
    cxla_buffer_destroy(bx);
    cxla_executable_destroy(e);
  }
}

TEST(api_buffers_null_arguments) {
  cxla_shape s;
  cxla_buffer *el[1];
  CHECK(cxla_buffer_data(NULL) == NULL);
  CHECK(cxla_buffer_size_bytes(NULL) == 0);
  CHECK(cxla_buffer_shape(NULL, &s) == CXLA_ERR_INVALID_ARGUMENT);
  CHECK(cxla_buffer_untuple(NULL, 1, el) == CXLA_ERR_INVALID_ARGUMENT);
  CHECK(cxla_executable_donated_parameters(NULL) == 0);
  float x[1] = {0};
  int64_t one[1] = {1};
  cxla_buffer *b = NULL;
  CHECK_OK(cxla_buffer_wrap(test_ctx(), NULL, CXLA_F32, 1, one, x, sizeof x, &b));
  CHECK(cxla_buffer_shape(b, NULL) == CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(errmsg(), "out is NULL");
  cxla_buffer_destroy(b);
  cxla_buffer_destroy(NULL);
}

/* Every allocation of the zero-copy path may fail: a clean CXLA_ERR_OUT_OF_MEMORY, nothing
 * leaked or half-moved (the ASan build checks the frees). */
TEST(api_buffers_allocation_failures) {
  for (int k = 0; k < 2; k++) {
    cxla_executable *e = compile_text(pair_text, backends[k], 0);
    if (!e) continue;
    float x[6] = {1, 2, 3, 4, 5, 6};
    int64_t dims[2] = {2, 3};
    int done = 0, failed = 0;
    for (int64_t n = 0; n < 10000 && !done; n++) {
      cxla_buffer *bx = NULL, *by = NULL, *r = NULL, *el[2] = {NULL, NULL};
      cxla_shape s;
      cx_alloc_fail_after(n);
      cxla_status st = cxla_buffer_wrap(test_ctx(), backends[k], CXLA_F32, 2, dims, x, sizeof x, &bx);
      if (st == CXLA_OK) st = cxla_buffer_from_data(test_ctx(), backends[k], CXLA_F32, 2, dims, x, sizeof x, &by);
      cxla_buffer *args[2] = {bx, by};
      if (st == CXLA_OK) st = cxla_executable_execute(e, 2, args, &r);
      if (st == CXLA_OK) st = cxla_buffer_shape(r, &s);
      if (st == CXLA_OK) st = cxla_buffer_untuple(r, 2, el);
      int64_t injected = cx_alloc_failures();
      cx_alloc_fail_after(-1);
      CHECK_MSG(st == CXLA_OK || st == CXLA_ERR_OUT_OF_MEMORY, "%s, failure after %lld: %s", backends[k], (long long)n,
                cxla_status_str(st));
      if (st != CXLA_OK) CHECK(!el[0] && !el[1]);
      failed += st == CXLA_ERR_OUT_OF_MEMORY;
      if (st == CXLA_OK && el[0]) CHECK_NEAR(((float *)cxla_buffer_data(el[0]))[5], 12, 0);
      done = st == CXLA_OK && injected == 0;
      for (int i = 0; i < 2; i++) cxla_buffer_destroy(el[i]);
      cxla_buffer_destroy(r);
      cxla_buffer_destroy(bx);
      cxla_buffer_destroy(by);
    }
    CHECK_MSG(done, "%s: never ran without an injected failure", backends[k]);
    CHECK_MSG(failed >= 5, "%s: only %d injected failures", backends[k], failed);
    printf("    %s: %d allocation failures handled\n", backends[k], failed);
    cxla_executable_destroy(e);
  }
}

static cxla_arg array_arg(const void *data, size_t nbytes, cxla_type type, int rank, const int64_t *dims) {
  cxla_arg a = {NULL, data, nbytes, type, rank, dims};
  return a;
}

TEST(api_buffers_execute_args) {
  for (int k = 0; k < 2; k++) {
    cxla_executable *e = compile_text(pair_text, backends[k], 0);
    float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {1, 1, 1, 1, 1, 1};
    int64_t dims[2] = {2, 3}, tdims[2] = {3, 2};
    cxla_buffer *by = NULL, *r = NULL, *el[2] = {NULL, NULL};
    CHECK_OK(cxla_buffer_from_data(test_ctx(), backends[k], CXLA_F32, 2, dims, y, sizeof y, &by));
    if (!e || !by) goto done;
    /* an array and a buffer */
    cxla_arg args[2] = {array_arg(x, sizeof x, CXLA_F32, 2, dims), {by, NULL, 0, CXLA_INVALID, 0, NULL}};
    CHECK_OK(cxla_executable_execute_args(e, 2, args, &r));
    if (r) CHECK_OK(cxla_buffer_untuple(r, 2, el));
    if (el[0] && el[1]) {
      CHECK_NEAR(((float *)cxla_buffer_data(el[0]))[5], 7, 0);
      CHECK(cxla_buffer_data(el[1]) != (void *)x);
    }
    /* bad arguments name themselves */
    cxla_buffer *r2 = (cxla_buffer *)&r2;
    CHECK(cxla_executable_execute_args(e, 2, NULL, &r2) == CXLA_ERR_INVALID_ARGUMENT && !r2);
    CHECK(cxla_executable_execute_args(e, -1, args, &r2) == CXLA_ERR_INVALID_ARGUMENT);
    CHECK(cxla_executable_execute_args(e, 2, args, NULL) == CXLA_ERR_INVALID_ARGUMENT);
    CHECK(cxla_executable_execute_args(NULL, 2, args, &r2) == CXLA_ERR_INVALID_ARGUMENT);
    CHECK(cxla_executable_execute_args(e, 1, args, &r2) == CXLA_ERR_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(errmsg(), "expected 2 arguments (one per ENTRY parameter), got 1");
    cxla_arg bad[2] = {args[0], array_arg((char *)x + 1, 24, CXLA_F32, 2, dims)};
    CHECK(cxla_executable_execute_args(e, 2, bad, &r2) == CXLA_ERR_INVALID_ARGUMENT && !r2);
    CHECK_STR_CONTAINS(errmsg(), "argument 1: data");
    CHECK_STR_CONTAINS(errmsg(), "is not aligned to 4 bytes (f32 elements)");
    bad[1] = array_arg(y, 20, CXLA_F32, 2, dims);
    CHECK(cxla_executable_execute_args(e, 2, bad, &r2) == CXLA_ERR_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(errmsg(), "argument 1: f32[2,3] is 24 bytes, nbytes is 20");
    bad[1] = array_arg(y, 24, CXLA_F32, 2, tdims);
    CHECK(cxla_executable_execute_args(e, 2, bad, &r2) == CXLA_ERR_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(errmsg(), "argument 1 (parameter 'y'): expected f32[2,3], got f32[3,2]");
    bad[1] = array_arg(NULL, 24, CXLA_F32, 2, dims);
    CHECK(cxla_executable_execute_args(e, 2, bad, &r2) == CXLA_ERR_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(errmsg(), "argument 1: data is NULL");
    bad[1] = array_arg(y, 24, CXLA_TUPLE, 2, dims);
    CHECK(cxla_executable_execute_args(e, 2, bad, &r2) == CXLA_ERR_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(errmsg(), "argument 1: type");
  done:
    for (int i = 0; i < 2; i++) cxla_buffer_destroy(el[i]);
    cxla_buffer_destroy(r);
    cxla_buffer_destroy(by);
    cxla_executable_destroy(e);
  }
}

/* A donated parameter takes a buffer cxla owns; an array in its place is refused untouched. */
TEST(api_buffers_execute_args_donation) {
  cxla_executable *e = compile_text(scale_text, "cpu", 1);
  float *x = malloc(1024 * sizeof *x);
  int64_t dims[1] = {1024};
  cxla_buffer *owned = NULL, *r = NULL;
  if (!e || !x) goto done;
  for (int i = 0; i < 1024; i++) x[i] = 1;
  cxla_arg a = array_arg(x, 1024 * sizeof *x, CXLA_F32, 1, dims);
  CHECK(cxla_executable_execute_args(e, 1, &a, &r) == CXLA_ERR_INVALID_ARGUMENT && !r);
  CHECK_STR_CONTAINS(errmsg(), "argument 0 (parameter 'x') is donated, but wraps the caller's memory");
  CHECK_NEAR(x[7], 1, 0);
  CHECK_OK(cxla_buffer_from_data(test_ctx(), "cpu", CXLA_F32, 1, dims, x, 1024 * sizeof *x, &owned));
  cxla_arg b = {owned, NULL, 0, CXLA_INVALID, 0, NULL};
  if (owned) CHECK_OK(cxla_executable_execute_args(e, 1, &b, &r));
  CHECK(cxla_buffer_data(owned) == NULL);
  if (r) CHECK_NEAR(((float *)cxla_buffer_data(r))[7], 2, 0);
done:
  cxla_buffer_destroy(r);
  cxla_buffer_destroy(owned);
  cxla_executable_destroy(e);
  free(x);
}

/* A donated buffer's memory must not be read through another argument: it may be overwritten. */
TEST(api_buffers_donated_memory_read_elsewhere) {
  cxla_executable *e = compile_text(pair_text, "cpu", 1);
  float x[6] = {1, 2, 3, 4, 5, 6};
  int64_t dims[2] = {2, 3};
  cxla_buffer *owned = NULL, *r = NULL;
  CHECK_OK(cxla_buffer_from_data(test_ctx(), "cpu", CXLA_F32, 2, dims, x, sizeof x, &owned));
  if (!e || !owned) goto done;
  const char *mem = cxla_buffer_data(owned);
  for (int off = 0; off <= 4; off += 4) {
    cxla_arg args[2] = {{owned, NULL, 0, CXLA_INVALID, 0, NULL}, array_arg(mem + off, sizeof x, CXLA_F32, 2, dims)};
    CHECK(cxla_executable_execute_args(e, 2, args, &r) == CXLA_ERR_INVALID_ARGUMENT && !r);
    CHECK_STR_CONTAINS(errmsg(), "argument 0 (parameter 'x') is donated, and argument 1 reads the same memory");
  }
  CHECK(cxla_buffer_data(owned) == mem); /* refused before the run: not consumed */
  cxla_arg apart[2] = {{owned, NULL, 0, CXLA_INVALID, 0, NULL}, array_arg(x, sizeof x, CXLA_F32, 2, dims)};
  CHECK_OK(cxla_executable_execute_args(e, 2, apart, &r));
done:
  cxla_buffer_destroy(r);
  cxla_buffer_destroy(owned);
  cxla_executable_destroy(e);
}

/* More arguments than fit on the stack take the heap path, allocation failures included. */
TEST(api_buffers_execute_args_many) {
  enum { NP = 20 };
  char text[2048];
  int len = snprintf(text, sizeof text, "HloModule many\nENTRY main {\n");
  for (int i = 0; i < NP; i++) len += snprintf(text + len, sizeof text - (size_t)len, "  p%d = f32[3] parameter(%d)\n", i, i);
  len += snprintf(text + len, sizeof text - (size_t)len, "  s0 = f32[3] add(p0, p1)\n");
  for (int i = 2; i < NP; i++) len += snprintf(text + len, sizeof text - (size_t)len, "  s%d = f32[3] add(s%d, p%d)\n", i - 1, i - 2, i);
  snprintf(text + len, sizeof text - (size_t)len, "  ROOT r = f32[3] negate(s%d)\n}\n", NP - 2);
  cxla_executable *e = compile_text(text, "cpu", 0);
  if (!e) return;
  float v[NP][3];
  int64_t dims[1] = {3};
  cxla_arg args[NP];
  for (int i = 0; i < NP; i++) {
    v[i][0] = (float)i, v[i][1] = 1, v[i][2] = -1;
    args[i] = array_arg(v[i], sizeof v[i], CXLA_F32, 1, dims);
  }
  int done = 0, failed = 0;
  for (int64_t n = 0; n < 1000 && !done; n++) {
    cxla_buffer *r = NULL;
    cx_alloc_fail_after(n);
    cxla_status st = cxla_executable_execute_args(e, NP, args, &r);
    int64_t injected = cx_alloc_failures();
    cx_alloc_fail_after(-1);
    CHECK(st == CXLA_OK || st == CXLA_ERR_OUT_OF_MEMORY);
    failed += st == CXLA_ERR_OUT_OF_MEMORY;
    if (r) {
      const float *d = cxla_buffer_data(r);
      CHECK_NEAR(d[0], -(NP * (NP - 1) / 2), 0);
      CHECK_NEAR(d[1], -NP, 0);
      CHECK_NEAR(d[2], NP, 0);
    }
    done = st == CXLA_OK && injected == 0;
    cxla_buffer_destroy(r);
  }
  CHECK(done && failed >= 3);
  cxla_executable_destroy(e);
}

/* The donation check among many arguments (its spans sorted, on the heap past 64): a donated
 * buffer read through any other argument is refused, whichever comes first; two arguments that
 * are not donated may share memory. Params 0 (f32[16]) and 40 are donated, the rest f32[4]. */
TEST(api_buffers_donated_memory_among_many) {
  enum { NP = 70 };
  char text[4096];
  int len = snprintf(text, sizeof text, "HloModule many_donated\nENTRY main {\n  p0 = f32[16] parameter(0)\n");
  for (int i = 1; i < NP; i++) len += snprintf(text + len, sizeof text - (size_t)len, "  p%d = f32[4] parameter(%d)\n", i, i);
  len += snprintf(text + len, sizeof text - (size_t)len, "  s1 = f32[4] negate(p1)\n");
  for (int i = 2; i < NP; i++) len += snprintf(text + len, sizeof text - (size_t)len, "  s%d = f32[4] add(s%d, p%d)\n", i, i - 1, i);
  snprintf(text + len, sizeof text - (size_t)len, "  n = f32[16] negate(p0)\n  ROOT r = (f32[16], f32[4]) tuple(n, s%d)\n}\n",
           NP - 1);
  cxla_executable *e = compile_text(text, "cpu", 1ull | 1ull << 40);
  if (!e) return;
  static float v[NP][4], big[16];
  int64_t d4[1] = {4}, d16[1] = {16};
  cxla_arg args[NP];
  for (int i = 1; i < NP; i++) {
    for (int j = 0; j < 4; j++) v[i][j] = (float)i;
    args[i] = array_arg(v[i], sizeof v[i], CXLA_F32, 1, d4);
  }
  /* case: 0 all apart; 1 arg 69 reads donated 40; 2 arg 1 reads donated 0 (at its end); 3 args
   * 2 and 3 share memory, neither donated; 4 donated 40 passed again as 41 */
  for (int c = 0; c < 5; c++) {
    cxla_buffer *b0 = NULL, *b40 = NULL, *r = NULL;
    CHECK_OK(cxla_buffer_from_data(test_ctx(), "cpu", CXLA_F32, 1, d16, big, sizeof big, &b0));
    CHECK_OK(cxla_buffer_from_data(test_ctx(), "cpu", CXLA_F32, 1, d4, v[40], sizeof v[40], &b40));
    if (!b0 || !b40) goto next;
    cxla_arg a[NP];
    memcpy(a, args, sizeof a);
    a[0] = (cxla_arg){b0, NULL, 0, CXLA_INVALID, 0, NULL};
    a[40] = (cxla_arg){b40, NULL, 0, CXLA_INVALID, 0, NULL};
    if (c == 1) a[69] = array_arg(cxla_buffer_data(b40), sizeof v[0], CXLA_F32, 1, d4);
    if (c == 2) a[1] = array_arg((const char *)cxla_buffer_data(b0) + 48, sizeof v[0], CXLA_F32, 1, d4);
    if (c == 3) a[3] = a[2];
    if (c == 4) a[41] = a[40];
    cxla_status st = cxla_executable_execute_args(e, NP, a, &r);
    if (c == 0 || c == 3) {
      CHECK_MSG(st == CXLA_OK, "case %d: %s", c, errmsg());
      cxla_buffer *el[2] = {NULL, NULL};
      if (r) CHECK_OK(cxla_buffer_untuple(r, 2, el));
      /* -1 + 2 + ... + 69, with 3's value read as 2's in case 3 */
      const float *s = el[1] ? cxla_buffer_data(el[1]) : NULL;
      if (s) CHECK_NEAR(s[0], NP * (NP - 1) / 2 - 2 - (c == 3), 0);
      cxla_buffer_destroy(el[0]);
      cxla_buffer_destroy(el[1]);
    } else {
      CHECK_MSG(st == CXLA_ERR_INVALID_ARGUMENT && !r, "case %d: status %d", c, (int)st);
      const char *want[5] = {"", "argument 40 (parameter 'p40') is donated, and argument 69 reads the same memory",
                             "argument 0 (parameter 'p0') is donated, and argument 1 reads the same memory",
                             "", "argument 40 (parameter 'p40') is donated, and the same buffer is also argument 41"};
      CHECK_STR_CONTAINS(errmsg(), want[c]);
    }
  next:
    cxla_buffer_destroy(r);
    cxla_buffer_destroy(b0);
    cxla_buffer_destroy(b40);
  }
  cxla_executable_destroy(e);
}
