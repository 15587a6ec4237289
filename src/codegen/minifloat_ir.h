/* minifloat_ir.h — the 8- and 4-bit floats (ir/minifloat.h) in generated code, below the rest
 * of codegen: the conversions need only an LLVM builder (positioned in a function), so cg.c's
 * load/store/round and the convert builders call them without a circle through cx_cg. */
#ifndef CX_CODEGEN_MINIFLOAT_IR_H
#define CX_CODEGEN_MINIFLOAT_IR_H
#include <llvm-c/Core.h>
#include "cxla.h"

/* An i8 code to its f32 value, and an f32 or f64 value to its i8 code (rounded once, as
 * cx_mf_encode); t is an 8- or 4-bit float type. */
LLVMValueRef cx_mf_ir_decode(LLVMBuilderRef b, cxla_type t, LLVMValueRef code8);
LLVMValueRef cx_mf_ir_encode(LLVMBuilderRef b, cxla_type t, LLVMValueRef x);

#endif
