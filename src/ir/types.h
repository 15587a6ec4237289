/* types.h — element types: sizes, classes, f16/bf16 conversion, and typed element access.
 * Integer values travel as int64_t (u64 as its bit pattern), floats as double, complex numbers
 * as two doubles (real, imaginary). */
#ifndef CX_TYPES_H
#define CX_TYPES_H
#include <stdint.h>
#include "cxla.h"

typedef enum { CX_KIND_NONE, CX_KIND_PRED, CX_KIND_SINT, CX_KIND_UINT, CX_KIND_FLOAT, CX_KIND_COMPLEX } cx_kind;

cx_kind cx_type_kind(cxla_type t);
int cx_type_bits(cxla_type t);
static inline int cx_type_is_float(cxla_type t) { return cx_type_kind(t) == CX_KIND_FLOAT; }
static inline int cx_type_is_int(cxla_type t) {
  cx_kind k = cx_type_kind(t);
  return k == CX_KIND_SINT || k == CX_KIND_UINT;
}
static inline int cx_type_is_array(cxla_type t) { return cx_type_kind(t) != CX_KIND_NONE; }
static inline int cx_type_is_complex(cxla_type t) { return cx_type_kind(t) == CX_KIND_COMPLEX; }
/* The type of one component: f32 for c64, f64 for c128, t itself for every other type. */
cxla_type cx_type_part(cxla_type t);
/* The complex type whose components are t (c64 of f32, c128 of f64), or CXLA_INVALID. */
cxla_type cx_type_complex_of(cxla_type t);
/* Looks a type up by its HLO name ("f32"); CXLA_INVALID if unknown. */
cxla_type cx_type_from_name(const char *s, int len);

float cx_f16_to_f32(uint16_t h);
uint16_t cx_f32_to_f16(float f);     /* round to nearest even */
float cx_bf16_to_f32(uint16_t h);
uint16_t cx_f32_to_bf16(float f);    /* round to nearest even, NaN stays NaN */

/* Element i of a typed array, as double (floats, and integers rounded if huge; the real part
 * of a complex number). */
double cx_load_f64(cxla_type t, const void *base, int64_t i);
/* Element i of a complex array (c64 or c128) as its two parts; of any other type: the value
 * as cx_load_f64 reads it and imaginary part 0. */
void cx_load_complex(cxla_type t, const void *base, int64_t i, double *re, double *im);
/* Stores a complex value (rounded part by part to the component type); for a non-complex t,
 * stores re as cx_store_f64 does and ignores im. */
void cx_store_complex(cxla_type t, void *base, int64_t i, double re, double im);
/* Element i as int64 (floats truncated and saturated as `convert` does; u64 bit pattern). */
int64_t cx_load_i64(cxla_type t, const void *base, int64_t i);
/* Stores with XLA's convert semantics: float->int truncates toward zero, saturates, NaN->0;
 * ->pred is (v != 0); ->f32/f16/bf16 rounds to nearest even; ->complex has imaginary part 0. */
void cx_store_f64(cxla_type t, void *base, int64_t i, double v);
/* Stores an integer (wrapping to the type's width; u64 takes the bit pattern). */
void cx_store_i64(cxla_type t, void *base, int64_t i, int64_t v);
/* Rounds v to the precision of float type t (identity for f64). */
double cx_round_to_type(cxla_type t, double v);
/* Sign- or zero-extends the low bits of v as integer type t ("wraps" v into t). */
int64_t cx_wrap_int(cxla_type t, int64_t v);
/* Converts double to an integer type with convert's semantics (trunc, saturate, NaN->0). */
int64_t cx_f64_to_int(cxla_type t, double v);

#endif
