/* compile_options.c — reads the fields cxla uses from a serialized xla.CompileOptionsProto
 * (protobuf wire format, xla/pjrt/proto/compile_options.proto at the pinned XLA):
 *   CompileOptionsProto: 1 argument_layouts (repeated message, counted), 2
 *   parameter_is_tupled_arguments (bool), 3 executable_build_options (message);
 *   ExecutableBuildOptionsProto: 4 num_replicas (int64), 5 num_partitions (int64), 9
 *   device_assignment (DeviceAssignmentProto: 3 computation_devices, repeated ComputationDevice:
 *   1 replica_device_ids, repeated int64, packed or not): the device the program runs on, the
 *   first id of the first computation (JAX assigns the device of the jit's arguments there);
 *   7 env_option_overrides (map<string, OptionOverrideProto>: entries of 1 key, 2 value), the
 *   compiler_options JAX does not place itself: XLA takes each key as a field of its
 *   DebugOptions and refuses any other ("No such compile option") or a value of the wrong type,
 *   which cxla checks too (debug_option.c); the options tune XLA's own compiler, so cxla uses
 *   none of them.
 * Every other field is skipped by its wire type. Bounded: each read checks the bytes left, a
 * nested message is read within its length, and the depth is at most three levels. */
#include <string.h>

#include "pjrt_internal.h"

typedef struct {
  const uint8_t *p, *end, *start;
} cx_pb;

static PJRT_Error *bad(const cx_pb *r, const char *what) {
  return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "compile options (xla.CompileOptionsProto): %s at byte %zu",
                       what, (size_t)(r->p - r->start));
}

static PJRT_Error *varint(cx_pb *r, uint64_t *out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (r->p >= r->end) return bad(r, "truncated varint");
    uint8_t b = *r->p++;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *out = v;
      return NULL;
    }
  }
  return bad(r, "varint longer than 10 bytes");
}

/* Skips a field's value of wire type wt (groups, 3 and 4, are not used by these messages). */
static PJRT_Error *skip(cx_pb *r, unsigned wt, const uint8_t **body, uint64_t *body_len) {
  uint64_t n;
  PJRT_Error *e;
  *body = NULL;
  switch (wt) {
  case 0: return varint(r, &n);
  case 1: n = 8; break;
  case 5: n = 4; break;
  case 2:
    if ((e = varint(r, &n))) return e;
    *body = r->p;
    *body_len = n;
    break;
  default: return bad(r, "unsupported wire type");
  }
  if (n > (uint64_t)(r->end - r->p)) return bad(r, "a field runs past the end");
  r->p += n;
  return NULL;
}

/* The first device id of a ComputationDevice (field 1: one varint, or a packed run of them). */
static PJRT_Error *computation_device(cx_pb *outer, const uint8_t *p, uint64_t n, cx_pjrt_options *o) {
  cx_pb r = {p, p + n, outer->start};
  while (r.p < r.end && o->device_id < 0) {
    uint64_t key, v;
    PJRT_Error *e;
    if ((e = varint(&r, &key))) return e;
    const uint8_t *body;
    uint64_t len;
    if (key == (1 << 3 | 0)) {
      if ((e = varint(&r, &v))) return e;
    } else if (key == (1 << 3 | 2)) {
      if ((e = skip(&r, 2, &body, &len))) return e;
      cx_pb packed = {body, body + len, outer->start};
      if (!len) continue;
      if ((e = varint(&packed, &v))) return e;
    } else {
      if ((e = skip(&r, (unsigned)(key & 7), &body, &len))) return e;
      continue;
    }
    if ((int64_t)v < 0 || (int64_t)v > (1 << 20)) return bad(&r, "device id out of range");
    o->device_id = (int64_t)v;
  }
  return NULL;
}

/* DeviceAssignmentProto: the first of its computation_devices (field 3). */
static PJRT_Error *device_assignment(cx_pb *outer, const uint8_t *p, uint64_t n, cx_pjrt_options *o) {
  cx_pb r = {p, p + n, outer->start};
  while (r.p < r.end) {
    uint64_t key;
    PJRT_Error *e;
    if ((e = varint(&r, &key))) return e;
    const uint8_t *body;
    uint64_t len;
    if ((e = skip(&r, (unsigned)(key & 7), &body, &len))) return e;
    if (key == (3 << 3 | 2) && o->device_id < 0 && (e = computation_device(&r, body, len, o))) return e;
  }
  return NULL;
}

static PJRT_Error *build_options(cx_pb *outer, const uint8_t *p, uint64_t n, cx_pjrt_options *o) {
  cx_pb r = {p, p + n, outer->start};
  while (r.p < r.end) {
    uint64_t key, v;
    PJRT_Error *e;
    if ((e = varint(&r, &key))) return e;
    unsigned field = (unsigned)(key >> 3), wt = (unsigned)(key & 7);
    if ((field == 4 || field == 5) && wt == 0) {
      if ((e = varint(&r, &v))) return e;
      if ((int64_t)v < 0 || (int64_t)v > (1 << 20)) return bad(&r, field == 4 ? "num_replicas out of range" : "num_partitions out of range");
      if (field == 4) o->num_replicas = (int64_t)v;
      else o->num_partitions = (int64_t)v;
      continue;
    }
    const uint8_t *body;
    uint64_t len;
    if ((e = skip(&r, wt, &body, &len))) return e;
    if (field == 9 && wt == 2 && (e = device_assignment(&r, body, len, o))) return e;
  }
  return NULL;
}

/* An OptionOverrideProto: oneof 1 string_field, 2 bool_field, 3 int_field (int64), 4
 * double_field. */
static PJRT_Error *override_value(cx_pb *outer, const uint8_t *p, uint64_t n, cx_pjrt_option_value *v) {
  cx_pb r = {p, p + n, outer->start};
  while (r.p < r.end) {
    uint64_t key, x;
    PJRT_Error *e;
    if ((e = varint(&r, &key))) return e;
    unsigned field = (unsigned)(key >> 3), wt = (unsigned)(key & 7);
    if ((field == 2 || field == 3) && wt == 0) {
      if ((e = varint(&r, &x))) return e;
      if (field == 2) v->kind = CX_PJRT_OPTION_BOOL, v->b = x != 0;
      else v->kind = CX_PJRT_OPTION_INT, v->i = (int64_t)x;
      continue;
    }
    const uint8_t *at = r.p, *body;
    uint64_t len;
    if ((e = skip(&r, wt, &body, &len))) return e;
    if (field == 1 && wt == 2) v->kind = CX_PJRT_OPTION_STRING, v->str = (const char *)body, v->len = len;
    if (field == 4 && wt == 1) {
      uint64_t bits = 0;
      for (int i = 7; i >= 0; i--) bits = bits << 8 | at[i];
      v->kind = CX_PJRT_OPTION_DOUBLE;
      memcpy(&v->d, &bits, sizeof v->d);
    }
  }
  return NULL;
}

/* One env_option_overrides entry (1 key, 2 value): the key must name a field of XLA's
 * DebugOptions and the value be one its type takes (debug_option.c). */
static PJRT_Error *option_override(cx_pb *outer, const uint8_t *p, uint64_t n) {
  cx_pb r = {p, p + n, outer->start};
  const char *name = "";
  uint64_t name_len = 0;
  cx_pjrt_option_value v = {.kind = CX_PJRT_OPTION_NONE};
  while (r.p < r.end) {
    uint64_t key;
    PJRT_Error *e;
    if ((e = varint(&r, &key))) return e;
    const uint8_t *body;
    uint64_t len;
    if ((e = skip(&r, (unsigned)(key & 7), &body, &len))) return e;
    if ((key & 7) != 2) continue;
    if (key >> 3 == 1) name = (const char *)body, name_len = len;
    if (key >> 3 == 2 && (e = override_value(&r, body, len, &v))) return e;
  }
  return cx_pjrt_debug_option_check(name, name_len, &v);
}

PJRT_Error *cx_pjrt_options_decode(const void *bytes, size_t len, cx_pjrt_options *o) {
  o->num_replicas = 1;
  o->num_partitions = 1;
  o->tupled_arguments = 0;
  o->num_argument_layouts = 0;
  o->device_id = -1;
  if (!bytes || !len) return NULL;
  cx_pb r = {bytes, (const uint8_t *)bytes + len, bytes};
  while (r.p < r.end) {
    uint64_t key, v;
    PJRT_Error *e;
    if ((e = varint(&r, &key))) return e;
    unsigned field = (unsigned)(key >> 3), wt = (unsigned)(key & 7);
    if (field == 0) return bad(&r, "field number 0");
    if (field == 2 && wt == 0) {
      if ((e = varint(&r, &v))) return e;
      o->tupled_arguments = v != 0;
      continue;
    }
    const uint8_t *body;
    uint64_t n;
    if ((e = skip(&r, wt, &body, &n))) return e;
    if (field == 1 && wt == 2) o->num_argument_layouts++;
    if (field == 3 && wt == 2 && (e = build_options(&r, body, n, o))) return e;
    if (field == 7 && wt == 2 && (e = option_override(&r, body, n))) return e;
  }
  /* proto3 leaves zero values out; 0 replicas or partitions means the default, 1. */
  if (o->num_replicas == 0) o->num_replicas = 1;
  if (o->num_partitions == 0) o->num_partitions = 1;
  return NULL;
}
