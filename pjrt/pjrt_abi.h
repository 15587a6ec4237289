/*
 * pjrt_abi.h — the part of the PJRT C API (XLA's xla/pjrt/c/pjrt_c_api.h) that libcxla_pjrt.so
 * speaks, declared here from the facts of that header at API version 0.112 (XLA commit
 * 5a9e73cbd92530cac2ac36f4736a774b2412afe2, the one jaxlib 0.10.2 is built from).
 *
 * Why our own declarations: cxla is C and takes no build dependency on XLA. What must match is
 * the binary layout: every struct the client fills or reads, field for field, and PJRT_Api's
 * table slot for slot. scripts/pjrt_layout_facts.py compiles the real header and records the
 * size and offset of every field declared below (tests/pjrt/layout_facts.h); the unit test
 * pjrt_layout compares this header against that table, so a missing, reordered or mistyped
 * field fails a test instead of corrupting memory in a JAX process.
 *
 * Conventions of the API (facts): every call takes one *_Args struct whose first field is
 * struct_size (the caller's sizeof up to its last known field) and returns a PJRT_Error* (NULL
 * on success) that the caller frees with PJRT_Error_Destroy. Table slots cxla does not
 * implement are typed as generic calls (CX_PJRT_SLOT) but are present, so the offsets of the
 * slots after them hold.
 */
#ifndef CX_PJRT_ABI_H
#define CX_PJRT_ABI_H

#include "pjrt_abi_exec.h" /* which includes pjrt_abi_types.h */

#define CX_PJRT_API_MAJOR 0
#define CX_PJRT_API_MINOR 112

/* ---- the table ---------------------------------------------------------------------------- */
/* An implemented call: its own Args struct. A slot cxla leaves unimplemented: a generic call
 * of the same ABI (one pointer argument, an error back), filled with a function that answers
 * UNIMPLEMENTED naming the slot, or NULL where the client tests for NULL first. */
#define CX_PJRT_FN(name) PJRT_Error *(*name)(name##_Args *args)
#define CX_PJRT_SLOT(name) PJRT_Error *(*name)(void *args)

typedef struct PJRT_Api PJRT_Api;
struct PJRT_Api {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Api_Version pjrt_api_version;
  void (*PJRT_Error_Destroy)(PJRT_Error_Destroy_Args *args);
  void (*PJRT_Error_Message)(PJRT_Error_Message_Args *args);
  CX_PJRT_FN(PJRT_Error_GetCode);
  CX_PJRT_FN(PJRT_Plugin_Initialize);
  CX_PJRT_FN(PJRT_Plugin_Attributes);
  CX_PJRT_FN(PJRT_Event_Destroy);
  CX_PJRT_FN(PJRT_Event_IsReady);
  CX_PJRT_FN(PJRT_Event_Error);
  CX_PJRT_FN(PJRT_Event_Await);
  CX_PJRT_FN(PJRT_Event_OnReady);
  CX_PJRT_FN(PJRT_Client_Create);
  CX_PJRT_FN(PJRT_Client_Destroy);
  CX_PJRT_FN(PJRT_Client_PlatformName);
  CX_PJRT_FN(PJRT_Client_ProcessIndex);
  CX_PJRT_FN(PJRT_Client_PlatformVersion);
  CX_PJRT_FN(PJRT_Client_Devices);
  CX_PJRT_FN(PJRT_Client_AddressableDevices);
  CX_PJRT_FN(PJRT_Client_LookupDevice);
  CX_PJRT_FN(PJRT_Client_LookupAddressableDevice);
  CX_PJRT_FN(PJRT_Client_AddressableMemories);
  CX_PJRT_FN(PJRT_Client_Compile);
  CX_PJRT_FN(PJRT_Client_DefaultDeviceAssignment);
  CX_PJRT_FN(PJRT_Client_BufferFromHostBuffer);
  CX_PJRT_FN(PJRT_DeviceDescription_Id);
  CX_PJRT_FN(PJRT_DeviceDescription_ProcessIndex);
  CX_PJRT_FN(PJRT_DeviceDescription_Attributes);
  CX_PJRT_FN(PJRT_DeviceDescription_Kind);
  CX_PJRT_FN(PJRT_DeviceDescription_DebugString);
  CX_PJRT_FN(PJRT_DeviceDescription_ToString);
  CX_PJRT_FN(PJRT_Device_GetDescription);
  CX_PJRT_FN(PJRT_Device_IsAddressable);
  CX_PJRT_FN(PJRT_Device_LocalHardwareId);
  CX_PJRT_FN(PJRT_Device_AddressableMemories);
  CX_PJRT_FN(PJRT_Device_DefaultMemory);
  CX_PJRT_FN(PJRT_Device_MemoryStats);
  CX_PJRT_FN(PJRT_Memory_Id);
  CX_PJRT_FN(PJRT_Memory_Kind);
  CX_PJRT_FN(PJRT_Memory_DebugString);
  CX_PJRT_FN(PJRT_Memory_ToString);
  CX_PJRT_FN(PJRT_Memory_AddressableByDevices);
  CX_PJRT_FN(PJRT_Executable_Destroy);
  CX_PJRT_FN(PJRT_Executable_Name);
  CX_PJRT_FN(PJRT_Executable_NumReplicas);
  CX_PJRT_FN(PJRT_Executable_NumPartitions);
  CX_PJRT_FN(PJRT_Executable_NumOutputs);
  CX_PJRT_FN(PJRT_Executable_SizeOfGeneratedCodeInBytes);
  CX_PJRT_FN(PJRT_Executable_GetCostAnalysis);
  CX_PJRT_FN(PJRT_Executable_OutputMemoryKinds);
  CX_PJRT_FN(PJRT_Executable_OptimizedProgram);
  CX_PJRT_FN(PJRT_Executable_Serialize);
  CX_PJRT_FN(PJRT_LoadedExecutable_Destroy);
  CX_PJRT_FN(PJRT_LoadedExecutable_GetExecutable);
  CX_PJRT_FN(PJRT_LoadedExecutable_AddressableDevices);
  CX_PJRT_FN(PJRT_LoadedExecutable_Delete);
  CX_PJRT_FN(PJRT_LoadedExecutable_IsDeleted);
  CX_PJRT_FN(PJRT_LoadedExecutable_Execute);
  CX_PJRT_FN(PJRT_Executable_DeserializeAndLoad);
  CX_PJRT_FN(PJRT_LoadedExecutable_Fingerprint);
  CX_PJRT_FN(PJRT_Buffer_Destroy);
  CX_PJRT_FN(PJRT_Buffer_ElementType);
  CX_PJRT_FN(PJRT_Buffer_Dimensions);
  CX_PJRT_FN(PJRT_Buffer_UnpaddedDimensions);
  CX_PJRT_FN(PJRT_Buffer_DynamicDimensionIndices);
  CX_PJRT_FN(PJRT_Buffer_GetMemoryLayout);
  CX_PJRT_FN(PJRT_Buffer_OnDeviceSizeInBytes);
  CX_PJRT_FN(PJRT_Buffer_Device);
  CX_PJRT_FN(PJRT_Buffer_Memory);
  CX_PJRT_FN(PJRT_Buffer_Delete);
  CX_PJRT_FN(PJRT_Buffer_IsDeleted);
  CX_PJRT_FN(PJRT_Buffer_CopyToDevice);
  CX_PJRT_FN(PJRT_Buffer_ToHostBuffer);
  CX_PJRT_FN(PJRT_Buffer_IsOnCpu);
  CX_PJRT_FN(PJRT_Buffer_ReadyEvent);
  CX_PJRT_FN(PJRT_Buffer_UnsafePointer);
  CX_PJRT_FN(PJRT_Buffer_IncreaseExternalReferenceCount);
  CX_PJRT_FN(PJRT_Buffer_DecreaseExternalReferenceCount);
  CX_PJRT_FN(PJRT_Buffer_OpaqueDeviceMemoryDataPointer);
  CX_PJRT_SLOT(PJRT_CopyToDeviceStream_Destroy);
  CX_PJRT_SLOT(PJRT_CopyToDeviceStream_AddChunk);
  CX_PJRT_SLOT(PJRT_CopyToDeviceStream_TotalBytes);
  CX_PJRT_SLOT(PJRT_CopyToDeviceStream_GranuleSize);
  CX_PJRT_SLOT(PJRT_CopyToDeviceStream_CurrentBytes);
  CX_PJRT_SLOT(PJRT_TopologyDescription_Create);
  CX_PJRT_SLOT(PJRT_TopologyDescription_Destroy);
  CX_PJRT_SLOT(PJRT_TopologyDescription_PlatformName);
  CX_PJRT_SLOT(PJRT_TopologyDescription_PlatformVersion);
  CX_PJRT_SLOT(PJRT_TopologyDescription_GetDeviceDescriptions);
  CX_PJRT_SLOT(PJRT_TopologyDescription_Serialize);
  CX_PJRT_SLOT(PJRT_TopologyDescription_Attributes);
  CX_PJRT_SLOT(PJRT_Compile);
  CX_PJRT_FN(PJRT_Executable_OutputElementTypes);
  CX_PJRT_FN(PJRT_Executable_OutputDimensions);
  CX_PJRT_FN(PJRT_Buffer_CopyToMemory);
  CX_PJRT_SLOT(PJRT_Client_CreateViewOfDeviceBuffer);
  CX_PJRT_FN(PJRT_Executable_Fingerprint);
  CX_PJRT_SLOT(PJRT_Client_TopologyDescription);
  CX_PJRT_FN(PJRT_Executable_GetCompiledMemoryStats);
  CX_PJRT_FN(PJRT_Memory_Kind_Id);
  CX_PJRT_SLOT(PJRT_ExecuteContext_Create);
  CX_PJRT_SLOT(PJRT_ExecuteContext_Destroy);
  CX_PJRT_SLOT(PJRT_Buffer_CopyRawToHost);
  CX_PJRT_SLOT(PJRT_AsyncHostToDeviceTransferManager_Destroy);
  CX_PJRT_SLOT(PJRT_AsyncHostToDeviceTransferManager_TransferData);
  CX_PJRT_SLOT(PJRT_Client_CreateBuffersForAsyncHostToDevice);
  CX_PJRT_SLOT(PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer);
  CX_PJRT_SLOT(PJRT_AsyncHostToDeviceTransferManager_Device);
  CX_PJRT_SLOT(PJRT_AsyncHostToDeviceTransferManager_BufferCount);
  CX_PJRT_SLOT(PJRT_AsyncHostToDeviceTransferManager_BufferSize);
  CX_PJRT_SLOT(PJRT_AsyncHostToDeviceTransferManager_SetBufferError);
  CX_PJRT_SLOT(PJRT_AsyncHostToDeviceTransferManager_AddMetadata);
  CX_PJRT_SLOT(PJRT_Client_DmaMap);
  CX_PJRT_SLOT(PJRT_Client_DmaUnmap);
  CX_PJRT_SLOT(PJRT_Client_CreateUninitializedBuffer);
  CX_PJRT_SLOT(PJRT_Client_UpdateGlobalProcessInfo);
  CX_PJRT_SLOT(PJRT_TopologyDescription_Deserialize);
  CX_PJRT_SLOT(PJRT_Client_CreateAliasBuffer);
  CX_PJRT_SLOT(PJRT_Client_FulfillAliasBuffer);
  CX_PJRT_FN(PJRT_LoadedExecutable_GetDeviceAssignment);
  CX_PJRT_SLOT(PJRT_Client_CreateErrorBuffer);
  CX_PJRT_SLOT(PJRT_AsyncHostToDeviceTransferManager_TransferLiteral);
  CX_PJRT_SLOT(PJRT_Buffer_CopyRawToHostFuture);
  CX_PJRT_SLOT(PJRT_Device_PoisonExecution);
  CX_PJRT_SLOT(PJRT_Device_CreateAsyncTrackingEvent);
  CX_PJRT_SLOT(PJRT_AsyncTrackingEvent_Destroy);
  CX_PJRT_FN(PJRT_Executable_GetCompileOptions);
  CX_PJRT_SLOT(PJRT_Buffer_DonateWithControlDependency);
  CX_PJRT_SLOT(PJRT_Event_Create);
  CX_PJRT_SLOT(PJRT_Event_Set);
  CX_PJRT_SLOT(PJRT_Device_GetAttributes);
  CX_PJRT_SLOT(PJRT_Client_Load);
  CX_PJRT_SLOT(PJRT_LoadedExecutable_AddressableDeviceLogicalIds);
  CX_PJRT_SLOT(PJRT_Buffer_Bitcast);
  CX_PJRT_FN(PJRT_Error_ForEachPayload);
  CX_PJRT_SLOT(PJRT_TopologyDescription_Fingerprint);
  CX_PJRT_FN(PJRT_Executable_ParameterMemoryKinds);
  CX_PJRT_SLOT(PJRT_Device_ClearMemoryStats);
  CX_PJRT_SLOT(PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace);
  CX_PJRT_SLOT(PJRT_TopologyDescription_GetMemorySpaceKindIds);
};

/* The one symbol libcxla_pjrt.so exports. */
const PJRT_Api *GetPjrtApi(void);

#endif
