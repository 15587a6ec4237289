/* api.c — GetPjrtApi, the one symbol libcxla_pjrt.so exports: the PJRT_Api table (version
 * 0.112), the plugin's attributes, and the calls on errors. Slots cxla does not implement
 * answer UNIMPLEMENTED naming themselves; the few the client tests for NULL before calling
 * are left NULL, so it takes its fallback path (docs/pjrt.md lists both). The table's
 * extension chain starts with the Layouts and Shardings extensions (layouts.c). */
#include <string.h>

#include "pjrt_internal.h"

/* Every implemented call, defined in the file of its concept. */
#define CX_PJRT_IMPLEMENTED(X)                                                                \
  X(PJRT_Error_GetCode) X(PJRT_Error_ForEachPayload) X(PJRT_Plugin_Initialize)               \
  X(PJRT_Plugin_Attributes) X(PJRT_Event_Destroy) X(PJRT_Event_IsReady) X(PJRT_Event_Error)  \
  X(PJRT_Event_Await) X(PJRT_Event_OnReady) X(PJRT_Client_Create) X(PJRT_Client_Destroy)     \
  X(PJRT_Client_PlatformName) X(PJRT_Client_ProcessIndex) X(PJRT_Client_PlatformVersion)     \
  X(PJRT_Client_Devices) X(PJRT_Client_AddressableDevices) X(PJRT_Client_LookupDevice)       \
  X(PJRT_Client_LookupAddressableDevice) X(PJRT_Client_AddressableMemories)                  \
  X(PJRT_Client_Compile) X(PJRT_Client_DefaultDeviceAssignment)                              \
  X(PJRT_Client_BufferFromHostBuffer) X(PJRT_DeviceDescription_Id)                           \
  X(PJRT_DeviceDescription_ProcessIndex) X(PJRT_DeviceDescription_Attributes)                \
  X(PJRT_DeviceDescription_Kind) X(PJRT_DeviceDescription_DebugString)                       \
  X(PJRT_DeviceDescription_ToString) X(PJRT_Device_GetDescription) X(PJRT_Device_IsAddressable) \
  X(PJRT_Device_LocalHardwareId) X(PJRT_Device_AddressableMemories) X(PJRT_Device_DefaultMemory) \
  X(PJRT_Device_MemoryStats)                                                                \
  X(PJRT_Memory_Id) X(PJRT_Memory_Kind) X(PJRT_Memory_Kind_Id) X(PJRT_Memory_DebugString)    \
  X(PJRT_Memory_ToString) X(PJRT_Memory_AddressableByDevices) X(PJRT_Executable_Destroy)     \
  X(PJRT_Executable_Name) X(PJRT_Executable_NumReplicas) X(PJRT_Executable_NumPartitions)    \
  X(PJRT_Executable_NumOutputs) X(PJRT_Executable_SizeOfGeneratedCodeInBytes)                \
  X(PJRT_Executable_OutputMemoryKinds) X(PJRT_Executable_ParameterMemoryKinds)               \
  X(PJRT_Executable_Serialize) X(PJRT_Executable_OutputElementTypes)                         \
  X(PJRT_Executable_GetCostAnalysis) X(PJRT_Executable_GetCompiledMemoryStats)               \
  X(PJRT_Executable_OutputDimensions) X(PJRT_Executable_Fingerprint)                         \
  X(PJRT_Executable_GetCompileOptions) X(PJRT_Executable_DeserializeAndLoad)                 \
  X(PJRT_Executable_OptimizedProgram)                                                        \
  X(PJRT_LoadedExecutable_Destroy) X(PJRT_LoadedExecutable_GetExecutable)                    \
  X(PJRT_LoadedExecutable_AddressableDevices) X(PJRT_LoadedExecutable_Delete)                \
  X(PJRT_LoadedExecutable_IsDeleted) X(PJRT_LoadedExecutable_Execute)                        \
  X(PJRT_LoadedExecutable_Fingerprint) X(PJRT_LoadedExecutable_GetDeviceAssignment)          \
  X(PJRT_Buffer_Destroy) X(PJRT_Buffer_ElementType) X(PJRT_Buffer_Dimensions)                \
  X(PJRT_Buffer_UnpaddedDimensions) X(PJRT_Buffer_DynamicDimensionIndices)                   \
  X(PJRT_Buffer_GetMemoryLayout) X(PJRT_Buffer_OnDeviceSizeInBytes) X(PJRT_Buffer_Device)    \
  X(PJRT_Buffer_Memory) X(PJRT_Buffer_Delete) X(PJRT_Buffer_IsDeleted) X(PJRT_Buffer_CopyToDevice) \
  X(PJRT_Buffer_CopyToMemory) X(PJRT_Buffer_ToHostBuffer) X(PJRT_Buffer_IsOnCpu)             \
  X(PJRT_Buffer_ReadyEvent) X(PJRT_Buffer_UnsafePointer)                                     \
  X(PJRT_Buffer_IncreaseExternalReferenceCount) X(PJRT_Buffer_DecreaseExternalReferenceCount) \
  X(PJRT_Buffer_OpaqueDeviceMemoryDataPointer)

/* Slots answered UNIMPLEMENTED: transfers cxla has no use for (streams, async host-to-device
 * managers, DMA mapping, alias and error buffers), ahead-of-time compilation against a
 * topology. */
#define CX_PJRT_UNIMPLEMENTED(X)                                                              \
  X(PJRT_CopyToDeviceStream_Destroy) X(PJRT_CopyToDeviceStream_AddChunk)                     \
  X(PJRT_CopyToDeviceStream_TotalBytes) X(PJRT_CopyToDeviceStream_GranuleSize)               \
  X(PJRT_CopyToDeviceStream_CurrentBytes) X(PJRT_TopologyDescription_Create)                 \
  X(PJRT_TopologyDescription_Destroy) X(PJRT_TopologyDescription_PlatformName)               \
  X(PJRT_TopologyDescription_PlatformVersion) X(PJRT_TopologyDescription_GetDeviceDescriptions) \
  X(PJRT_TopologyDescription_Serialize) X(PJRT_TopologyDescription_Attributes) X(PJRT_Compile) \
  X(PJRT_Client_CreateViewOfDeviceBuffer) X(PJRT_Client_TopologyDescription)                 \
  X(PJRT_ExecuteContext_Create)                                                             \
  X(PJRT_ExecuteContext_Destroy) X(PJRT_Buffer_CopyRawToHost)                                \
  X(PJRT_AsyncHostToDeviceTransferManager_Destroy) X(PJRT_AsyncHostToDeviceTransferManager_TransferData) \
  X(PJRT_Client_CreateBuffersForAsyncHostToDevice)                                           \
  X(PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer)                                    \
  X(PJRT_AsyncHostToDeviceTransferManager_Device) X(PJRT_AsyncHostToDeviceTransferManager_BufferCount) \
  X(PJRT_AsyncHostToDeviceTransferManager_BufferSize)                                        \
  X(PJRT_AsyncHostToDeviceTransferManager_SetBufferError)                                    \
  X(PJRT_AsyncHostToDeviceTransferManager_AddMetadata) X(PJRT_Client_DmaMap) X(PJRT_Client_DmaUnmap) \
  X(PJRT_Client_CreateUninitializedBuffer) X(PJRT_Client_UpdateGlobalProcessInfo)            \
  X(PJRT_TopologyDescription_Deserialize) X(PJRT_Client_CreateAliasBuffer)                   \
  X(PJRT_Client_FulfillAliasBuffer) X(PJRT_Client_CreateErrorBuffer)                         \
  X(PJRT_AsyncHostToDeviceTransferManager_TransferLiteral) X(PJRT_Buffer_CopyRawToHostFuture) \
  X(PJRT_Device_PoisonExecution) X(PJRT_Device_CreateAsyncTrackingEvent)                     \
  X(PJRT_AsyncTrackingEvent_Destroy) X(PJRT_Buffer_DonateWithControlDependency)              \
  X(PJRT_TopologyDescription_Fingerprint) X(PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace)

/* Left NULL: XLA's client checks these for NULL and then does without (device attributes come
 * from the description, logical ids and memory kind ids are optional, events are made by the
 * plugin only, executables are compiled and loaded in one step, no bitcasts). */
#define CX_PJRT_NULL(X)                                                                       \
  X(PJRT_Event_Create) X(PJRT_Event_Set) X(PJRT_Device_GetAttributes) X(PJRT_Client_Load)    \
  X(PJRT_LoadedExecutable_AddressableDeviceLogicalIds) X(PJRT_Buffer_Bitcast)                \
  X(PJRT_Device_ClearMemoryStats) X(PJRT_TopologyDescription_GetMemorySpaceKindIds)

#define DECLARE(name) PJRT_Error *cx_##name(name##_Args *args);
CX_PJRT_IMPLEMENTED(DECLARE)
#undef DECLARE

#define STUB(name)                                                                            \
  static PJRT_Error *unimpl_##name(void *args) {                                              \
    (void)args;                                                                               \
    return cx_pjrt_error(PJRT_Error_Code_UNIMPLEMENTED, #name " is not implemented by cxla"); \
  }
CX_PJRT_UNIMPLEMENTED(STUB)
#undef STUB

/* ---- errors through the table ---- */
static void api_error_destroy(PJRT_Error_Destroy_Args *args) {
  if (args) cx_pjrt_error_free(args->error);
}

static void api_error_message(PJRT_Error_Message_Args *args) {
  if (!args) return;
  args->message = args->error ? args->error->msg : "";
  args->message_size = args->error ? args->error->len : 0;
}

PJRT_Error *cx_PJRT_Error_GetCode(PJRT_Error_GetCode_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Error_GetCode_Args, code);
  args->code = args->error ? args->error->code : PJRT_Error_Code_OK;
  return NULL;
}

PJRT_Error *cx_PJRT_Error_ForEachPayload(PJRT_Error_ForEachPayload_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Error_ForEachPayload_Args, user_arg);
  return NULL; /* cxla errors carry no payloads */
}

PJRT_Error *cx_PJRT_Plugin_Initialize(PJRT_Plugin_Initialize_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Plugin_Initialize_Args, extension_start);
  return NULL; /* nothing process-wide: each client makes its own cxla context */
}

/* xla_version: the number XLA's own plugins report (2) and JAX compares against for plugin
 * features; stablehlo_current_version: the VHLO version the StableHLO reader understands, so
 * the client serializes for it (min(its version, ours)); stablehlo_minimum_version: the oldest
 * it reads. */
static const int64_t k_shlo_current[3] = {1, 16, 3};
static const int64_t k_shlo_minimum[3] = {0, 9, 0}; /* cxla_module_parse_stablehlo: VHLO 0.9.0 to 1.16.3 */
#define NV_HEAD(n) .struct_size = sizeof(PJRT_NamedValue), .name = n, .name_size = sizeof(n) - 1
static const PJRT_NamedValue k_attributes[] = {
    {NV_HEAD("xla_version"), .type = PJRT_NamedValue_kInt64, .int64_value = 2, .value_size = 1},
    {NV_HEAD("stablehlo_current_version"), .type = PJRT_NamedValue_kInt64List, .int64_array_value = k_shlo_current,
     .value_size = 3},
    {NV_HEAD("stablehlo_minimum_version"), .type = PJRT_NamedValue_kInt64List, .int64_array_value = k_shlo_minimum,
     .value_size = 3},
};

PJRT_Error *cx_PJRT_Plugin_Attributes(PJRT_Plugin_Attributes_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Plugin_Attributes_Args, num_attributes);
  args->attributes = k_attributes;
  args->num_attributes = sizeof k_attributes / sizeof k_attributes[0];
  return NULL;
}

static const PJRT_Api k_api = {
    .struct_size = sizeof(PJRT_Api),
    .extension_start = &cx_pjrt_layouts_extension.base,
    .pjrt_api_version = {.struct_size = sizeof(PJRT_Api_Version),
                         .major_version = CX_PJRT_API_MAJOR,
                         .minor_version = CX_PJRT_API_MINOR},
    .PJRT_Error_Destroy = api_error_destroy,
    .PJRT_Error_Message = api_error_message,
#define FILL(name) .name = cx_##name,
    CX_PJRT_IMPLEMENTED(FILL)
#undef FILL
#define FILL(name) .name = unimpl_##name,
    CX_PJRT_UNIMPLEMENTED(FILL)
#undef FILL
#define FILL(name) .name = NULL,
    CX_PJRT_NULL(FILL)
#undef FILL
};

__attribute__((visibility("default"))) const PJRT_Api *GetPjrtApi(void) { return &k_api; }
