/* libdevice.c — CUDA's libdevice linked into kernel modules (see libdevice.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/Linker.h>
#include "backend/gpu/libdevice.h"

#define LIBDEVICE "libdevice.10.bc"

/* the first libdevice function mod calls, or NULL */
static const char *first_call(LLVMModuleRef mod) {
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
    size_t n = 0;
    const char *name = LLVMGetValueName2(f, &n);
    if (LLVMIsDeclaration(f) && n > 5 && !strncmp(name, "__nv_", 5) && LLVMGetFirstUse(f)) return name;
  }
  return NULL;
}

/* The toolkit's layout (nvvm/libdevice under the CUDA root) and Debian's nvidia-cuda-toolkit
 * (libdevice directly under its folder). Writes the places tried to `tried`. */
static int find(char *out, size_t outlen, char *tried, size_t triedlen) {
  const char *roots[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
  char cand[4][512];
  int n = 0;
  for (size_t i = 0; i < sizeof roots / sizeof *roots; i++)
    if (roots[i] && *roots[i]) snprintf(cand[n++], sizeof cand[0], "%s/nvvm/libdevice/" LIBDEVICE, roots[i]);
  snprintf(cand[n++], sizeof cand[0], "/usr/lib/nvidia-cuda-toolkit/libdevice/" LIBDEVICE);
  size_t used = 0;
  tried[0] = 0;
  for (int i = 0; i < n; i++) {
    if (access(cand[i], R_OK) == 0 && strlen(cand[i]) < outlen) {
      memcpy(out, cand[i], strlen(cand[i]) + 1);
      return 0;
    }
    int w = snprintf(tried + used, triedlen - used, "%s%s", i ? ", " : "", cand[i]);
    if (w > 0 && (size_t)w < triedlen - used) used += (size_t)w;
  }
  return -1;
}

static cxla_status load(cxla_context *ctx, LLVMContextRef llctx, const char *path, const char *need, LLVMModuleRef *out) {
  LLVMMemoryBufferRef buf = NULL;
  char *msg = NULL;
  if (LLVMCreateMemoryBufferWithContentsOfFile(path, &buf, &msg)) {
    cxla_status s = cx_error(ctx, CXLA_ERR_UNSUPPORTED, "gpu backend: %s needs CUDA's libdevice: cannot read %s: %s",
                             need, path, msg ? msg : "");
    LLVMDisposeMessage(msg);
    return s;
  }
  /* LLVM's reader would print its own complaint: look at the magic first (raw or wrapped) */
  const unsigned char *p = (const unsigned char *)LLVMGetBufferStart(buf);
  size_t n = LLVMGetBufferSize(buf);
  int magic = n >= 4 && ((p[0] == 'B' && p[1] == 'C' && p[2] == 0xC0 && p[3] == 0xDE) ||
                         (p[0] == 0xDE && p[1] == 0xC0 && p[2] == 0x17 && p[3] == 0x0B));
  LLVMBool bad = !magic || LLVMParseBitcodeInContext2(llctx, buf, out);
  LLVMDisposeMemoryBuffer(buf);
  if (bad) return cx_error(ctx, CXLA_ERR_UNSUPPORTED, "gpu backend: %s needs CUDA's libdevice, but %s is not LLVM bitcode",
                           need, path);
  return CXLA_OK;
}

cxla_status cx_libdevice_link(cxla_context *ctx, LLVMModuleRef mod, const char *path) {
  const char *need_name = first_call(mod);
  if (!need_name) return CXLA_OK;
  char need[128], found[512], tried[2048];
  snprintf(need, sizeof need, "%s", need_name); /* the declaration goes away when linking */
  if (!path || !*path) {
    if (find(found, sizeof found, tried, sizeof tried))
      return cx_error(ctx, CXLA_ERR_UNSUPPORTED,
                      "gpu backend: %s needs CUDA's libdevice (" LIBDEVICE "), which is not in %s; "
                      "install the CUDA toolkit or set --gpu-libdevice=PATH",
                      need, tried);
    path = found;
  }
  LLVMModuleRef lib = NULL;
  CX_TRY(load(ctx, LLVMGetModuleContext(mod), path, need, &lib));
  LLVMSetTarget(lib, LLVMGetTarget(mod));
  LLVMSetDataLayout(lib, LLVMGetDataLayoutStr(mod));
  /* the kernels are the module's definitions before linking: everything else becomes internal */
  int nk = 0, cap = 64;
  LLVMValueRef *kernels = cx_malloc(sizeof *kernels * (size_t)cap);
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); kernels && f; f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f) || LLVMGetLinkage(f) != LLVMExternalLinkage) continue;
    if (nk == cap) {
      LLVMValueRef *k = cx_realloc(kernels, sizeof *kernels * (size_t)(cap *= 2));
      if (!k) cx_free(kernels);
      kernels = k;
      if (!k) break;
    }
    kernels[nk++] = f;
  }
  if (!kernels) {
    LLVMDisposeModule(lib);
    return cx_oom(ctx);
  }
  if (LLVMLinkModules2(mod, lib)) { /* takes lib */
    cx_free(kernels);
    return cx_error(ctx, CXLA_ERR_INTERNAL, "gpu backend: linking %s into the kernels failed", path);
  }
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f)) continue;
    int kernel = 0;
    for (int i = 0; i < nk && !kernel; i++) kernel = kernels[i] == f;
    if (!kernel) LLVMSetLinkage(f, LLVMInternalLinkage);
  }
  cx_free(kernels);
  /* libdevice asks __nvvm_reflect("__CUDA_FTZ"): 0, denormals kept, as on every other backend */
  LLVMAddModuleFlag(mod, LLVMModuleFlagBehaviorOverride, "nvvm-reflect-ftz", 16,
                    LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(LLVMGetModuleContext(mod)), 0, 0)));
  return CXLA_OK;
}
