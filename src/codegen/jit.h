/* jit.h — a thin wrapper over LLVM's ORC LLJIT (its C API calls itself experimental, so this
 * is the only file that touches it) and the host target machine. Code reaches it as object
 * files compiled by llvm_compile.h. */
#ifndef CX_JIT_H
#define CX_JIT_H
#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>
#include "codegen/llvm_compile.h"
#include "util/util.h"

typedef struct cx_jit cx_jit;

/* A symbol the JIT-compiled code may call (runtime entry points). */
typedef struct cx_jit_symbol {
  const char *name;
  void *addr;
} cx_jit_symbol;

/* An LLJIT for the host CPU (name and features). The given symbols and everything the process
 * has loaded (libm, OpenBLAS, ...) are resolvable from JIT code. */
cxla_status cx_jit_create(cxla_context *ctx, int opt_level, const cx_jit_symbol *syms, int nsyms,
                          cx_jit **out);
void cx_jit_destroy(cx_jit *j);
/* Defines data symbols at fixed addresses for the code added later (addresses of this
 * process that its object code refers to by name). */
cxla_status cx_jit_define_data(cx_jit *j, const cx_jit_symbol *syms, int n);
/* The LLVM context modules for this JIT must be created in. */
LLVMContextRef cx_jit_context(cx_jit *j);
/* The host's SIMD width in bits. */
int cx_jit_vector_bits(cx_jit *j);
/* The target and opt level for cx_llvm_compile (strings owned by the JIT). */
cx_llvm_target cx_jit_target(cx_jit *j);
/* Bytes of the object files added so far (relocations and symbol tables included). */
size_t cx_jit_code_bytes(cx_jit *j);
/* Compiles one module (setting its triple and data layout; the pipeline for the opt level)
 * and adds the object; takes ownership of mod, and of its context unless it is the JIT's. */
cxla_status cx_jit_add_module(cx_jit *j, LLVMModuleRef mod, double *opt_ms, double *codegen_ms);
/* Adds an object file from cx_llvm_compile (takes it, even on failure). */
cxla_status cx_jit_add_object(cx_jit *j, LLVMMemoryBufferRef obj);
/* Links what is needed and returns the address of a symbol. */
cxla_status cx_jit_lookup(cx_jit *j, const char *name, void **addr);

#endif
