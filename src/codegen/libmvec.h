/* libmvec.h — f64 math calls with glibc libmvec's vector variants (libmvec.c). */
#ifndef CX_CODEGEN_LIBMVEC_H
#define CX_CODEGEN_LIBMVEC_H
#include "codegen/gen.h"

#define CX_LIBMVEC_MAX_KEPT 64

/* Which of libmvec's variants this host can call: 0 none (no AVX2+FMA, or no libmvec.so.1 to
 * load), 1 the AVX2 ones (4 lanes), 2 those and the AVX-512 ones (8 lanes). features: LLVM's
 * host feature string. Loads libmvec.so.1 into the process the first time. */
int cx_libmvec_level(const char *features);

/* The scalar call name(args) on f64 (as cx_ir_call), with libmvec's variants for level (as
 * above, >= 1) attached, so the loop vectoriser calls them. */
LLVMValueRef cx_ir_call_libmvec(cx_gen *g, const char *name, int nargs, LLVMValueRef *args, int level);

#endif
