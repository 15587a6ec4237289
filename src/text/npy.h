/* npy.h — NumPy .npy files (format versions 1-3, little-endian, C order). */
#ifndef CX_NPY_H
#define CX_NPY_H
#include "ir/literal.h"

/* Parses a whole .npy file held in memory; `name` labels error messages. */
cxla_status cx_npy_decode(cxla_context *ctx, const unsigned char *buf, size_t len, const char *name,
                          cxla_literal **out);
/* Encodes an array literal as .npy (version 1.0 unless the header needs 2.0); caller frees. */
cxla_status cx_npy_encode(cxla_context *ctx, const cxla_literal *lit, unsigned char **out, size_t *len);

#endif
