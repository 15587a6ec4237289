/* train_idx.c — MNIST's IDX files (http://yann.lecun.com/exdb/mnist/, the format Fashion-MNIST
 * keeps): a big-endian header, magic 0x00 0x00 <type> <rank> with type 0x08 for unsigned bytes,
 * then rank 32-bit sizes, then the bytes. zlib reads them whether gzip-compressed or not
 * (gzread passes a plain file through), so Debian's .gz files and unpacked copies both work. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>
#include "train.h"

static int fail(char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return 0;
}

/* zlib's message for f, without the "path: " it puts in front. */
static const char *zmsg(gzFile f, const char *path, int *code) {
  const char *m = gzerror(f, code);
  size_t n = strlen(path);
  return !strncmp(m, path, n) && !strncmp(m + n, ": ", 2) ? m + n + 2 : m;
}

/* Reads exactly n bytes; the count read, or -1 with zlib's message in *why. */
static int64_t read_all(gzFile f, const char *path, void *buf, int64_t n, const char **why) {
  int64_t got = 0;
  while (got < n) {
    unsigned chunk = n - got > (1 << 30) ? 1u << 30 : (unsigned)(n - got);
    int r = gzread(f, (char *)buf + got, chunk);
    if (r < 0) {
      int code;
      *why = zmsg(f, path, &code);
      return -1;
    }
    if (r == 0) break;
    got += r;
  }
  return got;
}

/* The file's path: base.gz if it exists, else base; NULL when neither does. */
static const char *find(const char *dir, const char *base, char *path, size_t n) {
  struct stat st;
  snprintf(path, n, "%s/%s.gz", dir, base);
  if (stat(path, &st) == 0) return path;
  snprintf(path, n, "%s/%s", dir, base);
  return stat(path, &st) == 0 ? path : NULL;
}

/* One IDX file of unsigned bytes with `rank` dimensions into dims and a malloc'd *data. */
static int read_idx(const char *dir, const char *base, int rank, int64_t *dims, uint8_t **data, char *err,
                    size_t errlen) {
  char path[4096];
  *data = NULL;
  if (!find(dir, base, path, sizeof path))
    return fail(err, errlen, "%s/%s: no such file (nor %s.gz)", dir, base, base);
  errno = 0;
  gzFile f = gzopen(path, "rb");
  if (!f) return fail(err, errlen, "%s: %s", path, errno ? strerror(errno) : "cannot open");
  gzbuffer(f, 1 << 17);
  const char *why = NULL;
  unsigned char head[4 + 4 * 3];
  int64_t nhead = 4 + 4 * (int64_t)rank, got = read_all(f, path, head, nhead, &why);
  int ok = 0;
  if (got < 0) {
    fail(err, errlen, "%s: %s", path, why);
  } else if (got >= 4 && (head[0] || head[1] || head[2] != 0x08 || head[3] != rank)) {
    fail(err, errlen, "%s: not an IDX file of unsigned bytes with %d dimension%s (magic number %02x%02x%02x%02x, expected 000008%02x)",
         path, rank, rank > 1 ? "s" : "", head[0], head[1], head[2], head[3], rank);
  } else if (got < nhead) {
    fail(err, errlen, "%s: truncated: %lld bytes, shorter than an IDX header of %lld", path, (long long)got,
         (long long)nhead);
  } else {
    int64_t total = 1;
    for (int i = 0; i < rank; i++) {
      const unsigned char *p = head + 4 + 4 * i;
      dims[i] = (int64_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
      total *= dims[i];
    }
    if (total <= 0 || total > ((int64_t)1 << 34)) {
      fail(err, errlen, "%s: implausible IDX sizes (%lld elements)", path, (long long)total);
    } else if (!(*data = malloc((size_t)total))) {
      fail(err, errlen, "%s: out of memory for %lld bytes", path, (long long)total);
    } else if ((got = read_all(f, path, *data, total, &why)) < 0) {
      fail(err, errlen, "%s: %s", path, why);
    } else if (got < total) {
      int code;
      const char *z = zmsg(f, path, &code);
      fail(err, errlen, "%s: truncated: %lld of the %lld data bytes its header declares%s%s", path, (long long)got,
           (long long)total, code != Z_OK ? ": " : "", code != Z_OK ? z : "");
    } else {
      unsigned char extra;
      int64_t more = read_all(f, path, &extra, 1, &why);
      int code;
      const char *z = zmsg(f, path, &code);
      if (more < 0 || code != Z_OK)
        fail(err, errlen, "%s: %s", path, more < 0 ? why : z);
      else if (more > 0)
        fail(err, errlen, "%s: more data than the %lld bytes its header declares", path, (long long)total);
      else
        ok = 1;
    }
  }
  gzclose(f);
  if (!ok) {
    free(*data);
    *data = NULL;
  }
  return ok;
}

static int load_split(const char *dir, const char *prefix, split *s, char *err, size_t errlen) {
  char images[64], labels[64];
  int64_t idims[3], ldims[1];
  snprintf(images, sizeof images, "%s-images-idx3-ubyte", prefix);
  snprintf(labels, sizeof labels, "%s-labels-idx1-ubyte", prefix);
  memset(s, 0, sizeof *s);
  if (!read_idx(dir, images, 3, idims, &s->pixels, err, errlen)) return 0;
  if (!read_idx(dir, labels, 1, ldims, &s->labels, err, errlen)) return split_free(s), 0;
  if (idims[1] != IMG_SIDE || idims[2] != IMG_SIDE) {
    fail(err, errlen, "%s/%s: images of %lldx%lld pixels; the models take %dx%d", dir, images, (long long)idims[1],
         (long long)idims[2], IMG_SIDE, IMG_SIDE);
    return split_free(s), 0;
  }
  if (idims[0] != ldims[0]) {
    fail(err, errlen, "%s: %lld images but %lld labels", dir, (long long)idims[0], (long long)ldims[0]);
    return split_free(s), 0;
  }
  s->n = idims[0];
  for (int64_t i = 0; i < s->n; i++)
    if (s->labels[i] >= NUM_CLASSES) {
      fail(err, errlen, "%s/%s: label %d of example %lld is not a class 0..%d", dir, labels, s->labels[i], (long long)i,
           NUM_CLASSES - 1);
      return split_free(s), 0;
    }
  return 1;
}

int idx_load(const char *dir, split *train, split *test, char *err, size_t errlen) {
  struct stat st;
  memset(test, 0, sizeof *test);
  if (stat(dir, &st) != 0)
    return fail(err, errlen, "%s: %s (Fashion-MNIST comes with Debian's dataset-fashion-mnist package; --data DIR reads "
                "MNIST-format IDX files from DIR)", dir, strerror(errno));
  if (!S_ISDIR(st.st_mode)) return fail(err, errlen, "%s: not a directory (--data wants the directory of the IDX files)", dir);
  if (!load_split(dir, "train", train, err, errlen)) return 0;
  if (!load_split(dir, "t10k", test, err, errlen)) return split_free(train), 0;
  return 1;
}

void split_free(split *s) {
  free(s->pixels);
  free(s->labels);
  memset(s, 0, sizeof *s);
}
