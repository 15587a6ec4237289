/* test_npy.c — .npy reading and writing: round trips of every dtype, headers written by hand
 * for format versions 1.0/2.0/3.0, and every kind of malformed file. Expected bytes come from
 * the .npy format description (numpy.lib.format), not from the encoder. */
#include <unistd.h>
#include "ir/literal.h"
#include "test.h"
#include "text/npy.h"

/* Builds a .npy image: magic, version major.0, header padded with spaces + '\n' to a multiple
 * of 64 (as numpy does), then ndata bytes of data. Returns its length. */
static size_t make_npy(unsigned char *buf, int major, const char *dict, const void *data, size_t ndata) {
  size_t pre = major == 1 ? 10 : 12, dl = strlen(dict);
  size_t total = (pre + dl + 1 + 63) / 64 * 64, hlen = total - pre;
  memcpy(buf, "\x93NUMPY", 6);
  buf[6] = (unsigned char)major;
  buf[7] = 0;
  buf[8] = (unsigned char)(hlen & 0xff);
  buf[9] = (unsigned char)(hlen >> 8);
  if (pre == 12) buf[10] = buf[11] = 0;
  memcpy(buf + pre, dict, dl);
  memset(buf + pre + dl, ' ', hlen - dl - 1);
  buf[total - 1] = '\n';
  if (ndata) memcpy(buf + total, data, ndata);
  return total + ndata;
}

static cxla_status decode(const unsigned char *buf, size_t len, cxla_literal **out) {
  return cx_npy_decode(test_ctx(), buf, len, "t.npy", out);
}

static void tmp_path(char *buf, size_t n, const char *tag) {
  snprintf(buf, n, "/tmp/cxla_test_npy_%d_%s.npy", (int)getpid(), tag);
}

TEST(npy_numpy_bytes_v1) {
  /* np.save of np.array([1, 2, 3], dtype='<i2'): a 118-byte header (0x76) so data starts at 128. */
  static const char dict[] = "{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }";
  unsigned char file[134];
  memcpy(file, "\x93NUMPY\x01\x00\x76\x00", 10);
  memcpy(file + 10, dict, sizeof dict - 1);
  memset(file + 10 + sizeof dict - 1, ' ', 127 - 10 - (sizeof dict - 1));
  file[127] = '\n';
  memcpy(file + 128, "\x01\x00\x02\x00\xfd\xff", 6); /* 1, 2, -3 */
  cxla_literal *lit = NULL;
  CHECK_OK(decode(file, sizeof file, &lit));
  if (!lit) return;
  CHECK_EQ_INT(cxla_literal_type(lit), CXLA_S16);
  CHECK_EQ_INT(cxla_literal_rank(lit), 1);
  CHECK_EQ_INT(cxla_literal_dims(lit)[0], 3);
  CHECK_EQ_INT(cxla_literal_get_f64(lit, 2), -3);
  /* Encoding the same literal must give exactly numpy's bytes. */
  unsigned char *enc = NULL;
  size_t len = 0;
  CHECK_OK(cx_npy_encode(test_ctx(), lit, &enc, &len));
  CHECK_EQ_INT(len, sizeof file);
  CHECK(enc && len == sizeof file && !memcmp(enc, file, len));
  free(enc);
  cxla_literal_destroy(lit);
}

TEST(npy_versions_2_and_3_any_key_order) {
  int32_t data[4] = {10, -20, 30, -40};
  unsigned char buf[512];
  for (int major = 2; major <= 3; major++) {
    size_t n = make_npy(buf, major, "{\"shape\": (2, 2,), \"fortran_order\": False, \"descr\": \"<i4\"}", data, sizeof data);
    cxla_literal *lit = NULL;
    CHECK_OK(decode(buf, n, &lit));
    if (!lit) continue;
    CHECK_EQ_INT(cxla_literal_type(lit), CXLA_S32);
    CHECK_EQ_INT(cxla_literal_rank(lit), 2);
    CHECK_EQ_INT(cxla_literal_dims(lit)[1], 2);
    CHECK_EQ_INT(cxla_literal_get_f64(lit, 3), -40);
    cxla_literal_destroy(lit);
  }
  /* A header of 4 bytes' length field in v2: length 0x00010040 would need 65600 bytes. */
  size_t n = make_npy(buf, 2, "{'descr': '<i4', 'fortran_order': False, 'shape': (4,)}", data, sizeof data);
  cxla_literal *lit = NULL;
  CHECK_OK(decode(buf, n, &lit));
  cxla_literal_destroy(lit);
  buf[10] = 1; /* header length now exceeds the file */
  CHECK_EQ_INT(decode(buf, n, &lit), CXLA_ERR_IO);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "t.npy: truncated");
}

TEST(npy_header_syntax_variants) {
  float one = 1.5f;
  unsigned char buf[512];
  static const char *const ok[] = {
      "{'descr':'<f4','fortran_order':False,'shape':()}",
      "{ 'fortran_order' : False , 'shape' : ( ) , 'descr' : '<f4' , }",
      "{'descr': '=f4', 'fortran_order': False, 'shape': (1,), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1L,), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), }\n\n  ",
  };
  for (int i = 0; i < CX_ARRAY_LEN(ok); i++) {
    size_t n = make_npy(buf, 1, ok[i], &one, sizeof one);
    cxla_literal *lit = NULL;
    cxla_status s = decode(buf, n, &lit);
    CHECK_MSG(s == CXLA_OK, "header %d: %s", i, cxla_context_errmsg(test_ctx()));
    if (lit) CHECK_NEAR(cxla_literal_get_f64(lit, 0), 1.5, 0);
    cxla_literal_destroy(lit);
  }
}

typedef struct {
  const char *dict;
  size_t ndata;
  const char *want; /* message fragment after "t.npy: " */
} bad_case;

TEST(npy_malformed_headers) {
  static const bad_case cases[] = {
      {"{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8, "big-endian .npy not supported"},
      {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16, "Fortran-order .npy not supported"},
      {"{'descr': '<c32', 'fortran_order': False, 'shape': (2,), }", 64, "unsupported .npy dtype '<c32'"},
      {"{'descr': '<m8', 'fortran_order': False, 'shape': (2,), }", 16, "unsupported .npy dtype '<m8'"},
      {"{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 16, "unsupported .npy dtype '|O'"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", 8, "'descr' must be a string"},
      {"{'descr': '<f4', 'shape': (2,), }", 8, "missing key 'fortran_order'"},
      {"{'descr': '<f4', 'fortran_order': False}", 4, "missing key 'shape'"},
      {"{'fortran_order': False, 'shape': (2,)}", 8, "missing key 'descr'"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", 8, "'descr' given twice"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}", 8, "unknown key 'extra'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", 8, "expected ',' or '}'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", 8, "unexpected text after the header dict"},
      {"'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", 8, "expected '{'"},
      {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,)}", 8, "must be True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': 2}", 8, "'shape' must be a tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2)}", 8, "needs a trailing comma"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", 8, "non-negative integers"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,,)}", 8, "non-negative integers"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", 8, "expected ',' or ')'"},
      {"{'descr: '<f4', 'fortran_order': False, 'shape': (2,)}", 8, "expected ':'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", 8, "too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296)}", 8,
       "shape is too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)}", 4,
       "more than 16 dimensions"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 20,
       "data is 20 bytes, but f32[2,3] needs 24 bytes (file truncated)"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 28,
       "data is 28 bytes, but f32[2,3] needs 24 bytes (trailing bytes)"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 0, "data is 0 bytes, but f32[] needs 4 bytes"},
  };
  unsigned char buf[1024], zeros[64] = {0};
  for (int i = 0; i < CX_ARRAY_LEN(cases); i++) {
    size_t n = make_npy(buf, 1, cases[i].dict, zeros, cases[i].ndata);
    cxla_literal *lit = (cxla_literal *)buf; /* must be reset to NULL */
    cxla_status s = decode(buf, n, &lit);
    const char *msg = cxla_context_errmsg(test_ctx());
    CHECK_MSG(s == CXLA_ERR_IO && lit == NULL, "case %d (%s): status %d", i, cases[i].dict, (int)s);
    CHECK_MSG(!strncmp(msg, "t.npy: ", 7) && strstr(msg, cases[i].want), "case %d: message '%s' lacks '%s'", i, msg,
              cases[i].want);
  }
}

TEST(npy_malformed_preamble) {
  unsigned char buf[256];
  float v = 0;
  size_t n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", &v, 4);
  cxla_literal *lit = NULL;
  CHECK_EQ_INT(decode(buf, 5, &lit), CXLA_ERR_IO); /* shorter than the magic */
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "t.npy: not a .npy file");
  CHECK_EQ_INT(decode(buf, 9, &lit), CXLA_ERR_IO); /* magic + version, half a length */
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "t.npy: truncated");
  CHECK_EQ_INT(decode(buf, 40, &lit), CXLA_ERR_IO); /* header cut short */
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "t.npy: truncated .npy file (header of 118 bytes, only 30 left");
  CHECK_EQ_INT(decode(buf, 0, &lit), CXLA_ERR_IO);
  buf[1] = 'n';
  CHECK_EQ_INT(decode(buf, n, &lit), CXLA_ERR_IO);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "bad magic");
  buf[1] = 'N';
  buf[6] = 4;
  CHECK_EQ_INT(decode(buf, n, &lit), CXLA_ERR_IO);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "unsupported .npy format version 4.0");
  buf[6] = 1;
  buf[7] = 1;
  CHECK_EQ_INT(decode(buf, n, &lit), CXLA_ERR_IO);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "version 1.1");
  buf[7] = 0;
  CHECK_OK(decode(buf, n, &lit));
  cxla_literal_destroy(lit);
}

TEST(npy_roundtrip_every_dtype) {
  static const struct { cxla_type t; const char *descr; } types[] = {
      {CXLA_PRED, "'|b1'"}, {CXLA_S8, "'|i1'"}, {CXLA_S16, "'<i2'"}, {CXLA_S32, "'<i4'"}, {CXLA_S64, "'<i8'"},
      {CXLA_U8, "'|u1'"}, {CXLA_U16, "'<u2'"}, {CXLA_U32, "'<u4'"}, {CXLA_U64, "'<u8'"}, {CXLA_F16, "'<f2'"},
      {CXLA_F32, "'<f4'"}, {CXLA_F64, "'<f8'"}};
  static const double vals[6] = {0, 1, -2, 3.5, 100, -7};
  int64_t dims[2] = {2, 3};
  char path[256];
  tmp_path(path, sizeof path, "rt");
  for (int k = 0; k < CX_ARRAY_LEN(types); k++) {
    cxla_literal *a = cxla_literal_create(test_ctx(), types[k].t, 2, dims);
    for (int i = 0; i < 6; i++) cxla_literal_set_f64(a, i, vals[i]);
    CHECK_OK(cxla_literal_write_npy(test_ctx(), a, path));
    /* The header as numpy writes it, data 64-byte aligned. */
    FILE *f = fopen(path, "rb");
    unsigned char head[128] = {0};
    size_t got = f ? fread(head, 1, sizeof head, f) : 0;
    if (f) fclose(f);
    CHECK(got >= 64 && !memcmp(head, "\x93NUMPY\x01\x00", 8));
    size_t hlen = head[8] | (size_t)head[9] << 8;
    CHECK_EQ_INT((10 + hlen) % 64, 0);
    CHECK(10 + hlen <= sizeof head && head[10 + hlen - 1] == '\n');
    char want[128];
    snprintf(want, sizeof want, "{'descr': %s, 'fortran_order': False, 'shape': (2, 3), }", types[k].descr);
    CHECK_MSG(!memcmp(head + 10, want, strlen(want)), "%s: header '%.60s'", types[k].descr, head + 10);
    cxla_literal *b = NULL;
    CHECK_OK(cxla_literal_read_npy(test_ctx(), path, &b));
    CHECK_MSG(b && cx_literal_equal(a, b), "dtype %s does not round-trip", types[k].descr);
    cxla_literal_destroy(a);
    cxla_literal_destroy(b);
  }
  unlink(path);
}

TEST(npy_scalars_zero_size_and_bf16) {
  char path[256];
  tmp_path(path, sizeof path, "shapes");
  int64_t dims0[3] = {2, 0, 3};
  const struct { int rank; const int64_t *dims; const char *shape; } cases[] = {
      {0, NULL, "'shape': ()"}, {3, dims0, "'shape': (2, 0, 3)"}, {1, dims0, "'shape': (2,)"}};
  for (int k = 0; k < CX_ARRAY_LEN(cases); k++) {
    cxla_literal *a = cxla_literal_create(test_ctx(), CXLA_F64, cases[k].rank, cases[k].dims);
    if (cxla_literal_element_count(a)) cxla_literal_set_f64(a, 0, -0.25);
    CHECK_OK(cxla_literal_write_npy(test_ctx(), a, path));
    unsigned char head[128] = {0};
    FILE *f = fopen(path, "rb");
    if (f) { CHECK(fread(head, 1, sizeof head, f) > 64); fclose(f); }
    CHECK_MSG(strstr((char *)head + 10, cases[k].shape) != NULL, "header lacks %s", cases[k].shape);
    cxla_literal *b = NULL;
    CHECK_OK(cxla_literal_read_npy(test_ctx(), path, &b));
    CHECK(b && cx_literal_equal(a, b));
    cxla_literal_destroy(a);
    cxla_literal_destroy(b);
  }
  /* bf16 has no numpy dtype: written widened to <f4, exactly, and read back as f32. */
  int64_t d1 = 3;
  cxla_literal *h = cxla_literal_create(test_ctx(), CXLA_BF16, 1, &d1);
  cxla_literal_set_f64(h, 0, 1.0);
  cxla_literal_set_f64(h, 1, -3.140625);
  cxla_literal_set_f64(h, 2, 1e30);
  CHECK_OK(cxla_literal_write_npy(test_ctx(), h, path));
  cxla_literal *g = NULL;
  CHECK_OK(cxla_literal_read_npy(test_ctx(), path, &g));
  if (g) {
    CHECK_EQ_INT(cxla_literal_type(g), CXLA_F32);
    for (int i = 0; i < 3; i++) CHECK_NEAR(cxla_literal_get_f64(g, i), cxla_literal_get_f64(h, i), 0);
  }
  cxla_literal_destroy(g);
  cxla_literal_destroy(h);
  unlink(path);
}

TEST(npy_bool_bytes_normalised) {
  unsigned char buf[256], data[3] = {0, 1, 7};
  size_t n = make_npy(buf, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", data, 3);
  cxla_literal *lit = NULL;
  CHECK_OK(decode(buf, n, &lit));
  if (!lit) return;
  const unsigned char *d = cxla_literal_data(lit);
  CHECK(d[0] == 0 && d[1] == 1 && d[2] == 1);
  cxla_literal_destroy(lit);
}

TEST(npy_file_errors) {
  cxla_literal *lit = NULL;
  CHECK_EQ_INT(cxla_literal_read_npy(test_ctx(), "/nonexistent/dir/x.npy", &lit), CXLA_ERR_IO);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "cannot open /nonexistent/dir/x.npy: No such file");
  CHECK(lit == NULL);
  int64_t d = 2;
  cxla_literal *a = cxla_literal_create(test_ctx(), CXLA_F32, 1, &d);
  CHECK_EQ_INT(cxla_literal_write_npy(test_ctx(), a, "/nonexistent/dir/x.npy"), CXLA_ERR_IO);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "cannot write /nonexistent/dir/x.npy: No such file");
  cxla_literal *elems[1] = {a};
  cxla_literal *t = cxla_literal_tuple(test_ctx(), 1, elems);
  CHECK_EQ_INT(cxla_literal_write_npy(test_ctx(), t, "/tmp/never.npy"), CXLA_ERR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "cannot write a tuple literal as .npy");
  cxla_literal_destroy(t);
  /* A directory is not a .npy file. */
  CHECK(cxla_literal_read_npy(test_ctx(), "/tmp", &lit) == CXLA_ERR_IO);
}

TEST(npy_out_of_memory_never_crashes) {
  unsigned char buf[256];
  float v[2] = {1, 2};
  size_t n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", v, sizeof v);
  int ok_seen = 0;
  for (int k = 0; k < 20; k++) {
    cxla_literal *lit = NULL;
    unsigned char *enc = NULL;
    size_t len;
    cx_alloc_fail_after(k);
    cxla_status s = decode(buf, n, &lit);
    if (s == CXLA_OK) s = cx_npy_encode(test_ctx(), lit, &enc, &len);
    cx_alloc_fail_after(-1);
    CHECK(s == CXLA_OK || s == CXLA_ERR_OUT_OF_MEMORY);
    if (s == CXLA_OK) { ok_seen = 1; CHECK(len == n && !memcmp(enc, buf, n)); }
    free(enc);
    cxla_literal_destroy(lit);
  }
  CHECK(ok_seen);
}
