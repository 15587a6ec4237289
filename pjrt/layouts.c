/* layouts.c — the Layouts and Shardings extensions: an executable's parameter and output
 * layouts, a buffer's, the client's default, and the executable's shardings, answered from
 * what the plugin already knows instead of by XLA's client reading the program back.
 *
 * Why: without these extensions XLA's client (pjrt_c_api_client.cc) answers
 * GetParameterLayouts, GetOutputLayouts and GetOutputShardings, which JAX asks after every
 * compile, through PjRtExecutable's defaults: each calls GetHloModules, which takes
 * PJRT_Executable_OptimizedProgram's StableHLO artifact, parses and upgrades it, legalizes it
 * to MHLO and converts it to an HloModule, to read the entry computation's layouts (every one
 * descending: the converter assigns the default layout) and its spmd shardings (none: a
 * one-device program is never partitioned). The answers here are the same values; the work
 * is gone (docs/pjrt.md, "Compile time").
 *
 * Layouts are serialized as xla::Layout::ToString writes them ("{1,0}", "{}" for a scalar),
 * which PjRtLayout::Deserialize parses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pjrt_internal.h"

static void descending(PJRT_Layouts_MemoryLayout *l, int rank) {
  l->rank = rank;
  for (int i = 0; i < rank; i++) l->minor_to_major[i] = rank - 1 - i;
}

PJRT_Error *cx_pjrt_executable_layouts(PJRT_Executable *e, cxla_module *m) {
  size_t n = (size_t)e->nparams + (size_t)e->noutputs;
  e->layouts = calloc(n + 1, sizeof *e->layouts);
  e->layout_ptrs = calloc(n + 1, sizeof *e->layout_ptrs);
  if (!e->layouts || !e->layout_ptrs)
    return cx_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "PJRT_Client_Compile: out of memory");
  for (int i = 0; i < e->nparams; i++) {
    cxla_shape ps;
    int rank = cxla_module_parameter_shape(m, i, &ps) == CXLA_OK && ps.type != CXLA_TUPLE ? ps.rank : 0;
    descending(&e->layouts[i], rank);
  }
  for (int i = 0; i < e->noutputs; i++) descending(&e->layouts[e->nparams + i], (int)e->out_ranks[i]);
  for (size_t i = 0; i < n; i++) e->layout_ptrs[i] = &e->layouts[i];
  return NULL;
}

static PJRT_Error *layout_destroy(PJRT_Layouts_MemoryLayout_Destroy_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Layouts_MemoryLayout_Destroy_Args, layout);
  free(args->layout);
  return NULL;
}

/* What the serialized bytes live in until the client calls the deleter. */
struct PJRT_Layouts_SerializedLayout {
  size_t len;
  char text[];
};

static void serialized_free(PJRT_Layouts_SerializedLayout *s) { free(s); }

static PJRT_Error *layout_serialize(PJRT_Layouts_MemoryLayout_Serialize_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Layouts_MemoryLayout_Serialize_Args, serialized_layout_deleter);
  const PJRT_Layouts_MemoryLayout *l = args->layout;
  if (!l) return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Layouts_MemoryLayout_Serialize: NULL layout");
  /* "{" + up to 20 characters and a comma per dimension + "}" */
  PJRT_Layouts_SerializedLayout *s = malloc(sizeof *s + 2 + 21 * (size_t)l->rank + 1);
  if (!s)
    return cx_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "PJRT_Layouts_MemoryLayout_Serialize: out of memory");
  size_t k = 0;
  s->text[k++] = '{';
  for (int i = 0; i < l->rank; i++)
    k += (size_t)sprintf(s->text + k, i ? ",%lld" : "%lld", (long long)l->minor_to_major[i]);
  s->text[k++] = '}';
  s->text[k] = 0;
  s->len = k;
  args->serialized_bytes = s->text;
  args->serialized_bytes_size = s->len;
  args->serialized_layout = s;
  args->serialized_layout_deleter = serialized_free;
  return NULL;
}

static PJRT_Error *new_layout(const char *fn, int rank, const int64_t *minor_to_major, PJRT_Layouts_MemoryLayout **out) {
  if (rank < 0 || rank > CXLA_MAX_RANK)
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: %d dimensions; cxla arrays have at most %d", fn, rank,
                         CXLA_MAX_RANK);
  PJRT_Layouts_MemoryLayout *l = calloc(1, sizeof *l);
  if (!l) return cx_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "%s: out of memory", fn);
  descending(l, rank);
  if (minor_to_major) memcpy(l->minor_to_major, minor_to_major, (size_t)rank * sizeof *minor_to_major);
  *out = l;
  return NULL;
}

static PJRT_Error *client_default_layout(PJRT_Layouts_PJRT_Client_GetDefaultLayout_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Layouts_PJRT_Client_GetDefaultLayout_Args, layout);
  args->layout = NULL;
  if (args->num_dims > CXLA_MAX_RANK)
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                         "PJRT_Layouts_PJRT_Client_GetDefaultLayout: %zu dimensions; cxla arrays have at most %d",
                         args->num_dims, CXLA_MAX_RANK);
  return new_layout("PJRT_Layouts_PJRT_Client_GetDefaultLayout", (int)args->num_dims, NULL, &args->layout);
}

static PJRT_Error *buffer_layout(PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args, layout);
  args->layout = NULL;
  if (!args->buffer)
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Layouts_PJRT_Buffer_MemoryLayout: NULL buffer");
  return new_layout("PJRT_Layouts_PJRT_Buffer_MemoryLayout", args->buffer->rank, args->buffer->minor_to_major,
                    &args->layout);
}

/* A token has no layout: refused as XLA's ComputationLayout refuses it (JAX then takes no
 * layouts from the executable, as before these extensions). */
static PJRT_Error *executable_parameter_layouts(PJRT_Layouts_PJRT_Executable_GetParameterLayouts_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Layouts_PJRT_Executable_GetParameterLayouts_Args, layouts);
  const PJRT_Executable *e = args->executable;
  if (!e) return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Layouts_PJRT_Executable_GetParameterLayouts: NULL executable");
  for (int i = 0; i < e->nparams; i++)
    if (e->token_params[i])
      return cx_pjrt_error(PJRT_Error_Code_UNIMPLEMENTED, "PJRT_Layouts_PJRT_Executable_GetParameterLayouts: "
                           "parameter %d is a token, which has no layout", i);
  args->num_parameters = (size_t)e->nparams;
  args->layouts = e->layout_ptrs;
  return NULL;
}

static PJRT_Error *executable_output_layouts(PJRT_Layouts_PJRT_Executable_GetOutputLayouts_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Layouts_PJRT_Executable_GetOutputLayouts_Args, layouts);
  const PJRT_Executable *e = args->executable;
  if (!e) return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Layouts_PJRT_Executable_GetOutputLayouts: NULL executable");
  for (int i = 0; i < e->noutputs; i++)
    if (e->out_types[i] == PJRT_Buffer_Type_TOKEN)
      return cx_pjrt_error(PJRT_Error_Code_UNIMPLEMENTED, "PJRT_Layouts_PJRT_Executable_GetOutputLayouts: "
                           "output %d is a token, which has no layout", i);
  args->num_outputs = (size_t)e->noutputs;
  args->layouts = e->layout_ptrs + e->nparams;
  return NULL;
}

/* A program on one device has no spmd shardings: NULL says so (the client's std::nullopt, what
 * its default answered from the HloModule). */
static PJRT_Error *parameter_shardings(PJRT_Shardings_PJRT_Executable_ParameterShardings_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Shardings_PJRT_Executable_ParameterShardings_Args, sharding_sizes);
  if (!args->executable)
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Shardings_PJRT_Executable_ParameterShardings: NULL executable");
  args->num_parameters = (size_t)args->executable->nparams;
  args->shardings = NULL;
  args->sharding_sizes = NULL;
  return NULL;
}

static PJRT_Error *output_shardings(PJRT_Shardings_PJRT_Executable_OutputShardings_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Shardings_PJRT_Executable_OutputShardings_Args, sharding_sizes);
  if (!args->executable)
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Shardings_PJRT_Executable_OutputShardings: NULL executable");
  args->num_outputs = (size_t)args->executable->noutputs;
  args->shardings = NULL;
  args->sharding_sizes = NULL;
  return NULL;
}

static PJRT_Shardings_Extension shardings_extension = {
    .base = {.struct_size = sizeof(PJRT_Shardings_Extension), .type = PJRT_Extension_Type_Shardings, .next = NULL},
    .PJRT_Shardings_PJRT_Executable_ParameterShardings = parameter_shardings,
    .PJRT_Shardings_PJRT_Executable_OutputShardings = output_shardings,
};

PJRT_Layouts_Extension cx_pjrt_layouts_extension = {
    .base = {.struct_size = sizeof(PJRT_Layouts_Extension), .type = PJRT_Extension_Type_Layouts,
             .next = &shardings_extension.base},
    .PJRT_Layouts_MemoryLayout_Destroy = layout_destroy,
    .PJRT_Layouts_MemoryLayout_Serialize = layout_serialize,
    .PJRT_Layouts_PJRT_Client_GetDefaultLayout = client_default_layout,
    .PJRT_Layouts_PJRT_Buffer_MemoryLayout = buffer_layout,
    .PJRT_Layouts_PJRT_Topology_GetDefaultLayout = NULL,
    .PJRT_Layouts_PJRT_Executable_GetOutputLayouts = executable_output_layouts,
    .PJRT_Layouts_PJRT_Executable_GetParameterLayouts = executable_parameter_layouts,
};
