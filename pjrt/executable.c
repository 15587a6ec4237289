/* executable.c — compiling a program into a PJRT executable (cxla_compile with the backend
 * of the device the compile options assign: cpu, or the GPU's) and what the client asks of it: name, replica and partition counts, outputs' types, dims
 * and memory kinds, fingerprint, device assignment, compile options. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pjrt_internal.h"

uint64_t cx_pjrt_hash(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

void cx_pjrt_executable_retain(PJRT_Executable *e) {
  pthread_mutex_lock(&e->ref_lock);
  e->refs++;
  pthread_mutex_unlock(&e->ref_lock);
}

void cx_pjrt_executable_release(PJRT_Executable *e) {
  if (!e) return;
  pthread_mutex_lock(&e->ref_lock);
  int last = --e->refs == 0;
  pthread_mutex_unlock(&e->ref_lock);
  if (!last) return;
  cxla_executable_destroy(e->exe);
  free(e->name);
  free(e->hlo);
  free(e->program);
  free(e->token_params);
  free(e->param_shapes);
  free(e->options);
  free(e->out_types);
  free(e->out_ranks);
  free(e->out_dims);
  free(e->kinds);
  free(e->kind_sizes);
  free(e->layouts);
  free(e->layout_ptrs);
  pthread_mutex_destroy(&e->ref_lock);
  free(e);
}

/* Whether the module text calls a host callback: a custom-call whose target ends in
 * "callback" (cxla_host_callback, JAX's xla_ffi_python_cpu_callback and the others of
 * ir/custom_calls.def's HOST_CALLBACK kind). */
static int calls_host_callbacks(const char *hlo) {
  static const char key[] = "custom_call_target=\"";
  for (const char *p = strstr(hlo, key); p; p = strstr(p, key)) {
    p += sizeof key - 1;
    const char *q = strchr(p, '"');
    if (q && q - p >= 8 && !memcmp(q - 8, "callback", 8)) return 1;
  }
  return 0;
}

static PJRT_Error *oom(const char *fn) {
  return cx_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "%s: out of memory", fn);
}

/* The cost properties JAX's compiled.cost_analysis() reads, under XLA's names: the compiled
 * executable's, whose bytes are what its kernels move (XLA counts its optimized module too). */
static PJRT_Error *cost_properties(PJRT_Client *c, PJRT_Executable *e) {
  cxla_cost k;
  cxla_status s = cxla_executable_cost(e->exe, &k);
  if (s != CXLA_OK) return cx_pjrt_error_cxla(c->ctx, s, "PJRT_Client_Compile: cost analysis");
  static const struct { const char *name; size_t len; } names[3] = {
      {"flops", 5}, {"transcendentals", 15}, {"bytes accessed", 14}};
  const double v[3] = {k.flops, k.transcendentals, k.bytes_accessed};
  for (int i = 0; i < 3; i++)
    e->cost[i] = (PJRT_NamedValue){.struct_size = sizeof(PJRT_NamedValue), .name = names[i].name,
                                   .name_size = names[i].len, .type = PJRT_NamedValue_kFloat,
                                   .float_value = (float)v[i], .value_size = 1};
  return NULL;
}

/* Fills the output description from the ENTRY result: a tuple's elements are the outputs. */
static PJRT_Error *describe_outputs(PJRT_Executable *e, cxla_module *m) {
  cxla_shape r;
  if (cxla_module_result_shape(m, &r) != CXLA_OK)
    return cx_pjrt_error(PJRT_Error_Code_INTERNAL, "cxla pjrt: the module has no result shape");
  const cxla_shape *outs = &r;
  int n = 1;
  if (r.type == CXLA_TUPLE) {
    e->tuple_result = 1;
    outs = r.elems;
    n = r.ntuple;
  }
  size_t ndims = 0;
  for (int i = 0; i < n; i++) {
    if (outs[i].type == CXLA_TUPLE || cx_pjrt_from_cxla_type(outs[i].type) == PJRT_Buffer_Type_INVALID)
      return cx_pjrt_error(PJRT_Error_Code_UNIMPLEMENTED, "cxla pjrt: output %d is a nested tuple, which "
                                                         "PJRT buffers cannot hold", i);
    ndims += (size_t)outs[i].rank;
  }
  int nk = n > e->nparams ? n : e->nparams;
  e->noutputs = n;
  e->out_types = calloc((size_t)n + 1, sizeof *e->out_types);
  e->out_ranks = calloc((size_t)n + 1, sizeof *e->out_ranks);
  e->out_dims = calloc(ndims + 1, sizeof *e->out_dims);
  e->kinds = calloc((size_t)nk + 1, sizeof *e->kinds);
  e->kind_sizes = calloc((size_t)nk + 1, sizeof *e->kind_sizes);
  if (!e->out_types || !e->out_ranks || !e->out_dims || !e->kinds || !e->kind_sizes) return oom("PJRT_Client_Compile");
  size_t k = 0;
  for (int i = 0; i < n; i++) {
    e->out_types[i] = cx_pjrt_from_cxla_type(outs[i].type);
    e->out_ranks[i] = (size_t)outs[i].rank;
    for (int d = 0; d < outs[i].rank; d++) e->out_dims[k++] = outs[i].dims[d];
  }
  for (int i = 0; i < nk; i++) {
    e->kinds[i] = CX_PJRT_MEMORY_KIND;
    e->kind_sizes[i] = strlen(CX_PJRT_MEMORY_KIND);
  }
  return NULL;
}

/* "HloModule NAME, ..." -> NAME. */
static char *module_name(const char *hlo) {
  const char *p = strstr(hlo, "HloModule ");
  const char *s = p ? p + 10 : "cxla";
  size_t n = p ? strcspn(s, ", \n") : 4;
  char *name = malloc(n + 1);
  if (name) {
    memcpy(name, s, n);
    name[n] = 0;
  }
  return name;
}

static PJRT_Error *parse_program(PJRT_Client *c, const char *format, size_t flen, const char *code, size_t clen,
                                 cxla_module **m) {
  cxla_status s;
  if (flen == 4 && !memcmp(format, "mlir", 4)) {
    s = cxla_module_parse_stablehlo(c->ctx, code, clen, "stablehlo", m);
  } else if (flen == 8 && !memcmp(format, "cxla-hlo", 8)) {
    s = cxla_module_parse(c->ctx, code, clen, "hlo", m);
  } else {
    return cx_pjrt_error(PJRT_Error_Code_UNIMPLEMENTED,
                         "PJRT_Client_Compile: program format '%.*s' is not read by cxla (it reads 'mlir', a "
                         "StableHLO portable artifact, and 'cxla-hlo', HLO text)",
                         (int)(flen > 64 ? 64 : flen), format);
  }
  return s == CXLA_OK ? NULL : cx_pjrt_error_cxla(c->ctx, s, "PJRT_Client_Compile: reading the program");
}

PJRT_Error *cx_pjrt_executable_build(PJRT_Client *c, const char *format, size_t flen, const char *code,
                                     size_t clen, const char *options, size_t olen, PJRT_Executable **out) {
  return cx_pjrt_executable_build_with(c, format, flen, code, clen, options, olen, NULL, 0, out);
}

PJRT_Error *cx_pjrt_executable_build_with(PJRT_Client *c, const char *format, size_t flen, const char *code,
                                          size_t clen, const char *options, size_t olen, const void *machine_code,
                                          size_t mlen, PJRT_Executable **out) {
  *out = NULL;
  if (!format || (!code && clen)) return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Client_Compile: NULL program");
  cx_pjrt_options opts;
  PJRT_Error *err = cx_pjrt_options_decode(options, olen, &opts);
  if (err) return err;
  if (opts.num_replicas * opts.num_partitions != 1)
    return cx_pjrt_error(PJRT_Error_Code_UNIMPLEMENTED,
                         "PJRT_Client_Compile: %lld replicas x %lld partitions; cxla's PJRT plugin has one device",
                         (long long)opts.num_replicas, (long long)opts.num_partitions);
  if (opts.tupled_arguments)
    return cx_pjrt_error(PJRT_Error_Code_UNIMPLEMENTED, "PJRT_Client_Compile: tupled arguments are not supported");
  /* No assignment (a C caller's options): the default device, the first. */
  PJRT_Device *dev = cx_pjrt_device(c, opts.device_id < 0 ? 0 : opts.device_id);
  if (!dev)
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                         "PJRT_Client_Compile: the compile options assign device %lld; this client has devices 0 to %d",
                         (long long)opts.device_id, c->ndevices - 1);
  cxla_module *m = NULL;
  if ((err = parse_program(c, format, flen, code, clen, &m))) return err;
  PJRT_Executable *e = calloc(1, sizeof *e);
  if (!e) {
    cxla_module_destroy(m);
    return oom("PJRT_Client_Compile");
  }
  pthread_mutex_init(&e->ref_lock, NULL);
  e->refs = 1;
  e->opts = opts;
  e->device = dev;
  /* {replica_count: 1, computation_count: 1, computation_devices: [{replica_device_ids: [id]}]} */
  const char assignment[8] = {0x08, 0x01, 0x10, 0x01, 0x1a, 0x02, 0x08, (char)dev->desc.id};
  memcpy(e->assignment, assignment, sizeof assignment);
  e->nparams = cxla_module_num_parameters(m);
  if (!(e->token_params = calloc((size_t)e->nparams + 1, 1)) ||
      !(e->param_shapes = calloc((size_t)e->nparams + 1, sizeof *e->param_shapes)))
    err = oom("PJRT_Client_Compile");
  for (int i = 0; !err && i < e->nparams; i++) {
    cxla_shape ps;
    struct cx_pjrt_param *p = &e->param_shapes[i];
    p->type = cxla_module_parameter_shape(m, i, &ps) == CXLA_OK && ps.rank <= CXLA_MAX_RANK ? ps.type : CXLA_INVALID;
    p->rank = p->type == CXLA_INVALID ? 0 : ps.rank;
    for (int d = 0; d < p->rank; d++) p->dims[d] = ps.dims[d];
    e->token_params[i] = p->type == CXLA_TOKEN;
  }
  if (olen && (e->options = malloc(olen))) memcpy(e->options, options, olen);
  if (flen == 4 && !memcmp(format, "mlir", 4) && clen && (e->program = malloc(clen))) {
    memcpy(e->program, code, clen);
    e->program_len = clen;
  }
  e->options_len = e->options ? olen : 0;
  cxla_compile_options co;
  cxla_compile_options_init(&co);
  co.backend = dev->backend;
  co.keep_code = dev->host; /* for PJRT_Executable_Serialize (the cpu backend's code only) */
  co.code = dev->host ? machine_code : NULL;
  co.code_size = dev->host ? mlen : 0;
  cxla_status s = err ? CXLA_OK : cxla_compile(m, &co, &e->exe);
  if (s != CXLA_OK) err = cx_pjrt_error_cxla(c->ctx, s, "PJRT_Client_Compile");
  if (!err && !(e->hlo = cxla_module_to_string(m)))
    err = cx_pjrt_error_cxla(c->ctx, CXLA_ERR_OUT_OF_MEMORY, "PJRT_Client_Compile: printing the module");
  if (!err && !(e->name = module_name(e->hlo))) err = oom("PJRT_Client_Compile");
  if (!err) e->host_callbacks = calls_host_callbacks(e->hlo);
  if (!err) err = describe_outputs(e, m);
  if (!err) err = cx_pjrt_executable_layouts(e, m);
  if (!err) err = cost_properties(c, e);
  cxla_module_destroy(m);
  if (err) {
    cx_pjrt_executable_release(e);
    return err;
  }
  uint64_t h = cx_pjrt_hash(CX_PJRT_HASH_SEED, e->hlo, strlen(e->hlo));
  h = cx_pjrt_hash(h, cxla_version(), strlen(cxla_version()));
  h = cx_pjrt_hash(h, dev->backend, strlen(dev->backend)); /* one program, two devices: two codes */
  snprintf(e->fingerprint, sizeof e->fingerprint, "%016llx", (unsigned long long)h);
  *out = e;
  return NULL;
}

PJRT_Error *cx_pjrt_loaded_new(PJRT_Client *c, PJRT_Executable *e, PJRT_LoadedExecutable **out) {
  *out = calloc(1, sizeof **out);
  if (!*out) {
    cx_pjrt_executable_release(e);
    return oom("PJRT_Client_Compile");
  }
  (*out)->client = c;
  (*out)->exec = e;
  return NULL;
}

/* CXLA_PJRT_DUMP_DIR=DIR: every program PJRT_Client_Compile receives is written to
 * DIR/program-N.FORMAT, with its compile options in DIR/program-N.options (N counts from 0 in
 * each process), to see exactly what a framework sends; a dump that fails is not an error. */
static void dump_program(const PJRT_Program *p, const char *opts, size_t olen) {
  static int counter;
  const char *dir = getenv("CXLA_PJRT_DUMP_DIR");
  if (!dir || !*dir || !p->format) return;
  int n = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
  char path[4096];
  snprintf(path, sizeof path, "%s/program-%d.%.*s", dir, n, (int)(p->format_size > 16 ? 16 : p->format_size), p->format);
  FILE *f = fopen(path, "wb");
  if (f) {
    if (p->code_size) fwrite(p->code, 1, p->code_size, f);
    fclose(f);
  }
  snprintf(path, sizeof path, "%s/program-%d.options", dir, n);
  if ((f = fopen(path, "wb"))) {
    if (olen) fwrite(opts, 1, olen, f);
    fclose(f);
  }
}

PJRT_Error *cx_PJRT_Client_Compile(PJRT_Client_Compile_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Client_Compile_Args, executable);
  args->executable = NULL;
  if (!args->client || !args->program)
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Client_Compile: NULL client or program");
  const PJRT_Program *p = args->program;
  if (p->code || !p->code_size) dump_program(p, args->compile_options, args->compile_options_size);
  PJRT_Executable *e;
  cx_pjrt_lock(args->client);
  PJRT_Error *err = cx_pjrt_executable_build(args->client, p->format, p->format_size, p->code, p->code_size,
                                             args->compile_options, args->compile_options_size, &e);
  cx_pjrt_unlock(args->client);
  return err ? err : cx_pjrt_loaded_new(args->client, e, &args->executable);
}

/* ---- queries ---- */
#define NEED_EXEC(x, fn)                                                                      \
  if (!(x)) return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: NULL executable", fn)

PJRT_Error *cx_PJRT_Executable_Destroy(PJRT_Executable_Destroy_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Executable_Destroy_Args, executable);
  cx_pjrt_executable_release(args->executable);
  return NULL;
}

PJRT_Error *cx_PJRT_LoadedExecutable_Destroy(PJRT_LoadedExecutable_Destroy_Args *args) {
  CX_PJRT_ARGS(args, PJRT_LoadedExecutable_Destroy_Args, executable);
  if (!args->executable) return NULL;
  cx_pjrt_executable_release(args->executable->exec);
  free(args->executable);
  return NULL;
}

PJRT_Error *cx_PJRT_LoadedExecutable_GetExecutable(PJRT_LoadedExecutable_GetExecutable_Args *args) {
  CX_PJRT_ARGS(args, PJRT_LoadedExecutable_GetExecutable_Args, executable);
  NEED_EXEC(args->loaded_executable, "PJRT_LoadedExecutable_GetExecutable");
  PJRT_Executable *e = args->loaded_executable->exec;
  cx_pjrt_executable_retain(e);
  args->executable = e;
  return NULL;
}

PJRT_Error *cx_PJRT_LoadedExecutable_AddressableDevices(PJRT_LoadedExecutable_AddressableDevices_Args *args) {
  CX_PJRT_ARGS(args, PJRT_LoadedExecutable_AddressableDevices_Args, num_addressable_devices);
  NEED_EXEC(args->executable, "PJRT_LoadedExecutable_AddressableDevices");
  args->addressable_devices = args->executable->exec->device->self_list;
  args->num_addressable_devices = 1;
  return NULL;
}

PJRT_Error *cx_PJRT_LoadedExecutable_Delete(PJRT_LoadedExecutable_Delete_Args *args) {
  CX_PJRT_ARGS(args, PJRT_LoadedExecutable_Delete_Args, executable);
  NEED_EXEC(args->executable, "PJRT_LoadedExecutable_Delete");
  args->executable->deleted = 1;
  return NULL;
}

PJRT_Error *cx_PJRT_LoadedExecutable_IsDeleted(PJRT_LoadedExecutable_IsDeleted_Args *args) {
  CX_PJRT_ARGS(args, PJRT_LoadedExecutable_IsDeleted_Args, is_deleted);
  NEED_EXEC(args->executable, "PJRT_LoadedExecutable_IsDeleted");
  args->is_deleted = args->executable->deleted != 0;
  return NULL;
}

static void no_delete(PJRT_DeviceAssignmentSerialized *da) { (void)da; }

PJRT_Error *cx_PJRT_LoadedExecutable_GetDeviceAssignment(PJRT_LoadedExecutable_GetDeviceAssignment_Args *args) {
  CX_PJRT_ARGS(args, PJRT_LoadedExecutable_GetDeviceAssignment_Args, serialized_device_assignment_deleter);
  NEED_EXEC(args->executable, "PJRT_LoadedExecutable_GetDeviceAssignment");
  args->serialized_bytes = args->executable->exec->assignment; /* one device: its id */
  args->serialized_bytes_size = sizeof args->executable->exec->assignment;
  args->serialized_device_assignment = NULL;
  args->serialized_device_assignment_deleter = no_delete;
  return NULL;
}

PJRT_Error *cx_PJRT_Executable_Name(PJRT_Executable_Name_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Executable_Name_Args, executable_name_size);
  NEED_EXEC(args->executable, "PJRT_Executable_Name");
  args->executable_name = args->executable->name;
  args->executable_name_size = strlen(args->executable->name);
  return NULL;
}

PJRT_Error *cx_PJRT_Executable_NumReplicas(PJRT_Executable_NumReplicas_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Executable_NumReplicas_Args, num_replicas);
  NEED_EXEC(args->executable, "PJRT_Executable_NumReplicas");
  args->num_replicas = (size_t)args->executable->opts.num_replicas;
  return NULL;
}

PJRT_Error *cx_PJRT_Executable_NumPartitions(PJRT_Executable_NumPartitions_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Executable_NumPartitions_Args, num_partitions);
  NEED_EXEC(args->executable, "PJRT_Executable_NumPartitions");
  args->num_partitions = (size_t)args->executable->opts.num_partitions;
  return NULL;
}

PJRT_Error *cx_PJRT_Executable_NumOutputs(PJRT_Executable_NumOutputs_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Executable_NumOutputs_Args, num_outputs);
  NEED_EXEC(args->executable, "PJRT_Executable_NumOutputs");
  args->num_outputs = (size_t)args->executable->noutputs;
  return NULL;
}

/* The generated code's bytes (cxla_executable_footprint). */
PJRT_Error *cx_PJRT_Executable_SizeOfGeneratedCodeInBytes(PJRT_Executable_SizeOfGeneratedCodeInBytes_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Executable_SizeOfGeneratedCodeInBytes_Args, size_in_bytes);
  NEED_EXEC(args->executable, "PJRT_Executable_SizeOfGeneratedCodeInBytes");
  cxla_footprint f;
  args->size_in_bytes = cxla_executable_footprint(args->executable->exe, &f) == CXLA_OK ? f.code_bytes : 0;
  return NULL;
}

/* cxla_executable_footprint in XLA's terms. Everything is the device's default memory (the
 * host's for the cpu device, as XLA's CPU client reports it), so the host_* fields stay 0.
 * An execution holds its arguments, results (less those computed in donated arguments) and
 * its whole arena of temporaries at once: that is the peak, every allocation, and with the
 * code XLA's lower bound (total_size); the arguments and results are the allocations that
 * outlive the execution (indefinite). The unpadded peak is the same peak: the arena's only
 * padding is each temporary's 64-byte alignment, which it counts. */
PJRT_Error *cx_PJRT_Executable_GetCompiledMemoryStats(PJRT_Executable_GetCompiledMemoryStats_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Executable_GetCompiledMemoryStats_Args, peak_memory_in_bytes);
  NEED_EXEC(args->executable, "PJRT_Executable_GetCompiledMemoryStats");
  cxla_footprint f;
  if (cxla_executable_footprint(args->executable->exe, &f) != CXLA_OK)
    return cx_pjrt_error(PJRT_Error_Code_INTERNAL, "PJRT_Executable_GetCompiledMemoryStats: no executable");
  size_t n = args->struct_size;
  memset((char *)args + offsetof(PJRT_Executable_GetCompiledMemoryStats_Args, generated_code_size_in_bytes), 0,
         (n < sizeof *args ? n : sizeof *args) - offsetof(PJRT_Executable_GetCompiledMemoryStats_Args, generated_code_size_in_bytes));
  int64_t data = f.argument_bytes + f.output_bytes - f.alias_bytes + f.temp_bytes;
  args->generated_code_size_in_bytes = f.code_bytes;
  args->argument_size_in_bytes = f.argument_bytes;
  args->output_size_in_bytes = f.output_bytes;
  args->alias_size_in_bytes = f.alias_bytes;
  args->temp_size_in_bytes = f.temp_bytes;
  args->peak_memory_in_bytes = data;
  if (n >= offsetof(PJRT_Executable_GetCompiledMemoryStats_Args, total_size_in_bytes) + sizeof(int64_t))
    args->total_size_in_bytes = f.code_bytes + data;
  if (n >= offsetof(PJRT_Executable_GetCompiledMemoryStats_Args, peak_unpadded_heap_bytes) + sizeof(int64_t)) {
    args->total_allocation_bytes = data;
    args->indefinite_allocations = f.argument_bytes + f.output_bytes - f.alias_bytes;
    args->peak_unpadded_heap_bytes = data;
  }
  return NULL;
}

PJRT_Error *cx_PJRT_Executable_OutputElementTypes(PJRT_Executable_OutputElementTypes_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Executable_OutputElementTypes_Args, num_output_types);
  NEED_EXEC(args->executable, "PJRT_Executable_OutputElementTypes");
  args->output_types = args->executable->out_types;
  args->num_output_types = (size_t)args->executable->noutputs;
  return NULL;
}

PJRT_Error *cx_PJRT_Executable_OutputDimensions(PJRT_Executable_OutputDimensions_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Executable_OutputDimensions_Args, dim_sizes);
  NEED_EXEC(args->executable, "PJRT_Executable_OutputDimensions");
  args->num_outputs = (size_t)args->executable->noutputs;
  args->dims = args->executable->out_dims;
  args->dim_sizes = args->executable->out_ranks;
  return NULL;
}

PJRT_Error *cx_PJRT_Executable_OutputMemoryKinds(PJRT_Executable_OutputMemoryKinds_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Executable_OutputMemoryKinds_Args, memory_kind_sizes);
  NEED_EXEC(args->executable, "PJRT_Executable_OutputMemoryKinds");
  args->num_outputs = (size_t)args->executable->noutputs;
  args->memory_kinds = args->executable->kinds;
  args->memory_kind_sizes = args->executable->kind_sizes;
  return NULL;
}

PJRT_Error *cx_PJRT_Executable_ParameterMemoryKinds(PJRT_Executable_ParameterMemoryKinds_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Executable_ParameterMemoryKinds_Args, memory_kind_sizes);
  NEED_EXEC(args->executable, "PJRT_Executable_ParameterMemoryKinds");
  args->num_parameters = (size_t)args->executable->nparams;
  args->memory_kinds = args->executable->kinds;
  args->memory_kind_sizes = args->executable->kind_sizes;
  return NULL;
}

PJRT_Error *cx_PJRT_Executable_GetCostAnalysis(PJRT_Executable_GetCostAnalysis_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Executable_GetCostAnalysis_Args, properties);
  NEED_EXEC(args->executable, "PJRT_Executable_GetCostAnalysis");
  args->num_properties = sizeof args->executable->cost / sizeof args->executable->cost[0];
  args->properties = args->executable->cost;
  return NULL;
}

PJRT_Error *cx_PJRT_Executable_Fingerprint(PJRT_Executable_Fingerprint_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Executable_Fingerprint_Args, executable_fingerprint_size);
  NEED_EXEC(args->executable, "PJRT_Executable_Fingerprint");
  args->executable_fingerprint = args->executable->fingerprint;
  args->executable_fingerprint_size = strlen(args->executable->fingerprint);
  return NULL;
}

PJRT_Error *cx_PJRT_LoadedExecutable_Fingerprint(PJRT_LoadedExecutable_Fingerprint_Args *args) {
  CX_PJRT_ARGS(args, PJRT_LoadedExecutable_Fingerprint_Args, executable_fingerprint_size);
  NEED_EXEC(args->executable, "PJRT_LoadedExecutable_Fingerprint");
  args->executable_fingerprint = args->executable->exec->fingerprint;
  args->executable_fingerprint_size = strlen(args->executable->exec->fingerprint);
  return NULL;
}

/* The program as JAX sent it, format "mlir" (XLA's client reads a StableHLO artifact back into
 * an HloModule: what `compile().as_text()` shows). cxla's optimized program is its own IR, which
 * has no HloModuleProto to give; the program it compiled is the nearest true answer. */
PJRT_Error *cx_PJRT_Executable_OptimizedProgram(PJRT_Executable_OptimizedProgram_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Executable_OptimizedProgram_Args, program);
  NEED_EXEC(args->executable, "PJRT_Executable_OptimizedProgram");
  PJRT_Executable *e = args->executable;
  PJRT_Program *p = args->program;
  if (!p) return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Executable_OptimizedProgram: NULL program");
  if (!e->program)
    return cx_pjrt_error(PJRT_Error_Code_UNIMPLEMENTED, "PJRT_Executable_OptimizedProgram: cxla keeps the program "
                         "only of executables compiled from a StableHLO artifact in this process");
  if (p->code && p->code_size < e->program_len)
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Executable_OptimizedProgram: %zu bytes given for "
                         "a program of %zu", p->code_size, e->program_len);
  if (p->code) memcpy(p->code, e->program, e->program_len);
  p->code_size = e->program_len;
  p->format = "mlir";
  p->format_size = 4;
  return NULL;
}

static void free_options(PJRT_SerializedCompileOptions *o) { free(o); }

PJRT_Error *cx_PJRT_Executable_GetCompileOptions(PJRT_Executable_GetCompileOptions_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Executable_GetCompileOptions_Args, serialized_compile_options_deleter);
  NEED_EXEC(args->executable, "PJRT_Executable_GetCompileOptions");
  PJRT_Executable *e = args->executable;
  char *copy = malloc(e->options_len + 1);
  if (!copy) return oom("PJRT_Executable_GetCompileOptions");
  if (e->options_len) memcpy(copy, e->options, e->options_len);
  args->serialized_bytes = copy;
  args->serialized_bytes_size = e->options_len;
  args->serialized_compile_options = (PJRT_SerializedCompileOptions *)copy;
  args->serialized_compile_options_deleter = free_options;
  return NULL;
}
