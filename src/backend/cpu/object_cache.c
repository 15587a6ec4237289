/* object_cache.c — LLVM object files of a cpu compile in the disk cache (object_cache.h).
 * Payload (little-endian): u32 addresses, trace names, fallbacks, kernels of the sequencer's
 * tables; u32 object count; then per object u64 size + bytes. */
#include <stdio.h>
#include <string.h>
#include "backend/cpu/object_cache.h"
#include "core/disk_cache.h"

#define NTABLES 4

static void tables(const cx_seq_out *q, uint32_t t[NTABLES]) {
  t[0] = (uint32_t)q->naddrs, t[1] = (uint32_t)q->nnames, t[2] = (uint32_t)q->nfallbacks, t[3] = (uint32_t)q->nkernels;
}

cxla_status cx_object_cache_open(cxla_context *ctx, const cx_flags *f, cx_jit *jit, int threads, cx_object_cache *oc) {
  memset(oc, 0, sizeof *oc);
  oc->result = "off";
  if (!f->compile_key) return CXLA_OK;
  oc->dir = cx_disk_cache_dir(f);
  oc->keep = f->keep_code;
  oc->given = f->code;
  oc->given_len = f->code_len;
  if (!oc->dir && !oc->keep && !oc->given) return CXLA_OK;
  /* The executable cache's key (module, backend, flags, donations) and what else decides the
   * code: the target (CPU name and features, which LLVM tunes for) and the LLVM release;
   * the thread count decides how kernels are spread over objects. */
  cx_llvm_target t = cx_jit_target(jit);
  unsigned maj = 0, min = 0, patch = 0;
  LLVMGetVersion(&maj, &min, &patch);
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_putn(&sb, f->compile_key, f->compile_key_len);
  cx_sb_printf(&sb, "\ntriple=%s\ncpu=%s\nfeatures=%s\nllvm=%u.%u.%u\nllvm_threads=%d\n", t.triple, t.cpu,
               t.features, maj, min, patch, threads);
  oc->klen = sb.len;
  if (!(oc->key = cx_sb_take(&sb))) {
    cx_object_cache_close(oc);
    return cx_oom(ctx);
  }
  oc->result = "miss";
  return CXLA_OK;
}

void cx_object_cache_close(cx_object_cache *oc) {
  cx_free(oc->dir);
  cx_free(oc->key);
  cx_free(oc->entry);
  oc->dir = oc->key = NULL;
  oc->entry = NULL;
}

unsigned char *cx_object_cache_take_entry(cx_object_cache *oc, size_t *n) {
  unsigned char *e = oc->entry;
  *n = oc->entry_len;
  oc->entry = NULL;
  return e;
}

static uint64_t get_le(const unsigned char *p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* Splits a payload into objects (pointers into it); 0 and why when it does not parse or its
 * tables differ from seq's. */
static int parse(cx_object_cache *oc, const cx_seq_out *seq, const unsigned char *p, size_t n,
                 const unsigned char **obj, size_t *len, int *nobj) {
  uint32_t want[NTABLES];
  tables(seq, want);
  const unsigned char *end = p + n;
  if (n < 4 * (NTABLES + 1)) return snprintf(oc->why, sizeof oc->why, "payload too short"), 0;
  for (int i = 0; i < NTABLES; i++, p += 4)
    if (get_le(p, 4) != want[i])
      return snprintf(oc->why, sizeof oc->why, "its code was made for other tables (%d: %llu, here %u)", i,
                      (unsigned long long)get_le(p, 4), want[i]),
             0;
  uint64_t k = get_le(p, 4);
  p += 4;
  if (k < 1 || k > CX_MAX_SHARDS + 1) return snprintf(oc->why, sizeof oc->why, "%llu objects", (unsigned long long)k), 0;
  for (uint64_t i = 0; i < k; i++) {
    if ((size_t)(end - p) < 8 || get_le(p, 8) > (uint64_t)(end - p - 8))
      return snprintf(oc->why, sizeof oc->why, "object %llu is cut short", (unsigned long long)i), 0;
    len[i] = (size_t)get_le(p, 8);
    obj[i] = p + 8;
    p += 8 + len[i];
  }
  if (p != end) return snprintf(oc->why, sizeof oc->why, "bytes after the last object"), 0;
  *nobj = (int)k;
  return 1;
}

/* Links the objects of a valid entry's payload; *hit when they fit seq and the JIT took them. */
static cxla_status link_payload(cxla_context *ctx, cx_object_cache *oc, const cx_seq_out *seq, cx_jit *jit,
                                const unsigned char *payload, size_t plen, int *hit) {
  const unsigned char *obj[CX_MAX_SHARDS + 1];
  size_t len[CX_MAX_SHARDS + 1];
  int n = 0;
  if (!parse(oc, seq, payload, plen, obj, len, &n)) {
    oc->result = "rejected";
    return CXLA_OK;
  }
  /* Every buffer is made before any is added: the JIT is left untouched unless all fit. */
  LLVMMemoryBufferRef bufs[CX_MAX_SHARDS + 1];
  int made = 0;
  for (; made < n; made++)
    if (!(bufs[made] = LLVMCreateMemoryBufferWithMemoryRangeCopy((const char *)obj[made], len[made], "cxla-cached")))
      break;
  cxla_status s = made == n ? CXLA_OK : cx_oom(ctx);
  for (int i = 0; i < made; i++) {
    if (s == CXLA_OK) s = cx_jit_add_object(jit, bufs[i]); /* takes the buffer */
    else LLVMDisposeMemoryBuffer(bufs[i]);
  }
  if (s == CXLA_OK) *hit = 1, oc->result = "hit";
  return s;
}

cxla_status cx_object_cache_load(cxla_context *ctx, cx_object_cache *oc, const cx_seq_out *seq, cx_jit *jit, int *hit) {
  *hit = 0;
  if (!oc->key) return CXLA_OK;
  const unsigned char *payload = NULL;
  size_t plen = 0;
  if (oc->given) { /* an entry handed in: checked exactly as one read from disk */
    if (!cx_disk_cache_decode(oc->given, oc->given_len, oc->key, oc->klen, &payload, &plen, oc->why, sizeof oc->why))
      oc->result = "rejected";
    else CX_TRY(link_payload(ctx, oc, seq, jit, payload, plen, hit));
    if (*hit) {
      oc->source = "given";
      if (oc->keep && (oc->entry = cx_malloc(oc->given_len))) {
        memcpy(oc->entry, oc->given, oc->given_len);
        oc->entry_len = oc->given_len;
      }
      return oc->keep && !oc->entry ? cx_oom(ctx) : CXLA_OK;
    }
  }
  if (!oc->dir) return CXLA_OK;
  unsigned char *data = NULL;
  char why[sizeof oc->why];
  size_t n = 0;
  cx_disk_cache_result r = cx_disk_cache_load(oc->dir, oc->key, oc->klen, &data, &n, &payload, &plen, why, sizeof why);
  if (r != CX_DISK_MISS || !oc->why[0]) memcpy(oc->why, why, sizeof why); /* a given entry's reason outlives a miss */
  if (r == CX_DISK_REJECTED) oc->result = "rejected";
  if (r != CX_DISK_HIT) return CXLA_OK;
  cxla_status s = link_payload(ctx, oc, seq, jit, payload, plen, hit);
  if (*hit) {
    oc->source = "disk";
    oc->why[0] = 0;
  }
  if (*hit && oc->keep) { /* the file is this compile's entry */
    oc->entry = data;
    oc->entry_len = n;
    data = NULL;
  }
  cx_free(data);
  return s;
}

static unsigned char *put_le(unsigned char *p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) *p++ = (unsigned char)(v >> (8 * i));
  return p;
}

void cx_object_cache_store(cx_object_cache *oc, const cx_seq_out *seq, const cx_llvm_job *jobs, int n) {
  if (!oc->key) return;
  size_t total = 4 * (NTABLES + 1);
  for (int i = 0; i < n; i++) total += 8 + LLVMGetBufferSize(jobs[i].obj);
  unsigned char *buf = cx_malloc(total), *p = buf, *entry = NULL;
  size_t elen = 0;
  if (buf) {
    uint32_t t[NTABLES];
    tables(seq, t);
    for (int i = 0; i < NTABLES; i++) p = put_le(p, t[i], 4);
    p = put_le(p, (uint64_t)n, 4);
    for (int i = 0; i < n; i++) {
      size_t k = LLVMGetBufferSize(jobs[i].obj);
      p = put_le(p, k, 8);
      memcpy(p, LLVMGetBufferStart(jobs[i].obj), k);
      p += k;
    }
  }
  if (!buf || !cx_disk_cache_encode(oc->key, oc->klen, buf, total, &entry, &elen)) {
    snprintf(oc->why, sizeof oc->why, "out of memory");
    oc->result = "unwritable";
  } else if (oc->dir && !cx_disk_cache_store(oc->dir, oc->key, oc->klen, entry, elen, oc->why, sizeof oc->why)) {
    oc->result = "unwritable";
  }
  cx_free(buf);
  if (oc->keep && entry) {
    oc->entry = entry;
    oc->entry_len = elen;
  } else {
    cx_free(entry);
  }
}
