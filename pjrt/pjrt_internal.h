/* pjrt_internal.h — the objects behind libcxla_pjrt.so's opaque PJRT handles, shared by the
 * files of pjrt/. The plugin is a client of cxla's public API only (include/cxla.h).
 *
 * Model: one client owns one cxla context and shows one device per cxla device: the host CPU
 * (id 0, kind "cpu", the cpu backend) and, where the gpu backend runs (or the emulated GPU,
 * --pjrt-gpu=emu), the GPU (id 1, kind "gpu" or "gpu-emu"), each with one memory space of kind
 * "device" (docs/pjrt.md). cxla calls run under the client's lock (a cxla context is used by
 * one thread at a time). The GPU device's executions (every device's with --pjrt-async=on) run
 * in order on the client's stream thread (stream.c): PJRT_LoadedExecutable_Execute checks its
 * arguments, makes the outputs and returns, and the outputs' ready events complete when the
 * execution has run, as on XLA's own clients. The cpu device's, and programs with host
 * callbacks, run on the calling thread (execute.c says why). Every other event a call returns
 * is already complete, except the done-with-host-buffer event of a zero-copy buffer, which
 * completes when the buffer lets go of the caller's memory. */
#ifndef CX_PJRT_INTERNAL_H
#define CX_PJRT_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "cxla.h"
#include "pjrt_abi.h"
#include "pjrt_abi_extensions.h"

#define CX_PJRT_PLATFORM "cxla"
#define CX_PJRT_BACKEND "cpu"  /* device 0's */
#define CX_PJRT_MAX_DEVICES 2
#define CX_PJRT_MEMORY_KIND "device"

/* ---- errors (error.c) ---- */
struct PJRT_Error {
  const PJRT_Error_FunctionTable *vtable; /* first, as the ABI has it since 0.107 */
  PJRT_Error_Code code;
  size_t len;
  const char *msg; /* the text follows the struct in the same allocation */
};
/* A new error with a printf-style message; never NULL (a static out-of-memory error when the
 * allocation fails). */
PJRT_Error *cx_pjrt_error(PJRT_Error_Code code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
_Static_assert(offsetof(PJRT_Error, vtable) == 0, "the ABI reads an error's function table first");
/* The error for a failed cxla call: the context's message and the status mapped to a code. */
PJRT_Error *cx_pjrt_error_cxla(cxla_context *ctx, cxla_status s, const char *what);
PJRT_Error *cx_pjrt_error_copy(const PJRT_Error *e);
void cx_pjrt_error_free(PJRT_Error *e);
/* Checks an Args struct's struct_size against the part of it this plugin reads. */
#define CX_PJRT_ARGS(args, type, last)                                                        \
  do {                                                                                        \
    if (!(args))                                                                              \
      return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: NULL arguments", #type);    \
    if ((args)->struct_size < offsetof(type, last) + sizeof((args)->last))                    \
      return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,                                  \
                           "%s: struct_size %zu is smaller than the %zu bytes cxla reads",    \
                           #type, (args)->struct_size, offsetof(type, last) + sizeof((args)->last)); \
  } while (0)

/* ---- events (event.c) ---- */
/* Reference counted: the caller's handle is one reference; an owner (a zero-copy buffer)
 * may hold another until it completes the event. */
PJRT_Event *cx_pjrt_event_new(int ready, PJRT_Error *error); /* takes error; NULL on OOM */
/* Waits for ev: NULL, or a copy of its error. */
PJRT_Error *cx_pjrt_event_wait(PJRT_Event *ev);
void cx_pjrt_event_complete(PJRT_Event *ev, PJRT_Error *error);
void cx_pjrt_event_release(PJRT_Event *ev);
void cx_pjrt_event_retain(PJRT_Event *ev);

/* ---- client, device, memory (client.c) ---- */
struct PJRT_Memory {
  const PJRT_Memory_FunctionTable *vtable; /* first, as the ABI has it since 0.105 */
  PJRT_Client *client;
  int id;                        /* its device's id */
  PJRT_Device *device_list[1];   /* the device it belongs to */
  char debug[48], str[32];
  struct { const void *key; void *data; void (*dtor)(void *); } user[8];
  int nuser;
};
_Static_assert(offsetof(PJRT_Memory, vtable) == 0, "the ABI reads a memory's function table first");
struct PJRT_DeviceDescription {
  PJRT_Client *client;
  int id;                        /* also its local hardware id: unique in the client */
  const char *kind;              /* "cpu", or the GPU backend's name: "gpu", "gpu-emu" */
  char debug[32], str[32];
};
struct PJRT_Device {
  PJRT_Client *client;
  PJRT_DeviceDescription desc;
  const char *backend;           /* the cxla backend that compiles for it and holds its buffers */
  int host;                      /* its buffers are in host memory (the cpu device) */
  PJRT_Memory *memory_list[1];   /* its one memory space */
  PJRT_Device *self_list[1];     /* itself, as an executable's addressable devices */
};
/* The client's executions, run in order by one thread (stream.c). */
typedef struct cx_pjrt_job cx_pjrt_job;
typedef struct cx_pjrt_stream {
  pthread_mutex_t m;       /* the queue, and every buffer's uses, deleted, destroyed and buf */
  pthread_cond_t cv;       /* a job queued or finished, or the thread asked to stop */
  cx_pjrt_job *head, *tail;
  int busy;                /* the thread is running a job it took off the queue */
  int started, stop;
  pthread_t thread;
} cx_pjrt_stream;

struct PJRT_Client {
  cxla_context *ctx;
  pthread_mutex_t lock;
  enum { CX_PJRT_ASYNC_NONE, CX_PJRT_ASYNC_GPU, CX_PJRT_ASYNC_ALL } async; /* --pjrt-async: off, auto, on */
  cx_pjrt_stream stream;
  int ndevices;                  /* 1 (cpu) or 2 (cpu, gpu) */
  PJRT_Device devices[CX_PJRT_MAX_DEVICES];
  PJRT_Memory memories[CX_PJRT_MAX_DEVICES];
  PJRT_Device *device_list[CX_PJRT_MAX_DEVICES];
  PJRT_Memory *memory_list[CX_PJRT_MAX_DEVICES];
  char version[64];
};
void cx_pjrt_lock(PJRT_Client *c);
void cx_pjrt_unlock(PJRT_Client *c);
/* Device `id` of c, or NULL. */
PJRT_Device *cx_pjrt_device(PJRT_Client *c, int64_t id);

/* ---- element types (buffer.c) ---- */
cxla_type cx_pjrt_to_cxla_type(PJRT_Buffer_Type t);     /* CXLA_INVALID if none */
PJRT_Buffer_Type cx_pjrt_from_cxla_type(cxla_type t);  /* PJRT_Buffer_Type_INVALID if none */

/* ---- buffers (buffer.c) ---- */
/* A dense array's layout, all cxla keeps: its minor-to-major dimension order (descending for
 * every array cxla makes, as XLA's CPU client's default). */
struct PJRT_Layouts_MemoryLayout {
  int rank;
  int64_t minor_to_major[CXLA_MAX_RANK];
};
struct PJRT_Buffer {
  PJRT_Client *client;
  PJRT_Device *device;       /* where it lives (its memory is the device's one) */
  cxla_buffer *buf;          /* NULL while the execution that defines it is queued, after it
                              * failed, and once deleted or donated */
  int deleted;               /* deleted or donated: it has no value any more */
  PJRT_Event *ready;         /* NULL when defined at birth; else completes when the execution
                              * defining it has run (with its error if it failed) */
  PJRT_Error *error;         /* that execution's failure */
  int uses;                  /* queued executions that read or consume it */
  int destroyed;             /* PJRT_Buffer_Destroy came while in use: the stream frees it */
  cxla_type type;
  int rank;
  int64_t dims[CXLA_MAX_RANK];
  int64_t minor_to_major[CXLA_MAX_RANK];
  size_t nbytes;
  int wrapped;               /* reads the caller's memory in place (zero-copy) */
  PJRT_Event *host_done;     /* zero-copy: completed when the caller's memory is let go */
  int64_t external_refs;
};
/* A PJRT buffer on device d over a cxla array buffer in d's memory (taken over; freed on
 * failure). */
PJRT_Error *cx_pjrt_buffer_wrap(PJRT_Device *d, cxla_buffer *b, PJRT_Buffer **out);
/* An output of a queued execution: its shape, no value yet, and a pending ready event. */
PJRT_Error *cx_pjrt_buffer_pending(PJRT_Device *d, PJRT_Buffer_Type t, size_t rank, const int64_t *dims,
                                   PJRT_Buffer **out);
/* Lets go of the cxla buffer (delete or donation); completes host_done. */
void cx_pjrt_buffer_drop(PJRT_Buffer *b);
/* Frees the struct (after cx_pjrt_buffer_drop) and what it holds besides the buffer. */
void cx_pjrt_buffer_free(PJRT_Buffer *b);
/* Waits until b's value is defined: NULL, or the error of the execution that was to define it
 * (a copy, for the caller to return). Never waits for a buffer defined at birth. */
PJRT_Error *cx_pjrt_buffer_await(PJRT_Buffer *b, const char *fn);

/* ---- compile options (compile_options.c) ---- */
typedef struct cx_pjrt_options {
  int64_t num_replicas;  /* 1 when absent */
  int64_t num_partitions;
  int tupled_arguments;
  int64_t num_argument_layouts;
  int64_t device_id;     /* the device assignment's one device; -1 when there is none */
} cx_pjrt_options;
/* Reads the fields cxla needs from a serialized xla.CompileOptionsProto, skipping the rest;
 * truncated or malformed bytes are an error naming the byte offset. */
PJRT_Error *cx_pjrt_options_decode(const void *bytes, size_t len, cx_pjrt_options *out);

/* A compile option's value as JAX passed it (an OptionOverrideProto). */
typedef struct cx_pjrt_option_value {
  enum { CX_PJRT_OPTION_NONE, CX_PJRT_OPTION_STRING, CX_PJRT_OPTION_BOOL, CX_PJRT_OPTION_INT,
         CX_PJRT_OPTION_DOUBLE } kind;
  const char *str; /* not NUL-terminated: len bytes */
  size_t len;
  int b;
  int64_t i;
  double d;
} cx_pjrt_option_value;
/* NULL if `name` (len bytes) is a field of XLA's DebugOptions and v a value its type takes, as
 * XLA's CompileOptions::ApplyOption decides (debug_option.c); else XLA's error. */
PJRT_Error *cx_pjrt_debug_option_check(const char *name, size_t len, const cx_pjrt_option_value *v);

/* ---- executables (executable.c, execute.c) ---- */
struct PJRT_Executable {
  int refs;                      /* the loaded executable's and each GetExecutable handle's */
  pthread_mutex_t ref_lock;
  cxla_executable *exe;
  char *name;
  char *hlo;                     /* the module as compiled, for Serialize */
  char *program;                 /* the StableHLO artifact as given, for OptimizedProgram (NULL:
                                  * HLO text given, or a deserialized executable) */
  size_t program_len;
  char *options;                 /* the serialized CompileOptionsProto as given */
  size_t options_len;
  cx_pjrt_options opts;
  PJRT_Device *device;           /* the device it was compiled for and runs on */
  char assignment[8];            /* its DeviceAssignmentProto, serialized */
  int nparams;
  char *token_params;            /* [nparams]: 1 for a token parameter (any argument passes one) */
  struct cx_pjrt_param {         /* [nparams]: what an argument must be (checked at the call) */
    cxla_type type;              /* CXLA_TUPLE or CXLA_INVALID: not checked */
    int rank;
    int64_t dims[CXLA_MAX_RANK];
  } *param_shapes;
  int noutputs;
  int tuple_result;              /* the ENTRY returns a tuple: its elements are the outputs */
  PJRT_Buffer_Type *out_types;
  size_t *out_ranks;
  int64_t *out_dims;             /* all outputs' dims, one after the other */
  const char **kinds;            /* CX_PJRT_MEMORY_KIND, max(nparams, noutputs) times */
  size_t *kind_sizes;
  int host_callbacks;            /* calls the framework's host callbacks: runs on the caller's
                                  * thread (a callback may need what that thread holds) */
  char fingerprint[17];
  PJRT_NamedValue cost[3];       /* cxla_executable_cost: flops, transcendentals, bytes accessed */
  /* Parameters' then outputs' layouts (layouts.c), and pointers to each: what the Layouts
   * extension hands the client. */
  PJRT_Layouts_MemoryLayout *layouts;
  PJRT_Layouts_MemoryLayout **layout_ptrs;
};
/* Fills e->layouts from m's ENTRY parameters and e's outputs (describe_outputs ran). */
PJRT_Error *cx_pjrt_executable_layouts(PJRT_Executable *e, cxla_module *m);
struct PJRT_LoadedExecutable {
  PJRT_Client *client;
  PJRT_Executable *exec;
  int deleted;
};
/* Parses (format "mlir": a StableHLO portable artifact; "cxla-hlo": HLO text) and compiles
 * with the backend of the device the options assign (device 0 when they assign none). Call
 * under the client's lock. */
PJRT_Error *cx_pjrt_executable_build(PJRT_Client *c, const char *format, size_t format_len,
                                     const char *code, size_t code_len, const char *options,
                                     size_t options_len, PJRT_Executable **out);
/* The same, linking machine_code (a cxla_executable_code entry, mlen bytes) instead of running
 * LLVM when it is an entry of this compile (cxla_compile_options.code). */
PJRT_Error *cx_pjrt_executable_build_with(PJRT_Client *c, const char *format, size_t format_len,
                                          const char *code, size_t code_len, const char *options,
                                          size_t options_len, const void *machine_code, size_t mlen,
                                          PJRT_Executable **out);
/* A reference more (a job, GetExecutable), given back by cx_pjrt_executable_release. */
void cx_pjrt_executable_retain(PJRT_Executable *e);
void cx_pjrt_executable_release(PJRT_Executable *e);
PJRT_Error *cx_pjrt_loaded_new(PJRT_Client *c, PJRT_Executable *e, PJRT_LoadedExecutable **out);

/* ---- the execution stream (stream.c) ---- */
/* One execution to run: e (a reference held), its n arguments (each counted in its uses, the
 * consumed ones already marked deleted), and its pending outputs. */
struct cx_pjrt_job {
  cx_pjrt_job *next;
  PJRT_Executable *e;
  size_t n;
  PJRT_Buffer **in;
  char *consumed;        /* [n]: donated, its memory taken */
  char *keep;            /* [n]: donated but listed as non-donatable: a copy is donated */
  PJRT_Buffer **out;     /* [e->noutputs] */
  PJRT_Event *done;      /* the device-complete event, or NULL */
  void **scratch;        /* what the stream needs once it has run (stream.c) */
};
/* A job for e over the n arguments in (copied); NULL when memory runs out. */
cx_pjrt_job *cx_pjrt_job_new(PJRT_Executable *e, PJRT_Buffer *const *in, size_t n);
void cx_pjrt_job_free(cx_pjrt_job *j);
void cx_pjrt_stream_init(cx_pjrt_stream *s);
/* Queues j (taken over). The thread starts at the first job; NULL, or an error if it cannot. */
PJRT_Error *cx_pjrt_stream_push(PJRT_Client *c, cx_pjrt_job *j);
/* Waits until every queued execution has run. */
void cx_pjrt_stream_drain(PJRT_Client *c);
/* Drains, stops the thread and frees what the stream holds. */
void cx_pjrt_stream_destroy(PJRT_Client *c);
/* Runs job j's execution on the calling thread (execute.c); call under the client's lock. On
 * success out[] holds the outputs' cxla buffers; the consumed arguments are for the caller to
 * drop once it has let go of the lock (dropping a zero-copy buffer runs the framework's
 * callbacks). */
PJRT_Error *cx_pjrt_run(PJRT_Client *c, const cx_pjrt_job *j, cxla_buffer **out);

/* FNV-1a, 64 bits: fingerprints and the serialized format's checksum. */
uint64_t cx_pjrt_hash(uint64_t h, const void *data, size_t n);
#define CX_PJRT_HASH_SEED 0xcbf29ce484222325ull

#endif
