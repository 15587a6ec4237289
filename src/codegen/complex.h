/* complex.h — complex numbers in the element generators (elemental_complex.c): building and
 * taking apart a c64/c128 register, and the builders of the complex column of the
 * elementwise tables. Internal to src/codegen/. */
#ifndef CX_CODEGEN_COMPLEX_H
#define CX_CODEGEN_COMPLEX_H
#include "codegen/gen.h"

/* The register of complex type t from its parts (registers of t's component type), and part
 * k (0 real, 1 imaginary) of a complex register. */
LLVMValueRef cx_gen_complex(cx_gen *g, cxla_type t, LLVMValueRef re, LLVMValueRef im);
LLVMValueRef cx_gen_part(cx_gen *g, LLVMValueRef v, int k);

/* Builders (cx_elem_fn) for complex operands of type t; abs, real and imag give the component
 * type, compare pred; compose (the op `complex`) and imag_of_real take real operands. */
#define CX_COMPLEX_BUILDERS(X)                                                                 \
  X(neg) X(add) X(sub) X(mul) X(div) X(pow) X(abs) X(real) X(imag) X(imag_of_real) X(compose) \
  X(sign) X(exp) X(expm1) X(log) X(log1p) X(sqrt) X(rsqrt) X(cbrt) X(cos) X(sin) X(tanh)      \
  X(tan) X(atan2) X(logistic) X(compare)
#define X(name) LLVMValueRef cx_cgen_##name(cx_gen *g, const cx_instr *in, cxla_type t, LLVMValueRef *a);
CX_COMPLEX_BUILDERS(X)
#undef X

#endif
