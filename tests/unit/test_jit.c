/* test_jit.c — the LLJIT wrapper: builds a vector loop in LLVM IR, JITs it for the host and
 * runs it; also checks that runtime symbols handed to the JIT are callable. */
#include <llvm-c/Core.h>
#include "codegen/jit.h"
#include "test.h"

static int64_t host_twice(int64_t x) { return 2 * x; }

/* void axpy(float *y, const float *x, i64 n): y[i] = 3*x[i] + y[i]; i64 twice(i64) via symbol */
static LLVMModuleRef build(LLVMContextRef c) {
  LLVMModuleRef m = LLVMModuleCreateWithNameInContext("t", c);
  LLVMTypeRef ptr = LLVMPointerTypeInContext(c, 0), i64 = LLVMInt64TypeInContext(c);
  LLVMTypeRef f32 = LLVMFloatTypeInContext(c);
  LLVMTypeRef args[3] = {ptr, ptr, i64};
  LLVMValueRef fn = LLVMAddFunction(m, "axpy", LLVMFunctionType(LLVMVoidTypeInContext(c), args, 3, 0));
  LLVMBuilderRef b = LLVMCreateBuilderInContext(c);
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(c, fn, "entry");
  LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(c, fn, "loop");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(c, fn, "done");
  LLVMPositionBuilderAtEnd(b, entry);
  LLVMValueRef zero = LLVMConstInt(i64, 0, 0);
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSGT, LLVMGetParam(fn, 2), zero, ""), loop, done);
  LLVMPositionBuilderAtEnd(b, loop);
  LLVMValueRef i = LLVMBuildPhi(b, i64, "i");
  LLVMValueRef py = LLVMBuildGEP2(b, f32, LLVMGetParam(fn, 0), &i, 1, "");
  LLVMValueRef px = LLVMBuildGEP2(b, f32, LLVMGetParam(fn, 1), &i, 1, "");
  LLVMValueRef v = LLVMBuildFAdd(b, LLVMBuildFMul(b, LLVMBuildLoad2(b, f32, px, ""), LLVMConstReal(f32, 3), ""),
                                 LLVMBuildLoad2(b, f32, py, ""), "");
  LLVMBuildStore(b, v, py);
  LLVMValueRef next = LLVMBuildAdd(b, i, LLVMConstInt(i64, 1, 0), "");
  LLVMValueRef inc[2] = {zero, next};
  LLVMBasicBlockRef from[2] = {entry, loop};
  LLVMAddIncoming(i, inc, from, 2);
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, next, LLVMGetParam(fn, 2), ""), loop, done);
  LLVMPositionBuilderAtEnd(b, done);
  LLVMBuildRetVoid(b);
  /* i64 call_twice(i64 x) { return host_twice(x); } */
  LLVMTypeRef t1 = LLVMFunctionType(i64, &i64, 1, 0);
  LLVMValueRef ext = LLVMAddFunction(m, "host_twice", t1);
  LLVMValueRef f2 = LLVMAddFunction(m, "call_twice", t1);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(c, f2, "e"));
  LLVMValueRef a = LLVMGetParam(f2, 0);
  LLVMBuildRet(b, LLVMBuildCall2(b, t1, ext, &a, 1, ""));
  LLVMDisposeBuilder(b);
  return m;
}

TEST(jit_runs_host_code) {
  cx_jit *j = NULL;
  cx_jit_symbol syms[1] = {{"host_twice", (void *)host_twice}};
  CHECK_OK(cx_jit_create(test_ctx(), 3, syms, 1, &j));
  if (!j) return;
  CHECK(cx_jit_vector_bits(j) >= 128);
  CHECK_OK(cx_jit_add_module(j, build(cx_jit_context(j)), NULL, NULL));
  void *axpy = NULL, *twice = NULL;
  CHECK_OK(cx_jit_lookup(j, "axpy", &axpy));
  CHECK_OK(cx_jit_lookup(j, "call_twice", &twice));
  if (axpy && twice) {
    float x[1000], y[1000];
    for (int i = 0; i < 1000; i++) { x[i] = (float)i; y[i] = 1; }
    ((void (*)(float *, const float *, int64_t))axpy)(y, x, 1000);
    for (int i = 0; i < 1000; i++) CHECK_NEAR(y[i], 3.0 * i + 1, 0);
    CHECK_EQ_INT(((int64_t(*)(int64_t))twice)(21), 42);
  }
  void *missing = NULL;
  CHECK(cx_jit_lookup(j, "no_such_symbol", &missing) == CXLA_ERR_COMPILE);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "no_such_symbol");
  cx_jit_destroy(j);
}
