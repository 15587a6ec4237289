/* npy.c — NumPy .npy files: the header dict parser, the encoder, and the public file calls.
 *
 * Format (numpy.lib.format): "\x93NUMPY", major, minor, header length (2 bytes LE for 1.0,
 * 4 bytes for 2.0 and 3.0), then a Python dict literal such as
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces and a final '\n', then the raw data. Version 3.0 only differs in that the
 * header is UTF-8; every byte cxla accepts in a header is ASCII, so it parses the same way.
 *
 * cxla reads little-endian ('<', '|', and '=' which is little-endian on every host cxla runs
 * on), C-order arrays of bool, signed/unsigned integers, f16/f32/f64 and complex64/128
 * ('c8'/'c16': each element's real then imaginary part, as cxla's c64/c128). NumPy has no
 * bfloat16, 8-bit or 4-bit float dtype (ml_dtypes' arrays save as raw '|V1' bytes), so bf16 and
 * the f8/f4 types are written widened to '<f4' (exact: every such value is an f32), and s4/u4 and
 * s2/u2 as '|i1'/'|u1'; reading such a file back gives an f32 (s8, u8) literal. Every malformed file is a CXLA_ERR_IO naming
 * the file; nothing here trusts a length it read before checking it against the buffer. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "text/npy.h"
#include "util/file.h"
#include "util/fpenv.h"

static const unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* ---- header dict parsing ------------------------------------------------------------------ */

typedef struct {
  const char *p, *end;
  const char *name; /* file name, for messages */
  cxla_context *ctx;
} hdr;

static cxla_status bad(hdr *h, const char *what) {
  return cx_error(h->ctx, CXLA_ERR_IO, "%s: bad .npy header: %s", h->name, what);
}

static void skip_ws(hdr *h) {
  while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r')) h->p++;
}

static int eat(hdr *h, char c) {
  skip_ws(h);
  if (h->p < h->end && *h->p == c) { h->p++; return 1; }
  return 0;
}

/* A Python string literal in single or double quotes, without escapes (numpy never writes
 * any in the three keys or in a simple descr). */
static int str_lit(hdr *h, const char **s, size_t *n) {
  skip_ws(h);
  if (h->p >= h->end || (*h->p != '\'' && *h->p != '"')) return 0;
  char q = *h->p++;
  const char *b = h->p;
  while (h->p < h->end && *h->p != q) {
    if (*h->p == '\\' || *h->p == '\n') return 0;
    h->p++;
  }
  if (h->p >= h->end) return 0;
  *s = b;
  *n = (size_t)(h->p - b);
  h->p++;
  return 1;
}

static int word(hdr *h, const char *w) {
  size_t n = strlen(w);
  skip_ws(h);
  if ((size_t)(h->end - h->p) < n || memcmp(h->p, w, n)) return 0;
  const char *after = h->p + n;
  if (after < h->end && ((*after >= 'a' && *after <= 'z') || (*after >= 'A' && *after <= 'Z') ||
                         (*after >= '0' && *after <= '9') || *after == '_'))
    return 0;
  h->p = after;
  return 1;
}

/* "(2, 3)", "(3,)", "()"; Python 2 files may write "3L". */
static cxla_status shape_tuple(hdr *h, int *rank, int64_t *dims) {
  if (!eat(h, '(')) return bad(h, "'shape' must be a tuple such as (2, 3)");
  *rank = 0;
  if (eat(h, ')')) return CXLA_OK;
  for (;;) {
    skip_ws(h);
    if (h->p >= h->end || *h->p < '0' || *h->p > '9')
      return bad(h, "'shape' must hold non-negative integers");
    int64_t v = 0;
    while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
      if (v > (INT64_MAX - 9) / 10) return bad(h, "a dimension in 'shape' is too large");
      v = v * 10 + (*h->p++ - '0');
    }
    if (h->p < h->end && *h->p == 'L') h->p++;
    if (*rank == CXLA_MAX_RANK) {
      char msg[96];
      snprintf(msg, sizeof msg, "'shape' has more than %d dimensions", CXLA_MAX_RANK);
      return bad(h, msg);
    }
    dims[(*rank)++] = v;
    int comma = eat(h, ',');
    if (eat(h, ')')) {
      /* (3) is the integer 3 in Python, not a tuple; numpy rejects it too. */
      if (*rank == 1 && !comma) return bad(h, "'shape' (n) needs a trailing comma: (n,)");
      return CXLA_OK;
    }
    if (!comma) return bad(h, "expected ',' or ')' in 'shape'");
  }
}

/* Maps a descr such as "<f4" to a type. Returns CXLA_INVALID with a message set. */
static cxla_type descr_type(hdr *h, const char *s, size_t n) {
  char d[32];
  snprintf(d, sizeof d, "%.*s", (int)(n < 31 ? n : 31), s);
  static const struct { const char *code; cxla_type t; } codes[] = {
      {"b1", CXLA_PRED}, {"i1", CXLA_S8},  {"i2", CXLA_S16}, {"i4", CXLA_S32}, {"i8", CXLA_S64},
      {"u1", CXLA_U8},   {"u2", CXLA_U16}, {"u4", CXLA_U32}, {"u8", CXLA_U64}, {"f2", CXLA_F16},
      {"f4", CXLA_F32},  {"f8", CXLA_F64}, {"c8", CXLA_C64}, {"c16", CXLA_C128}};
  char order = n >= 3 ? d[0] : 0;
  cxla_type t = CXLA_INVALID;
  for (int i = 0; (n == 3 || n == 4) && i < CX_ARRAY_LEN(codes); i++)
    if (strlen(codes[i].code) == n - 1 && !memcmp(d + 1, codes[i].code, n - 1)) t = codes[i].t;
  if (t == CXLA_INVALID || (order != '<' && order != '|' && order != '=' && order != '>')) {
    cx_error(h->ctx, CXLA_ERR_IO,
             "%s: unsupported .npy dtype '%s' (supported: b1, i1, i2, i4, i8, u1, u2, u4, u8, f2, "
             "f4, f8, c8, c16)", h->name, d);
    return CXLA_INVALID;
  }
  if (order == '>' && cxla_type_size(cx_type_part(t)) > 1) {
    cx_error(h->ctx, CXLA_ERR_IO, "%s: big-endian .npy not supported (dtype '%s')", h->name, d);
    return CXLA_INVALID;
  }
  return t;
}

static cxla_status parse_dict(hdr *h, cxla_type *type, int *rank, int64_t *dims) {
  int seen_descr = 0, seen_order = 0, seen_shape = 0;
  if (!eat(h, '{')) return bad(h, "expected '{' at the start of the header dict");
  while (!eat(h, '}')) {
    const char *k;
    size_t kn;
    if (!str_lit(h, &k, &kn)) return bad(h, "expected a quoted key or '}'");
    if (!eat(h, ':')) return bad(h, "expected ':' after a key");
    if (kn == 5 && !memcmp(k, "descr", 5)) {
      const char *v;
      size_t vn;
      if (seen_descr++) return bad(h, "'descr' given twice");
      if (!str_lit(h, &v, &vn)) return bad(h, "'descr' must be a string such as '<f4' (structured dtypes are not supported)");
      if ((*type = descr_type(h, v, vn)) == CXLA_INVALID) return CXLA_ERR_IO;
    } else if (kn == 13 && !memcmp(k, "fortran_order", 13)) {
      if (seen_order++) return bad(h, "'fortran_order' given twice");
      if (word(h, "True")) {
        /* A rank <= 1 array is the same in both orders, but numpy only writes True for
         * arrays it could not write in C order, so refuse it uniformly. */
        return cx_error(h->ctx, CXLA_ERR_IO,
                        "%s: Fortran-order .npy not supported (save with np.ascontiguousarray)", h->name);
      }
      if (!word(h, "False")) return bad(h, "'fortran_order' must be True or False");
    } else if (kn == 5 && !memcmp(k, "shape", 5)) {
      if (seen_shape++) return bad(h, "'shape' given twice");
      CX_TRY(shape_tuple(h, rank, dims));
    } else {
      char msg[96];
      snprintf(msg, sizeof msg, "unknown key '%.*s'", (int)(kn < 40 ? kn : 40), k);
      return bad(h, msg);
    }
    if (!eat(h, ',')) {
      if (eat(h, '}')) break;
      return bad(h, "expected ',' or '}' after a value");
    }
  }
  skip_ws(h);
  if (h->p != h->end) return bad(h, "unexpected text after the header dict");
  if (!seen_descr || !seen_order || !seen_shape)
    return bad(h, !seen_descr ? "missing key 'descr'" : !seen_order ? "missing key 'fortran_order'"
                                                                    : "missing key 'shape'");
  return CXLA_OK;
}

/* ---- decode ------------------------------------------------------------------------------------ */

cxla_status cx_npy_decode(cxla_context *ctx, const unsigned char *buf, size_t len, const char *name,
                          cxla_literal **out) {
  *out = NULL;
  if (!name) name = "<npy>";
  if (len < 8 || memcmp(buf, magic, sizeof magic))
    return cx_error(ctx, CXLA_ERR_IO, "%s: not a .npy file (bad magic; expected \\x93NUMPY)", name);
  int major = buf[6], minor = buf[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    return cx_error(ctx, CXLA_ERR_IO, "%s: unsupported .npy format version %d.%d (supported: 1.0, 2.0, 3.0)",
                    name, major, minor);
  size_t lenbytes = major == 1 ? 2 : 4;
  if (len < 8 + lenbytes)
    return cx_error(ctx, CXLA_ERR_IO, "%s: truncated .npy file (%zu bytes, no header length)", name, len);
  uint64_t hlen = buf[8] | (uint64_t)buf[9] << 8;
  if (lenbytes == 4) hlen |= (uint64_t)buf[10] << 16 | (uint64_t)buf[11] << 24;
  size_t start = 8 + lenbytes;
  if (hlen > len - start)
    return cx_error(ctx, CXLA_ERR_IO, "%s: truncated .npy file (header of %llu bytes, only %zu left)", name,
                    (unsigned long long)hlen, len - start);
  hdr h = {(const char *)buf + start, (const char *)buf + start + hlen, name, ctx};
  cxla_type type = CXLA_INVALID;
  int rank = 0;
  int64_t dims[CXLA_MAX_RANK];
  CX_TRY(parse_dict(&h, &type, &rank, dims));
  cx_shape s = cx_shape_array(type, rank, dims);
  int64_t want = cx_shape_bytes(&s);
  if (want < 0) return cx_error(ctx, CXLA_ERR_IO, "%s: .npy shape is too large (element count overflows)", name);
  size_t have = len - start - (size_t)hlen;
  char sbuf[256];
  if ((uint64_t)want != have)
    return cx_error(ctx, CXLA_ERR_IO, "%s: .npy data is %zu bytes, but %s needs %lld bytes (%s)", name, have,
                    cx_shape_str(&s, sbuf, sizeof sbuf), (long long)want,
                    have < (uint64_t)want ? "file truncated" : "trailing bytes");
  cxla_literal *lit = cx_literal_new(&s);
  if (!lit) return cx_oom(ctx);
  const unsigned char *data = buf + start + hlen;
  if (type == CXLA_PRED) {
    /* Literals keep pred as exactly 0 or 1; a byte other than 0 in a bool array is true. */
    unsigned char *d = lit->data;
    for (int64_t i = 0; i < want; i++) d[i] = data[i] != 0;
  } else if (want) {
    memcpy(lit->data, data, (size_t)want);
  }
  *out = lit;
  return CXLA_OK;
}

/* ---- encode ------------------------------------------------------------------------------------ */

static const char *descr_of(cxla_type t) {
  switch (t) {
  case CXLA_PRED: return "|b1";
  case CXLA_S8: return "|i1";
  case CXLA_S16: return "<i2";
  case CXLA_S32: return "<i4";
  case CXLA_S64: return "<i8";
  case CXLA_U8: return "|u1";
  case CXLA_U16: return "<u2";
  case CXLA_U32: return "<u4";
  case CXLA_U64: return "<u8";
  case CXLA_F16: return "<f2";
  case CXLA_BF16: return "<f4"; /* widened: numpy has no bfloat16 */
  case CXLA_F32: return "<f4";
  case CXLA_F64: return "<f8";
  case CXLA_C64: return "<c8";
  case CXLA_C128: return "<c16";
  case CXLA_S4: case CXLA_S2: return "|i1";
  case CXLA_U4: case CXLA_U2: return "|u1";
  case CXLA_F8E4M3FN: case CXLA_F8E5M2: case CXLA_F8E4M3FNUZ: case CXLA_F8E5M2FNUZ: case CXLA_F8E4M3B11FNUZ:
  case CXLA_F8E4M3: case CXLA_F8E3M4: case CXLA_F4E2M1FN: case CXLA_F8E8M0FNU:
    return "<f4"; /* widened */
  case CXLA_INVALID: case CXLA_TUPLE: case CXLA_TOKEN: return NULL;
  }
  return NULL;
}

cxla_status cx_npy_encode(cxla_context *ctx, const cxla_literal *lit, unsigned char **out, size_t *len) {
  *out = NULL;
  *len = 0;
  const char *descr = lit ? descr_of(lit->shape.type) : NULL;
  if (!descr)
    return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cannot write a %s as .npy (only arrays)",
                    lit ? (lit->shape.type == CXLA_TUPLE ? "tuple literal" : "literal of this type") : "NULL literal");
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_printf(&sb, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int i = 0; i < lit->shape.rank; i++)
    cx_sb_printf(&sb, "%s%lld", i ? ", " : "", (long long)lit->shape.dims[i]);
  cx_sb_puts(&sb, lit->shape.rank == 1 ? ",), }" : "), }");
  if (sb.oom) { cx_sb_free(&sb); return cx_oom(ctx); }
  /* numpy pads with spaces so magic + version + length + header (ending in '\n') is a multiple
   * of 64, which aligns the data for memory mapping. Version 2.0 only if the length needs it. */
  size_t pre = 10, hl = sb.len + 1;
  size_t total_hdr = (pre + hl + 63) / 64 * 64;
  if (total_hdr - pre > 65535) { pre = 12; total_hdr = (pre + hl + 63) / 64 * 64; }
  size_t hlen = total_hdr - pre;
  int64_t elems = cx_shape_elems(&lit->shape);
  cxla_type t = lit->shape.type;
  int widened = t == CXLA_BF16 || (cx_type_is_float(t) && cxla_type_size(t) == 1);
  size_t esize = widened ? 4 : cxla_type_size(t);
  size_t nbytes = (size_t)elems * esize;
  unsigned char *buf = cx_malloc(total_hdr + nbytes);
  if (!buf) { cx_sb_free(&sb); return cx_oom(ctx); }
  memcpy(buf, magic, sizeof magic);
  buf[6] = pre == 10 ? 1 : 2;
  buf[7] = 0;
  buf[8] = (unsigned char)(hlen & 0xff);
  buf[9] = (unsigned char)(hlen >> 8 & 0xff);
  if (pre == 12) { buf[10] = (unsigned char)(hlen >> 16 & 0xff); buf[11] = (unsigned char)(hlen >> 24 & 0xff); }
  memcpy(buf + pre, sb.buf, sb.len);
  memset(buf + pre + sb.len, ' ', hlen - sb.len - 1);
  buf[total_hdr - 1] = '\n';
  cx_sb_free(&sb);
  if (widened) {
    for (int64_t i = 0; i < elems; i++) {
      float f = (float)cx_load_f64(t, lit->data, i);
      memcpy(buf + total_hdr + (size_t)i * 4, &f, 4);
    }
  } else if (t == CXLA_S4 || t == CXLA_S2) { /* sign-extended to a whole byte */
    for (int64_t i = 0; i < elems; i++) buf[total_hdr + (size_t)i] = (unsigned char)cx_load_i64(t, lit->data, i);
  } else if (nbytes) {
    memcpy(buf + total_hdr, lit->data, nbytes);
  }
  *out = buf;
  *len = total_hdr + nbytes;
  return CXLA_OK;
}

/* ---- files ------------------------------------------------------------------------------------- */

cxla_status cxla_literal_read_npy(cxla_context *ctx, const char *path, cxla_literal **out) {
  if (!out) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_literal_read_npy: out is NULL");
  *out = NULL;
  if (!path) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_literal_read_npy: path is NULL");
  unsigned char *buf;
  size_t len;
  CX_TRY(cx_read_file(ctx, path, &buf, &len));
  cxla_status s = cx_npy_decode(ctx, buf, len, path, out);
  cx_free(buf);
  return s;
}

cxla_status cxla_literal_write_npy(cxla_context *ctx, const cxla_literal *lit, const char *path) {
  if (!path) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_literal_write_npy: path is NULL");
  unsigned char *buf;
  size_t len;
  unsigned env = cx_fpenv_enter(0); /* bf16 and 8-bit floats widen through f32: IEEE (util/fpenv.h) */
  cxla_status s = cx_npy_encode(ctx, lit, &buf, &len);
  cx_fpenv_leave(env);
  CX_TRY(s);
  FILE *f = fopen(path, "wb");
  if (!f) {
    cx_free(buf);
    return cx_error(ctx, CXLA_ERR_IO, "cannot write %s: %s", path, strerror(errno));
  }
  size_t put = fwrite(buf, 1, len, f);
  int err = put != len ? (errno ? errno : EIO) : 0;
  if (fclose(f) != 0 && !err) err = errno ? errno : EIO;
  cx_free(buf);
  if (err) return cx_error(ctx, CXLA_ERR_IO, "cannot write %s: %s", path, strerror(err));
  return CXLA_OK;
}
