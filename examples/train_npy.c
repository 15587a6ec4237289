/* train_npy.c — the trained weights as .npy files (NumPy's format, version 1.0), so that any
 * tool can read them: the magic string, the header's length, a Python dict literal giving type,
 * order and shape, padded with spaces to a multiple of 64 bytes, then the data. */
#include <errno.h>
#include <string.h>
#include "train.h"

int npy_write_f32(const char *path, const float *data, int rank, const int64_t *dims, char *err, size_t errlen) {
  char dict[256], shape[160] = "";
  int64_t count = 1;
  size_t n = 0;
  for (int d = 0; d < rank; d++) {
    n += (size_t)snprintf(shape + n, sizeof shape - n, "%lld%s", (long long)dims[d], rank == 1 ? "," : d + 1 < rank ? ", " : "");
    count *= dims[d];
  }
  int len = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", shape);
  int total = (10 + len + 1 + 63) / 64 * 64; /* magic 6, version 2, length 2, dict, '\n' */
  unsigned char head[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)((total - 10) & 255),
                            (unsigned char)((total - 10) >> 8)};
  FILE *f = fopen(path, "wb");
  if (!f) return snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno)), 0;
  int ok = fwrite(head, 1, sizeof head, f) == sizeof head && fwrite(dict, 1, (size_t)len, f) == (size_t)len;
  for (int i = 10 + len; ok && i < total - 1; i++) ok = fputc(' ', f) != EOF;
  ok = ok && fputc('\n', f) != EOF && fwrite(data, sizeof *data, (size_t)count, f) == (size_t)count;
  if (fclose(f) != 0) ok = 0;
  if (!ok) snprintf(err, errlen, "writing %s: %s", path, strerror(errno));
  return ok;
}
