/* conv_dims.h — convolution dim_labels ("b01f_01io->b01f"): parsing and printing, shared by
 * the HLO parser and printer and the builder API so that all three agree on one syntax. */
#ifndef CX_CONV_DIMS_H
#define CX_CONV_DIMS_H
#include <stddef.h>
#include "ir/ir.h"

/* Parses len bytes of dim_labels text into *out. Input labels are 'b' (batch), 'f' (feature)
 * and the digits 0..n-1 (spatial dims, each exactly once); kernel labels 'i' (input feature),
 * 'o' (output feature) and the digits; output labels like the input's. The three parts must
 * have the same length (the rank); rank >= 0 also requires that rank. Returns 1 on success;
 * otherwise 0 with a short reason in err ("kernel labels 01i need 'o'"). */
int cx_parse_dim_labels(const char *text, size_t len, int rank, cx_conv_dims *out, char *err,
                        size_t errlen);
/* Prints *d back as dim_labels text ("b01f_01io->b01f"). */
void cx_print_dim_labels(cx_sb *sb, const cx_conv_dims *d);

#endif
