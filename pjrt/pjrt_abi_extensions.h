/* pjrt_abi_extensions.h — the two PJRT C API extensions the plugin offers, as XLA's
 * pjrt_c_api_layouts_extension.h (version 4) and pjrt_c_api_shardings_extension.h (version 1)
 * lay them out at the commit jaxlib 0.10.2 is built from: field for field, slot for slot.
 * Without them XLA's client answers an executable's parameter and output layouts and its
 * output shardings by reading the program back (PJRT_Executable_OptimizedProgram) and
 * converting it to an HloModule, once per question: three conversions of the whole StableHLO
 * program per compile, a sixth to a fifth of a flax training step's compile (docs/pjrt.md). */
#ifndef CX_PJRT_ABI_EXTENSIONS_H
#define CX_PJRT_ABI_EXTENSIONS_H

#include "pjrt_abi.h"

#define CX_PJRT_LAYOUTS_EXTENSION_VERSION 4
#define CX_PJRT_SHARDINGS_EXTENSION_VERSION 1

typedef struct PJRT_Layouts_MemoryLayout PJRT_Layouts_MemoryLayout;
typedef struct PJRT_Layouts_SerializedLayout PJRT_Layouts_SerializedLayout;

typedef struct PJRT_Layouts_MemoryLayout_Destroy_Args PJRT_Layouts_MemoryLayout_Destroy_Args;
struct PJRT_Layouts_MemoryLayout_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Layouts_MemoryLayout *layout;
};

typedef struct PJRT_Layouts_MemoryLayout_Serialize_Args PJRT_Layouts_MemoryLayout_Serialize_Args;
struct PJRT_Layouts_MemoryLayout_Serialize_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Layouts_MemoryLayout *layout;
  const char *serialized_bytes;                                     /* out, lives as long as serialized_layout */
  size_t serialized_bytes_size;                                     /* out */
  PJRT_Layouts_SerializedLayout *serialized_layout;                 /* out */
  void (*serialized_layout_deleter)(PJRT_Layouts_SerializedLayout *); /* out */
};

typedef struct PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args;
struct PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  PJRT_Layouts_MemoryLayout *layout; /* out, the caller's (MemoryLayout_Destroy) */
};

typedef struct PJRT_Layouts_PJRT_Client_GetDefaultLayout_Args PJRT_Layouts_PJRT_Client_GetDefaultLayout_Args;
struct PJRT_Layouts_PJRT_Client_GetDefaultLayout_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  PJRT_Buffer_Type type;
  const int64_t *dims;
  size_t num_dims;
  PJRT_Layouts_MemoryLayout *layout; /* out, the caller's (MemoryLayout_Destroy) */
};

typedef struct PJRT_Layouts_PJRT_Executable_GetOutputLayouts_Args PJRT_Layouts_PJRT_Executable_GetOutputLayouts_Args;
struct PJRT_Layouts_PJRT_Executable_GetOutputLayouts_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  size_t num_outputs;                  /* out */
  PJRT_Layouts_MemoryLayout **layouts; /* out, [num_outputs], the executable's */
};

typedef struct PJRT_Layouts_PJRT_Executable_GetParameterLayouts_Args PJRT_Layouts_PJRT_Executable_GetParameterLayouts_Args;
struct PJRT_Layouts_PJRT_Executable_GetParameterLayouts_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  size_t num_parameters;               /* out */
  PJRT_Layouts_MemoryLayout **layouts; /* out, [num_parameters], the executable's */
};

typedef struct PJRT_Layouts_Extension PJRT_Layouts_Extension;
struct PJRT_Layouts_Extension {
  PJRT_Extension_Base base;
  CX_PJRT_FN(PJRT_Layouts_MemoryLayout_Destroy);
  CX_PJRT_FN(PJRT_Layouts_MemoryLayout_Serialize);
  CX_PJRT_FN(PJRT_Layouts_PJRT_Client_GetDefaultLayout);
  CX_PJRT_FN(PJRT_Layouts_PJRT_Buffer_MemoryLayout);
  CX_PJRT_SLOT(PJRT_Layouts_PJRT_Topology_GetDefaultLayout); /* NULL: the client answers Unimplemented */
  CX_PJRT_FN(PJRT_Layouts_PJRT_Executable_GetOutputLayouts);
  CX_PJRT_FN(PJRT_Layouts_PJRT_Executable_GetParameterLayouts);
};

typedef struct PJRT_Shardings_PJRT_Executable_ParameterShardings_Args PJRT_Shardings_PJRT_Executable_ParameterShardings_Args;
struct PJRT_Shardings_PJRT_Executable_ParameterShardings_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  size_t num_parameters;            /* out */
  const char *const *shardings;     /* out: serialized OpSharding protos; NULL: none */
  const size_t *sharding_sizes;     /* out */
};

typedef struct PJRT_Shardings_PJRT_Executable_OutputShardings_Args PJRT_Shardings_PJRT_Executable_OutputShardings_Args;
struct PJRT_Shardings_PJRT_Executable_OutputShardings_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  size_t num_outputs;               /* out */
  const char *const *shardings;     /* out: serialized OpSharding protos; NULL: none */
  const size_t *sharding_sizes;     /* out */
};

typedef struct PJRT_Shardings_Extension PJRT_Shardings_Extension;
struct PJRT_Shardings_Extension {
  PJRT_Extension_Base base;
  CX_PJRT_FN(PJRT_Shardings_PJRT_Executable_ParameterShardings);
  CX_PJRT_FN(PJRT_Shardings_PJRT_Executable_OutputShardings);
};

/* The plugin's extensions, chained from PJRT_Api.extension_start: layouts, then shardings
 * (layouts.c). Never written after load; not const, as the chain's pointers are not. */
extern PJRT_Layouts_Extension cx_pjrt_layouts_extension;

#endif
