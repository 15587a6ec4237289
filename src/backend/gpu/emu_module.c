/* emu_module.c — "module load" of the grid emulation (see emu.h): the optimised NVPTX kernel
 * IR, compiled for the host by the cpu backend's JIT. Two rewrites make it runnable there and
 * keep everything else as the PTX has it: reads of PTX special registers become calls to
 * cx_emu_sreg, and each global-memory access (addrspace 1: the kernel's buffers and constant
 * arrays) is preceded by a call to cx_emu_access; warp shuffles (shfl.sync.bfly) become calls
 * to cx_emu_shfl_bfly, and their kernels run a warp's lanes as cooperating contexts
 * (emu_driver.c). Any other NVVM intrinsic is refused, so a kernel the emulation cannot run
 * faithfully (barriers, atomics on shared memory) fails to load instead of running wrongly. */
#include <stdio.h>
#include <string.h>
#include <llvm-c/IRReader.h>
#include "backend/gpu/emu.h"
#include "codegen/jit.h"
#include "core/context.h"

struct cx_emu_module {
  cxla_context *ctx;  /* the JIT's (its errors go to the load log) */
  cx_jit *jit;
  int nfns, nglobals;
  cx_emu_fn *fns;
  void **globals;     /* registered device ranges */
};

enum { GLOBAL_AS = 1 };
#define ENTRY_SUFFIX ".emu"

typedef struct rewriter {
  LLVMModuleRef mod;
  LLVMContextRef llctx;
  LLVMBuilderRef b;
  LLVMTargetDataRef td;
  LLVMTypeRef t_i32, t_i64, t_sreg, t_access;
  LLVMValueRef f_sreg, f_access, f_shfl;
  unsigned char *warp;       /* per kernel (in order): it exchanges registers across its warp */
  char *log;
  size_t loglen;
} rewriter;

static int fail(rewriter *w, const char *fmt, const char *arg) {
  snprintf(w->log, w->loglen, fmt, arg);
  return -1;
}

static const char *fn_name(LLVMValueRef f) {
  size_t n;
  return LLVMGetValueName2(f, &n);
}

/* every call of the declaration f: replace by cx_emu_sreg(which) */
static void replace_sreg(rewriter *w, LLVMValueRef f, int which) {
  for (LLVMUseRef u = LLVMGetFirstUse(f), next; u; u = next) {
    next = LLVMGetNextUse(u);
    LLVMValueRef call = LLVMGetUser(u);
    LLVMPositionBuilderBefore(w->b, call);
    LLVMValueRef arg = LLVMConstInt(w->t_i32, (unsigned long long)which, 0);
    LLVMValueRef v = LLVMBuildCall2(w->b, w->t_sreg, w->f_sreg, &arg, 1, "");
    LLVMReplaceAllUsesWith(call, v);
    LLVMInstructionEraseFromParent(call);
  }
}

static int rewrite_intrinsics(rewriter *w) {
  static const char sreg[] = "llvm.nvvm.read.ptx.sreg.";
  for (LLVMValueRef f = LLVMGetFirstFunction(w->mod), next; f; f = next) {
    next = LLVMGetNextFunction(f);
    const char *name = fn_name(f);
    if (!LLVMIsDeclaration(f) || strncmp(name, "llvm.nvvm.", 10)) continue;
    if (!strcmp(name, "llvm.nvvm.shfl.sync.bfly.i32")) { /* same signature: calls now go to the host */
      LLVMTypeRef ft = LLVMGlobalGetValueType(f);
      w->f_shfl = LLVMAddFunction(w->mod, "cx_emu_shfl_bfly", ft);
      LLVMReplaceAllUsesWith(f, w->f_shfl);
      LLVMDeleteFunction(f);
      continue;
    }
    const cx_emu_math_fn *mf = cx_emu_math_fns;
    while (mf->intrinsic && strcmp(mf->intrinsic, name)) mf++;
    if (mf->intrinsic) { /* same signature: calls go to the host's function */
      LLVMValueRef h = LLVMAddFunction(w->mod, mf->jit_name, LLVMGlobalGetValueType(f));
      LLVMReplaceAllUsesWith(f, h);
      LLVMDeleteFunction(f);
      continue;
    }
    int which = -1;
    for (int i = 0; !strncmp(name, sreg, sizeof sreg - 1) && cx_emu_sreg_names[i]; i++)
      if (!strcmp(name + sizeof sreg - 1, cx_emu_sreg_names[i])) which = i;
    if (which < 0) return fail(w, "the grid emulation cannot run %s", name);
    replace_sreg(w, f, which);
    LLVMDeleteFunction(f);
  }
  return 0;
}

static int is_global_ptr(LLVMValueRef p) {
  LLVMTypeRef t = LLVMTypeOf(p);
  return LLVMGetTypeKind(t) == LLVMPointerTypeKind && LLVMGetPointerAddressSpace(t) == GLOBAL_AS;
}

static void check_before(rewriter *w, LLVMValueRef at, LLVMValueRef ptr, LLVMValueRef bytes, int store) {
  LLVMPositionBuilderBefore(w->b, at);
  if (LLVMTypeOf(bytes) != w->t_i64) bytes = LLVMBuildZExt(w->b, bytes, w->t_i64, "");
  LLVMValueRef args[3] = {ptr, bytes, LLVMConstInt(w->t_i32, (unsigned long long)store, 0)};
  LLVMBuildCall2(w->b, w->t_access, w->f_access, args, 3, "");
}

static LLVMValueRef size_of(rewriter *w, LLVMTypeRef t) {
  return LLVMConstInt(w->t_i64, LLVMStoreSizeOfType(w->td, t), 0);
}

/* an intrinsic call with a global pointer: memcpy/memmove/memset are checked over their
 * length; anything else is refused (its accesses could not be checked) */
static int check_call(rewriter *w, LLVMValueRef in) {
  LLVMValueRef callee = LLVMGetCalledValue(in);
  int nargs = LLVMGetNumArgOperands(in), any = 0;
  for (int i = 0; i < nargs; i++) any |= is_global_ptr(LLVMGetOperand(in, (unsigned)i));
  if (!any) return 0;
  const char *name = callee ? fn_name(callee) : "?";
  int memset_ = !strncmp(name, "llvm.memset.", 12);
  if (!memset_ && strncmp(name, "llvm.memcpy.", 12) && strncmp(name, "llvm.memmove.", 13))
    return fail(w, "the grid emulation cannot check the memory accesses of %s", name);
  LLVMValueRef len = LLVMGetOperand(in, 2);
  check_before(w, in, LLVMGetOperand(in, 0), len, 1);
  if (!memset_) check_before(w, in, LLVMGetOperand(in, 1), len, 0);
  return 0;
}

static int check_accesses(rewriter *w, LLVMValueRef f) {
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
      LLVMValueRef p;
      switch (LLVMGetInstructionOpcode(in)) {
      case LLVMLoad:
        if (is_global_ptr(p = LLVMGetOperand(in, 0))) check_before(w, in, p, size_of(w, LLVMTypeOf(in)), 0);
        break;
      case LLVMStore:
        if (is_global_ptr(p = LLVMGetOperand(in, 1)))
          check_before(w, in, p, size_of(w, LLVMTypeOf(LLVMGetOperand(in, 0))), 1);
        break;
      case LLVMAtomicRMW:
      case LLVMAtomicCmpXchg:
        if (is_global_ptr(p = LLVMGetOperand(in, 0)))
          check_before(w, in, p, size_of(w, LLVMTypeOf(LLVMGetOperand(in, 1))), 1);
        break;
      case LLVMCall:
        if (check_call(w, in)) return -1;
        break;
      default:
        break;
      }
    }
  return 0;
}

/* void NAME.emu(ptr params): cuLaunchKernel's convention, params[i] points at argument i */
static void add_entry(rewriter *w, LLVMValueRef k) {
  char name[96];
  snprintf(name, sizeof name, "%s" ENTRY_SUFFIX, fn_name(k));
  LLVMTypeRef ptr = LLVMPointerTypeInContext(w->llctx, 0), kt = LLVMGlobalGetValueType(k);
  LLVMValueRef e = LLVMAddFunction(w->mod, name, LLVMFunctionType(LLVMVoidTypeInContext(w->llctx), &ptr, 1, 0));
  LLVMPositionBuilderAtEnd(w->b, LLVMAppendBasicBlockInContext(w->llctx, e, "entry"));
  unsigned n = LLVMCountParamTypes(kt);
  LLVMTypeRef pt[260];
  LLVMValueRef args[260];
  if (n > 260) n = 260; /* the emitter's kernels have at most CX_EMIT_MAX_ARGS + 1 */
  LLVMGetParamTypes(kt, pt);
  for (unsigned i = 0; i < n; i++) {
    LLVMValueRef idx = LLVMConstInt(w->t_i64, i, 0);
    LLVMValueRef slot = LLVMBuildGEP2(w->b, ptr, LLVMGetParam(e, 0), &idx, 1, "");
    args[i] = LLVMBuildLoad2(w->b, pt[i], LLVMBuildLoad2(w->b, ptr, slot, ""), "");
  }
  LLVMBuildCall2(w->b, kt, k, args, n, "");
  LLVMBuildRetVoid(w->b);
}

/* calls of inline PTX (libdevice's) go to the host function of cx_emu_asm_fns with the same
 * text and signature; other inline PTX is refused */
static int rewrite_asm(rewriter *w, LLVMValueRef f) {
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb), next; in; in = next) {
      next = LLVMGetNextInstruction(in);
      LLVMValueRef callee = LLVMIsACallInst(in) ? LLVMGetCalledValue(in) : NULL;
      if (!callee || !LLVMIsAInlineAsm(callee)) continue;
      size_t n = 0;
      const char *text = LLVMGetInlineAsmAsmString(callee, &n);
      char key[1024];
      cx_emu_asm_key(text, n, key, sizeof key);
      const cx_emu_math_fn *af = cx_emu_asm_fns;
      while (af->intrinsic && strcmp(af->intrinsic, key)) af++;
      if (!af->intrinsic) return fail(w, "the grid emulation cannot run the inline PTX \"%s\"", key);
      LLVMTypeRef ft = LLVMGetInlineAsmFunctionType(callee);
      LLVMValueRef h = LLVMGetNamedFunction(w->mod, af->jit_name);
      if (!h) h = LLVMAddFunction(w->mod, af->jit_name, ft);
      unsigned nargs = LLVMGetNumArgOperands(in);
      LLVMValueRef args[8];
      if (nargs > 8) return fail(w, "the grid emulation cannot run the inline PTX \"%s\"", key);
      for (unsigned i = 0; i < nargs; i++) args[i] = LLVMGetOperand(in, i);
      LLVMPositionBuilderBefore(w->b, in);
      LLVMValueRef call = LLVMBuildCall2(w->b, ft, h, args, nargs, "");
      LLVMReplaceAllUsesWith(in, call);
      LLVMInstructionEraseFromParent(in);
    }
  return 0;
}

static int rewrite(rewriter *w, int *nkernels) {
  if (rewrite_intrinsics(w)) return -1;
  for (LLVMValueRef f = LLVMGetFirstFunction(w->mod); f; f = LLVMGetNextFunction(f))
    if (!LLVMIsDeclaration(f) && rewrite_asm(w, f)) return -1;
  /* as many kernels as the module has (a fixed table of 1024 refused a 32-layer model's) */
  int nk = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(w->mod); f; f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f)) continue;
    if (check_accesses(w, f)) return -1;
    nk += LLVMGetLinkage(f) == LLVMExternalLinkage;
  }
  LLVMValueRef *kernels = cx_calloc((size_t)nk + 1, sizeof *kernels);
  w->warp = cx_calloc((size_t)nk + 1, 1);
  if (!kernels || !w->warp) {
    cx_free(kernels);
    return fail(w, "grid emulation: %s", "out of memory");
  }
  int k = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(w->mod); f && k < nk; f = LLVMGetNextFunction(f))
    if (!LLVMIsDeclaration(f) && LLVMGetLinkage(f) == LLVMExternalLinkage) kernels[k++] = f;
  for (int i = 0; i < nk; i++) add_entry(w, kernels[i]);
  for (LLVMUseRef u = w->f_shfl ? LLVMGetFirstUse(w->f_shfl) : NULL; u; u = LLVMGetNextUse(u)) {
    LLVMValueRef in = LLVMGetUser(u), fn = LLVMIsAInstruction(in) ? LLVMGetBasicBlockParent(LLVMGetInstructionParent(in)) : NULL;
    for (int i = 0; i < nk; i++) w->warp[i] |= kernels[i] == fn;
  }
  cx_free(kernels);
  *nkernels = nk;
  return 0;
}

/* module-level arrays (constants in addrspace 1) get exported names, so that their host
 * addresses can be looked up and registered as device memory */
static int export_globals(rewriter *w) {
  int n = 0;
  for (LLVMValueRef g = LLVMGetFirstGlobal(w->mod); g; g = LLVMGetNextGlobal(g)) {
    if (LLVMIsDeclaration(g)) continue;
    char name[32];
    snprintf(name, sizeof name, "cx_emu_global%d", n++);
    LLVMSetValueName2(g, name, strlen(name));
    LLVMSetLinkage(g, LLVMExternalLinkage);
    LLVMSetVisibility(g, LLVMDefaultVisibility);
    LLVMSetUnnamedAddress(g, LLVMNoUnnamedAddr);
  }
  return n;
}

static int jit_fail(cx_emu_module *m, char *log, size_t loglen, const char *what) {
  snprintf(log, loglen, "grid emulation: %s: %s", what, cxla_context_errmsg(m->ctx));
  return -1;
}

/* the host JIT, its kernels' entries and the registered globals, from the rewritten module */
static int link(cx_emu_module *m, LLVMModuleRef mod, int nkernels, int nglobals, const unsigned char *warp, char *log,
                size_t loglen) {
  const char **knames = cx_calloc((size_t)nkernels + 1, sizeof *knames);
  uint64_t *gsizes = cx_calloc((size_t)nglobals + 1, sizeof *gsizes);
  m->fns = cx_calloc((size_t)nkernels + 1, sizeof *m->fns);
  m->globals = cx_calloc((size_t)nglobals + 1, sizeof *m->globals);
  int rc = knames && gsizes && m->fns && m->globals ? 0 : (snprintf(log, loglen, "out of memory"), -1);
  LLVMTargetDataRef td = LLVMGetModuleDataLayout(mod);
  int k = 0, g = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); !rc && f; f = LLVMGetNextFunction(f)) {
    const char *name = fn_name(f);
    size_t len = strlen(name);
    if (LLVMIsDeclaration(f) || len <= strlen(ENTRY_SUFFIX) || strcmp(name + len - strlen(ENTRY_SUFFIX), ENTRY_SUFFIX))
      continue;
    if (k < nkernels && len - strlen(ENTRY_SUFFIX) < sizeof m->fns[k].name) {
      memcpy(m->fns[k].name, name, len - strlen(ENTRY_SUFFIX));
      m->fns[k].warp = warp[k];
      LLVMValueRef kf = LLVMGetNamedFunction(mod, m->fns[k].name); /* its parameters, for captured launches */
      LLVMTypeRef kt = kf ? LLVMGlobalGetValueType(kf) : NULL, pt[CX_EMU_MAX_PARAMS];
      unsigned np = kt ? LLVMCountParamTypes(kt) : 0;
      if (np > CX_EMU_MAX_PARAMS) np = CX_EMU_MAX_PARAMS;
      if (kt) LLVMGetParamTypes(kt, pt);
      for (unsigned i = 0; i < np; i++) m->fns[k].param_bytes[i] = (unsigned short)LLVMStoreSizeOfType(td, pt[i]);
      m->fns[k].nparams = (int)np;
      knames[k++] = name;
    }
  }
  for (LLVMValueRef v = LLVMGetFirstGlobal(mod); !rc && v; v = LLVMGetNextGlobal(v))
    if (!LLVMIsDeclaration(v) && g < nglobals) gsizes[g++] = LLVMABISizeOfType(td, LLVMGlobalGetValueType(v));
  /* names are looked up after the module is handed to the JIT: keep copies */
  char (*kn)[96] = rc ? NULL : cx_calloc((size_t)k + 1, sizeof *kn);
  for (int i = 0; kn && i < k; i++) snprintf(kn[i], sizeof kn[i], "%s", knames[i]);
  if (!rc && !kn) rc = (snprintf(log, loglen, "out of memory"), -1);
  if (rc) LLVMDisposeModule(mod);
  else if (cx_jit_add_module(m->jit, mod, NULL, NULL) != CXLA_OK) rc = jit_fail(m, log, loglen, "compiling the kernels");
  for (int i = 0; !rc && i < k; i++) {
    void *a = NULL;
    if (cx_jit_lookup(m->jit, kn[i], &a) != CXLA_OK) rc = jit_fail(m, log, loglen, kn[i]);
    m->fns[i].entry = (cx_emu_entry)a;
  }
  m->nfns = rc ? 0 : k;
  for (int i = 0; !rc && i < g; i++) {
    char name[32];
    void *a = NULL;
    snprintf(name, sizeof name, "cx_emu_global%d", i);
    if (cx_jit_lookup(m->jit, name, &a) != CXLA_OK) rc = jit_fail(m, log, loglen, name);
    else if (cx_emu_range_add(a, (size_t)gsizes[i])) rc = (snprintf(log, loglen, "out of memory"), -1);
    else m->globals[m->nglobals++] = a;
  }
  cx_free(kn);
  cx_free(knames);
  cx_free(gsizes);
  return rc;
}

int cx_emu_module_load(const char *ir, cx_emu_module **out, char *log, size_t loglen) {
  *out = NULL;
  log[0] = 0;
  cx_emu_module *m = cx_calloc(1, sizeof *m);
  if (!m || !(m->ctx = cx_context_new())) {
    cx_free(m);
    return snprintf(log, loglen, "out of memory"), -1;
  }
  /* the device runtime's builtin that graph control kernels call (emu_graph.c), by its own name */
  cx_jit_symbol syms[4 + 80] = {{"cx_emu_sreg", (void *)cx_emu_sreg}, {"cx_emu_access", (void *)cx_emu_access},
                                {"cx_emu_shfl_bfly", (void *)cx_emu_shfl_bfly},
                                {"cudaGraphSetConditional", (void *)cx_emu_graph_set_conditional}};
  int nsyms = 4;
  for (const cx_emu_math_fn *mf = cx_emu_math_fns; mf->intrinsic && nsyms < CX_ARRAY_LEN(syms); mf++)
    syms[nsyms++] = (cx_jit_symbol){mf->jit_name, mf->fn};
  for (const cx_emu_math_fn *af = cx_emu_asm_fns; af->intrinsic && nsyms < CX_ARRAY_LEN(syms); af++)
    syms[nsyms++] = (cx_jit_symbol){af->jit_name, af->fn};
  if (cx_jit_create(m->ctx, 1, syms, nsyms, &m->jit) != CXLA_OK) {
    jit_fail(m, log, loglen, "creating the host JIT");
    cx_emu_module_free(m);
    return -1;
  }
  LLVMContextRef llctx = cx_jit_context(m->jit);
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, strlen(ir), "gpu-image");
  LLVMModuleRef mod = NULL;
  char *err = NULL;
  if (LLVMParseIRInContext(llctx, buf, &mod, &err)) { /* takes buf */
    snprintf(log, loglen, "grid emulation: the image is not LLVM IR: %s", err ? err : "");
    LLVMDisposeMessage(err);
    cx_emu_module_free(m);
    return -1;
  }
  rewriter w = {.mod = mod, .llctx = llctx, .b = LLVMCreateBuilderInContext(llctx), .td = LLVMGetModuleDataLayout(mod),
                .log = log, .loglen = loglen};
  w.t_i32 = LLVMInt32TypeInContext(llctx);
  w.t_i64 = LLVMInt64TypeInContext(llctx);
  w.t_sreg = LLVMFunctionType(w.t_i32, &w.t_i32, 1, 0);
  LLVMTypeRef acc[3] = {LLVMPointerTypeInContext(llctx, GLOBAL_AS), w.t_i64, w.t_i32};
  w.t_access = LLVMFunctionType(LLVMVoidTypeInContext(llctx), acc, 3, 0);
  w.f_sreg = LLVMAddFunction(mod, "cx_emu_sreg", w.t_sreg);
  w.f_access = LLVMAddFunction(mod, "cx_emu_access", w.t_access);
  int nk = 0, rc = rewrite(&w, &nk);
  LLVMDisposeBuilder(w.b);
  int ng = rc ? 0 : export_globals(&w);
  if (rc) LLVMDisposeModule(mod);
  else rc = link(m, mod, nk, ng, w.warp, log, loglen);
  cx_free(w.warp);
  if (rc) {
    cx_emu_module_free(m);
    return -1;
  }
  *out = m;
  return 0;
}

void cx_emu_module_free(cx_emu_module *m) {
  if (!m) return;
  for (int i = 0; i < m->nglobals; i++) cx_emu_range_remove(m->globals[i]);
  cx_jit_destroy(m->jit);
  if (m->ctx) cxla_context_destroy(m->ctx);
  cx_free(m->fns);
  cx_free(m->globals);
  cx_free(m);
}

const cx_emu_fn *cx_emu_module_function(const cx_emu_module *m, const char *name) {
  for (int i = 0; i < m->nfns; i++)
    if (!strcmp(m->fns[i].name, name)) return &m->fns[i];
  return NULL;
}
