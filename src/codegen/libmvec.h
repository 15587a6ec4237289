/* libmvec.h — f64 math calls with glibc libmvec's vector variants (libmvec.c). */
#ifndef CX_CODEGEN_LIBMVEC_H
#define CX_CODEGEN_LIBMVEC_H
#include "codegen/cg.h"

#define CX_LIBMVEC_MAX_KEPT 64

/* Which of libmvec's variants this host can call: 0 none (no AVX2+FMA, or no libmvec.so.1 to
 * load), 1 the AVX2 ones (4 lanes), 2 those and the AVX-512 ones (8 lanes). features: LLVM's
 * host feature string. Loads libmvec.so.1 into the process the first time. */
int cx_libmvec_level(const char *features);

/* Attaches libmvec's variants for level (as above, >= 1) to call, a scalar f64 call of libm's
 * name with nargs arguments (cx_ir_call), so the loop vectoriser calls them; on level 2 the
 * function being built asks for 512-bit vectors. */
void cx_libmvec_attach(cx_cg *cg, LLVMValueRef call, const char *name, int nargs, int level);

#endif
