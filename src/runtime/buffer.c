/* buffer.c — cxla_buffer: the values executables take and return. On a host backend a buffer
 * owns its literal, or wraps the caller's array memory (cxla_buffer_wrap) in a literal whose
 * data it never frees: executions read argument literals where they are and return a literal
 * of their own, so a caller who wraps its inputs and reads results in place (cxla_buffer_data,
 * cxla_buffer_untuple) pays no copies. On a backend with a device (gpu) a buffer holds a value
 * in the device's memory; reading it on the host copies it once into a host literal the buffer
 * keeps (a device value never changes: a donation consumes the buffer). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include "ir/literal.h"
#include "runtime/backends.h"
#include "runtime/buffer.h"

/* Where a wrapped zero-byte array points when the caller gave no memory: never read. */
static _Alignas(64) char empty_data[64];

cxla_buffer *cx_buffer_new(cxla_context *ctx, const cx_backend *be, cxla_literal *host) {
  cxla_buffer *b = cx_calloc(1, sizeof *b);
  if (!b) return NULL;
  b->ctx = ctx;
  b->backend = be;
  b->host = host;
  atomic_init(&b->pub, NULL);
  return b;
}

cxla_buffer *cx_buffer_new_dev(cxla_context *ctx, const cx_backend *be, cx_dev_value *v) {
  cxla_buffer *b = cx_buffer_new(ctx, be, NULL);
  if (b) b->dev = v;
  return b;
}

const cx_shape *cx_buffer_value_shape(const cxla_buffer *buf) {
  return buf->host ? &buf->host->shape : buf->dev ? &buf->dev->shape : NULL;
}

/* The host copies of device values are made under one lock: rare, and two threads may read
 * the same buffer at once (two executions of host backends, say). */
static pthread_mutex_t g_host_copy_mu = PTHREAD_MUTEX_INITIALIZER;

void cxla_buffer_destroy(cxla_buffer *buf) {
  if (!buf) return;
  if (buf->dev) buf->dev->mem->release(buf->dev);
  if (buf->wrapped && buf->host) buf->host->data = NULL; /* the caller's memory */
  cxla_literal_destroy(buf->host);
  cx_free(atomic_load(&buf->pub));
  cx_free(buf);
}

/* CXLA_OK if buf holds a value; otherwise the error, naming the call. */
static cxla_status holds_value(cxla_buffer *buf, const char *fn) {
  if (buf->donated)
    return cx_error(buf->ctx, CXLA_ERR_INVALID_ARGUMENT, "%s: the buffer was donated to an execution and holds no value",
                    fn);
  if (!buf->host && !buf->dev)
    return cx_error(buf->ctx, CXLA_ERR_INVALID_ARGUMENT,
                    "%s: the buffer holds no value (cxla_buffer_untuple moved its elements out)", fn);
  return CXLA_OK;
}

cxla_status cx_buffer_host(cxla_buffer *buf, const char *fn, cxla_literal **out) {
  *out = NULL;
  CX_TRY(holds_value(buf, fn));
  pthread_mutex_lock(&g_host_copy_mu);
  cxla_status s = CXLA_OK;
  if (!buf->host) {
    cxla_literal *l = cx_literal_new_uninit(&buf->dev->shape);
    s = l ? buf->dev->mem->download(buf->ctx, buf->dev, l) : cx_oom(buf->ctx);
    if (s == CXLA_OK) buf->host = l;
    else cxla_literal_destroy(l);
  }
  pthread_mutex_unlock(&g_host_copy_mu);
  *out = buf->host;
  return s;
}

/* A buffer for backend be holding a copy of lit: on be's device when it has one. */
static cxla_status buffer_of_literal(cxla_context *ctx, const cx_backend *be, const cxla_literal *lit,
                                     cxla_buffer **out) {
  *out = NULL;
  if (!be->mem) {
    cxla_literal *l = cxla_literal_clone(ctx, lit);
    if (l && !(*out = cx_buffer_new(ctx, be, l))) cxla_literal_destroy(l);
    return *out ? CXLA_OK : cx_oom(ctx);
  }
  void *device;
  cx_dev_value *v = NULL;
  CX_TRY(be->mem->device(ctx, &device));
  cxla_status s = be->mem->upload(ctx, device, lit, &v);
  if (s == CXLA_OK && !(*out = cx_buffer_new_dev(ctx, be, v))) {
    be->mem->release(v);
    s = cx_oom(ctx);
  }
  return s;
}

/* The dense array shape (type, rank, dims) holding exactly nbytes, or an error naming fn. */
static cxla_status array_shape(cxla_context *ctx, const char *fn, cxla_type type, int rank, const int64_t *dims,
                               size_t nbytes, cx_shape *out) {
  if (!cx_type_is_array(type))
    return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "%s: type %d is not an array element type", fn, (int)type);
  if (rank < 0 || rank > CXLA_MAX_RANK)
    return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "%s: rank %d is out of range [0, %d]", fn, rank, CXLA_MAX_RANK);
  if (rank && !dims) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "%s: dims is NULL", fn);
  for (int i = 0; i < rank; i++)
    if (dims[i] < 0)
      return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "%s: dimension %d is negative (%lld)", fn, i, (long long)dims[i]);
  *out = cx_shape_array(type, rank, dims);
  int64_t bytes = cx_shape_bytes(out);
  char str[256];
  if (bytes < 0) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "%s: %s is too large", fn, cx_shape_str(out, str, sizeof str));
  if ((uint64_t)bytes != nbytes)
    return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "%s: %s is %lld bytes, nbytes is %zu", fn,
                    cx_shape_str(out, str, sizeof str), (long long)bytes, nbytes);
  return CXLA_OK;
}

cxla_status cx_buffer_wrap_literal(cxla_context *ctx, const char *fn, cxla_type type, int rank, const int64_t *dims,
                                   const void *data, size_t nbytes, cxla_literal *out) {
  cx_shape s;
  CX_TRY(array_shape(ctx, fn, type, rank, dims, nbytes, &s));
  if (!data && nbytes) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "%s: data is NULL", fn);
  /* Compiled kernels and the interpreter load elements at their natural alignment. */
  size_t align = cxla_type_size(type);
  if ((uintptr_t)data % align)
    return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT,
                    "%s: data %p is not aligned to %zu bytes (%s elements); copy it with cxla_buffer_from_data", fn,
                    data, align, cxla_type_name(type));
  memset(out, 0, sizeof *out);
  out->shape = s;
  /* cxla never writes through a wrapped array: execute refuses to donate it. */
  out->data = data ? (void *)(uintptr_t)data : empty_data;
  return CXLA_OK;
}

cxla_status cxla_buffer_wrap(cxla_context *ctx, const char *backend, cxla_type type, int rank, const int64_t *dims,
                             const void *data, size_t nbytes, cxla_buffer **out) {
  if (!ctx) return CXLA_ERR_INVALID_ARGUMENT;
  if (!out) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_buffer_wrap: out is NULL");
  *out = NULL;
  const cx_backend *be;
  CX_TRY(cx_backend_get(ctx, backend, &be));
  cxla_literal wrapped;
  CX_TRY(cx_buffer_wrap_literal(ctx, "cxla_buffer_wrap", type, rank, dims, data, nbytes, &wrapped));
  cxla_literal *l = cx_malloc(sizeof *l);
  cxla_buffer *b = l ? cx_buffer_new(ctx, be, l) : NULL;
  if (!b) {
    cx_free(l);
    return cx_oom(ctx);
  }
  *l = wrapped;
  b->wrapped = 1;
  *out = b;
  return CXLA_OK;
}

cxla_status cxla_buffer_from_data(cxla_context *ctx, const char *backend, cxla_type type, int rank,
                                  const int64_t *dims, const void *data, size_t nbytes, cxla_buffer **out) {
  if (!ctx) return CXLA_ERR_INVALID_ARGUMENT;
  if (!out) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_buffer_from_data: out is NULL");
  *out = NULL;
  const cx_backend *be;
  CX_TRY(cx_backend_get(ctx, backend, &be));
  cx_shape s;
  CX_TRY(array_shape(ctx, "cxla_buffer_from_data", type, rank, dims, nbytes, &s));
  if (!data && nbytes) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_buffer_from_data: data is NULL");
  if (be->mem) { /* straight from the caller's memory to the device: a literal over it */
    cxla_literal view = {.shape = s, .data = data ? (void *)(uintptr_t)data : empty_data};
    return buffer_of_literal(ctx, be, &view, out);
  }
  cxla_literal *l = cx_literal_new_uninit(&s);
  cxla_buffer *b = l ? cx_buffer_new(ctx, be, l) : NULL;
  if (!b) {
    cxla_literal_destroy(l);
    return cx_oom(ctx);
  }
  if (nbytes) memcpy(l->data, data, nbytes);
  *out = b;
  return CXLA_OK;
}

cxla_status cxla_buffer_from_literal(cxla_context *ctx, const char *backend, const cxla_literal *lit,
                                     cxla_buffer **out) {
  if (!out) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_buffer_from_literal: out is NULL");
  *out = NULL;
  if (!lit) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_buffer_from_literal: literal is NULL");
  const cx_backend *be;
  CX_TRY(cx_backend_get(ctx, backend, &be));
  return buffer_of_literal(ctx, be, lit, out);
}

cxla_status cxla_buffer_copy_to(cxla_buffer *buf, const char *backend, cxla_buffer **out) {
  if (!buf) return CXLA_ERR_INVALID_ARGUMENT;
  if (!out) return cx_error(buf->ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_buffer_copy_to: out is NULL");
  *out = NULL;
  const cx_backend *be;
  CX_TRY(cx_backend_get(buf->ctx, backend, &be));
  CX_TRY(holds_value(buf, "cxla_buffer_copy_to"));
  void *device = NULL;
  if (be->mem) CX_TRY(be->mem->device(buf->ctx, &device));
  if (buf->dev && buf->dev->device == device) { /* on that device already: a copy there */
    cx_dev_value *v;
    CX_TRY(buf->dev->mem->clone(buf->ctx, buf->dev, &v));
    if (!(*out = cx_buffer_new_dev(buf->ctx, be, v))) {
      be->mem->release(v);
      return cx_oom(buf->ctx);
    }
    return CXLA_OK;
  }
  cxla_literal *l;
  CX_TRY(cx_buffer_host(buf, "cxla_buffer_copy_to", &l));
  return buffer_of_literal(buf->ctx, be, l, out);
}

const char *cxla_buffer_memory(cxla_buffer *buf) {
  if (!buf || buf->donated || (!buf->host && !buf->dev)) return NULL;
  return buf->dev ? buf->backend->name : "host";
}

cxla_status cx_buffer_adopt_literal(cxla_context *ctx, const char *backend, cxla_literal *lit, cxla_buffer **out) {
  *out = NULL;
  if (!lit) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "cx_buffer_adopt_literal: literal is NULL");
  const cx_backend *be;
  CX_TRY(cx_backend_get(ctx, backend, &be));
  if (!(*out = cx_buffer_new(ctx, be, lit))) return cx_oom(ctx);
  return CXLA_OK;
}

/* Drops the device value (its memory back to the device's cache). */
static void drop_dev(cxla_buffer *buf) {
  if (buf->dev) buf->dev->mem->release(buf->dev);
  buf->dev = NULL;
}

cxla_status cx_buffer_take_literal(cxla_buffer *buf, cxla_literal **out) {
  *out = NULL;
  CX_TRY(holds_value(buf, "cx_buffer_take_literal"));
  if (buf->wrapped) return cxla_buffer_to_literal(buf, out); /* the caller's memory stays theirs */
  cxla_literal *l;
  CX_TRY(cx_buffer_host(buf, "cx_buffer_take_literal", &l));
  drop_dev(buf);
  *out = buf->host;
  buf->host = NULL;
  cx_free(atomic_exchange(&buf->pub, NULL));
  return CXLA_OK;
}

cxla_status cxla_buffer_to_literal(cxla_buffer *buf, cxla_literal **out) {
  if (!buf || !out) return buf ? cx_error(buf->ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_buffer_to_literal: out is NULL")
                               : CXLA_ERR_INVALID_ARGUMENT;
  *out = NULL;
  cxla_literal *l;
  CX_TRY(cx_buffer_host(buf, "cxla_buffer_to_literal", &l));
  *out = cxla_literal_clone(buf->ctx, l);
  return *out ? CXLA_OK : cx_oom(buf->ctx);
}

void *cxla_buffer_data(cxla_buffer *buf) {
  if (!buf || buf->donated) return NULL;
  const cx_shape *s = buf->host || buf->dev ? cx_buffer_value_shape(buf) : NULL;
  cxla_literal *l;
  if (!s || !cx_type_is_array(s->type) || cx_buffer_host(buf, "cxla_buffer_data", &l) != CXLA_OK) return NULL;
  return l->data;
}

size_t cxla_buffer_size_bytes(cxla_buffer *buf) {
  if (!buf || buf->donated || (!buf->host && !buf->dev)) return 0;
  const cx_shape *s = cx_buffer_value_shape(buf);
  int64_t n = cx_type_is_array(s->type) ? cx_shape_bytes(s) : 0;
  return n > 0 ? (size_t)n : 0;
}

/* ---- shapes ---- */

static int shape_nodes(const cx_shape *s) {
  int n = 1;
  for (int i = 0; s->type == CXLA_TUPLE && i < s->ntuple; i++) n += shape_nodes(&s->tuple[i]);
  return n;
}

/* Fills out from s; tuple elements take their places from *next (enough for every node). */
static void fill_public(const cx_shape *s, cxla_shape *out, cxla_shape **next) {
  memset(out, 0, sizeof *out);
  out->type = s->type;
  out->rank = s->rank;
  out->dims = s->dims;
  if (s->type != CXLA_TUPLE) return;
  out->rank = 0;
  out->ntuple = s->ntuple;
  out->elems = *next;
  *next += s->ntuple;
  for (int i = 0; i < s->ntuple; i++) fill_public(&s->tuple[i], (cxla_shape *)&out->elems[i], next);
}

cxla_status cxla_buffer_shape(cxla_buffer *buf, cxla_shape *out) {
  if (!buf) return CXLA_ERR_INVALID_ARGUMENT;
  if (!out) return cx_error(buf->ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_buffer_shape: out is NULL");
  memset(out, 0, sizeof *out);
  CX_TRY(holds_value(buf, "cxla_buffer_shape"));
  const cx_shape *s = cx_buffer_value_shape(buf);
  if (s->type != CXLA_TUPLE) {
    cxla_shape *none = NULL;
    fill_public(s, out, &none);
    return CXLA_OK;
  }
  /* Element shapes need storage that lives with the buffer; made once, race-free. */
  cxla_shape *pub = atomic_load(&buf->pub);
  if (!pub) {
    cxla_shape *mine = cx_calloc((size_t)shape_nodes(s), sizeof *mine), *none = NULL;
    if (!mine) return cx_oom(buf->ctx);
    cxla_shape *next = mine + 1;
    fill_public(s, mine, &next);
    if (atomic_compare_exchange_strong(&buf->pub, &none, mine)) pub = mine;
    else {
      cx_free(mine);
      pub = none;
    }
  }
  *out = pub[0];
  return CXLA_OK;
}

cxla_status cxla_buffer_untuple(cxla_buffer *buf, int n, cxla_buffer **elems) {
  if (!buf) return CXLA_ERR_INVALID_ARGUMENT;
  if (n < 0 || (n && !elems))
    return cx_error(buf->ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_buffer_untuple: bad element list (n %d)", n);
  for (int i = 0; i < n; i++) elems[i] = NULL;
  CX_TRY(holds_value(buf, "cxla_buffer_untuple"));
  const cx_shape *shape = cx_buffer_value_shape(buf);
  char str[256];
  if (shape->type != CXLA_TUPLE)
    return cx_error(buf->ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_buffer_untuple: the buffer holds %s, not a tuple",
                    cx_shape_str(shape, str, sizeof str));
  if (n != shape->ntuple)
    return cx_error(buf->ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_buffer_untuple: the tuple has %d elements, n is %d",
                    shape->ntuple, n);
  cx_dev_value *stack[16] = {0}, **dv = !buf->dev ? NULL : n <= 16 ? stack : cx_calloc((size_t)n, sizeof *dv);
  int ok = !buf->dev || dv;
  for (int i = 0; ok && i < n; i++) {
    if (dv && !(dv[i] = cx_dev_value_new(&buf->dev->shape.tuple[i], buf->dev->device, buf->dev->mem))) ok = 0;
    else if (!(elems[i] = cx_buffer_new(buf->ctx, buf->backend, NULL))) ok = 0;
  }
  if (!ok) {
    for (int i = 0; i < n; i++) {
      if (dv) cx_dev_value_free(dv[i]);
      cx_free(elems[i]);
      elems[i] = NULL;
    }
    if (dv != stack) cx_free(dv);
    return cx_oom(buf->ctx);
  }
  if (buf->dev) { /* the leaves move to the elements, each holding a reference on the device */
    cx_dev_value *v = buf->dev;
    for (int i = 0; i < n; i++) {
      int first = cx_shape_leaf_offset(&v->shape, i);
      for (int k = 0; k < dv[i]->nleaves; k++) {
        dv[i]->addr[k] = v->addr[first + k], dv[i]->size[k] = v->size[first + k];
        v->addr[first + k] = 0;
      }
      v->mem->retain(v->device);
      elems[i]->dev = dv[i];
    }
    if (dv != stack) cx_free(dv);
    drop_dev(buf);
  }
  cxla_literal *l = buf->host;
  for (int i = 0; l && i < n; i++) {
    elems[i]->host = l->elems[i];
    l->elems[i] = NULL;
  }
  if (l) l->nelems = 0;
  cxla_literal_destroy(l); /* the tuple's own shape and element list */
  buf->host = NULL;
  cx_free(atomic_exchange(&buf->pub, NULL));
  return CXLA_OK;
}
