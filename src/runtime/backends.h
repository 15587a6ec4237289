/* backends.h — the backend registry (backends.c): the backends built into this cxla, by name.
 * The backend interface itself is backend/backend.h. */
#ifndef CX_RUNTIME_BACKENDS_H
#define CX_RUNTIME_BACKENDS_H
#include "backend/backend.h"

/* The backend with this name, or NULL. */
const cx_backend *cx_backend_find(const char *name);
/* Registered backends, NULL-terminated (for --help and error messages). */
const cx_backend *const *cx_backend_list(void);

/* 1 if `name` is a backend cxla knows of but this build lacks ("cpu", "gpu"). */
int cx_backend_is_planned(const char *name);
/* Looks up `name` (NULL: "interp"); on failure sets CXLA_ERR_INVALID_ARGUMENT for an unknown
 * name (listing the known ones) or CXLA_ERR_UNSUPPORTED for a known one not built in. */
cxla_status cx_backend_get(cxla_context *ctx, const char *name, const cx_backend **out);

#endif
