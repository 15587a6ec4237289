/* serialize.c — an executable as bytes, for JAX's persistent compilation cache: its machine
 * code in the format of cxla's disk cache (cxla_executable_code: the entry a --cache-dir file
 * holds), so that loading the bytes in another process links that code and compiles nothing,
 * plus the module as compiled (HLO text) and its compile options, for the compile that takes
 * over when the code does not fit this machine (another CPU, another cxla build). Format
 * (little-endian), version 2:
 *   "CXLAPJRT"  u32 format version  u32 n + cxla version  u32 n + CompileOptionsProto bytes
 *   u64 n + HLO text  u64 n + disk cache entry ("CXLACACH...")  u64 FNV-1a of everything before it
 * Anything else (truncated, another format or cxla version, a bad checksum, a code part that is
 * not a cache entry) is an error naming the byte where it was found; never loaded. */
#include <stdlib.h>
#include <string.h>

#include "pjrt_internal.h"

#define MAGIC "CXLAPJRT"
#define FORMAT_VERSION 2u
#define ENTRY_MAGIC "CXLACACH" /* the disk cache's (src/core/disk_cache.h) */

static void put(char **p, const void *src, size_t n) {
  if (n) memcpy(*p, src, n);
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
  const void *code = NULL;
  size_t clen = 0;
  /* Every compile of the plugin keeps its code (keep_code); one that has none (--dump-to
   * compiles afresh and keeps nothing) serializes without it and recompiles when loaded. */
  if (cxla_executable_code(e->exe, &code, &clen) != CXLA_OK) code = NULL, clen = 0;
  const char *ver = cxla_version();
  size_t vlen = strlen(ver), hlen = strlen(e->hlo);
  size_t n = 8 + 4 + 4 + vlen + 4 + e->options_len + 8 + hlen + 8 + clen + 8;
  char *buf = malloc(n), *p = buf;
  if (!buf) return cx_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "PJRT_Executable_Serialize: out of memory");
  put(&p, MAGIC, 8);
  put_u32(&p, FORMAT_VERSION);
  put_u32(&p, (uint32_t)vlen);
  put(&p, ver, vlen);
  put_u32(&p, (uint32_t)e->options_len);
  put(&p, e->options, e->options_len);
  put_u64(&p, hlen);
  put(&p, e->hlo, hlen);
  put_u64(&p, clen);
  put(&p, code, clen);
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

static PJRT_Error *corrupt_at(size_t at, const char *what) {
  return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Executable_DeserializeAndLoad: %s at byte %zu", what, at);
}
static PJRT_Error *corrupt(const cx_reader *r, const char *what) { return corrupt_at((size_t)(r->p - r->start), what); }

PJRT_Error *cx_PJRT_Executable_DeserializeAndLoad(PJRT_Executable_DeserializeAndLoad_Args *args) {
  CX_PJRT_ARGS(args, PJRT_Executable_DeserializeAndLoad_Args, serialized_executable_size);
  args->loaded_executable = NULL;
  PJRT_Client *c = args->client;
  if (!c || (!args->serialized_executable && args->serialized_executable_size))
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "PJRT_Executable_DeserializeAndLoad: NULL client or bytes");
  const unsigned char *base = (const unsigned char *)args->serialized_executable;
  cx_reader r = {base, base + args->serialized_executable_size, base};
  const unsigned char *magic, *ver, *opts, *hlo, *code;
  uint64_t fmt, vlen, olen, hlen, clen, sum;
  if (!take(&r, 8, &magic) || memcmp(magic, MAGIC, 8)) return corrupt(&r, "not an executable serialized by cxla");
  if (!take_uint(&r, 4, &fmt)) return corrupt(&r, "truncated header");
  if (fmt != FORMAT_VERSION)
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                         "PJRT_Executable_DeserializeAndLoad: format version %llu at byte 8, this cxla reads %u",
                         (unsigned long long)fmt, FORMAT_VERSION);
  if (!take_uint(&r, 4, &vlen) || !take(&r, vlen, &ver)) return corrupt(&r, "truncated cxla version");
  const char *mine = cxla_version();
  if (vlen != strlen(mine) || memcmp(ver, mine, vlen))
    return cx_pjrt_error(PJRT_Error_Code_FAILED_PRECONDITION,
                         "PJRT_Executable_DeserializeAndLoad: serialized by cxla %.*s, this is cxla %s",
                         (int)(vlen > 32 ? 32 : vlen), (const char *)ver, mine);
  if (!take_uint(&r, 4, &olen) || !take(&r, olen, &opts)) return corrupt(&r, "truncated compile options");
  if (!take_uint(&r, 8, &hlen) || !take(&r, hlen, &hlo)) return corrupt(&r, "truncated module");
  if (!take_uint(&r, 8, &clen) || !take(&r, clen, &code)) return corrupt(&r, "truncated machine code");
  size_t code_at = (size_t)(code - base);
  uint64_t expect = cx_pjrt_hash(CX_PJRT_HASH_SEED, base, (size_t)(r.p - base));
  size_t sum_at = (size_t)(r.p - base);
  if (!take_uint(&r, 8, &sum)) return corrupt(&r, "truncated checksum");
  if (sum != expect)
    return cx_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                         "PJRT_Executable_DeserializeAndLoad: checksum mismatch at byte %zu (the bytes before it "
                         "are damaged)", sum_at);
  if (r.p != r.end) return corrupt(&r, "trailing bytes");
  /* The entry's own checks (its key: module, flags, CPU, LLVM, cxla build; its crc32) are the
   * compile's: code that fails them is not loaded, and the HLO compiles instead. */
  if (clen && (clen < 8 || memcmp(code, ENTRY_MAGIC, 8)))
    return corrupt_at(code_at, "machine code that is not a cxla cache entry");
  const char *o = (const char *)opts;
  size_t on = olen;
  if (args->overridden_serialized_compile_options && args->overridden_serialized_compile_options_size) {
    o = args->overridden_serialized_compile_options;
    on = args->overridden_serialized_compile_options_size;
  }
  PJRT_Executable *e;
  cx_pjrt_lock(c);
  PJRT_Error *err = cx_pjrt_executable_build_with(c, "cxla-hlo", 8, (const char *)hlo, hlen, o, on,
                                                  clen ? code : NULL, clen, &e);
  cx_pjrt_unlock(c);
  return err ? err : cx_pjrt_loaded_new(c, e, &args->loaded_executable);
}
