/* buffer.c — PJRT_Buffer over a cxla buffer in its device's memory (host memory for the cpu
 * device, the GPU's for the GPU device): from host memory (copied, or on the cpu read in place
 * under the zero-copy semantics when the memory is dense and aligned), back to host memory in
 * any dense layout, copies between devices (cxla_buffer_copy_to), and the queries XLA's client
 * treats as infallible (type, dims, device, memory, ready event). An output of a queued
 * execution is pending (stream.c): its shape is known, and what reads its value waits for it. */
#include <stdlib.h>
#include <string.h>

#include "pjrt_internal.h"

/* PJRT_Buffer_Type -> cxla_type; the two enums number types differently. */
static const cxla_type k_to_cxla[] = {
    [PJRT_Buffer_Type_INVALID] = CXLA_INVALID, [PJRT_Buffer_Type_PRED] = CXLA_PRED,
    [PJRT_Buffer_Type_S8] = CXLA_S8,           [PJRT_Buffer_Type_S16] = CXLA_S16,
    [PJRT_Buffer_Type_S32] = CXLA_S32,         [PJRT_Buffer_Type_S64] = CXLA_S64,
    [PJRT_Buffer_Type_U8] = CXLA_U8,           [PJRT_Buffer_Type_U16] = CXLA_U16,
    [PJRT_Buffer_Type_U32] = CXLA_U32,         [PJRT_Buffer_Type_U64] = CXLA_U64,
    [PJRT_Buffer_Type_F16] = CXLA_F16,         [PJRT_Buffer_Type_F32] = CXLA_F32,
    [PJRT_Buffer_Type_F64] = CXLA_F64,         [PJRT_Buffer_Type_BF16] = CXLA_BF16,
    [PJRT_Buffer_Type_C64] = CXLA_C64,         [PJRT_Buffer_Type_C128] = CXLA_C128,
    [PJRT_Buffer_Type_F8E5M2] = CXLA_F8E5M2,   [PJRT_Buffer_Type_F8E4M3FN] = CXLA_F8E4M3FN,
    [PJRT_Buffer_Type_F8E4M3B11FNUZ] = CXLA_F8E4M3B11FNUZ,
    [PJRT_Buffer_Type_F8E5M2FNUZ] = CXLA_F8E5M2FNUZ,
    [PJRT_Buffer_Type_F8E4M3FNUZ] = CXLA_F8E4M3FNUZ,
    [PJRT_Buffer_Type_S4] = CXLA_S4,           [PJRT_Buffer_Type_U4] = CXLA_U4,
    [PJRT_Buffer_Type_TOKEN] = CXLA_INVALID,   [PJRT_Buffer_Type_S2] = CXLA_S2,
    [PJRT_Buffer_Type_U2] = CXLA_U2,           [PJRT_Buffer_Type_F8E4M3] = CXLA_F8E4M3,
    [PJRT_Buffer_Type_F8E3M4] = CXLA_F8E3M4,   [PJRT_Buffer_Type_F8E8M0FNU] = CXLA_F8E8M0FNU,
    [PJRT_Buffer_Type_F4E2M1FN] = CXLA_F4E2M1FN,
    [PJRT_Buffer_Type_S1] = CXLA_INVALID,      [PJRT_Buffer_Type_U1] = CXLA_INVALID,
};

cxla_type cx_pjrt_to_cxla_type(PJRT_Buffer_Type t) {
  if ((unsigned)t >= sizeof k_to_cxla / sizeof k_to_cxla[0]) return CXLA_INVALID;
  return k_to_cxla[t];
}

PJRT_Buffer_Type cx_pjrt_from_cxla_type(cxla_type t) {
  if (t == CXLA_TOKEN) return PJRT_Buffer_Type_TOKEN; /* an output only: no host data makes one */
  for (unsigned i = 1; i < sizeof k_to_cxla / sizeof k_to_cxla[0]; i++)
    if (k_to_cxla[i] == t && t != CXLA_INVALID) return (PJRT_Buffer_Type)i;
  return PJRT_Buffer_Type_INVALID;
}

/* A new array buffer of d: type, dims in row-major order, and nbytes; NULL when out of memory. */
static PJRT_Buffer *array_new(PJRT_Device *d, cxla_type t, int rank, const int64_t *dims, size_t nbytes) {
  PJRT_Buffer *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  b->client = d->client;
  b->device = d;
  b->type = t;
  b->rank = rank;
  for (int i = 0; i < rank; i++) {
    b->dims[i] = dims[i];
    b->minor_to_major[i] = rank - 1 - i;
  }
  b->nbytes = nbytes;
  return b;
}

PJRT_Error *cx_pjrt_buffer_wrap(PJRT_Device *d, cxla_buffer *cb, PJRT_Buffer **out) {
  *out = NULL;
  cxla_shape s;
  if (cxla_buffer_shape(cb, &s) != CXLA_OK || s.type == CXLA_TUPLE || s.rank > CXLA_MAX_RANK) {
    cxla_buffer_destroy(cb);
    return cx_pjrt_error(PJRT_Error_Code_INTERNAL, "cxla pjrt: a result that is not an array");
  }
  PJRT_Buffer *b = array_new(d, s.type, s.rank, s.dims, cxla_buffer_size_bytes(cb));
  if (!b) {
    cxla_buffer_destroy(cb);
    return cx_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "cxla pjrt: out of memory for a buffer");
  }
  b->buf = cb;
  *out = b;
  return NULL;
}

PJRT_Error *cx_pjrt_buffer_pending(PJRT_Device *d, PJRT_Buffer_Type t, size_t rank, const int64_t *dims,
                                   PJRT_Buffer **out) {
  *out = NULL;
  cxla_type ct = t == PJRT_Buffer_Type_TOKEN ? CXLA_TOKEN : cx_pjrt_to_cxla_type(t);
  if (ct == CXLA_INVALID || rank > CXLA_MAX_RANK)
    return cx_pjrt_error(PJRT_Error_Code_INTERNAL, "cxla pjrt: an output of type %d and rank %zu", (int)t, rank);
  size_t n = ct == CXLA_TOKEN ? 0 : cxla_type_size(ct);
  for (size_t i = 0; i < rank; i++) n *= (size_t)dims[i];
  PJRT_Buffer *b = array_new(d, ct, (int)rank, dims, n);
  if (!b || !(b->ready = cx_pjrt_event_new(0, NULL))) {
    free(b);
    return cx_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "cxla pjrt: out of memory for a buffer");
  }
  b->uses = 1; /* the execution that defines it */
  *out = b;
  return NULL;
}

void cx_pjrt_buffer_free(PJRT_Buffer *b) {
  if (!b) return;
  cx_pjrt_event_release(b->ready);
  cx_pjrt_error_free(b->error);
  free(b);
}

PJRT_Error *cx_pjrt_buffer_await(PJRT_Buffer *b, const char *fn) {
  if (!b->ready) return NULL;
  PJRT_Error *e = cx_pjrt_event_wait(b->ready);
  if (!e) return NULL;
  PJRT_Error *out = cx_pjrt_error(e->code, "%s: the execution that makes this buffer failed: %.*s", fn, (int)e->len, e->msg);
  cx_pjrt_error_free(e);
  return out;
}

void cx_pjrt_buffer_drop(PJRT_Buffer *b) {
  cxla_buffer_destroy(b->buf);
  b->buf = NULL;
  if (b->host_done) {
    cx_pjrt_event_complete(b->host_done, NULL);
    cx_pjrt_event_release(b->host_done);
    b->host_done = NULL;
  }
}

/* Copies between a dense row-major array and one laid out with byte strides `strides`
 * (gather: strided -> dense; else dense -> strided). */
static void strided_copy(int gather, char *dense, char *other, int rank, const int64_t *dims,
                         const int64_t *strides, size_t esize) {
  int64_t idx[CXLA_MAX_RANK] = {0}, total = 1;
  for (int i = 0; i < rank; i++) total *= dims[i];
  for (int64_t n = 0; n < total; n++) {
    int64_t off = 0;
    for (int i = 0; i < rank; i++) off += idx[i] * strides[i];
    if (gather) memcpy(dense + n * (int64_t)esize, other + off, esize);
    else memcpy(other + off, dense + n * (int64_t)esize, esize);
    for (int i = rank - 1; i >= 0; i--) {
      if (++idx[i] < dims[i]) break;
      idx[i] = 0;
    }
  }
}

/* Byte strides of a layout given as minor_to_major (a permutation of the dims), or an error. */
static PJRT_Error *layout_strides(const PJRT_Buffer_MemoryLayout *l, int rank, const int64_t *dims,
                                  size_t esize, int64_t *strides, int *dense, const char *fn) {
  *dense = 1;
  if (!l) {
    int64_t st = (int64_t)esize;
    for (int i = rank - 1; i >= 0; i--) strides[i] = st, st *= dims[i];
    return NULL;
  }
  if (l->type == PJRT_Buffer_MemoryLayout_Type_Strides) {
    if ((int)l->strides.num_byte_strides != rank || (rank && !l->strides.byte_strides))
      return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: %zu byte strides for a rank-%d array", fn,
                           l->strides.num_byte_strides, rank);
    memcpy(strides, l->strides.byte_strides, (size_t)rank * sizeof(int64_t));
  } else if (l->type == PJRT_Buffer_MemoryLayout_Type_Tiled) {
    if (l->tiled.num_tiles != 0)
      return cx_pjrt_error(PJRT_Error_Code_UNIMPLEMENTED, "%s: tiled layouts are not supported by cxla", fn);
    if ((int)l->tiled.minor_to_major_size != rank || (rank && !l->tiled.minor_to_major))
      return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: minor_to_major of %zu dims for a rank-%d array",
                           fn, l->tiled.minor_to_major_size, rank);
    int seen[CXLA_MAX_RANK] = {0};
    int64_t st = (int64_t)esize;
    for (int k = 0; k < rank; k++) {
      int64_t d = l->tiled.minor_to_major[k];
      if (d < 0 || d >= rank || seen[d])
        return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: minor_to_major is not a permutation", fn);
      seen[d] = 1;
      strides[d] = st;
      st *= dims[d];
    }
  } else {
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: unknown layout type %d", fn, (int)l->type);
  }
  int64_t st = (int64_t)esize;
  for (int i = rank - 1; i >= 0; i--) {
    if (dims[i] > 1 && strides[i] != st) *dense = 0;
    st *= dims[i];
  }
  return NULL;
}

static PJRT_Error *check_shape(PJRT_Buffer_Type pt, const int64_t *dims, size_t rank, cxla_type *t,
                               size_t *nbytes, const char *fn) {
  *t = cx_pjrt_to_cxla_type(pt);
  if (*t == CXLA_INVALID)
    return cx_pjrt_error(PJRT_Error_Code_UNIMPLEMENTED, "%s: element type %d is not supported by cxla", fn, (int)pt);
  if (rank > CXLA_MAX_RANK)
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: rank %zu exceeds cxla's %d", fn, rank, CXLA_MAX_RANK);
  if (rank && !dims) return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: NULL dims", fn);
  uint64_t n = cxla_type_size(*t);
  for (size_t i = 0; i < rank; i++) {
    if (dims[i] < 0) return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: dimension %zu is %lld", fn, i, (long long)dims[i]);
    if (dims[i] && n > (UINT64_MAX >> 1) / (uint64_t)dims[i])
      return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: the array is too large", fn);
    n *= (uint64_t)dims[i];
  }
  *nbytes = (size_t)n;
  return NULL;
}

PJRT_Error *cx_PJRT_Client_BufferFromHostBuffer(PJRT_Client_BufferFromHostBuffer_Args *args) {
  static const char fn[] = "PJRT_Client_BufferFromHostBuffer";
  CX_PJRT_ARGS(args, PJRT_Client_BufferFromHostBuffer_Args, buffer);
  args->buffer = NULL;
  args->done_with_host_buffer = NULL;
  PJRT_Client *c = args->client;
  if (!c) return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: NULL client", fn);
  if ((args->device && args->device->client != c) || (args->memory && args->memory->client != c))
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: the device or memory is not this client's", fn);
  if (args->device && args->memory && args->memory->device_list[0] != args->device)
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: memory %d is not device %d's", fn, args->memory->id,
                         args->device->desc.id);
  /* The memory names the device (JAX passes one or the other); neither: the default device. */
  PJRT_Device *dev = args->memory ? args->memory->device_list[0] : args->device ? args->device : &c->devices[0];
  cxla_type t;
  size_t nbytes = 0;
  PJRT_Error *e = check_shape(args->type, args->dims, args->num_dims, &t, &nbytes, fn);
  if (e) return e;
  int rank = (int)args->num_dims;
  size_t esize = cxla_type_size(t);
  if (args->device_layout) {
    int64_t st[CXLA_MAX_RANK];
    int dense;
    if ((e = layout_strides(args->device_layout, rank, args->dims, esize, st, &dense, fn))) return e;
    if (!dense)
      return cx_pjrt_error(PJRT_Error_Code_UNIMPLEMENTED, "%s: cxla keeps arrays row-major; another device layout was asked for", fn);
  }
  if (!args->data && nbytes) return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: NULL data", fn);
  int64_t strides[CXLA_MAX_RANK];
  int dense = 1;
  if (args->byte_strides) {
    PJRT_Buffer_MemoryLayout l = {.type = PJRT_Buffer_MemoryLayout_Type_Strides};
    l.strides.byte_strides = args->byte_strides;
    l.strides.num_byte_strides = args->num_byte_strides;
    if ((e = layout_strides(&l, rank, args->dims, esize, strides, &dense, fn))) return e;
  }
  /* Zero-copy reads host memory in place: the cpu device only (the GPU's buffers are copies). */
  int zero_copy = dev->host && (args->host_buffer_semantics == PJRT_HostBufferSemantics_kImmutableZeroCopy ||
                   args->host_buffer_semantics == PJRT_HostBufferSemantics_kMutableZeroCopy) &&
                  dense && nbytes && ((uintptr_t)args->data % esize) == 0;
  const void *src = args->data;
  char *gathered = NULL;
  if (!dense && nbytes) {
    gathered = malloc(nbytes);
    if (!gathered) return cx_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "%s: out of memory", fn);
    strided_copy(1, gathered, (char *)args->data, rank, args->dims, strides, esize);
    src = gathered;
  }
  PJRT_Event *host_done = NULL;
  if (zero_copy && !(host_done = cx_pjrt_event_new(0, NULL))) {
    free(gathered);
    return cx_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "%s: out of memory", fn);
  }
  cxla_buffer *cb = NULL;
  cx_pjrt_lock(c);
  cxla_status s = zero_copy ? cxla_buffer_wrap(c->ctx, dev->backend, t, rank, args->dims, src, nbytes, &cb)
                            : cxla_buffer_from_data(c->ctx, dev->backend, t, rank, args->dims, src, nbytes, &cb);
  e = s == CXLA_OK ? NULL : cx_pjrt_error_cxla(c->ctx, s, fn);
  cx_pjrt_unlock(c);
  free(gathered);
  PJRT_Buffer *b = NULL;
  if (!e) e = cx_pjrt_buffer_wrap(dev, cb, &b);
  if (e) {
    cx_pjrt_event_release(host_done);
    return e;
  }
  if (zero_copy) {
    /* Two references: the caller's handle and the buffer's, which completes it. */
    b->wrapped = 1;
    b->host_done = host_done;
    cx_pjrt_event_retain(host_done);
    args->done_with_host_buffer = host_done;
  } else if (!(args->done_with_host_buffer = cx_pjrt_event_new(1, NULL))) {
    cx_pjrt_buffer_drop(b);
    cx_pjrt_buffer_free(b);
    return cx_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "%s: out of memory", fn);
  }
  args->buffer = b;
  return NULL;
}

#define NEED_BUFFER(b, name)                                                                  \
  if (!(b)) return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: NULL buffer", name)

/* Marks b deleted (and destroyed); 1 if a queued execution still uses it, which then lets go
 * of it (stream.c), else 0: the caller does. */
static int mark(PJRT_Buffer *b, int destroy) {
  cx_pjrt_stream *s = &b->client->stream;
  pthread_mutex_lock(&s->m);
  b->deleted = 1;
  int busy = b->uses > 0;
  if (busy && destroy) b->destroyed = 1;
  pthread_mutex_unlock(&s->m);
  return busy;
}

PJRT_Error *cx_PJRT_Buffer_Destroy(PJRT_Buffer_Destroy_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Buffer_Destroy_Args, buffer);
  if (!args->buffer || mark(args->buffer, 1)) return NULL;
  cx_pjrt_buffer_drop(args->buffer);
  cx_pjrt_buffer_free(args->buffer);
  return NULL;
}

PJRT_Error *cx_PJRT_Buffer_ElementType(PJRT_Buffer_ElementType_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Buffer_ElementType_Args, type);
  NEED_BUFFER(args->buffer, "PJRT_Buffer_ElementType");
  args->type = cx_pjrt_from_cxla_type(args->buffer->type);
  return NULL;
}

PJRT_Error *cx_PJRT_Buffer_Dimensions(PJRT_Buffer_Dimensions_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Buffer_Dimensions_Args, num_dims);
  NEED_BUFFER(args->buffer, "PJRT_Buffer_Dimensions");
  args->dims = args->buffer->dims;
  args->num_dims = (size_t)args->buffer->rank;
  return NULL;
}

PJRT_Error *cx_PJRT_Buffer_UnpaddedDimensions(PJRT_Buffer_UnpaddedDimensions_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Buffer_UnpaddedDimensions_Args, num_dims);
  NEED_BUFFER(args->buffer, "PJRT_Buffer_UnpaddedDimensions");
  args->unpadded_dims = args->buffer->dims; /* cxla has no dynamic shapes: no padding */
  args->num_dims = (size_t)args->buffer->rank;
  return NULL;
}

PJRT_Error *cx_PJRT_Buffer_DynamicDimensionIndices(PJRT_Buffer_DynamicDimensionIndices_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Buffer_DynamicDimensionIndices_Args, num_dynamic_dims);
  args->dynamic_dim_indices = NULL;
  args->num_dynamic_dims = 0;
  return NULL;
}

PJRT_Error *cx_PJRT_Buffer_GetMemoryLayout(PJRT_Buffer_GetMemoryLayout_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Buffer_GetMemoryLayout_Args, layout);
  NEED_BUFFER(args->buffer, "PJRT_Buffer_GetMemoryLayout");
  memset(&args->layout, 0, sizeof args->layout);
  args->layout.struct_size = sizeof args->layout;
  args->layout.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  args->layout.tiled.struct_size = sizeof args->layout.tiled;
  args->layout.tiled.minor_to_major = args->buffer->minor_to_major;
  args->layout.tiled.minor_to_major_size = (size_t)args->buffer->rank;
  return NULL;
}

PJRT_Error *cx_PJRT_Buffer_OnDeviceSizeInBytes(PJRT_Buffer_OnDeviceSizeInBytes_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Buffer_OnDeviceSizeInBytes_Args, on_device_size_in_bytes);
  NEED_BUFFER(args->buffer, "PJRT_Buffer_OnDeviceSizeInBytes");
  args->on_device_size_in_bytes = args->buffer->nbytes;
  return NULL;
}

PJRT_Error *cx_PJRT_Buffer_Device(PJRT_Buffer_Device_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Buffer_Device_Args, device);
  NEED_BUFFER(args->buffer, "PJRT_Buffer_Device");
  args->device = args->buffer->device;
  return NULL;
}

PJRT_Error *cx_PJRT_Buffer_Memory(PJRT_Buffer_Memory_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Buffer_Memory_Args, memory);
  NEED_BUFFER(args->buffer, "PJRT_Buffer_Memory");
  args->memory = args->buffer->device->memory_list[0];
  return NULL;
}

PJRT_Error *cx_PJRT_Buffer_Delete(PJRT_Buffer_Delete_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Buffer_Delete_Args, buffer);
  NEED_BUFFER(args->buffer, "PJRT_Buffer_Delete");
  if (!mark(args->buffer, 0)) cx_pjrt_buffer_drop(args->buffer);
  return NULL;
}

PJRT_Error *cx_PJRT_Buffer_IsDeleted(PJRT_Buffer_IsDeleted_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Buffer_IsDeleted_Args, is_deleted);
  NEED_BUFFER(args->buffer, "PJRT_Buffer_IsDeleted");
  args->is_deleted = args->buffer->deleted != 0;
  return NULL;
}

PJRT_Error *cx_PJRT_Buffer_IsOnCpu(PJRT_Buffer_IsOnCpu_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Buffer_IsOnCpu_Args, is_on_cpu);
  NEED_BUFFER(args->buffer, "PJRT_Buffer_IsOnCpu");
  args->is_on_cpu = args->buffer->device->host != 0;
  return NULL;
}

static PJRT_Error *deleted_error(const char *fn) {
  return cx_pjrt_error(PJRT_Error_Code_FAILED_PRECONDITION, "%s: the buffer has been deleted or donated", fn);
}

/* The data of a live buffer in host memory, or NULL: the buffer's own memory on the cpu; on
 * the GPU, the host copy cxla makes at the first call and keeps with the buffer (the call uses
 * the context's device: under the client's lock). */
static void *buffer_data(PJRT_Buffer *b) {
  if (!b->buf) return NULL;
  if (b->device->host) return cxla_buffer_data(b->buf);
  cx_pjrt_lock(b->client);
  void *p = cxla_buffer_data(b->buf);
  cx_pjrt_unlock(b->client);
  return p;
}

/* A GPU buffer's memory is not the process's: no pointer into it is handed out. */
static PJRT_Error *device_pointer_error(PJRT_Buffer *b, const char *fn) {
  return cx_pjrt_error(PJRT_Error_Code_UNIMPLEMENTED, "%s: the buffer is on device %d (%s), whose memory cxla does not "
                       "expose; copy it to device 0 (the cpu) first", fn, b->device->desc.id, b->device->desc.kind);
}

PJRT_Error *cx_PJRT_Buffer_ReadyEvent(PJRT_Buffer_ReadyEvent_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Buffer_ReadyEvent_Args, event);
  NEED_BUFFER(args->buffer, "PJRT_Buffer_ReadyEvent");
  /* A deleted buffer's event carries the error rather than failing the call, which XLA's
   * client does not expect to fail. */
  PJRT_Buffer *b = args->buffer;
  if (b->ready && !b->deleted) { /* a queued execution's output: its own event */
    cx_pjrt_event_retain(b->ready);
    args->event = b->ready;
    return NULL;
  }
  PJRT_Error *e = b->deleted ? deleted_error("PJRT_Buffer_ReadyEvent") : NULL;
  args->event = cx_pjrt_event_new(1, e);
  if (!args->event) return cx_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "PJRT_Buffer_ReadyEvent: out of memory");
  return NULL;
}

PJRT_Error *cx_PJRT_Buffer_UnsafePointer(PJRT_Buffer_UnsafePointer_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Buffer_UnsafePointer_Args, buffer_pointer);
  NEED_BUFFER(args->buffer, "PJRT_Buffer_UnsafePointer");
  if (args->buffer->deleted) return deleted_error("PJRT_Buffer_UnsafePointer");
  PJRT_Error *e = cx_pjrt_buffer_await(args->buffer, "PJRT_Buffer_UnsafePointer");
  if (e) return e;
  if (!args->buffer->device->host) return device_pointer_error(args->buffer, "PJRT_Buffer_UnsafePointer");
  args->buffer_pointer = (uintptr_t)buffer_data(args->buffer);
  return NULL;
}

PJRT_Error *cx_PJRT_Buffer_OpaqueDeviceMemoryDataPointer(PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args, device_memory_ptr);
  NEED_BUFFER(args->buffer, "PJRT_Buffer_OpaqueDeviceMemoryDataPointer");
  if (args->buffer->deleted) return deleted_error("PJRT_Buffer_OpaqueDeviceMemoryDataPointer");
  PJRT_Error *e = cx_pjrt_buffer_await(args->buffer, "PJRT_Buffer_OpaqueDeviceMemoryDataPointer");
  if (e) return e;
  if (!args->buffer->device->host) return device_pointer_error(args->buffer, "PJRT_Buffer_OpaqueDeviceMemoryDataPointer");
  args->device_memory_ptr = buffer_data(args->buffer);
  return NULL;
}

PJRT_Error *cx_PJRT_Buffer_IncreaseExternalReferenceCount(PJRT_Buffer_IncreaseExternalReferenceCount_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Buffer_IncreaseExternalReferenceCount_Args, buffer);
  NEED_BUFFER(args->buffer, "PJRT_Buffer_IncreaseExternalReferenceCount");
  if (args->buffer->deleted) return deleted_error("PJRT_Buffer_IncreaseExternalReferenceCount");
  cx_pjrt_lock(args->buffer->client);
  args->buffer->external_refs++;
  cx_pjrt_unlock(args->buffer->client);
  return NULL;
}

PJRT_Error *cx_PJRT_Buffer_DecreaseExternalReferenceCount(PJRT_Buffer_DecreaseExternalReferenceCount_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Buffer_DecreaseExternalReferenceCount_Args, buffer);
  NEED_BUFFER(args->buffer, "PJRT_Buffer_DecreaseExternalReferenceCount");
  PJRT_Error *e = NULL;
  cx_pjrt_lock(args->buffer->client);
  if (args->buffer->external_refs <= 0)
    e = cx_pjrt_error(PJRT_Error_Code_FAILED_PRECONDITION,
                      "PJRT_Buffer_DecreaseExternalReferenceCount: no external reference is held");
  else
    args->buffer->external_refs--;
  cx_pjrt_unlock(args->buffer->client);
  return e;
}

/* A copy of b in new memory cxla owns on device d: on the cpu from b's host data; to, from or
 * within the GPU by cxla_buffer_copy_to. */
static PJRT_Error *copy_buffer(PJRT_Buffer *b, PJRT_Device *d, PJRT_Buffer **out, const char *fn) {
  *out = NULL;
  if (b->deleted) return deleted_error(fn);
  PJRT_Error *e = cx_pjrt_buffer_await(b, fn);
  if (e) return e;
  PJRT_Client *c = b->client;
  cxla_buffer *cb = NULL;
  cx_pjrt_lock(c);
  cxla_status s = d->host && b->device->host
                      ? cxla_buffer_from_data(c->ctx, d->backend, b->type, b->rank, b->dims, cxla_buffer_data(b->buf),
                                              b->nbytes, &cb)
                      : cxla_buffer_copy_to(b->buf, d->backend, &cb);
  e = s == CXLA_OK ? NULL : cx_pjrt_error_cxla(c->ctx, s, fn);
  cx_pjrt_unlock(c);
  return e ? e : cx_pjrt_buffer_wrap(d, cb, out);
}

PJRT_Error *cx_PJRT_Buffer_CopyToDevice(PJRT_Buffer_CopyToDevice_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Buffer_CopyToDevice_Args, dst_buffer);
  NEED_BUFFER(args->buffer, "PJRT_Buffer_CopyToDevice");
  if (!args->dst_device || args->dst_device->client != args->buffer->client)
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Buffer_CopyToDevice: not a device of this client");
  return copy_buffer(args->buffer, args->dst_device, &args->dst_buffer, "PJRT_Buffer_CopyToDevice");
}

PJRT_Error *cx_PJRT_Buffer_CopyToMemory(PJRT_Buffer_CopyToMemory_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Buffer_CopyToMemory_Args, dst_buffer);
  NEED_BUFFER(args->buffer, "PJRT_Buffer_CopyToMemory");
  if (!args->dst_memory || args->dst_memory->client != args->buffer->client)
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Buffer_CopyToMemory: not a memory of this client");
  return copy_buffer(args->buffer, args->dst_memory->device_list[0], &args->dst_buffer, "PJRT_Buffer_CopyToMemory");
}

PJRT_Error *cx_PJRT_Buffer_ToHostBuffer(PJRT_Buffer_ToHostBuffer_Args *args) {
  static const char fn[] = "PJRT_Buffer_ToHostBuffer";
  CX_PJRT_ARGS(args, PJRT_Buffer_ToHostBuffer_Args, event);
  PJRT_Buffer *b = args->src;
  NEED_BUFFER(b, fn);
  args->event = NULL;
  if (b->type == CXLA_TOKEN)
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: a token orders effects and has no value to copy", fn);
  size_t esize = cxla_type_size(b->type);
  int64_t strides[CXLA_MAX_RANK];
  int dense;
  PJRT_Error *e = layout_strides(args->host_layout, b->rank, b->dims, esize, strides, &dense, fn);
  if (e) return e;
  /* The bytes the layout spans: the furthest element's end. */
  size_t need = b->nbytes;
  if (!dense && b->nbytes) {
    int64_t last = 0;
    for (int i = 0; i < b->rank; i++) last += (b->dims[i] - 1) * strides[i];
    need = (size_t)last + esize;
  }
  if (!args->dst) { /* the size query */
    args->dst_size = need;
    return NULL;
  }
  if (b->deleted) return deleted_error(fn);
  if ((e = cx_pjrt_buffer_await(b, fn))) return e;
  if (args->dst_size < need)
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: dst_size %zu is smaller than the %zu bytes of the array", fn,
                         args->dst_size, need);
  char *src = buffer_data(b);
  if (!src && b->nbytes) {
    cx_pjrt_lock(b->client);
    e = cx_pjrt_error(PJRT_Error_Code_ABORTED, "%s: copying from device %d (%s): %s", fn, b->device->desc.id,
                      b->device->desc.kind, cxla_context_errmsg(b->client->ctx));
    cx_pjrt_unlock(b->client);
    return e;
  }
  if (dense) {
    if (b->nbytes) memcpy(args->dst, src, b->nbytes);
  } else {
    strided_copy(0, src, args->dst, b->rank, b->dims, strides, esize);
  }
  args->event = cx_pjrt_event_new(1, NULL);
  if (!args->event) return cx_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "%s: out of memory", fn);
  return NULL;
}
