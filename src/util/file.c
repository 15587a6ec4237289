/* file.c — whole-file reading and a monotonic clock. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "util/file.h"

cxla_status cx_read_file(cxla_context *ctx, const char *path, unsigned char **out, size_t *len) {
  *out = NULL;
  *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return cx_error(ctx, CXLA_ERR_IO, "cannot open %s: %s", path, strerror(errno));
  unsigned char *buf = NULL;
  int64_t cap = 0;
  size_t n = 0;
  int err = 0;
  /* Grow-and-read instead of fstat: pipes and /proc files report no size. */
  for (;;) {
    if (!cx_vec_reserve((void **)&buf, &cap, (int64_t)n + 65537, 1)) {
      fclose(f);
      cx_free(buf);
      return cx_oom(ctx);
    }
    size_t got = fread(buf + n, 1, (size_t)cap - n - 1, f);
    n += got;
    if (got == 0) {
      if (ferror(f)) err = errno ? errno : EIO;
      break;
    }
  }
  fclose(f);
  if (err) {
    cx_free(buf);
    return cx_error(ctx, CXLA_ERR_IO, "cannot read %s: %s", path, strerror(err));
  }
  buf[n] = 0;
  *out = buf;
  *len = n;
  return CXLA_OK;
}

double cx_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
