/* box_copy.c — cx_box_copy, the strided copy every re-indexing op is made of (internal.h). */
#include <string.h>
#include "interp/internal.h"

static void copy_run(char *d, const char *s, size_t es, int64_t len, int64_t ds, int64_t ss) {
  if (ds == 1 && ss == 1) {
    memcpy(d, s, (size_t)len * es);
    return;
  }
  switch (es) { /* typed element moves: literal buffers are aligned to their element size */
  case 1: for (int64_t i = 0; i < len; i++) ((uint8_t *)d)[i * ds] = ((const uint8_t *)s)[i * ss]; break;
  case 2: for (int64_t i = 0; i < len; i++) ((uint16_t *)d)[i * ds] = ((const uint16_t *)s)[i * ss]; break;
  case 4: for (int64_t i = 0; i < len; i++) ((uint32_t *)d)[i * ds] = ((const uint32_t *)s)[i * ss]; break;
  case 8: for (int64_t i = 0; i < len; i++) ((uint64_t *)d)[i * ds] = ((const uint64_t *)s)[i * ss]; break;
  default: /* signed offsets: reverse walks with negative strides */
    for (int64_t i = 0; i < len; i++) memcpy(d + i * ds * (int64_t)es, s + i * ss * (int64_t)es, es);
  }
}

void cx_box_copy(void *dst, const void *src, size_t esize, int rank, const int64_t *n,
                 int64_t dbase, const int64_t *dstr, int64_t sbase, const int64_t *sstr) {
  char *d0 = dst;
  const char *s0 = src;
  for (int k = 0; k < rank; k++)
    if (n[k] <= 0) return;
  if (rank == 0) {
    memcpy(d0 + (size_t)dbase * esize, s0 + (size_t)sbase * esize, esize);
    return;
  }
  int64_t idx[CXLA_MAX_RANK] = {0}, d = dbase, s = sbase;
  int last = rank - 1;
  for (;;) {
    copy_run(d0 + d * (int64_t)esize, s0 + s * (int64_t)esize, esize, n[last], dstr[last], sstr[last]);
    int k = last - 1;
    for (; k >= 0; k--) { /* odometer over the outer dimensions */
      idx[k]++;
      d += dstr[k];
      s += sstr[k];
      if (idx[k] < n[k]) break;
      d -= dstr[k] * n[k];
      s -= sstr[k] * n[k];
      idx[k] = 0;
    }
    if (k < 0) return;
  }
}
