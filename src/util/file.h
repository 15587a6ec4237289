/* file.h — whole-file reading for the loaders (.hlo text, .npy). */
#ifndef CX_FILE_H
#define CX_FILE_H
#include "util/util.h"

/* Reads all of path (a regular file or a pipe) into a heap buffer with one extra NUL byte
 * after the data (so text can be used as a C string). Errors are CXLA_ERR_IO
 * "cannot open PATH: <strerror>" / "cannot read PATH: ...". */
cxla_status cx_read_file(cxla_context *ctx, const char *path, unsigned char **out, size_t *len);

/* Milliseconds from a monotonic clock, for compile-phase timings. */
double cx_now_ms(void);

#endif
