/* libmvec.c — f64 math calls that the loop vectoriser turns into glibc's libmvec (the vector
 * ABI variants _ZGVdN4v_sin, _ZGVeN8vv_pow, ...; Debian's libc6, no extra package). The scalar
 * libm call stays in the IR, marked with the "vector-function-abi-variant" attribute that
 * names its variants, so a loop that vectorises calls one variant per 4 (AVX2) or 8 (AVX-512)
 * lanes and a loop that does not (or the scalar remainder) calls libm. Measured max errors and
 * speed against libm: docs/numerics.md and docs/design/cpu-backend.md. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "codegen/libmvec.h"

static int g_loaded;
static void load(void) {
  /* RTLD_GLOBAL: the JIT resolves the variants as process symbols. The library stays loaded
   * for the life of the process, as libm does. */
  g_loaded = dlopen("libmvec.so.1", RTLD_NOW | RTLD_GLOBAL) != NULL;
}

int cx_libmvec_level(const char *features) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  /* the 4-lane variants are built for AVX2 with FMA, the 8-lane ones for AVX-512 */
  if (!features || !strstr(features, "+avx2") || !strstr(features, "+fma")) return 0;
  pthread_once(&once, load);
  if (!g_loaded) return 0;
  return strstr(features, "+avx512f") ? 2 : 1;
}

/* Keeps fn in the module (llvm.compiler.used) while nothing calls it yet: the vectoriser needs
 * the declaration of a variant to exist, and global optimisation deletes unused ones. */
static void keep(cx_cg *cg, LLVMValueRef fn) {
  LLVMValueRef old = LLVMGetNamedGlobal(cg->mod, "llvm.compiler.used");
  unsigned n = old ? (unsigned)LLVMGetNumOperands(LLVMGetInitializer(old)) : 0;
  LLVMValueRef elems[CX_LIBMVEC_MAX_KEPT];
  if (n >= CX_LIBMVEC_MAX_KEPT) return; /* cannot happen: one per function and width */
  for (unsigned i = 0; i < n; i++) elems[i] = LLVMGetOperand(LLVMGetInitializer(old), i);
  elems[n++] = fn;
  if (old) LLVMDeleteGlobal(old);
  LLVMValueRef init = LLVMConstArray2(cg->t_ptr, elems, n);
  LLVMValueRef gv = LLVMAddGlobal(cg->mod, LLVMTypeOf(init), "llvm.compiler.used");
  LLVMSetInitializer(gv, init);
  LLVMSetLinkage(gv, LLVMAppendingLinkage);
  LLVMSetSection(gv, "llvm.metadata");
}

static void declare_variant(cx_cg *cg, const char *vname, unsigned lanes, int nargs) {
  if (LLVMGetNamedFunction(cg->mod, vname)) return;
  LLVMTypeRef v = LLVMVectorType(cg->t_f64, lanes), pt[2] = {v, v};
  LLVMValueRef fn = LLVMAddFunction(cg->mod, vname, LLVMFunctionType(v, pt, (unsigned)nargs, 0));
  unsigned nu = LLVMGetEnumAttributeKindForName("nounwind", 8);
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(cg->llctx, nu, 0));
  keep(cg, fn);
}

void cx_libmvec_attach(cx_cg *cg, LLVMValueRef call, const char *name, int nargs, int level) {
  static const struct { char isa; unsigned lanes; } widths[2] = {{'d', 4}, {'e', 8}};
  char variants[128] = "", vname[48];
  for (int w = 0; w < level && w < 2; w++) {
    snprintf(vname, sizeof vname, "_ZGV%cN%u%s_%s", widths[w].isa, widths[w].lanes, nargs == 2 ? "vv" : "v", name);
    declare_variant(cg, vname, widths[w].lanes, nargs);
    if (w) strncat(variants, ",", sizeof variants - strlen(variants) - 1);
    strncat(variants, vname, sizeof variants - strlen(variants) - 1);
  }
  const char *k = "vector-function-abi-variant";
  LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex,
                           LLVMCreateStringAttribute(cg->llctx, k, (unsigned)strlen(k), variants, (unsigned)strlen(variants)));
  /* no memory access (libm's errno is not read by anyone): the loop's memory checks see
   * only its loads and stores */
  unsigned mem = LLVMGetEnumAttributeKindForName("memory", 6);
  LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(cg->llctx, mem, 0));
  if (level >= 2) cx_cg_prefer_wide_vectors(cg, NULL);
}
