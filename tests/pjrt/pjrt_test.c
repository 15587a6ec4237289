/* pjrt_test.c — libcxla_pjrt.so driven the way JAX's PJRT client drives it: dlopen, GetPjrtApi,
 * version and attributes, a client with its device and memory, buffers from and to host
 * (copied, zero-copy, strided, other host layouts), compile of the committed artifacts in
 * tests/pjrt/artifacts (program format "cxla-hlo", and "mlir": StableHLO artifacts as JAX's
 * client sends them), execute against the values JAX computed, donation,
 * serialize/deserialize, the Layouts and Shardings extensions, the error paths (bad programs, options, arguments, types, corrupt
 * serialized bytes), and the GPU device on the emulated GPU (pjrt_test_gpu.inc). Usage: pjrt_test LIBCXLA_PJRT.so ARTIFACT_DIR. Ends "N passed, N failed". */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pjrt_abi_extensions.h"

static const PJRT_Api *api;
static int passed, failed;
static const char *current;

#define CHECK(cond)                                                                           \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      printf("  %s:%d: [%s] CHECK(%s) failed\n", __FILE__, __LINE__, current, #cond);         \
      failed_now = 1;                                                                         \
    }                                                                                         \
  } while (0)
static int failed_now;

/* The error's message (static copy) and code, destroying it; "" / OK for NULL. */
static _Thread_local char last_msg[2048]; /* per thread: the threads case calls take() at once */
static PJRT_Error_Code take(PJRT_Error *e) {
  last_msg[0] = 0;
  if (!e) return PJRT_Error_Code_OK;
  PJRT_Error_Message_Args m = {.struct_size = sizeof m, .error = e};
  api->PJRT_Error_Message(&m);
  snprintf(last_msg, sizeof last_msg, "%.*s", (int)m.message_size, m.message);
  PJRT_Error_GetCode_Args g = {.struct_size = sizeof g, .error = e};
  PJRT_Error *ge = api->PJRT_Error_GetCode(&g);
  PJRT_Error_Destroy_Args d = {.struct_size = sizeof d, .error = e};
  api->PJRT_Error_Destroy(&d);
  return ge ? PJRT_Error_Code_UNKNOWN : g.code;
}
#define OK(call)                                                                              \
  do {                                                                                        \
    PJRT_Error_Code c_ = take(call);                                                          \
    if (c_ != PJRT_Error_Code_OK) {                                                           \
      printf("  %s:%d: [%s] %s -> code %d: %s\n", __FILE__, __LINE__, current, #call, c_, last_msg); \
      failed_now = 1;                                                                         \
    }                                                                                         \
  } while (0)

static void run(const char *name, void (*fn)(void)) {
  current = name;
  failed_now = 0;
  fn();
  if (failed_now) failed++, printf("FAIL %s\n", name);
  else passed++, printf("ok   %s\n", name);
}

static PJRT_Client *client;
static const char *artifacts;

/* ---- helpers ---- */
static PJRT_Buffer *from_host(const void *data, PJRT_Buffer_Type t, int rank, const int64_t *dims,
                              PJRT_HostBufferSemantics sem, PJRT_Event **done) {
  PJRT_Client_BufferFromHostBuffer_Args a = {.struct_size = sizeof a, .client = client, .data = data, .type = t,
                                             .dims = dims, .num_dims = (size_t)rank, .host_buffer_semantics = sem};
  PJRT_Error_Code c = take(api->PJRT_Client_BufferFromHostBuffer(&a));
  if (c != PJRT_Error_Code_OK) {
    printf("  [%s] BufferFromHostBuffer: %s\n", current, last_msg);
    return NULL;
  }
  if (done) *done = a.done_with_host_buffer;
  else {
    PJRT_Event_Destroy_Args d = {.struct_size = sizeof d, .event = a.done_with_host_buffer};
    take(api->PJRT_Event_Destroy(&d));
  }
  return a.buffer;
}

static void destroy_buffer(PJRT_Buffer *b) {
  PJRT_Buffer_Destroy_Args d = {.struct_size = sizeof d, .buffer = b};
  take(api->PJRT_Buffer_Destroy(&d));
}

static void destroy_event(PJRT_Event *e) {
  PJRT_Event_Destroy_Args d = {.struct_size = sizeof d, .event = e};
  take(api->PJRT_Event_Destroy(&d));
}

/* Reads b into a malloc'd array (dense row-major), size into *n. */
static void *to_host(PJRT_Buffer *b, size_t *n) {
  PJRT_Buffer_ToHostBuffer_Args a = {.struct_size = sizeof a, .src = b};
  if (take(api->PJRT_Buffer_ToHostBuffer(&a)) != PJRT_Error_Code_OK) return NULL;
  void *p = malloc(a.dst_size + 1);
  a.dst = p;
  if (take(api->PJRT_Buffer_ToHostBuffer(&a)) != PJRT_Error_Code_OK) {
    free(p);
    return NULL;
  }
  PJRT_Event_Await_Args w = {.struct_size = sizeof w, .event = a.event};
  take(api->PJRT_Event_Await(&w));
  destroy_event(a.event);
  *n = a.dst_size;
  return p;
}

static char *read_file(const char *name, size_t *n) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", artifacts, name);
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)len + 1);
  *n = fread(buf, 1, (size_t)len, f);
  buf[*n] = 0;
  fclose(f);
  return buf;
}

/* One options proto: executable_build_options {num_replicas: 1, num_partitions: 1}. */
static const char k_options[] = {0x1a, 0x04, 0x20, 0x01, 0x28, 0x01};

static PJRT_Error *compile(const char *format, const char *code, size_t n, const char *opts, size_t olen,
                           PJRT_LoadedExecutable **out) {
  PJRT_Program p = {.struct_size = sizeof p, .code = (char *)code, .code_size = n, .format = format,
                    .format_size = strlen(format)};
  PJRT_Client_Compile_Args a = {.struct_size = sizeof a, .client = client, .program = &p, .compile_options = opts,
                                .compile_options_size = olen};
  PJRT_Error *e = api->PJRT_Client_Compile(&a);
  *out = a.executable;
  return e;
}

static void destroy_loaded(PJRT_LoadedExecutable *le) {
  PJRT_LoadedExecutable_Destroy_Args d = {.struct_size = sizeof d, .executable = le};
  take(api->PJRT_LoadedExecutable_Destroy(&d));
}

/* ---- a case file: NAME.io ---- */
typedef struct {
  PJRT_Buffer_Type type;
  int rank;
  int64_t dims[8];
  int64_t n;
  double *v;
} array;
typedef struct {
  array in[8], out[8];
  int nin, nout;
} io_case;

static int read_io(const char *name, io_case *c) {
  size_t len;
  char file[256];
  snprintf(file, sizeof file, "%s.io", name);
  char *text = read_file(file, &len);
  if (!text) return 0;
  memset(c, 0, sizeof *c);
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char kind[8], t[8];
    int used, rank;
    if (sscanf(line, "%7s %7s %d%n", kind, t, &rank, &used) != 3 || rank > 8) break;
    array *a = !strcmp(kind, "in") ? &c->in[c->nin++] : &c->out[c->nout++];
    a->type = !strcmp(t, "f32") ? PJRT_Buffer_Type_F32 : !strcmp(t, "f64") ? PJRT_Buffer_Type_F64 : PJRT_Buffer_Type_S32;
    a->rank = rank;
    char *p = line + used;
    a->n = 1;
    for (int i = 0; i < rank; i++) a->dims[i] = strtoll(p, &p, 10), a->n *= a->dims[i];
    p = strchr(p, ':') + 1;
    a->v = calloc((size_t)a->n + 1, sizeof(double));
    for (int64_t i = 0; i < a->n; i++) a->v[i] = strtod(p, &p);
  }
  free(text);
  return c->nin + c->nout > 0;
}

static void free_io(io_case *c) {
  for (int i = 0; i < c->nin; i++) free(c->in[i].v);
  for (int i = 0; i < c->nout; i++) free(c->out[i].v);
}

static size_t esize(PJRT_Buffer_Type t) { return t == PJRT_Buffer_Type_F64 ? 8 : 4; }

static PJRT_Buffer *upload(const array *a) {
  char *raw = malloc((size_t)a->n * esize(a->type) + 1);
  for (int64_t i = 0; i < a->n; i++) {
    if (a->type == PJRT_Buffer_Type_F32) ((float *)raw)[i] = (float)a->v[i];
    else if (a->type == PJRT_Buffer_Type_F64) ((double *)raw)[i] = a->v[i];
    else ((int32_t *)raw)[i] = (int32_t)a->v[i];
  }
  PJRT_Buffer *b = from_host(raw, a->type, a->rank, a->dims, PJRT_HostBufferSemantics_kImmutableOnlyDuringCall, NULL);
  free(raw);
  return b;
}

/* Compares b with a: type, dims, and values within a few float32 ulps (cxla and XLA may
 * round transcendental functions differently). */
static int matches(PJRT_Buffer *b, const array *a) {
  PJRT_Buffer_ElementType_Args t = {.struct_size = sizeof t, .buffer = b};
  PJRT_Buffer_Dimensions_Args d = {.struct_size = sizeof d, .buffer = b};
  if (take(api->PJRT_Buffer_ElementType(&t)) || take(api->PJRT_Buffer_Dimensions(&d))) return 0;
  if (t.type != a->type || (int)d.num_dims != a->rank) return 0;
  for (int i = 0; i < a->rank; i++)
    if (d.dims[i] != a->dims[i]) return 0;
  size_t n;
  char *raw = to_host(b, &n);
  int ok = raw && n == (size_t)a->n * esize(a->type);
  for (int64_t i = 0; ok && i < a->n; i++) {
    double got = a->type == PJRT_Buffer_Type_F32 ? ((float *)raw)[i]
                 : a->type == PJRT_Buffer_Type_F64 ? ((double *)raw)[i] : ((int32_t *)raw)[i];
    double tol = a->type == PJRT_Buffer_Type_S32 ? 0 : 1e-5 * (1 + fabs(a->v[i]));
    if (fabs(got - a->v[i]) > tol) {
      printf("  [%s] element %lld: got %.9g, JAX computed %.9g\n", current, (long long)i, got, a->v[i]);
      ok = 0;
    }
  }
  free(raw);
  return ok;
}

/* Executes le on the inputs of c; fills outs (num_outputs of them). */
static PJRT_Error *execute(PJRT_LoadedExecutable *le, PJRT_Buffer **ins, size_t nin, PJRT_Buffer **outs,
                           PJRT_Event **done) {
  PJRT_Buffer *const *lists[1] = {ins};
  PJRT_Buffer **olists[1] = {outs};
  PJRT_ExecuteOptions o = {.struct_size = sizeof o};
  PJRT_LoadedExecutable_Execute_Args a = {.struct_size = sizeof a, .executable = le, .options = &o,
                                          .argument_lists = lists, .num_devices = 1, .num_args = nin,
                                          .output_lists = olists, .device_complete_events = done};
  return api->PJRT_LoadedExecutable_Execute(&a);
}

#include "pjrt_test_cases.inc" /* the cases, in their own file to keep each short */
#include "pjrt_test_gpu.inc"   /* the GPU device's cases (--pjrt-gpu=emu) */

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: pjrt_test LIBCXLA_PJRT.so ARTIFACT_DIR\n");
    return 2;
  }
  artifacts = argv[2];
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    printf("FAIL dlopen: %s\n0 passed, 1 failed\n", dlerror());
    return 1;
  }
  const PJRT_Api *(*get)(void) = (const PJRT_Api *(*)(void))dlsym(lib, "GetPjrtApi");
  if (!get || !(api = get())) {
    printf("FAIL GetPjrtApi not found\n0 passed, 1 failed\n");
    return 1;
  }
  run_all_cases();
  printf("%d passed, %d failed\n", passed, failed);
  dlclose(lib);
  return failed != 0;
}
