/* pjrt_abi_exec.h — part of pjrt_abi.h (include that): the PJRT C API 0.112 structs for
 * executables and buffers. */
#ifndef CX_PJRT_ABI_EXEC_H
#define CX_PJRT_ABI_EXEC_H

#include "pjrt_abi_types.h"

/* ---- executables -------------------------------------------------------------------------- */
typedef struct PJRT_Executable_Destroy_Args PJRT_Executable_Destroy_Args;
struct PJRT_Executable_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
};

typedef struct PJRT_LoadedExecutable_Destroy_Args PJRT_LoadedExecutable_Destroy_Args;
struct PJRT_LoadedExecutable_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_LoadedExecutable *executable;
};

typedef struct PJRT_LoadedExecutable_GetExecutable_Args PJRT_LoadedExecutable_GetExecutable_Args;
struct PJRT_LoadedExecutable_GetExecutable_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_LoadedExecutable *loaded_executable;
  PJRT_Executable *executable;
};

typedef struct PJRT_LoadedExecutable_GetDeviceAssignment_Args PJRT_LoadedExecutable_GetDeviceAssignment_Args;
struct PJRT_LoadedExecutable_GetDeviceAssignment_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_LoadedExecutable *executable;
  const char *serialized_bytes;
  size_t serialized_bytes_size;
  PJRT_DeviceAssignmentSerialized *serialized_device_assignment;
  void (*serialized_device_assignment_deleter)(PJRT_DeviceAssignmentSerialized *da);
};

typedef struct PJRT_Executable_Name_Args PJRT_Executable_Name_Args;
struct PJRT_Executable_Name_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  const char *executable_name;
  size_t executable_name_size;
};

typedef struct PJRT_Executable_NumReplicas_Args PJRT_Executable_NumReplicas_Args;
struct PJRT_Executable_NumReplicas_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  size_t num_replicas;
};

typedef struct PJRT_Executable_NumPartitions_Args PJRT_Executable_NumPartitions_Args;
struct PJRT_Executable_NumPartitions_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  size_t num_partitions;
};

typedef struct PJRT_LoadedExecutable_AddressableDevices_Args PJRT_LoadedExecutable_AddressableDevices_Args;
struct PJRT_LoadedExecutable_AddressableDevices_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_LoadedExecutable *executable;
  PJRT_Device *const *addressable_devices;
  size_t num_addressable_devices;
};

typedef struct PJRT_LoadedExecutable_Delete_Args PJRT_LoadedExecutable_Delete_Args;
struct PJRT_LoadedExecutable_Delete_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_LoadedExecutable *executable;
};

typedef struct PJRT_LoadedExecutable_IsDeleted_Args PJRT_LoadedExecutable_IsDeleted_Args;
struct PJRT_LoadedExecutable_IsDeleted_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_LoadedExecutable *executable;
  bool is_deleted;
};

typedef struct PJRT_ExecuteOptions PJRT_ExecuteOptions;
struct PJRT_ExecuteOptions {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  void **send_callbacks; /* host send/recv callbacks: cxla programs have none */
  void **recv_callbacks;
  size_t num_send_ops;
  size_t num_recv_ops;
  int launch_id;
  const int64_t *non_donatable_input_indices;
  size_t num_non_donatable_input_indices;
  PJRT_ExecuteContext *context;
  const char *call_location;
  size_t num_tasks;
  int *task_ids;
  int64_t *incarnation_ids;
  void *multi_slice_config;
  bool use_major_to_minor_data_layout_for_callbacks;
  void *hlo_output_callbacks;
  size_t num_hlo_output_callbacks;
};

typedef struct PJRT_LoadedExecutable_Execute_Args PJRT_LoadedExecutable_Execute_Args;
struct PJRT_LoadedExecutable_Execute_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_LoadedExecutable *executable;
  PJRT_ExecuteOptions *options;
  PJRT_Buffer *const *const *argument_lists; /* [num_devices][num_args] */
  size_t num_devices;
  size_t num_args;
  PJRT_Buffer **const *output_lists;         /* [num_devices][num_outputs], filled in */
  PJRT_Event **device_complete_events;       /* NULL or [num_devices], filled in */
  PJRT_Device *execute_device;
};

typedef struct PJRT_Executable_NumOutputs_Args PJRT_Executable_NumOutputs_Args;
struct PJRT_Executable_NumOutputs_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  size_t num_outputs;
};

typedef struct PJRT_Executable_SizeOfGeneratedCodeInBytes_Args PJRT_Executable_SizeOfGeneratedCodeInBytes_Args;
struct PJRT_Executable_SizeOfGeneratedCodeInBytes_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  int64_t size_in_bytes;
};

/* XLA's CompiledMemoryStats: the device's memory (argument ... temp), then the host's, then
 * the peak; the last four fields came in later minor versions (struct_size says which the
 * caller has). */
typedef struct PJRT_Executable_GetCompiledMemoryStats_Args PJRT_Executable_GetCompiledMemoryStats_Args;
struct PJRT_Executable_GetCompiledMemoryStats_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  int64_t generated_code_size_in_bytes;
  int64_t argument_size_in_bytes;
  int64_t output_size_in_bytes;
  int64_t alias_size_in_bytes;
  int64_t temp_size_in_bytes;
  int64_t host_generated_code_size_in_bytes;
  int64_t host_argument_size_in_bytes;
  int64_t host_output_size_in_bytes;
  int64_t host_alias_size_in_bytes;
  int64_t host_temp_size_in_bytes;
  int64_t peak_memory_in_bytes;
  int64_t total_size_in_bytes;
  int64_t total_allocation_bytes;
  int64_t indefinite_allocations;
  int64_t peak_unpadded_heap_bytes;
};

typedef struct PJRT_Executable_Fingerprint_Args PJRT_Executable_Fingerprint_Args;
struct PJRT_Executable_Fingerprint_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  const char *executable_fingerprint;
  size_t executable_fingerprint_size;
};

/* properties: owned by the executable, valid while it lives. */
typedef struct PJRT_Executable_GetCostAnalysis_Args PJRT_Executable_GetCostAnalysis_Args;
struct PJRT_Executable_GetCostAnalysis_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  size_t num_properties;
  const PJRT_NamedValue *properties;
};

/* The program, in two calls: with program->code NULL the plugin sets code_size and format;
 * then the caller passes code_size bytes at code for the plugin to fill. */
typedef struct PJRT_Executable_OptimizedProgram_Args PJRT_Executable_OptimizedProgram_Args;
struct PJRT_Executable_OptimizedProgram_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  PJRT_Program *program;
};

typedef struct PJRT_Executable_OutputElementTypes_Args PJRT_Executable_OutputElementTypes_Args;
struct PJRT_Executable_OutputElementTypes_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  PJRT_Buffer_Type *output_types;
  size_t num_output_types;
};

typedef struct PJRT_Executable_OutputDimensions_Args PJRT_Executable_OutputDimensions_Args;
struct PJRT_Executable_OutputDimensions_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  size_t num_outputs;
  const int64_t *dims;      /* all outputs' dims, one after the other */
  const size_t *dim_sizes;  /* each output's rank */
};

typedef struct PJRT_Executable_OutputMemoryKinds_Args PJRT_Executable_OutputMemoryKinds_Args;
struct PJRT_Executable_OutputMemoryKinds_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  size_t num_outputs;
  const char *const *memory_kinds;
  const size_t *memory_kind_sizes;
};

typedef struct PJRT_Executable_ParameterMemoryKinds_Args PJRT_Executable_ParameterMemoryKinds_Args;
struct PJRT_Executable_ParameterMemoryKinds_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  size_t num_parameters;
  const char *const *memory_kinds;
  const size_t *memory_kind_sizes;
};

typedef struct PJRT_Executable_Serialize_Args PJRT_Executable_Serialize_Args;
struct PJRT_Executable_Serialize_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const PJRT_Executable *executable;
  const char *serialized_bytes;
  size_t serialized_bytes_size;
  PJRT_SerializedExecutable *serialized_executable;
  void (*serialized_executable_deleter)(PJRT_SerializedExecutable *exec);
};

typedef struct PJRT_Executable_GetCompileOptions_Args PJRT_Executable_GetCompileOptions_Args;
struct PJRT_Executable_GetCompileOptions_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  const char *serialized_bytes;
  size_t serialized_bytes_size;
  PJRT_SerializedCompileOptions *serialized_compile_options;
  void (*serialized_compile_options_deleter)(PJRT_SerializedCompileOptions *options);
};

typedef struct PJRT_LoadOptions PJRT_LoadOptions;
struct PJRT_LoadOptions {
  size_t struct_size;
  const int32_t *computation_origin;
  size_t computation_origin_size;
  void *multi_slice_config;
};

typedef struct PJRT_Executable_DeserializeAndLoad_Args PJRT_Executable_DeserializeAndLoad_Args;
struct PJRT_Executable_DeserializeAndLoad_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  const char *serialized_executable;
  size_t serialized_executable_size;
  PJRT_LoadedExecutable *loaded_executable;
  const char *overridden_serialized_compile_options;
  size_t overridden_serialized_compile_options_size;
  PJRT_LoadOptions *load_options;
};

typedef struct PJRT_LoadedExecutable_Fingerprint_Args PJRT_LoadedExecutable_Fingerprint_Args;
struct PJRT_LoadedExecutable_Fingerprint_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_LoadedExecutable *executable;
  const char *executable_fingerprint;
  size_t executable_fingerprint_size;
};

/* ---- buffers ------------------------------------------------------------------------------ */
typedef struct PJRT_Buffer_Destroy_Args PJRT_Buffer_Destroy_Args;
struct PJRT_Buffer_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
};

typedef struct PJRT_Buffer_ElementType_Args PJRT_Buffer_ElementType_Args;
struct PJRT_Buffer_ElementType_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  PJRT_Buffer_Type type;
};

typedef struct PJRT_Buffer_Dimensions_Args PJRT_Buffer_Dimensions_Args;
struct PJRT_Buffer_Dimensions_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  const int64_t *dims;
  size_t num_dims;
};

typedef struct PJRT_Buffer_UnpaddedDimensions_Args PJRT_Buffer_UnpaddedDimensions_Args;
struct PJRT_Buffer_UnpaddedDimensions_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  const int64_t *unpadded_dims;
  size_t num_dims;
};

typedef struct PJRT_Buffer_DynamicDimensionIndices_Args PJRT_Buffer_DynamicDimensionIndices_Args;
struct PJRT_Buffer_DynamicDimensionIndices_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  const size_t *dynamic_dim_indices;
  size_t num_dynamic_dims;
};

typedef struct PJRT_Buffer_GetMemoryLayout_Args PJRT_Buffer_GetMemoryLayout_Args;
struct PJRT_Buffer_GetMemoryLayout_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  PJRT_Buffer_MemoryLayout layout;
};

typedef struct PJRT_Buffer_ToHostBuffer_Args PJRT_Buffer_ToHostBuffer_Args;
struct PJRT_Buffer_ToHostBuffer_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *src;
  PJRT_Buffer_MemoryLayout *host_layout; /* NULL: dense row-major */
  void *dst;       /* NULL: only dst_size is set (the size query) */
  size_t dst_size;
  PJRT_Event *event;
};

typedef struct PJRT_Buffer_OnDeviceSizeInBytes_Args PJRT_Buffer_OnDeviceSizeInBytes_Args;
struct PJRT_Buffer_OnDeviceSizeInBytes_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  size_t on_device_size_in_bytes;
};

typedef struct PJRT_Buffer_Delete_Args PJRT_Buffer_Delete_Args;
struct PJRT_Buffer_Delete_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
};

typedef struct PJRT_Buffer_IsDeleted_Args PJRT_Buffer_IsDeleted_Args;
struct PJRT_Buffer_IsDeleted_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  bool is_deleted;
};

typedef struct PJRT_Buffer_CopyToDevice_Args PJRT_Buffer_CopyToDevice_Args;
struct PJRT_Buffer_CopyToDevice_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  PJRT_Device *dst_device;
  PJRT_Buffer *dst_buffer;
};

typedef struct PJRT_Buffer_CopyToMemory_Args PJRT_Buffer_CopyToMemory_Args;
struct PJRT_Buffer_CopyToMemory_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  PJRT_Memory *dst_memory;
  PJRT_Buffer *dst_buffer;
};

typedef struct PJRT_Buffer_IsOnCpu_Args PJRT_Buffer_IsOnCpu_Args;
struct PJRT_Buffer_IsOnCpu_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  bool is_on_cpu;
};

typedef struct PJRT_Buffer_Device_Args PJRT_Buffer_Device_Args;
struct PJRT_Buffer_Device_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  PJRT_Device *device;
};

typedef struct PJRT_Buffer_Memory_Args PJRT_Buffer_Memory_Args;
struct PJRT_Buffer_Memory_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  PJRT_Memory *memory;
};

typedef struct PJRT_Buffer_ReadyEvent_Args PJRT_Buffer_ReadyEvent_Args;
struct PJRT_Buffer_ReadyEvent_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  PJRT_Event *event;
};

typedef struct PJRT_Buffer_UnsafePointer_Args PJRT_Buffer_UnsafePointer_Args;
struct PJRT_Buffer_UnsafePointer_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  uintptr_t buffer_pointer;
};

typedef struct PJRT_Buffer_IncreaseExternalReferenceCount_Args PJRT_Buffer_IncreaseExternalReferenceCount_Args;
struct PJRT_Buffer_IncreaseExternalReferenceCount_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
};

typedef struct PJRT_Buffer_DecreaseExternalReferenceCount_Args PJRT_Buffer_DecreaseExternalReferenceCount_Args;
struct PJRT_Buffer_DecreaseExternalReferenceCount_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
};

typedef struct PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args;
struct PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Buffer *buffer;
  void *device_memory_ptr;
};


#endif
