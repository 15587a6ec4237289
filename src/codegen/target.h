/* target.h — what code generation knows about the machine its kernels run on. The generators
 * and kernel emitters ask the target in cx_cg and nothing else about the machine: how a kernel
 * is called and gets its buffers and its part of the iteration space, how each math function
 * is computed, the memory address spaces and the vector width. The host CPU is the one
 * instance today (target_cpu.c); a GPU target (NVPTX) is another instance of this struct. */
#ifndef CX_CODEGEN_TARGET_H
#define CX_CODEGEN_TARGET_H
#include <llvm-c/Core.h>
#include "ir/ir.h"

struct cx_cg;

/* How the target computes a math function (an elementwise op such as exp, sin, power). */
typedef enum cx_math_how {
  CX_MATH_NONE,       /* it cannot: the emitter reports the op as unsupported for this type */
  CX_MATH_INLINE,     /* codegen's own code: math.c's f32 approximations, or a formula in
                         terms of other functions (rsqrt = 1/sqrt, logistic = 1/(1+e^-x)) */
  CX_MATH_INTRINSIC,  /* the LLVM intrinsic `name`, overloaded on the value's type */
  CX_MATH_CALL,       /* a call to the external function `name` on the value's type */
} cx_math_how;

typedef struct cx_math_lowering {
  cx_math_how how;
  const char *name;   /* INTRINSIC / CALL: the intrinsic or symbol */
  int in_f64;         /* computed on the operands widened to f64, the result narrowed back */
  int libmvec;        /* CALL on f64: glibc's libmvec has vector variants of `name`, used
                         where the target's libmvec level allows (libmvec.h) */
  const char *via_f64; /* INLINE on f32: where the target has libmvec, the f64 libm function
                          of that name with its vector variants is faster (and as accurate,
                          once rounded) than the inline code: CALL, in_f64, libmvec instead */
} cx_math_lowering;

typedef struct cx_target {
  const char *name;           /* in messages */
  const char *triple;         /* set on every LLVM module codegen makes; NULL: left to the
                                 backend (the host's, from its target machine) */
  const char *data_layout;    /* likewise */
  int vector_bits;            /* preferred SIMD width */
  int libmvec;                /* libmvec's variants the kernels may call (cx_libmvec_level: 0
                                 none, 1 AVX2, 2 AVX2 and AVX-512) */
  unsigned addrspace_global;  /* kernel buffers and constant arrays */
  int addrspace_shared;       /* memory shared by the threads of a block; -1: none */
  /* The kernel ABI, in two steps. kernel_declare adds the exported entry function of a kernel
   * with nargs buffers to the module (its signature and attributes). kernel_args, with the
   * builder in the entry's first block, produces what the target-independent kernel body
   * takes: args[0..nargs) the buffers (pointers in addrspace_global) and args[nargs],
   * args[nargs+1] the part [begin, end) of the kernel's linear iteration space this call
   * computes (i64). */
  LLVMValueRef (*kernel_declare)(struct cx_cg *cg, const char *name, int nargs);
  void (*kernel_args)(struct cx_cg *cg, LLVMValueRef entry, int nargs, LLVMValueRef *args);
  /* How op is computed on element type t (f16/bf16 are computed as f32; c64/c128: on f64
   * parts of complex values, as the interpreter's complex formulas compute them). */
  cx_math_lowering (*lower_math)(cx_op op, cxla_type t);
  /* Threads that run in lockstep and exchange registers (0: none, the CPU). With a warp, row
   * reductions give each output row a warp: lanes fold strided elements of the row (adjacent
   * lanes read adjacent elements) and then combine through warp_xor. */
  int warp_size;
  /* The i32 v of the lane whose id is this lane's xor mask (every lane of the warp calls it). */
  LLVMValueRef (*warp_xor)(struct cx_cg *cg, LLVMValueRef v, int mask);
} cx_target;

/* The host CPU: kernels `void k(i8 **args, i64 begin, i64 end)` that the cpu backend's thread
 * pool calls on chunks of the range; math*.c's polynomials, and for f64 libm with libmvec's
 * variants (libmvec.c); one address space. vector_bits is 256 and libmvec 0 here; the cpu
 * backend copies the struct and sets its host's width and libmvec level. */
extern const cx_target cx_target_cpu;

#endif
