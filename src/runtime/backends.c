/* backends.c — the backend registry. A new backend is one entry in `built` (and its name
 * leaves `planned`); nothing else in the runtime changes. */
#include <string.h>
#include "runtime/backends.h"
#include "util/util.h"

extern const cx_backend cx_backend_interp; /* src/runtime/backend_interp.c */
extern const cx_backend cx_backend_cpu; /* src/backend/cpu/backend_cpu.c */
extern const cx_backend cx_backend_gpu; /* src/backend/gpu/backend_gpu.c: needs the CUDA driver at run time */
extern const cx_backend cx_backend_gpu_emu; /* the same, its grid emulated on the host (backend/gpu/emu.h) */

static const cx_backend *const built[] = {
    &cx_backend_interp,
    &cx_backend_cpu,
    &cx_backend_gpu,
    &cx_backend_gpu_emu,
    NULL,
};

/* Backends cxla has a place for but which are not part of this build yet. */
static const char *const planned[] = {NULL}; /* none at present */

const cx_backend *const *cx_backend_list(void) { return built; }

const cx_backend *cx_backend_find(const char *name) {
  for (int i = 0; name && built[i]; i++)
    if (!strcmp(built[i]->name, name)) return built[i];
  return NULL;
}

int cx_backend_is_planned(const char *name) {
  for (int i = 0; name && i < CX_ARRAY_LEN(planned); i++)
    if (planned[i] && !strcmp(planned[i], name) && !cx_backend_find(name)) return 1;
  return 0;
}

static void list_built(cx_sb *sb) {
  for (int i = 0; built[i]; i++) cx_sb_printf(sb, "%s%s", i ? ", " : "", built[i]->name);
}

cxla_status cx_backend_get(cxla_context *ctx, const char *name, const cx_backend **out) {
  *out = cx_backend_find(name ? name : "interp");
  if (*out) return CXLA_OK;
  cx_sb sb;
  cx_sb_init(&sb);
  list_built(&sb);
  cxla_status s;
  if (cx_backend_is_planned(name))
    s = cx_error(ctx, CXLA_ERR_UNSUPPORTED, "backend '%s' is not built into this cxla (built: %s)", name,
                 sb.buf ? sb.buf : "");
  else
    s = cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "unknown backend '%s' (known: %s)", name, sb.buf ? sb.buf : "");
  cx_sb_free(&sb);
  return s;
}
