/* minifloat.h — the 8- and 4-bit floating-point types (f8e4m3fn, f8e5m2, the fnuz types,
 * f8e4m3, f8e3m4, f4e2m1fn, f8e8m0fnu): their formats, and exact conversion to and from double as
 * ml_dtypes (and XLA's evaluator, which uses it) defines it. Each value takes one byte, in its
 * low `bits` bits. */
#ifndef CX_MINIFLOAT_H
#define CX_MINIFLOAT_H
#include <stdint.h>
#include "cxla.h"

typedef enum {
  CX_MF_IEEE,   /* all-ones exponent: infinities (mantissa 0) and NaNs, as IEEE 754 */
  CX_MF_FN,     /* finite: no infinities; NaN is the all-ones exponent and mantissa, both signs */
  CX_MF_FNUZ,   /* finite, unsigned zero: no infinities, no -0; NaN is the code of -0 (0x80) */
  CX_MF_FINITE, /* no infinities and no NaN (f4e2m1fn) */
  CX_MF_E8M0    /* f8e8m0fnu: no sign and no mantissa bit, code c is 2^(c - bias), NaN 0xff */
} cx_mf_kind;

typedef struct cx_mf_format {
  int ebits, mbits, bias; /* exponent and explicit mantissa bits, exponent bias */
  cx_mf_kind kind;
} cx_mf_format;

/* The format of t, or NULL when t is not one of these types. */
const cx_mf_format *cx_mf_format_of(cxla_type t);
/* The value of code (its low 1 + ebits + mbits bits). */
double cx_mf_decode(const cx_mf_format *f, uint32_t code);
/* The code of v, rounded to nearest even, with the type's rules: overflow (past the largest
 * finite value by half an ulp or more) gives infinity (IEEE), NaN (FN, FNUZ) or saturates
 * (FINITE); infinities become NaN (FN, FNUZ) or the largest finite value (FINITE); NaN keeps its
 * sign (IEEE, FN), is 0x80 (FNUZ), and for FINITE is a zero of the opposite sign (ml_dtypes);
 * -0 and negative values that round to 0 are +0 in FNUZ. E8M0 is ml_dtypes' own rule: the value
 * goes to f32 first (to nearest even); NaN, infinities, zeros and negative values are NaN; a
 * normal f32 m * 2^e (m in [1, 2)) is 2^(e + 1) when m >= 1.5, else 2^e, NaN past 2^127; an f32
 * subnormal is 2^-126 above 2^-127 and 2^-127 up to it. */
uint32_t cx_mf_encode(const cx_mf_format *f, double v);

#endif
