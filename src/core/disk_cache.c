/* disk_cache.c — the on-disk entry format and its atomic files (see disk_cache.h). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "core/disk_cache.h"

#define MAGIC "CXLACACH"
#define CX_STR_(x) #x
#define CX_STR(x) CX_STR_(x)
/* The library's version and build, written into every entry: another cxla's code is never
 * loaded. The release number alone would not do while cxla is developed (a rebuilt library
 * may lay out its run-time structures differently under the same number), so the size and
 * modification time of the file this code was loaded from are part of it. */
static char VERSION[128];
static pthread_once_t version_once = PTHREAD_ONCE_INIT;

static void make_version(void) {
  int n = snprintf(VERSION, sizeof VERSION, "%s",
                   CX_STR(CXLA_VERSION_MAJOR) "." CX_STR(CXLA_VERSION_MINOR) "." CX_STR(CXLA_VERSION_PATCH));
  Dl_info di;
  struct stat st;
  int ok = dladdr((void *)make_version, &di) && di.dli_fname && stat(di.dli_fname, &st) == 0;
  if (!ok) ok = stat("/proc/self/exe", &st) == 0; /* linked into the program itself */
  if (ok) snprintf(VERSION + n, sizeof VERSION - (size_t)n, "+%lld.%lld", (long long)st.st_size, (long long)st.st_mtime);
}

static const char *version(void) {
  pthread_once(&version_once, make_version);
  return VERSION;
}

char *cx_disk_cache_dir(const cx_flags *f) {
  const char *d = f->cache_dir;
  if (!d || !*d || !strcmp(d, "off")) return NULL;
  if (strcmp(d, "default")) return cx_strdup(d);
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  cx_sb sb;
  cx_sb_init(&sb);
  if (xdg && *xdg == '/') cx_sb_printf(&sb, "%s/cxla", xdg); /* the XDG spec ignores relative paths */
  else if (home && *home) cx_sb_printf(&sb, "%s/.cache/cxla", home);
  return cx_sb_take(&sb);
}

static uint64_t fnv1a(const char *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
  return h;
}

char *cx_disk_cache_path(const char *dir, const char *key, size_t klen) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_printf(&sb, "%s/%016llx.cxc", dir, (unsigned long long)fnv1a(key, klen));
  return cx_sb_take(&sb);
}

/* crc32 over a length that may exceed zlib's uInt. */
static uint32_t crc(const unsigned char *p, size_t n) {
  uLong c = crc32(0L, Z_NULL, 0);
  while (n) {
    uInt k = n > 0x40000000u ? 0x40000000u : (uInt)n;
    c = crc32(c, p, k);
    p += k, n -= k;
  }
  return (uint32_t)c;
}

static unsigned char *put_le(unsigned char *p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) *p++ = (unsigned char)(v >> (8 * i));
  return p;
}

static unsigned char *put_bytes(unsigned char *p, const void *src, size_t n) {
  if (n) memcpy(p, src, n);
  return p + n;
}

int cx_disk_cache_encode(const char *key, size_t klen, const void *payload, size_t plen, unsigned char **out,
                         size_t *n) {
  const char *VERSION = version();
  size_t vlen = strlen(VERSION);
  size_t total = 8 + 4 + 4 + vlen + 8 + 8 + klen + 8 + plen + 4;
  unsigned char *buf = cx_malloc(total), *p = buf;
  if (!buf) return 0;
  p = put_bytes(p, MAGIC, 8);
  p = put_le(p, CX_DISK_CACHE_FORMAT, 4);
  p = put_le(p, vlen, 4);
  p = put_bytes(p, VERSION, vlen);
  p = put_le(p, fnv1a(key, klen), 8);
  p = put_le(p, klen, 8);
  p = put_bytes(p, key, klen);
  p = put_le(p, plen, 8);
  p = put_bytes(p, payload, plen);
  put_le(p, crc(buf, (size_t)(p - buf)), 4);
  *out = buf;
  *n = total;
  return 1;
}

typedef struct reader {
  const unsigned char *p, *end;
} reader;

static int take(reader *r, size_t n, const unsigned char **out) {
  if (n > (size_t)(r->end - r->p)) return 0;
  *out = r->p;
  r->p += n;
  return 1;
}

static int take_le(reader *r, int bytes, uint64_t *v) {
  const unsigned char *q;
  if (!take(r, (size_t)bytes, &q)) return 0;
  *v = 0;
  for (int i = 0; i < bytes; i++) *v |= (uint64_t)q[i] << (8 * i);
  return 1;
}

static int bad(char *why, size_t whylen, const char *what) {
  snprintf(why, whylen, "%s", what);
  return 0;
}

int cx_disk_cache_decode(const unsigned char *data, size_t n, const char *key, size_t klen,
                         const unsigned char **payload, size_t *plen, char *why, size_t whylen) {
  const char *VERSION = version();
  reader r = {data, data + n};
  const unsigned char *magic, *ver, *k, *pl, *sum_at;
  uint64_t fmt, vlen, hash, kn, pn, sum;
  if (!take(&r, 8, &magic) || memcmp(magic, MAGIC, 8)) return bad(why, whylen, "not a cxla cache entry");
  if (!take_le(&r, 4, &fmt)) return bad(why, whylen, "truncated header");
  if (fmt != CX_DISK_CACHE_FORMAT) {
    snprintf(why, whylen, "entry format %llu, this cxla reads %u", (unsigned long long)fmt, CX_DISK_CACHE_FORMAT);
    return 0;
  }
  if (!take_le(&r, 4, &vlen) || !take(&r, vlen, &ver)) return bad(why, whylen, "truncated header");
  if (vlen != strlen(VERSION) || memcmp(ver, VERSION, vlen)) {
    snprintf(why, whylen, "written by cxla %.*s, this is cxla %s", (int)(vlen > 64 ? 64 : vlen), (const char *)ver,
             VERSION);
    return 0;
  }
  if (!take_le(&r, 8, &hash) || !take_le(&r, 8, &kn)) return bad(why, whylen, "truncated header");
  if (hash != fnv1a(key, klen) || kn != klen) return bad(why, whylen, "the entry of another compile (key differs)");
  if (!take(&r, kn, &k)) return bad(why, whylen, "truncated key");
  if (memcmp(k, key, klen)) return bad(why, whylen, "the entry of another compile (key differs)");
  if (!take_le(&r, 8, &pn) || !take(&r, pn, &pl)) return bad(why, whylen, "truncated payload");
  sum_at = r.p;
  if (!take_le(&r, 4, &sum)) return bad(why, whylen, "truncated checksum");
  if (r.p != r.end) return bad(why, whylen, "trailing bytes after the checksum");
  if (sum != crc(data, (size_t)(sum_at - data))) return bad(why, whylen, "checksum mismatch (a corrupt file)");
  *payload = pl;
  *plen = (size_t)pn;
  return 1;
}

/* Reads a regular file whole; 0 with errno set when it cannot. */
static int read_all(const char *path, unsigned char **data, size_t *n) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO there must not block */
  if (fd < 0) return 0;
  struct stat st;
  unsigned char *buf = NULL;
  int ok = fstat(fd, &st) == 0;
  if (ok && !S_ISREG(st.st_mode)) ok = 0, errno = EINVAL;
  if (ok && !(buf = cx_malloc((size_t)st.st_size + 1))) ok = 0, errno = ENOMEM;
  size_t got = 0;
  while (ok && got < (size_t)st.st_size) {
    ssize_t k = read(fd, buf + got, (size_t)st.st_size - got);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break; /* shorter than fstat said: decode finds it truncated */
    got += (size_t)k;
  }
  int e = errno;
  close(fd);
  if (!ok) {
    cx_free(buf);
    errno = e;
    return 0;
  }
  *data = buf;
  *n = got;
  return 1;
}

cx_disk_cache_result cx_disk_cache_load(const char *dir, const char *key, size_t klen, unsigned char **data,
                                        size_t *size, const unsigned char **payload, size_t *plen, char *why,
                                        size_t whylen) {
  *data = NULL;
  *size = 0;
  char *path = cx_disk_cache_path(dir, key, klen);
  if (!path) return bad(why, whylen, "out of memory"), CX_DISK_MISS;
  unsigned char *buf = NULL;
  size_t n = 0;
  cx_disk_cache_result res = CX_DISK_MISS;
  if (!read_all(path, &buf, &n)) {
    snprintf(why, whylen, "%s: %s", path, strerror(errno));
  } else if (!cx_disk_cache_decode(buf, n, key, klen, payload, plen, why, whylen)) {
    cx_free(buf);
    res = CX_DISK_REJECTED;
  } else {
    *data = buf;
    *size = n;
    res = CX_DISK_HIT;
  }
  cx_free(path);
  return res;
}

/* mkdir -p: every missing component of dir, private to the user (code is loaded from it). */
static int make_dirs(char *dir) {
  for (char *p = dir + 1;; p++) {
    if (*p != '/' && *p) continue;
    char c = *p;
    *p = 0;
    int ok = mkdir(dir, 0700) == 0 || errno == EEXIST;
    *p = c;
    if (!ok) return 0;
    if (!c) return 1;
  }
}

static int write_all(int fd, const unsigned char *p, size_t n) {
  while (n) {
    ssize_t k = write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return 0;
    p += k, n -= (size_t)k;
  }
  return 1;
}

int cx_disk_cache_store(const char *dir, const char *key, size_t klen, const unsigned char *entry, size_t n,
                              char *why, size_t whylen) {
  static atomic_uint serial; /* temporary names differ between this process's threads */
  char *path = cx_disk_cache_path(dir, key, klen), *d = cx_strdup(dir);
  cx_sb tmp;
  cx_sb_init(&tmp);
  int ok = path && d;
  if (ok) cx_sb_printf(&tmp, "%s.%ld.%u.tmp", path, (long)getpid(), atomic_fetch_add(&serial, 1));
  if (!ok || tmp.oom) {
    snprintf(why, whylen, "out of memory");
    ok = 0;
  } else if (!make_dirs(d)) {
    snprintf(why, whylen, "cannot make %s: %s", dir, strerror(errno));
    ok = 0;
  } else {
    int fd = open(tmp.buf, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    /* no fsync: after a crash a torn entry fails its checksum and is compiled again */
    ok = fd >= 0 && write_all(fd, entry, n);
    int e = errno;
    if (fd >= 0 && close(fd) != 0 && ok) ok = 0, e = errno;
    if (ok && rename(tmp.buf, path) != 0) ok = 0, e = errno;
    if (!ok) {
      snprintf(why, whylen, "cannot write %s: %s", path, strerror(e));
      if (fd >= 0) unlink(tmp.buf);
    }
  }
  cx_sb_free(&tmp);
  cx_free(path);
  cx_free(d);
  return ok;
}
