/* buffer.h — the buffers behind cxla_buffer (buffer.c): a value on the backend it lives on. */
#ifndef CX_RUNTIME_BUFFER_H
#define CX_RUNTIME_BUFFER_H
#include "backend/backend.h"

struct cxla_buffer {
  cxla_context *ctx;
  const cx_backend *backend; /* the backend it was made for or by */
  cxla_literal *host;       /* the value in host memory (interp and cpu keep buffers there), or
                               the host copy of `dev` made when first read; NULL once untupled */
  cx_dev_value *dev;        /* the value in a device's memory (backend->mem), or NULL */
  /* Consumed by an execute that it was donated to: holds no value. host is kept until the
   * buffer is destroyed, so memory the caller read in place is never freed under it. */
  int donated;
  int wrapped;              /* host->data is the caller's (cxla_buffer_wrap): never freed */
  _Atomic(cxla_shape *) pub; /* cxla_buffer_shape's tuple element shapes, made on first use */
};

/* A buffer owning host (which may be NULL: filled by the caller); NULL when memory ran out. */
cxla_buffer *cx_buffer_new(cxla_context *ctx, const cx_backend *be, cxla_literal *host);
/* A buffer that takes lit over (no copy); on failure lit stays the caller's. For a caller that
 * has no further use for the literal (the CLI's inputs), where cxla_buffer_from_literal copies. */
cxla_status cx_buffer_adopt_literal(cxla_context *ctx, const char *backend, cxla_literal *lit, cxla_buffer **out);
/* Moves the buffer's value out into *out (no copy; a wrapped buffer's is copied, the caller's
 * memory staying theirs); the buffer then holds no value, as after cxla_buffer_untuple. */
cxla_status cx_buffer_take_literal(cxla_buffer *buf, cxla_literal **out);
/* The shape of the value the buffer holds (NULL when it holds none). */
const cx_shape *cx_buffer_value_shape(const cxla_buffer *buf);
/* The value as a host literal (owned by the buffer): the host value, or the device value's host
 * copy, made on first use (a copy from the device). Errors start with fn. */
cxla_status cx_buffer_host(cxla_buffer *buf, const char *fn, cxla_literal **out);
/* A buffer holding a device value (taken over). NULL when memory ran out (v then stays). */
cxla_buffer *cx_buffer_new_dev(cxla_context *ctx, const cx_backend *be, cx_dev_value *v);
/* Checks the caller's array as cxla_buffer_wrap does (errors start with `fn`) and fills *out,
 * an array literal over data that owns nothing on the heap. */
cxla_status cx_buffer_wrap_literal(cxla_context *ctx, const char *fn, cxla_type type, int rank, const int64_t *dims,
                                   const void *data, size_t nbytes, cxla_literal *out);

#endif
