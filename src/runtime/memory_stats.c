/* memory_stats.c — cxla_context_memory_stats: a GPU backend's device memory cache, as the
 * backend's device-memory interface counts it. */
#include <string.h>
#include "runtime/backends.h"

cxla_status cxla_context_memory_stats(cxla_context *ctx, const char *backend, cxla_memory_stats *out) {
  if (!ctx) return CXLA_ERR_INVALID_ARGUMENT;
  if (!out) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_context_memory_stats: out is NULL");
  memset(out, 0, sizeof *out);
  const cx_backend *be;
  CX_TRY(cx_backend_get(ctx, backend, &be));
  if (!be->mem)
    return cx_error(ctx, CXLA_ERR_UNSUPPORTED, "cxla_context_memory_stats: backend %s keeps buffers in host memory",
                    be->name);
  cx_mem_stats m;
  CX_TRY(be->mem->stats(ctx, &m));
  *out = (cxla_memory_stats){.in_use = m.in_use, .peak_in_use = m.peak, .cached = m.cached,
                             .driver_allocs = m.driver_allocs, .driver_frees = m.driver_frees,
                             .pinned = m.pinned, .pinned_allocs = m.pinned_allocs, .pinned_hits = m.pinned_hits,
                             .staged_bytes = m.staged_bytes, .direct_bytes = m.direct_bytes,
                             .upload_waits = m.upload_waits};
  return CXLA_OK;
}
