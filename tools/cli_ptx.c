/* cli_ptx.c — `cxla compile MODULE.hlo --backend=gpu --emit-ptx=FILE [--gpu-arch=sm_XX]`: the
 * module's PTX for a GPU target, made without a GPU (the gpu backend's passes, fusion and
 * kernels, as a GPU would load them; dots are cuBLASLt calls and have no PTX, nor have
 * convolutions where cuDNN is found (CXLA_CUDNN=off keeps them kernels), so a module of
 * library calls alone still gives a valid PTX module with no kernels). What the gpu backend
 * cannot run yet is refused with its reason, as when compiling for a GPU. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "api/tooling.h"
#include "cli.h"

int cli_emit_ptx(cxla_context *ctx, const char *path, const char *sm, const char *out) {
  cx_nvptx_arch arch;
  if (cx_nvptx_arch_named(sm, &arch))
    return cli_usage_error("compile", "--gpu-arch=%s is not a PTX target cxla knows (sm_75, sm_80, sm_86, sm_87, "
                           "sm_89, sm_90, sm_90a)", sm);
  unsigned char *text = NULL;
  size_t len = 0;
  cx_module *m = NULL;
  if (cx_read_file(ctx, path, &text, &len) != CXLA_OK) return cli_lib_error(ctx);
  /* parses and verifies HLO text or a StableHLO artifact */
  cxla_status s = cxla_module_parse(ctx, (const char *)text, len, path, &m);
  cx_free(text);
  if (s != CXLA_OK) {
    cx_module_free(m);
    return cli_lib_error(ctx);
  }
  cx_gpu_prog p;
  s = cx_gpu_build(ctx, m, &ctx->flags, &arch, 0, &p); /* takes m */
  if (s != CXLA_OK) {
    cx_gpu_prog_free(&p);
    return cli_lib_error(ctx);
  }
  FILE *f = !strcmp(out, "-") ? stdout : fopen(out, "wb");
  int rc = CLI_OK;
  if (!f) rc = cli_error("cannot write %s: %s", out, strerror(errno));
  else if (fputs(p.ptx, f) == EOF || (f != stdout ? fclose(f) : fflush(f)) != 0)
    rc = cli_error("cannot write %s", out);
  if (rc == CLI_OK && strcmp(out, "-"))
    printf("wrote %s: PTX ISA %d.%d for %s, %d kernels, %d cuBLASLt GEMMs\n", out, arch.ptx / 10, arch.ptx % 10, arch.sm,
           p.nkernels, p.ngemms);
  cx_gpu_prog_free(&p);
  return rc;
}
