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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CX_PJRT_API_MAJOR 0
#define CX_PJRT_API_MINOR 112

/* ---- extensions, version, errors ---------------------------------------------------------- */
typedef enum {
  PJRT_Extension_Type_Gpu_Custom_Call = 0,
  PJRT_Extension_Type_Profiler = 1,
  PJRT_Extension_Type_Unknown = 11,
  PJRT_Extension_Type_XlaTransform = 24
} PJRT_Extension_Type;

typedef struct PJRT_Extension_Base PJRT_Extension_Base;
struct PJRT_Extension_Base {
  size_t struct_size;
  PJRT_Extension_Type type;
  PJRT_Extension_Base *next;
};

typedef struct PJRT_Api_Version PJRT_Api_Version;
struct PJRT_Api_Version {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  int major_version;
  int minor_version;
};

typedef enum {
  PJRT_Error_Code_OK = 0,
  PJRT_Error_Code_CANCELLED = 1,
  PJRT_Error_Code_UNKNOWN = 2,
  PJRT_Error_Code_INVALID_ARGUMENT = 3,
  PJRT_Error_Code_DEADLINE_EXCEEDED = 4,
  PJRT_Error_Code_NOT_FOUND = 5,
  PJRT_Error_Code_ALREADY_EXISTS = 6,
  PJRT_Error_Code_PERMISSION_DENIED = 7,
  PJRT_Error_Code_RESOURCE_EXHAUSTED = 8,
  PJRT_Error_Code_FAILED_PRECONDITION = 9,
  PJRT_Error_Code_ABORTED = 10,
  PJRT_Error_Code_OUT_OF_RANGE = 11,
  PJRT_Error_Code_UNIMPLEMENTED = 12,
  PJRT_Error_Code_INTERNAL = 13,
  PJRT_Error_Code_UNAVAILABLE = 14,
  PJRT_Error_Code_DATA_LOSS = 15,
  PJRT_Error_Code_UNAUTHENTICATED = 16
} PJRT_Error_Code;

typedef struct PJRT_Error PJRT_Error;
typedef void (*PJRT_Error_PayloadVisitor)(const char *key, size_t key_size, const char *value,
                                          size_t value_size, void *user_arg);

/* Since 0.107 an error object starts with a pointer to this table (a client may call it
 * directly instead of going through PJRT_Api). */
typedef struct PJRT_Error_FunctionTable PJRT_Error_FunctionTable;
struct PJRT_Error_FunctionTable {
  size_t struct_size;
  size_t instance_size;
  PJRT_Extension_Base *extension_start;
  void (*destroy)(PJRT_Error *error);
  void (*message)(const PJRT_Error *error, const char **message, size_t *message_size);
  PJRT_Error_Code (*get_code)(const PJRT_Error *error);
  void (*for_each_payload)(const PJRT_Error *error, PJRT_Error_PayloadVisitor visitor, void *user_arg);
};

typedef struct PJRT_Error_Destroy_Args PJRT_Error_Destroy_Args;
struct PJRT_Error_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Error *error;
};

typedef struct PJRT_Error_Message_Args PJRT_Error_Message_Args;
struct PJRT_Error_Message_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const PJRT_Error *error;
  const char *message;
  size_t message_size;
};

typedef struct PJRT_Error_GetCode_Args PJRT_Error_GetCode_Args;
struct PJRT_Error_GetCode_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const PJRT_Error *error;
  PJRT_Error_Code code;
};

typedef struct PJRT_Error_ForEachPayload_Args PJRT_Error_ForEachPayload_Args;
struct PJRT_Error_ForEachPayload_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const PJRT_Error *error;
  PJRT_Error_PayloadVisitor visitor;
  void *user_arg;
};

/* ---- named values and the plugin ---------------------------------------------------------- */
typedef enum {
  PJRT_NamedValue_kString = 0,
  PJRT_NamedValue_kInt64 = 1,
  PJRT_NamedValue_kInt64List = 2,
  PJRT_NamedValue_kFloat = 3,
  PJRT_NamedValue_kBool = 4
} PJRT_NamedValue_Type;

typedef struct PJRT_NamedValue PJRT_NamedValue;
struct PJRT_NamedValue {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const char *name;
  size_t name_size;
  PJRT_NamedValue_Type type;
  union {
    const char *string_value;
    int64_t int64_value;
    const int64_t *int64_array_value;
    float float_value;
    bool bool_value;
  };
  size_t value_size; /* elements of a list or string, 1 for a scalar */
};

typedef struct PJRT_Plugin_Initialize_Args PJRT_Plugin_Initialize_Args;
struct PJRT_Plugin_Initialize_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
};

typedef struct PJRT_Plugin_Attributes_Args PJRT_Plugin_Attributes_Args;
struct PJRT_Plugin_Attributes_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const PJRT_NamedValue *attributes;
  size_t num_attributes;
};

/* ---- events ------------------------------------------------------------------------------- */
typedef struct PJRT_Event PJRT_Event;
/* The callback owns `error` (may be NULL) and destroys it. */
typedef void (*PJRT_Event_OnReadyCallback)(PJRT_Error *error, void *user_arg);

typedef struct PJRT_Event_Destroy_Args PJRT_Event_Destroy_Args;
struct PJRT_Event_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Event *event;
};

typedef struct PJRT_Event_IsReady_Args PJRT_Event_IsReady_Args;
struct PJRT_Event_IsReady_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Event *event;
  bool is_ready;
};

typedef struct PJRT_Event_Error_Args PJRT_Event_Error_Args;
struct PJRT_Event_Error_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Event *event;
};

typedef struct PJRT_Event_Await_Args PJRT_Event_Await_Args;
struct PJRT_Event_Await_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Event *event;
};

typedef struct PJRT_Event_OnReady_Args PJRT_Event_OnReady_Args;
struct PJRT_Event_OnReady_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Event *event;
  PJRT_Event_OnReadyCallback callback;
  void *user_arg;
};

/* ---- opaque objects ----------------------------------------------------------------------- */
typedef struct PJRT_Client PJRT_Client;
typedef struct PJRT_Device PJRT_Device;
typedef struct PJRT_DeviceDescription PJRT_DeviceDescription;
typedef struct PJRT_Executable PJRT_Executable;
typedef struct PJRT_LoadedExecutable PJRT_LoadedExecutable;
typedef struct PJRT_Buffer PJRT_Buffer;
typedef struct PJRT_TopologyDescription PJRT_TopologyDescription;
typedef struct PJRT_ExecuteContext PJRT_ExecuteContext;
typedef struct PJRT_SerializedExecutable PJRT_SerializedExecutable;
typedef struct PJRT_SerializedCompileOptions PJRT_SerializedCompileOptions;
typedef struct PJRT_DeviceAssignmentSerialized PJRT_DeviceAssignmentSerialized;

/* A memory space starts with a table of user-data calls (0.105): the client attaches its own
 * object to each memory through it. */
typedef struct PJRT_Memory PJRT_Memory;
typedef struct PJRT_Memory_FunctionTable PJRT_Memory_FunctionTable;
struct PJRT_Memory_FunctionTable {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  size_t instance_struct_size;
  void *(*get_user_data)(PJRT_Memory *memory, const void *key);
  void (*set_user_data)(PJRT_Memory *memory, const void *key, void *data, void (*dtor)(void *));
};

/* ---- client ------------------------------------------------------------------------------- */
typedef struct PJRT_Client_Create_Args PJRT_Client_Create_Args;
struct PJRT_Client_Create_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const PJRT_NamedValue *create_options;
  size_t num_options;
  void *kv_get_callback; /* distributed key-value store callbacks: unused by one process */
  void *kv_get_user_arg;
  void *kv_put_callback;
  void *kv_put_user_arg;
  PJRT_Client *client;
  void *kv_try_get_callback;
  void *kv_try_get_user_arg;
};

typedef struct PJRT_Client_Destroy_Args PJRT_Client_Destroy_Args;
struct PJRT_Client_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
};

typedef struct PJRT_Client_PlatformName_Args PJRT_Client_PlatformName_Args;
struct PJRT_Client_PlatformName_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  const char *platform_name;
  size_t platform_name_size;
};

typedef struct PJRT_Client_ProcessIndex_Args PJRT_Client_ProcessIndex_Args;
struct PJRT_Client_ProcessIndex_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  int process_index;
};

typedef struct PJRT_Client_PlatformVersion_Args PJRT_Client_PlatformVersion_Args;
struct PJRT_Client_PlatformVersion_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  const char *platform_version;
  size_t platform_version_size;
};

typedef struct PJRT_Client_Devices_Args PJRT_Client_Devices_Args;
struct PJRT_Client_Devices_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  PJRT_Device *const *devices;
  size_t num_devices;
};

typedef struct PJRT_Client_AddressableDevices_Args PJRT_Client_AddressableDevices_Args;
struct PJRT_Client_AddressableDevices_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  PJRT_Device *const *addressable_devices;
  size_t num_addressable_devices;
};

typedef struct PJRT_Client_LookupDevice_Args PJRT_Client_LookupDevice_Args;
struct PJRT_Client_LookupDevice_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  int id;
  PJRT_Device *device;
};

typedef struct PJRT_Client_LookupAddressableDevice_Args PJRT_Client_LookupAddressableDevice_Args;
struct PJRT_Client_LookupAddressableDevice_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  int local_hardware_id;
  PJRT_Device *addressable_device;
};

typedef struct PJRT_Client_AddressableMemories_Args PJRT_Client_AddressableMemories_Args;
struct PJRT_Client_AddressableMemories_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  PJRT_Memory *const *addressable_memories;
  size_t num_addressable_memories;
};

typedef struct PJRT_Program PJRT_Program;
struct PJRT_Program {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  char *code;
  size_t code_size;
  const char *format; /* "mlir" (a StableHLO portable artifact) or "hlo" (an HloModuleProto) */
  size_t format_size;
};

typedef struct PJRT_Client_Compile_Args PJRT_Client_Compile_Args;
struct PJRT_Client_Compile_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  const PJRT_Program *program;
  const char *compile_options; /* a serialized xla.CompileOptionsProto */
  size_t compile_options_size;
  PJRT_LoadedExecutable *executable;
};

typedef struct PJRT_Client_DefaultDeviceAssignment_Args PJRT_Client_DefaultDeviceAssignment_Args;
struct PJRT_Client_DefaultDeviceAssignment_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  int num_replicas;
  int num_partitions;
  size_t default_assignment_size;
  int *default_assignment;
};

typedef enum {
  PJRT_Buffer_Type_INVALID = 0,
  PJRT_Buffer_Type_PRED = 1,
  PJRT_Buffer_Type_S8 = 2,
  PJRT_Buffer_Type_S16 = 3,
  PJRT_Buffer_Type_S32 = 4,
  PJRT_Buffer_Type_S64 = 5,
  PJRT_Buffer_Type_U8 = 6,
  PJRT_Buffer_Type_U16 = 7,
  PJRT_Buffer_Type_U32 = 8,
  PJRT_Buffer_Type_U64 = 9,
  PJRT_Buffer_Type_F16 = 10,
  PJRT_Buffer_Type_F32 = 11,
  PJRT_Buffer_Type_F64 = 12,
  PJRT_Buffer_Type_BF16 = 13,
  PJRT_Buffer_Type_C64 = 14,
  PJRT_Buffer_Type_C128 = 15,
  PJRT_Buffer_Type_F8E5M2 = 16,
  PJRT_Buffer_Type_F8E4M3FN = 17,
  PJRT_Buffer_Type_F8E4M3B11FNUZ = 18,
  PJRT_Buffer_Type_F8E5M2FNUZ = 19,
  PJRT_Buffer_Type_F8E4M3FNUZ = 20,
  PJRT_Buffer_Type_S4 = 21,
  PJRT_Buffer_Type_U4 = 22,
  PJRT_Buffer_Type_TOKEN = 23,
  PJRT_Buffer_Type_S2 = 24,
  PJRT_Buffer_Type_U2 = 25,
  PJRT_Buffer_Type_F8E4M3 = 26,
  PJRT_Buffer_Type_F8E3M4 = 27,
  PJRT_Buffer_Type_F8E8M0FNU = 28,
  PJRT_Buffer_Type_F4E2M1FN = 29,
  PJRT_Buffer_Type_S1 = 30,
  PJRT_Buffer_Type_U1 = 31
} PJRT_Buffer_Type;

typedef enum {
  PJRT_HostBufferSemantics_kImmutableOnlyDuringCall = 0,
  PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes = 1,
  PJRT_HostBufferSemantics_kImmutableZeroCopy = 2,
  PJRT_HostBufferSemantics_kMutableZeroCopy = 3
} PJRT_HostBufferSemantics;

typedef enum {
  PJRT_Buffer_MemoryLayout_Type_Tiled = 0,
  PJRT_Buffer_MemoryLayout_Type_Strides = 1
} PJRT_Buffer_MemoryLayout_Type;

typedef struct PJRT_Buffer_MemoryLayout_Tiled PJRT_Buffer_MemoryLayout_Tiled;
struct PJRT_Buffer_MemoryLayout_Tiled {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const int64_t *minor_to_major;
  size_t minor_to_major_size;
  const int64_t *tile_dims;
  const size_t *tile_dim_sizes;
  size_t num_tiles;
};

typedef struct PJRT_Buffer_MemoryLayout_Strides PJRT_Buffer_MemoryLayout_Strides;
struct PJRT_Buffer_MemoryLayout_Strides {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  const int64_t *byte_strides;
  size_t num_byte_strides;
};

typedef struct PJRT_Buffer_MemoryLayout PJRT_Buffer_MemoryLayout;
struct PJRT_Buffer_MemoryLayout {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  union {
    PJRT_Buffer_MemoryLayout_Tiled tiled;
    PJRT_Buffer_MemoryLayout_Strides strides;
  };
  PJRT_Buffer_MemoryLayout_Type type;
};

typedef struct PJRT_Client_BufferFromHostBuffer_Args PJRT_Client_BufferFromHostBuffer_Args;
struct PJRT_Client_BufferFromHostBuffer_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  const void *data;
  PJRT_Buffer_Type type;
  const int64_t *dims;
  size_t num_dims;
  const int64_t *byte_strides; /* NULL: dense row-major */
  size_t num_byte_strides;
  PJRT_HostBufferSemantics host_buffer_semantics;
  PJRT_Device *device;
  PJRT_Memory *memory;
  PJRT_Buffer_MemoryLayout *device_layout;
  PJRT_Event *done_with_host_buffer;
  PJRT_Buffer *buffer;
};

typedef struct PJRT_Client_TopologyDescription_Args PJRT_Client_TopologyDescription_Args;
struct PJRT_Client_TopologyDescription_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Client *client;
  PJRT_TopologyDescription *topology;
};

/* ---- device descriptions, devices, memories ----------------------------------------------- */
typedef struct PJRT_DeviceDescription_Id_Args PJRT_DeviceDescription_Id_Args;
struct PJRT_DeviceDescription_Id_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_DeviceDescription *device_description;
  int id;
};

typedef struct PJRT_DeviceDescription_ProcessIndex_Args PJRT_DeviceDescription_ProcessIndex_Args;
struct PJRT_DeviceDescription_ProcessIndex_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_DeviceDescription *device_description;
  int process_index;
};

typedef struct PJRT_DeviceDescription_Attributes_Args PJRT_DeviceDescription_Attributes_Args;
struct PJRT_DeviceDescription_Attributes_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_DeviceDescription *device_description;
  size_t num_attributes;
  const PJRT_NamedValue *attributes;
};

typedef struct PJRT_DeviceDescription_Kind_Args PJRT_DeviceDescription_Kind_Args;
struct PJRT_DeviceDescription_Kind_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_DeviceDescription *device_description;
  const char *device_kind;
  size_t device_kind_size;
};

typedef struct PJRT_DeviceDescription_DebugString_Args PJRT_DeviceDescription_DebugString_Args;
struct PJRT_DeviceDescription_DebugString_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_DeviceDescription *device_description;
  const char *debug_string;
  size_t debug_string_size;
};

typedef struct PJRT_DeviceDescription_ToString_Args PJRT_DeviceDescription_ToString_Args;
struct PJRT_DeviceDescription_ToString_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_DeviceDescription *device_description;
  const char *to_string;
  size_t to_string_size;
};

typedef struct PJRT_Device_GetDescription_Args PJRT_Device_GetDescription_Args;
struct PJRT_Device_GetDescription_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Device *device;
  PJRT_DeviceDescription *device_description;
};

typedef struct PJRT_Device_IsAddressable_Args PJRT_Device_IsAddressable_Args;
struct PJRT_Device_IsAddressable_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Device *device;
  bool is_addressable;
};

typedef struct PJRT_Device_LocalHardwareId_Args PJRT_Device_LocalHardwareId_Args;
struct PJRT_Device_LocalHardwareId_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Device *device;
  int local_hardware_id;
};

typedef struct PJRT_Device_AddressableMemories_Args PJRT_Device_AddressableMemories_Args;
struct PJRT_Device_AddressableMemories_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Device *device;
  PJRT_Memory *const *memories;
  size_t num_memories;
};

typedef struct PJRT_Device_DefaultMemory_Args PJRT_Device_DefaultMemory_Args;
struct PJRT_Device_DefaultMemory_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Device *device;
  PJRT_Memory *memory;
};

typedef struct PJRT_Memory_Id_Args PJRT_Memory_Id_Args;
struct PJRT_Memory_Id_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Memory *memory;
  int id;
};

typedef struct PJRT_Memory_Kind_Args PJRT_Memory_Kind_Args;
struct PJRT_Memory_Kind_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Memory *memory;
  const char *kind;
  size_t kind_size;
};

typedef struct PJRT_Memory_Kind_Id_Args PJRT_Memory_Kind_Id_Args;
struct PJRT_Memory_Kind_Id_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Memory *memory;
  int kind_id;
};

typedef struct PJRT_Memory_DebugString_Args PJRT_Memory_DebugString_Args;
struct PJRT_Memory_DebugString_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Memory *memory;
  const char *debug_string;
  size_t debug_string_size;
};

typedef struct PJRT_Memory_ToString_Args PJRT_Memory_ToString_Args;
struct PJRT_Memory_ToString_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Memory *memory;
  const char *to_string;
  size_t to_string_size;
};

typedef struct PJRT_Memory_AddressableByDevices_Args PJRT_Memory_AddressableByDevices_Args;
struct PJRT_Memory_AddressableByDevices_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Memory *memory;
  PJRT_Device *const *devices;
  size_t num_devices;
};

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

typedef struct PJRT_Executable_Fingerprint_Args PJRT_Executable_Fingerprint_Args;
struct PJRT_Executable_Fingerprint_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Executable *executable;
  const char *executable_fingerprint;
  size_t executable_fingerprint_size;
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
  CX_PJRT_SLOT(PJRT_Device_MemoryStats);
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
  CX_PJRT_SLOT(PJRT_Executable_GetCostAnalysis);
  CX_PJRT_FN(PJRT_Executable_OutputMemoryKinds);
  CX_PJRT_SLOT(PJRT_Executable_OptimizedProgram);
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
  CX_PJRT_SLOT(PJRT_Executable_GetCompiledMemoryStats);
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
