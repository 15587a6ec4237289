/* debug_option.c — a compile option JAX passes (`compiler_options={...}`: CompileOptionsProto's
 * env_option_overrides, a DebugOptions field name and an OptionOverrideProto value) checked as
 * XLA's CompileOptions::ApplyOption checks it. cxla's compiler takes its own flags (CXLA_FLAGS),
 * so it reads no option's value, but a name DebugOptions lacks, or a value its field's type does
 * not take, is the error XLA gives: a string is parsed as the field's type (each comma-separated
 * part for a repeated field; a bool is "True" or "False"; an enum a number or one of its value
 * names), a bool, integer or double value must be of that type (a float's double within
 * [FLT_MIN, FLT_MAX], an int32's integer within its range). The fields come from xla.proto
 * (debug_options.inc, scripts/xla_debug_options.py). */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pjrt_internal.h"

typedef enum { T_BOOL, T_INT32, T_INT64, T_FLOAT, T_DOUBLE, T_STRING, T_ENUM, T_MESSAGE } opt_type;
static const char *const k_type_name[] = {"bool", "int32", "int64", "float", "double", "string", "enum", "message"};

typedef struct debug_option {
  const char *name;
  opt_type type;
  int repeated;
  const char *const *values; /* an enum's value names (NULL-terminated); NULL: not known here */
} debug_option;

/* The enums' value lists, then the options (sorted by name); NONE: not an enum of DebugOptions. */
#define enum_NONE NULL
#define CX_DEBUG_ENUM(name, ...) static const char *const enum_##name[] = {__VA_ARGS__, NULL};
#define CX_DEBUG_OPTION(name, type, repeated, values)
#include "debug_options.inc"
#undef CX_DEBUG_ENUM
#undef CX_DEBUG_OPTION
static const debug_option k_options[] = {
#define CX_DEBUG_ENUM(name, ...)
#define CX_DEBUG_OPTION(name, type, repeated, values) {name, T_##type, repeated, enum_##values},
#include "debug_options.inc"
#undef CX_DEBUG_ENUM
#undef CX_DEBUG_OPTION
};

static const debug_option *find(const char *name, size_t len) {
  size_t lo = 0, hi = sizeof k_options / sizeof k_options[0];
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = strncmp(k_options[mid].name, name, len);
    if (!c && k_options[mid].name[len]) c = 1;
    if (!c) return &k_options[mid];
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return NULL;
}

/* absl's SimpleAtoi / SimpleAtod: the whole text (spaces around it allowed) is the number. */
static int whole_int(const char *s, int64_t lo, int64_t hi) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  while (*end == ' ' || *end == '\t') end++;
  return end != s && !*end && !errno && v >= lo && v <= hi;
}

static int whole_double(const char *s) {
  char *end;
  (void)strtod(s, &end);
  while (*end == ' ' || *end == '\t') end++;
  return end != s && !*end;
}

static int enum_name(const debug_option *o, const char *s) {
  if (!o->values) return *s != 0; /* an enum defined outside DebugOptions: names unknown here */
  for (const char *const *v = o->values; *v; v++)
    if (!strcmp(*v, s)) return 1;
  return 0;
}

/* One value of a string override, parsed as the field's type. */
static int takes_string(const debug_option *o, const char *s) {
  switch (o->type) {
  case T_STRING: return 1;
  case T_INT32: return whole_int(s, INT32_MIN, INT32_MAX);
  case T_INT64: return whole_int(s, INT64_MIN, INT64_MAX);
  case T_FLOAT: case T_DOUBLE: return whole_double(s);
  case T_BOOL: return !strcmp(s, "True") || !strcmp(s, "False");
  case T_ENUM: return whole_int(s, INT32_MIN, INT32_MAX) || enum_name(o, s);
  default: return 0;
  }
}

static PJRT_Error *not_valid(const debug_option *o, const char *value) {
  return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "While setting option %s, '%s' is not a valid %s value.",
                       o->name, value, k_type_name[o->type]);
}

PJRT_Error *cx_pjrt_debug_option_check(const char *name, size_t len, const cx_pjrt_option_value *v) {
  const debug_option *o = find(name, len);
  if (!o)
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "No such compile option: '%.*s' (XLA's options are the "
                         "fields of its DebugOptions)", (int)(len > 200 ? 200 : len), name);
  char buf[64];
  switch (v->kind) {
  case CX_PJRT_OPTION_STRING: {
    char *s = malloc(v->len + 1);
    if (!s) return cx_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "compile option %s: out of memory", o->name);
    memcpy(s, v->str, v->len);
    s[v->len] = 0;
    PJRT_Error *e = NULL;
    if (!o->repeated) {
      if (!takes_string(o, s)) e = not_valid(o, s);
    } else if (*s) { /* each comma-separated part; an empty list is fine */
      for (char *part = s, *comma; !e && part; part = comma ? comma + 1 : NULL) {
        if ((comma = strchr(part, ','))) *comma = 0;
        if (!takes_string(o, part)) e = not_valid(o, part);
      }
    }
    free(s);
    return e;
  }
  case CX_PJRT_OPTION_BOOL:
    return o->type == T_BOOL ? NULL : not_valid(o, v->b ? "true" : "false");
  case CX_PJRT_OPTION_INT:
    if (o->type == T_INT64 || o->type == T_ENUM || (o->type == T_INT32 && v->i >= INT32_MIN && v->i <= INT32_MAX))
      return NULL;
    snprintf(buf, sizeof buf, "%" PRId64, v->i);
    return not_valid(o, buf);
  case CX_PJRT_OPTION_DOUBLE:
    if (o->type == T_DOUBLE || (o->type == T_FLOAT && v->d >= FLT_MIN && v->d <= FLT_MAX)) return NULL;
    snprintf(buf, sizeof buf, "%g", v->d);
    return not_valid(o, buf);
  default:
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "compile option %s: the override has no value", o->name);
  }
}
