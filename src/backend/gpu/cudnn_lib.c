/* cudnn_lib.c — cuDNN through dlopen (see cudnn_lib.h). cuDNN 9's libcudnn.so.9 is the
 * front library: it exports the whole API and loads its engine libraries (libcudnn_cnn,
 * libcudnn_ops, ...) itself, from its own directory. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "backend/gpu/cudnn_lib.h"
#include "backend/gpu/dl_table.h"

static cx_cudnn g_dnn;
static char g_err[768];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

#define SYM(field, name) {offsetof(cx_cudnn, field), name}
static const cx_dl_sym k_syms[] = {
  SYM(Create, "cudnnCreate"), SYM(Destroy, "cudnnDestroy"), SYM(SetStream, "cudnnSetStream"),
  SYM(GetErrorString, "cudnnGetErrorString"),
  SYM(CreateTensorDescriptor, "cudnnCreateTensorDescriptor"), SYM(SetTensorNdDescriptor, "cudnnSetTensorNdDescriptor"),
  SYM(DestroyTensorDescriptor, "cudnnDestroyTensorDescriptor"),
  SYM(CreateFilterDescriptor, "cudnnCreateFilterDescriptor"), SYM(SetFilterNdDescriptor, "cudnnSetFilterNdDescriptor"),
  SYM(DestroyFilterDescriptor, "cudnnDestroyFilterDescriptor"),
  SYM(CreateConvolutionDescriptor, "cudnnCreateConvolutionDescriptor"),
  SYM(SetConvolutionNdDescriptor, "cudnnSetConvolutionNdDescriptor"),
  SYM(SetConvolutionGroupCount, "cudnnSetConvolutionGroupCount"),
  SYM(SetConvolutionMathType, "cudnnSetConvolutionMathType"),
  SYM(DestroyConvolutionDescriptor, "cudnnDestroyConvolutionDescriptor"),
  SYM(GetForwardAlgorithm, "cudnnGetConvolutionForwardAlgorithm_v7"),
  SYM(GetBackwardDataAlgorithm, "cudnnGetConvolutionBackwardDataAlgorithm_v7"),
  SYM(GetBackwardFilterAlgorithm, "cudnnGetConvolutionBackwardFilterAlgorithm_v7"),
  SYM(GetForwardWorkspaceSize, "cudnnGetConvolutionForwardWorkspaceSize"),
  SYM(GetBackwardDataWorkspaceSize, "cudnnGetConvolutionBackwardDataWorkspaceSize"),
  SYM(GetBackwardFilterWorkspaceSize, "cudnnGetConvolutionBackwardFilterWorkspaceSize"),
  SYM(Forward, "cudnnConvolutionForward"), SYM(BackwardData, "cudnnConvolutionBackwardData"),
  SYM(BackwardFilter, "cudnnConvolutionBackwardFilter"), SYM(TransformTensor, "cudnnTransformTensor"),
};
#undef SYM

int cx_cudnn_open(const char *path, cx_cudnn *out, char *err, size_t errlen) {
  static const char *const names[] = {"libcudnn.so.9", "/usr/local/cuda/lib64/libcudnn.so.9"};
  const char *one[1] = {path};
  int explicit = path && *path;
  /* the environment variable cx_dl_open_first would read is ours to pass: none here */
  out->lib = cx_dl_open_first("", explicit ? one : names, explicit ? 1 : 2, out, k_syms, sizeof k_syms / sizeof *k_syms,
                              "cuDNN", "convolutions on the GPU use it: install cuDNN 9 or set CXLA_CUDNN=PATH",
                              err, errlen);
  return out->lib != NULL;
}

static void open_default(void) { cx_cudnn_open(NULL, &g_dnn, g_err, sizeof g_err); }

/* libraries opened by path, kept for the process (executables hold their tables) */
typedef struct by_path { struct by_path *next; char *path; cx_cudnn t; } by_path;
static by_path *g_paths;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

const cx_cudnn *cx_cudnn_get(const char *path, char *err, size_t errlen) {
  if (!path || !*path) {
    pthread_once(&g_once, open_default);
    if (!g_dnn.lib) snprintf(err, errlen, "%s", g_err);
    return g_dnn.lib ? &g_dnn : NULL;
  }
  pthread_mutex_lock(&g_mu);
  by_path *p = g_paths;
  while (p && strcmp(p->path, path)) p = p->next;
  if (!p && (p = cx_calloc(1, sizeof *p)) && (p->path = cx_strdup(path)) && cx_cudnn_open(path, &p->t, err, errlen)) {
    p->next = g_paths;
    g_paths = p;
  } else if (p && !p->t.lib) { /* not found, not usable, or out of memory */
    if (!p->path) snprintf(err, errlen, "out of memory opening %s", path);
    cx_free(p->path);
    cx_free(p);
    p = NULL;
  } else if (!p) {
    snprintf(err, errlen, "out of memory opening %s", path);
  }
  pthread_mutex_unlock(&g_mu);
  return p ? &p->t : NULL;
}

cxla_status cx_cudnn_error(cxla_context *ctx, const cx_cudnn *dnn, int status, const char *what) {
  const char *name = dnn && dnn->GetErrorString ? dnn->GetErrorString(status) : NULL;
  return cx_error(ctx, CXLA_ERR_DEVICE, "gpu backend: %s failed: cuDNN status %d (%s)", what, status,
                  name ? name : "?");
}
