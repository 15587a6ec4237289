/* disk_cache.h — compiled code kept on disk between processes (--cache-dir). One file per key,
 * DIR/<FNV-1a of the key, 16 hex digits>.cxc, holding a versioned, checksummed entry:
 *
 *   "CXLACACH"  u32 format version  u32 n + cxla version and build  u64 FNV-1a of the key
 *   u64 n + key  u64 n + payload  u32 zlib crc32 of every byte before it
 *
 * (little-endian). The whole key is stored and compared, so a hash collision or an entry of
 * another module, flags, target, cxla version or build (the size and time of the library file:
 * a rebuilt cxla may lay out its run-time structures differently) or entry format, and a
 * truncated or a bit-flipped file, are told apart and never used: the caller compiles again and
 * overwrites the entry. Writers write a private temporary file in DIR and rename() it over the
 * entry, so readers see the old entry or the new one, whole, and concurrent writers of one key
 * leave one valid entry. */
#ifndef CX_DISK_CACHE_H
#define CX_DISK_CACHE_H
#include "core/flags.h"

#define CX_DISK_CACHE_FORMAT 1u

/* The directory --cache-dir names, as a heap string, or NULL when the disk cache is off (the
 * flag unset or "off"; "default" without $XDG_CACHE_HOME or $HOME). "default" is
 * $XDG_CACHE_HOME/cxla, else $HOME/.cache/cxla. */
char *cx_disk_cache_dir(const cx_flags *f);

/* An entry for key and payload (heap bytes in *out, *n of them); 0 on out of memory. */
int cx_disk_cache_encode(const char *key, size_t klen, const void *payload, size_t plen, unsigned char **out,
                         size_t *n);
/* Checks an entry against key: 1 with *payload pointing into data, else 0 and why says what
 * is wrong with it. */
int cx_disk_cache_decode(const unsigned char *data, size_t n, const char *key, size_t klen,
                         const unsigned char **payload, size_t *plen, char *why, size_t whylen);

typedef enum cx_disk_cache_result { CX_DISK_MISS, CX_DISK_HIT, CX_DISK_REJECTED } cx_disk_cache_result;

/* Reads the entry of key from dir: HIT with the file in *data (*size bytes; the caller
 * cx_frees it) and *payload pointing into it; MISS when there is none (or it cannot be read: why says so);
 * REJECTED when there is one that is not a valid entry of this key (why says how). */
cx_disk_cache_result cx_disk_cache_load(const char *dir, const char *key, size_t klen, unsigned char **data,
                                        size_t *size, const unsigned char **payload, size_t *plen, char *why,
                                        size_t whylen);
/* Writes entry (encoded for key: cx_disk_cache_encode) to dir (made if missing) atomically; 0
 * and why when it cannot. */
int cx_disk_cache_store(const char *dir, const char *key, size_t klen, const unsigned char *entry, size_t n, char *why,
                        size_t whylen);
/* The path of key's entry in dir (heap string; NULL on out of memory). */
char *cx_disk_cache_path(const char *dir, const char *key, size_t klen);

#endif
