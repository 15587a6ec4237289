/* test_gpu.c — the GPU backend's runtime without a GPU: what a machine without a CUDA driver,
 * or with a library that is not one, or with the toolkit's stub driver gets. */
#include <dlfcn.h>
#include <unistd.h>
#include "backend/gpu/cuda.h"
#include "test.h"

TEST(gpu_driver_missing_or_wrong) {
  cx_cuda cu;
  char err[512];
  CHECK_EQ_INT(cx_cuda_open("/nonexistent/libcuda.so.1", &cu, err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "no CUDA driver (/nonexistent/libcuda.so.1 not found)");
  CHECK(cu.lib == NULL);
  CHECK_EQ_INT(cx_cuda_open("libz.so.1", &cu, err, sizeof err), -1); /* a library, not the driver */
  CHECK_STR_CONTAINS(err, "libz.so.1 is not a usable CUDA driver: it has no cuInit");
  /* The toolkit's stub driver has every entry point (so each name cxla looks up exists, with
   * the ABI suffix cuda.h maps it to) and fails cuInit as a machine without a GPU would. */
  const char *stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (access(stub, R_OK)) {
    printf("    skipped the stub driver: no %s\n", stub);
    return;
  }
  CHECK_EQ_INT(cx_cuda_open(stub, &cu, err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "the CUDA driver found no usable GPU: cuInit failed: CUDA error 34");
  CHECK(cu.lib == NULL);
}

/* Through the API, as `cxla run --backend=gpu` sees it: on a machine without the driver (CI),
 * compiling is CXLA_ERR_DEVICE with a message, never a crash. */
TEST(gpu_backend_without_driver) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib) {
    dlclose(lib);
    printf("    skipped: this machine has a CUDA driver\n");
    return;
  }
  const char *text = "HloModule m\nENTRY e {\n x = f32[4] parameter(0)\n ROOT r = f32[4] add(x, x)\n}\n";
  cxla_module *m = NULL;
  CHECK_OK(cxla_module_parse(test_ctx(), text, strlen(text), "t.hlo", &m));
  if (!m) return;
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = "gpu";
  cxla_executable *e = (cxla_executable *)1;
  CHECK_EQ_INT(cxla_compile(m, &o, &e), CXLA_ERR_DEVICE);
  CHECK(e == NULL);
  CHECK_STR_CONTAINS(cxla_context_errmsg(test_ctx()), "gpu backend: no CUDA driver (libcuda.so.1 not found)");
  CHECK_EQ_INT(cxla_compile(m, &o, &e), CXLA_ERR_DEVICE); /* again: the answer is kept, not a crash */
  cxla_module_destroy(m);
}
