/* client.c — PJRT_Client and what it shows: one device per cxla device, the host CPU (id 0,
 * kind "cpu") and, when --pjrt-gpu finds one, the GPU (id 1, kind "gpu" or "gpu-emu"), each
 * with one memory space (kind "device"), their descriptions and the memories' user-data
 * tables. The queries here are ones XLA's C API client treats as infallible (it aborts the
 * process on an error), so past argument checks they cannot fail. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pjrt_internal.h"

void cx_pjrt_lock(PJRT_Client *c) { pthread_mutex_lock(&c->lock); }
void cx_pjrt_unlock(PJRT_Client *c) { pthread_mutex_unlock(&c->lock); }

/* ---- memory user data: the client hangs its own memory-space object here ---- */
static void *mem_get_user(PJRT_Memory *m, const void *key) {
  void *data = NULL;
  cx_pjrt_lock(m->client);
  for (int i = 0; i < m->nuser; i++)
    if (m->user[i].key == key) data = m->user[i].data;
  cx_pjrt_unlock(m->client);
  return data;
}

static void mem_set_user(PJRT_Memory *m, const void *key, void *data, void (*dtor)(void *)) {
  void (*old_dtor)(void *) = NULL;
  void *old = NULL;
  cx_pjrt_lock(m->client);
  int i = 0;
  while (i < m->nuser && m->user[i].key != key) i++;
  if (i < m->nuser) {
    old = m->user[i].data, old_dtor = m->user[i].dtor;
  } else if (m->nuser < (int)(sizeof m->user / sizeof m->user[0])) {
    m->nuser++;
  } else {
    /* The table is full (XLA's client sets two keys): keep what is there, release the new one
     * as a set-then-replaced value would be. */
    cx_pjrt_unlock(m->client);
    if (dtor) dtor(data);
    return;
  }
  m->user[i].key = key, m->user[i].data = data, m->user[i].dtor = dtor;
  cx_pjrt_unlock(m->client);
  if (old_dtor && old != data) old_dtor(old);
}

static const PJRT_Memory_FunctionTable k_memory_table = {
    .struct_size = sizeof(PJRT_Memory_FunctionTable),
    .instance_struct_size = sizeof(PJRT_Memory),
    .get_user_data = mem_get_user,
    .set_user_data = mem_set_user,
};

/* ---- client ---- */

/* The GPU backend the plugin's GPU device uses, from --pjrt-gpu (docs/flags.md): "gpu" when
 * auto finds the CUDA driver and a GPU (the device cxla makes for the context is the probe:
 * it needs both), "gpu-emu" for emu, NULL for none. emu that cannot run is an error. */
static PJRT_Error *gpu_backend(cxla_context *ctx, const char **out) {
  char mode[16];
  *out = NULL;
  if (cxla_context_get_flag(ctx, "pjrt-gpu", mode, sizeof mode) != CXLA_OK)
    return cx_pjrt_error_cxla(ctx, CXLA_ERR_INTERNAL, "PJRT_Client_Create: reading --pjrt-gpu");
  if (!strcmp(mode, "off")) return NULL;
  const char *be = !strcmp(mode, "emu") ? "gpu-emu" : "gpu";
  cxla_memory_stats st;
  cxla_status s = cxla_context_memory_stats(ctx, be, &st);
  if (s == CXLA_OK) *out = be;
  else if (!strcmp(mode, "emu")) return cx_pjrt_error_cxla(ctx, s, "PJRT_Client_Create (--pjrt-gpu=emu)");
  return NULL;
}

static void add_device(PJRT_Client *c, const char *backend) {
  int i = c->ndevices++;
  PJRT_Device *d = &c->devices[i];
  PJRT_Memory *m = &c->memories[i];
  d->client = c;
  d->backend = backend;
  d->host = !strcmp(backend, CX_PJRT_BACKEND);
  d->desc.client = c;
  d->desc.id = i;
  d->desc.kind = backend; /* "cpu", "gpu", "gpu-emu": what jax.Device.device_kind says */
  snprintf(d->desc.debug, sizeof d->desc.debug, "cxla:%d", i);
  snprintf(d->desc.str, sizeof d->desc.str, "CxlaDevice(id=%d)", i);
  d->memory_list[0] = m;
  d->self_list[0] = d;
  m->vtable = &k_memory_table;
  m->client = c;
  m->id = i;
  m->device_list[0] = d;
  snprintf(m->debug, sizeof m->debug, "cxla:%d %s memory", i, CX_PJRT_MEMORY_KIND);
  snprintf(m->str, sizeof m->str, "MEMORY_SPACE_%d", i);
  c->device_list[i] = d;
  c->memory_list[i] = m;
}

PJRT_Device *cx_pjrt_device(PJRT_Client *c, int64_t id) {
  return id >= 0 && id < c->ndevices ? &c->devices[id] : NULL;
}

PJRT_Error *cx_PJRT_Client_Create(PJRT_Client_Create_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Client_Create_Args, client);
  args->client = NULL;
  for (size_t i = 0; i < args->num_options; i++) {
    const PJRT_NamedValue *v = &args->create_options[i];
    static const char key[] = "cxla_host_callbacks";
    if (!v->name || v->name_size != sizeof key - 1 || memcmp(v->name, key, sizeof key - 1)) continue;
    /* The Python package's dispatcher (python/cxla/_callbacks.py): the plugin links its own
     * copy of cxla, whose registration only this option reaches. */
    if (v->type != PJRT_NamedValue_kInt64 || v->int64_value == 0)
      return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                           "PJRT_Client_Create: option cxla_host_callbacks is the address of a cxla_host_callbacks, an int64");
    cxla_host_callbacks_set((const cxla_host_callbacks *)(uintptr_t)v->int64_value);
  }
  PJRT_Client *c = calloc(1, sizeof *c);
  if (!c) return cx_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "PJRT_Client_Create: out of memory");
  cxla_status s = cxla_context_create(&c->ctx);
  /* JAX's CPU backend (XLA:CPU) runs with denormals flushed to zero: so does its program here,
   * unless CXLA_FLAGS says otherwise */
  const char *user = getenv("CXLA_FLAGS");
  if (s == CXLA_OK && !(user && strstr(user, "cpu-flush-denormals")))
    s = cxla_context_set_flags(c->ctx, "--cpu-flush-denormals=on");
  const char *gpu = NULL;
  PJRT_Error *e = s == CXLA_OK ? gpu_backend(c->ctx, &gpu) : cx_pjrt_error_cxla(c->ctx, s, "PJRT_Client_Create (CXLA_FLAGS)");
  if (e) {
    cxla_context_destroy(c->ctx);
    free(c);
    return e;
  }
  pthread_mutex_init(&c->lock, NULL);
  cx_pjrt_stream_init(&c->stream);
  char async[8] = "";
  if (cxla_context_get_flag(c->ctx, "pjrt-async", async, sizeof async) != CXLA_OK) async[0] = 0;
  c->async = !strcmp(async, "on") ? CX_PJRT_ASYNC_ALL : !strcmp(async, "off") ? CX_PJRT_ASYNC_NONE : CX_PJRT_ASYNC_GPU;
  add_device(c, CX_PJRT_BACKEND); /* first: JAX's default device is the first listed */
  if (gpu) add_device(c, gpu);
  snprintf(c->version, sizeof c->version, "cxla %s", cxla_version());
  args->client = c;
  return NULL;
}

PJRT_Error *cx_PJRT_Client_Destroy(PJRT_Client_Destroy_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Client_Destroy_Args, client);
  PJRT_Client *c = args->client;
  if (!c) return NULL;
  cx_pjrt_stream_destroy(c); /* after what is queued has run */
  for (int k = 0; k < c->ndevices; k++)
    for (int i = 0; i < c->memories[k].nuser; i++)
      if (c->memories[k].user[i].dtor) c->memories[k].user[i].dtor(c->memories[k].user[i].data);
  cxla_context_destroy(c->ctx);
  pthread_mutex_destroy(&c->lock);
  free(c);
  return NULL;
}

#define NEED(ptr, name)                                                                       \
  if (!(ptr)) return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "%s: NULL %s", name, #ptr)

PJRT_Error *cx_PJRT_Client_PlatformName(PJRT_Client_PlatformName_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Client_PlatformName_Args, platform_name_size);
  args->platform_name = CX_PJRT_PLATFORM;
  args->platform_name_size = strlen(CX_PJRT_PLATFORM);
  return NULL;
}

PJRT_Error *cx_PJRT_Client_ProcessIndex(PJRT_Client_ProcessIndex_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Client_ProcessIndex_Args, process_index);
  args->process_index = 0;
  return NULL;
}

PJRT_Error *cx_PJRT_Client_PlatformVersion(PJRT_Client_PlatformVersion_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Client_PlatformVersion_Args, platform_version_size);
  NEED(args->client, "PJRT_Client_PlatformVersion");
  args->platform_version = args->client->version;
  args->platform_version_size = strlen(args->client->version);
  return NULL;
}

PJRT_Error *cx_PJRT_Client_Devices(PJRT_Client_Devices_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Client_Devices_Args, num_devices);
  NEED(args->client, "PJRT_Client_Devices");
  args->devices = args->client->device_list;
  args->num_devices = (size_t)args->client->ndevices;
  return NULL;
}

PJRT_Error *cx_PJRT_Client_AddressableDevices(PJRT_Client_AddressableDevices_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Client_AddressableDevices_Args, num_addressable_devices);
  NEED(args->client, "PJRT_Client_AddressableDevices");
  args->addressable_devices = args->client->device_list;
  args->num_addressable_devices = (size_t)args->client->ndevices;
  return NULL;
}

PJRT_Error *cx_PJRT_Client_LookupDevice(PJRT_Client_LookupDevice_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Client_LookupDevice_Args, device);
  NEED(args->client, "PJRT_Client_LookupDevice");
  if (!(args->device = cx_pjrt_device(args->client, args->id)))
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Client_LookupDevice: no device %d (cxla has %d to %d)",
                         args->id, 0, args->client->ndevices - 1);
  return NULL;
}

PJRT_Error *cx_PJRT_Client_LookupAddressableDevice(PJRT_Client_LookupAddressableDevice_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Client_LookupAddressableDevice_Args, addressable_device);
  NEED(args->client, "PJRT_Client_LookupAddressableDevice");
  if (!(args->addressable_device = cx_pjrt_device(args->client, args->local_hardware_id)))
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                         "PJRT_Client_LookupAddressableDevice: no device with local hardware id %d (cxla has %d to %d)",
                         args->local_hardware_id, 0, args->client->ndevices - 1);
  return NULL;
}

PJRT_Error *cx_PJRT_Client_AddressableMemories(PJRT_Client_AddressableMemories_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Client_AddressableMemories_Args, num_addressable_memories);
  NEED(args->client, "PJRT_Client_AddressableMemories");
  args->addressable_memories = args->client->memory_list;
  args->num_addressable_memories = (size_t)args->client->ndevices;
  return NULL;
}

PJRT_Error *cx_PJRT_Client_DefaultDeviceAssignment(PJRT_Client_DefaultDeviceAssignment_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Client_DefaultDeviceAssignment_Args, default_assignment);
  if (args->num_replicas != 1 || args->num_partitions != 1)
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                         "PJRT_Client_DefaultDeviceAssignment: %d replicas x %d partitions need more "
                         "devices than one (cxla runs a program on one device)",
                         args->num_replicas, args->num_partitions);
  if (args->default_assignment_size < 1 || !args->default_assignment)
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Client_DefaultDeviceAssignment: no room for 1 entry");
  args->default_assignment[0] = 0; /* the cpu: the default device */
  return NULL;
}

/* ---- device descriptions and devices ---- */
PJRT_Error *cx_PJRT_DeviceDescription_Id(PJRT_DeviceDescription_Id_Args *args) {
  CX_PJRT_ARGS(args, PJRT_DeviceDescription_Id_Args, id);
  NEED(args->device_description, "PJRT_DeviceDescription_Id");
  args->id = args->device_description->id;
  return NULL;
}

PJRT_Error *cx_PJRT_DeviceDescription_ProcessIndex(PJRT_DeviceDescription_ProcessIndex_Args *args) {
  CX_PJRT_ARGS(args, PJRT_DeviceDescription_ProcessIndex_Args, process_index);
  args->process_index = 0;
  return NULL;
}

PJRT_Error *cx_PJRT_DeviceDescription_Attributes(PJRT_DeviceDescription_Attributes_Args *args) {
  CX_PJRT_ARGS(args, PJRT_DeviceDescription_Attributes_Args, attributes);
  args->num_attributes = 0;
  args->attributes = NULL;
  return NULL;
}

PJRT_Error *cx_PJRT_DeviceDescription_Kind(PJRT_DeviceDescription_Kind_Args *args) {
  CX_PJRT_ARGS(args, PJRT_DeviceDescription_Kind_Args, device_kind_size);
  NEED(args->device_description, "PJRT_DeviceDescription_Kind");
  args->device_kind = args->device_description->kind;
  args->device_kind_size = strlen(args->device_description->kind);
  return NULL;
}

PJRT_Error *cx_PJRT_DeviceDescription_DebugString(PJRT_DeviceDescription_DebugString_Args *args) {
  CX_PJRT_ARGS(args, PJRT_DeviceDescription_DebugString_Args, debug_string_size);
  NEED(args->device_description, "PJRT_DeviceDescription_DebugString");
  args->debug_string = args->device_description->debug;
  args->debug_string_size = strlen(args->device_description->debug);
  return NULL;
}

PJRT_Error *cx_PJRT_DeviceDescription_ToString(PJRT_DeviceDescription_ToString_Args *args) {
  CX_PJRT_ARGS(args, PJRT_DeviceDescription_ToString_Args, to_string_size);
  NEED(args->device_description, "PJRT_DeviceDescription_ToString");
  args->to_string = args->device_description->str;
  args->to_string_size = strlen(args->device_description->str);
  return NULL;
}

PJRT_Error *cx_PJRT_Device_GetDescription(PJRT_Device_GetDescription_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Device_GetDescription_Args, device_description);
  NEED(args->device, "PJRT_Device_GetDescription");
  args->device_description = &args->device->desc;
  return NULL;
}

PJRT_Error *cx_PJRT_Device_IsAddressable(PJRT_Device_IsAddressable_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Device_IsAddressable_Args, is_addressable);
  args->is_addressable = true;
  return NULL;
}

/* The device's id: unique in the client, so LookupAddressableDevice finds one device by it
 * (a CUDA ordinal would repeat the cpu's 0). */
PJRT_Error *cx_PJRT_Device_LocalHardwareId(PJRT_Device_LocalHardwareId_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Device_LocalHardwareId_Args, local_hardware_id);
  NEED(args->device, "PJRT_Device_LocalHardwareId");
  args->local_hardware_id = args->device->desc.id;
  return NULL;
}

PJRT_Error *cx_PJRT_Device_AddressableMemories(PJRT_Device_AddressableMemories_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Device_AddressableMemories_Args, num_memories);
  NEED(args->device, "PJRT_Device_AddressableMemories");
  args->memories = args->device->memory_list;
  args->num_memories = 1;
  return NULL;
}

PJRT_Error *cx_PJRT_Device_DefaultMemory(PJRT_Device_DefaultMemory_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Device_DefaultMemory_Args, memory);
  NEED(args->device, "PJRT_Device_DefaultMemory");
  args->memory = args->device->memory_list[0];
  return NULL;
}

/* JAX's device.memory_stats(): a GPU device's allocator (cxla_context_memory_stats): in use,
 * its peak, and the pool (in use plus what freed buffers gave back and the cache keeps). Its
 * counts of driver calls are not XLA's num_allocs (the allocator's allocations), so that stays
 * unset, as the limits do (cxla does not cap device memory). The cpu device's memory is the
 * process's: UNIMPLEMENTED, as XLA's CPU client answers (JAX then returns None). */
PJRT_Error *cx_PJRT_Device_MemoryStats(PJRT_Device_MemoryStats_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Device_MemoryStats_Args, peak_pool_bytes_is_set);
  NEED(args->device, "PJRT_Device_MemoryStats");
  PJRT_Device *d = args->device;
  if (d->host)
    return cx_pjrt_error(PJRT_Error_Code_UNIMPLEMENTED, "PJRT_Device_MemoryStats: the %s device's memory is the "
                         "process's, which cxla does not count per device", d->backend);
  cxla_memory_stats ms;
  cxla_status s = cxla_context_memory_stats(d->client->ctx, d->backend, &ms);
  if (s != CXLA_OK) return cx_pjrt_error_cxla(d->client->ctx, s, "PJRT_Device_MemoryStats");
  size_t end = offsetof(PJRT_Device_MemoryStats_Args, peak_pool_bytes_is_set) + 1; /* the caller's struct_size */
  memset((char *)args + offsetof(PJRT_Device_MemoryStats_Args, bytes_in_use), 0,
         end - offsetof(PJRT_Device_MemoryStats_Args, bytes_in_use));
  args->bytes_in_use = ms.in_use;
  args->peak_bytes_in_use = ms.peak_in_use, args->peak_bytes_in_use_is_set = true;
  args->pool_bytes = ms.in_use + ms.cached, args->pool_bytes_is_set = true;
  return NULL;
}

/* ---- memories: one per device, all of kind "device" (kind id 0) ---- */
PJRT_Error *cx_PJRT_Memory_Id(PJRT_Memory_Id_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Memory_Id_Args, id);
  NEED(args->memory, "PJRT_Memory_Id");
  args->id = args->memory->id;
  return NULL;
}

PJRT_Error *cx_PJRT_Memory_Kind(PJRT_Memory_Kind_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Memory_Kind_Args, kind_size);
  args->kind = CX_PJRT_MEMORY_KIND;
  args->kind_size = strlen(CX_PJRT_MEMORY_KIND);
  return NULL;
}

PJRT_Error *cx_PJRT_Memory_Kind_Id(PJRT_Memory_Kind_Id_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Memory_Kind_Id_Args, kind_id);
  args->kind_id = 0;
  return NULL;
}

PJRT_Error *cx_PJRT_Memory_DebugString(PJRT_Memory_DebugString_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Memory_DebugString_Args, debug_string_size);
  NEED(args->memory, "PJRT_Memory_DebugString");
  args->debug_string = args->memory->debug;
  args->debug_string_size = strlen(args->memory->debug);
  return NULL;
}

PJRT_Error *cx_PJRT_Memory_ToString(PJRT_Memory_ToString_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Memory_ToString_Args, to_string_size);
  NEED(args->memory, "PJRT_Memory_ToString");
  args->to_string = args->memory->str;
  args->to_string_size = strlen(args->memory->str);
  return NULL;
}

PJRT_Error *cx_PJRT_Memory_AddressableByDevices(PJRT_Memory_AddressableByDevices_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Memory_AddressableByDevices_Args, num_devices);
  NEED(args->memory, "PJRT_Memory_AddressableByDevices");
  args->devices = args->memory->device_list;
  args->num_devices = 1;
  return NULL;
}
