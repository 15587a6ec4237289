/* pjrt_abi_types.h — part of pjrt_abi.h (include that): the PJRT C API 0.112 structs for errors,
 * named values, the plugin, events, the client, device descriptions, devices and memories. */
#ifndef CX_PJRT_ABI_TYPES_H
#define CX_PJRT_ABI_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- extensions, version, errors ---------------------------------------------------------- */
typedef enum {
  PJRT_Extension_Type_Gpu_Custom_Call = 0,
  PJRT_Extension_Type_Profiler = 1,
  PJRT_Extension_Type_Layouts = 4,
  PJRT_Extension_Type_Unknown = 11,
  PJRT_Extension_Type_Shardings = 19,
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

/* The device's allocator: bytes_in_use always, each other figure with its _is_set flag. */
typedef struct PJRT_Device_MemoryStats_Args PJRT_Device_MemoryStats_Args;
struct PJRT_Device_MemoryStats_Args {
  size_t struct_size;
  PJRT_Extension_Base *extension_start;
  PJRT_Device *device;
  int64_t bytes_in_use;
  int64_t peak_bytes_in_use;
  bool peak_bytes_in_use_is_set;
  int64_t num_allocs;
  bool num_allocs_is_set;
  int64_t largest_alloc_size;
  bool largest_alloc_size_is_set;
  int64_t bytes_limit;
  bool bytes_limit_is_set;
  int64_t bytes_reserved;
  bool bytes_reserved_is_set;
  int64_t peak_bytes_reserved;
  bool peak_bytes_reserved_is_set;
  int64_t bytes_reservable_limit;
  bool bytes_reservable_limit_is_set;
  int64_t largest_free_block_bytes;
  bool largest_free_block_bytes_is_set;
  int64_t pool_bytes;
  bool pool_bytes_is_set;
  int64_t peak_pool_bytes;
  bool peak_pool_bytes_is_set;
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


#endif
