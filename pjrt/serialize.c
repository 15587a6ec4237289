/* serialize.c — an executable as bytes, for JAX's persistent compilation cache. cxla keeps no
 * machine code between processes, so the bytes hold the module as compiled (HLO text) and its
 * compile options; loading them compiles again. Format (little-endian), version 1:
 *   "CXLAPJRT"  u32 format version  u32 n + cxla version  u32 n + CompileOptionsProto bytes
 *   u64 n + HLO text  u64 FNV-1a of everything before it
 * Anything else (truncated, another format or cxla version, a bad checksum) is an error. */
#include <stdlib.h>
#include <string.h>

#include "pjrt_internal.h"

#define MAGIC "CXLAPJRT"
#define FORMAT_VERSION 1u

static void put(char **p, const void *src, size_t n) {
  memcpy(*p, src, n);
  *p += n;
}
static void put_u32(char **p, uint32_t v) {
  for (int i = 0; i < 4; i++) *(*p)++ = (char)(v >> (8 * i));
}
static void put_u64(char **p, uint64_t v) {
  for (int i = 0; i < 8; i++) *(*p)++ = (char)(v >> (8 * i));
}

static void free_serialized(PJRT_SerializedExecutable *s) { free(s); }

PJRT_Error *cx_PJRT_Executable_Serialize(PJRT_Executable_Serialize_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Executable_Serialize_Args, serialized_executable_deleter);
  const PJRT_Executable *e = args->executable;
  if (!e) return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Executable_Serialize: NULL executable");
  const char *ver = cxla_version();
  size_t vlen = strlen(ver), hlen = strlen(e->hlo);
  size_t n = 8 + 4 + 4 + vlen + 4 + e->options_len + 8 + hlen + 8;
  char *buf = malloc(n), *p = buf;
  if (!buf) return cx_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "PJRT_Executable_Serialize: out of memory");
  put(&p, MAGIC, 8);
  put_u32(&p, FORMAT_VERSION);
  put_u32(&p, (uint32_t)vlen);
  put(&p, ver, vlen);
  put_u32(&p, (uint32_t)e->options_len);
  if (e->options_len) put(&p, e->options, e->options_len);
  put_u64(&p, hlen);
  put(&p, e->hlo, hlen);
  put_u64(&p, cx_pjrt_hash(CX_PJRT_HASH_SEED, buf, (size_t)(p - buf)));
  args->serialized_bytes = buf;
  args->serialized_bytes_size = n;
  args->serialized_executable = (PJRT_SerializedExecutable *)buf;
  args->serialized_executable_deleter = free_serialized;
  return NULL;
}

typedef struct {
  const unsigned char *p, *end, *start;
} cx_reader;

static int take(cx_reader *r, size_t n, const unsigned char **out) {
  if (n > (size_t)(r->end - r->p)) return 0;
  *out = r->p;
  r->p += n;
  return 1;
}
static int take_uint(cx_reader *r, int bytes, uint64_t *v) {
  const unsigned char *q;
  if (!take(r, (size_t)bytes, &q)) return 0;
  *v = 0;
  for (int i = 0; i < bytes; i++) *v |= (uint64_t)q[i] << (8 * i);
  return 1;
}

static PJRT_Error *corrupt(const cx_reader *r, const char *what) {
  return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Executable_DeserializeAndLoad: %s at byte %zu", what,
                       (size_t)(r->p - r->start));
}

PJRT_Error *cx_PJRT_Executable_DeserializeAndLoad(PJRT_Executable_DeserializeAndLoad_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Executable_DeserializeAndLoad_Args, serialized_executable_size);
  args->loaded_executable = NULL;
  PJRT_Client *c = args->client;
  if (!c || (!args->serialized_executable && args->serialized_executable_size))
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Executable_DeserializeAndLoad: NULL client or bytes");
  const unsigned char *base = (const unsigned char *)args->serialized_executable;
  cx_reader r = {base, base + args->serialized_executable_size, base};
  const unsigned char *magic, *ver, *opts, *hlo;
  uint64_t fmt, vlen, olen, hlen, sum;
  if (!take(&r, 8, &magic) || memcmp(magic, MAGIC, 8)) return corrupt(&r, "not an executable serialized by cxla");
  if (!take_uint(&r, 4, &fmt)) return corrupt(&r, "truncated header");
  if (fmt != FORMAT_VERSION) return corrupt(&r, "unknown format version");
  if (!take_uint(&r, 4, &vlen) || !take(&r, vlen, &ver)) return corrupt(&r, "truncated cxla version");
  const char *mine = cxla_version();
  if (vlen != strlen(mine) || memcmp(ver, mine, vlen))
    return cx_pjrt_error(PJRT_Error_Code_FAILED_PRECONDITION,
                         "PJRT_Executable_DeserializeAndLoad: serialized by cxla %.*s, this is cxla %s",
                         (int)(vlen > 32 ? 32 : vlen), (const char *)ver, mine);
  if (!take_uint(&r, 4, &olen) || !take(&r, olen, &opts)) return corrupt(&r, "truncated compile options");
  if (!take_uint(&r, 8, &hlen) || !take(&r, hlen, &hlo)) return corrupt(&r, "truncated module");
  uint64_t expect = cx_pjrt_hash(CX_PJRT_HASH_SEED, base, (size_t)(r.p - base));
  if (!take_uint(&r, 8, &sum)) return corrupt(&r, "truncated checksum");
  if (sum != expect) return corrupt(&r, "checksum mismatch");
  if (r.p != r.end) return corrupt(&r, "trailing bytes");
  const char *o = (const char *)opts;
  size_t on = olen;
  if (args->overridden_serialized_compile_options && args->overridden_serialized_compile_options_size) {
    o = args->overridden_serialized_compile_options;
    on = args->overridden_serialized_compile_options_size;
  }
  PJRT_Executable *e;
  cx_pjrt_lock(c);
  PJRT_Error *err = cx_pjrt_executable_build(c, "cxla-hlo", 8, (const char *)hlo, hlen, o, on, &e);
  cx_pjrt_unlock(c);
  return err ? err : cx_pjrt_loaded_new(c, e, &args->loaded_executable);
}
