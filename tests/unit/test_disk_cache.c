/* test_disk_cache.c — the disk cache of compiled cpu code (--cache-dir): a compile in a fresh
 * context loads what an earlier one wrote and computes the same bytes; other flags miss;
 * truncated, bit-flipped, foreign and other-version entries are rejected, compiled again and
 * replaced, never loaded; writers racing on one key leave one valid entry; the entry format
 * catches every truncation and every single-bit flip. Each test uses its own temporary
 * directory (the cache is off unless a flag names one). */
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#include "core/disk_cache.h"
#include "interp/interp.h"
#include "ir/literal.h"
#include "test.h"
#include "text/hlo.h"

/* A constant (a link-time symbol), a sort (its plan is another), a dot (OpenBLAS) and a
 * fusion: everything the cached code refers to in the process that loads it. */
static char g_text[4096];
static void write_module_text(void) {
  char *text = g_text;
  int n = snprintf(text, sizeof g_text,
                   "HloModule dc\n"
                   "lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                   "  ROOT c = pred[] compare(a, b), direction=LT\n}\n"
                   "ENTRY main {\n  x = f32[4,8] parameter(0)\n  c = f32[4,8] constant({");
  for (int i = 0; i < 4; i++) {
    n += snprintf(text + n, sizeof g_text - (size_t)n, "%s{", i ? ", " : "");
    for (int j = 0; j < 8; j++) n += snprintf(text + n, sizeof g_text - (size_t)n, "%s%d.25", j ? ", " : "", (i * 5 + j * 3) % 7 - 3);
    n += snprintf(text + n, sizeof g_text - (size_t)n, "}");
  }
  snprintf(text + n, sizeof g_text - (size_t)n,
           "})\n  y = f32[4,8] multiply(x, c)\n  e = f32[4,8] exponential(y)\n"
           "  s = f32[4,8] sort(e), dimensions={1}, to_apply=lt\n"
           "  w = f32[8,3] broadcast(f32[] constant(0.5)), dimensions={}\n"
           "  d = f32[4,3] dot(s, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
           "  ROOT t = (f32[4,3], f32[4,8]) tuple(d, s)\n}\n");
}

/* Written once: the racing threads below all read it. */
static char *module_text(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, write_module_text);
  return g_text;
}

static cxla_literal *input(void) {
  int64_t dims[2] = {4, 8};
  cxla_literal *l = cxla_literal_create(test_ctx(), CXLA_F32, 2, dims);
  if (l)
    for (int i = 0; i < 32; i++) ((float *)cxla_literal_data(l))[i] = (float)((i * 7) % 11) / 11.0f - 0.4f;
  return l;
}

/* Compiles the module for cpu in a fresh context with `flags` and runs it: the result (NULL
 * after a failed CHECK) and the compile counts in counts. */
static cxla_literal *run_fresh(const char *flags, char *counts, size_t n) {
  cxla_context *ctx = NULL;
  cxla_module *m = NULL;
  cxla_executable *e = NULL;
  cxla_buffer *arg = NULL, *out = NULL;
  cxla_literal *in = input(), *res = NULL;
  counts[0] = 0;
  const char *text = module_text();
  if (!in || cxla_context_create(&ctx) != CXLA_OK) {
    CHECK_MSG(0, "no context");
  } else if (cxla_context_set_flags(ctx, flags) != CXLA_OK ||
             cxla_module_parse(ctx, text, strlen(text), "dc.hlo", &m) != CXLA_OK) {
    CHECK_MSG(0, "flags or parse: %s", cxla_context_errmsg(ctx));
  } else {
    cxla_compile_options o;
    cxla_compile_options_init(&o);
    o.backend = "cpu";
    if (cxla_compile(m, &o, &e) != CXLA_OK || cxla_buffer_from_literal(ctx, "cpu", in, &arg) != CXLA_OK ||
        cxla_executable_execute(e, 1, &arg, &out) != CXLA_OK || cxla_buffer_to_literal(out, &res) != CXLA_OK)
      CHECK_MSG(0, "compile or run (%s): %s", flags, cxla_context_errmsg(ctx));
    else
      snprintf(counts, n, "%s", cxla_executable_compile_counts(e));
  }
  cxla_buffer_destroy(arg);
  cxla_buffer_destroy(out);
  cxla_executable_destroy(e);
  cxla_module_destroy(m);
  cxla_literal_destroy(in);
  /* the result outlives its context: a copy made in the test's own */
  cxla_literal *copy = res ? cxla_literal_clone(test_ctx(), res) : NULL;
  cxla_literal_destroy(res);
  cxla_context_destroy(ctx);
  return copy;
}

/* The interpreter's result, the reference the cached code is judged against. */
static cxla_literal *reference(void) {
  const char *text = module_text();
  cxla_module *m = NULL;
  cxla_literal *in = input(), *want = NULL;
  CHECK_OK(cxla_module_parse(test_ctx(), text, strlen(text), "dc.hlo", &m));
  if (m && in) CHECK_OK(cx_interp_run(m, 1, &in, &want));
  cxla_module_destroy(m);
  cxla_literal_destroy(in);
  return want;
}

static int same_bytes(const cxla_literal *a, const cxla_literal *b) {
  cx_sb why;
  cx_sb_init(&why);
  int ok = a && b && cx_literal_compare(a, b, 0, 0, &why);
  if (a && b && !ok) test_fail(__FILE__, __LINE__, "results differ: %s", why.buf ? why.buf : "?");
  cx_sb_free(&why);
  return ok;
}

static void make_dir(char *dir) { CHECK_MSG(mkdtemp(dir) != NULL, "mkdtemp %s", dir); }

/* Entries (*.cxc) and stray files (anything else) in dir. */
static int count_files(const char *dir, const char *suffix) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));) {
    if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2]))) continue;
    size_t l = strlen(e->d_name), k = strlen(suffix);
    n += suffix[0] ? l > k && !strcmp(e->d_name + l - k, suffix) : 1;
  }
  if (d) closedir(d);
  return n;
}

/* The one entry in dir (its path in path). */
static int entry_path(const char *dir, char *path, size_t n) {
  DIR *d = opendir(dir);
  int found = 0;
  for (struct dirent *e; d && (e = readdir(d));) {
    size_t l = strlen(e->d_name);
    if (l > 4 && !strcmp(e->d_name + l - 4, ".cxc")) found++, snprintf(path, n, "%s/%s", dir, e->d_name);
  }
  if (d) closedir(d);
  return found == 1;
}

static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  char p[512];
  for (struct dirent *e; d && (e = readdir(d));) {
    if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2]))) continue;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    unlink(p);
  }
  if (d) closedir(d);
  rmdir(dir);
}

static unsigned char *read_bytes(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  unsigned char *buf = NULL;
  if (f && !fseek(f, 0, SEEK_END)) {
    long len = ftell(f);
    rewind(f);
    buf = len > 0 ? malloc((size_t)len) : NULL;
    if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) free(buf), buf = NULL;
    *n = buf ? (size_t)len : 0;
  }
  if (f) fclose(f);
  return buf;
}

static void write_bytes(const char *path, const unsigned char *p, size_t n) {
  FILE *f = fopen(path, "wb");
  CHECK_MSG(f && fwrite(p, 1, n, f) == n, "cannot write %s", path);
  if (f) fclose(f);
}

TEST(disk_cache_second_context_loads_and_agrees) {
  char dir[] = "/tmp/cxla_dc_XXXXXX", flags[128], counts[1024];
  make_dir(dir);
  snprintf(flags, sizeof flags, "--threads=1 --cache-dir=%s", dir);
  cxla_literal *want = reference(), *cold = run_fresh(flags, counts, sizeof counts);
  CHECK_STR_CONTAINS(counts, "disk_cache=miss");
  CHECK_EQ_INT(count_files(dir, ".cxc"), 1);
  cxla_literal *warm = run_fresh(flags, counts, sizeof counts);
  CHECK_STR_CONTAINS(counts, "disk_cache=hit");
  CHECK_STR_CONTAINS(counts, "llvm_modules=0"); /* LLVM compiled nothing */
  CHECK(same_bytes(warm, cold));
  cx_sb why;
  cx_sb_init(&why);
  CHECK_MSG(warm && want && cx_literal_compare(warm, want, 1e-5, 1e-6, &why), "cached code vs interpreter: %s",
            why.buf ? why.buf : "no result");
  cx_sb_free(&why);
  /* without the flag nothing is read or written */
  cxla_literal *off = run_fresh("--threads=1", counts, sizeof counts);
  CHECK_STR_CONTAINS(counts, "disk_cache=off");
  CHECK(same_bytes(off, cold));
  CHECK_EQ_INT(count_files(dir, ""), 1);
  cxla_literal_destroy(want);
  cxla_literal_destroy(cold);
  cxla_literal_destroy(warm);
  cxla_literal_destroy(off);
  remove_dir(dir);
}

TEST(disk_cache_other_flags_miss) {
  char dir[] = "/tmp/cxla_dc_XXXXXX", flags[160], counts[1024];
  make_dir(dir);
  snprintf(flags, sizeof flags, "--threads=1 --cache-dir=%s", dir);
  cxla_literal *a = run_fresh(flags, counts, sizeof counts);
  snprintf(flags, sizeof flags, "--threads=1 --opt-level=1 --cache-dir=%s", dir);
  cxla_literal *b = run_fresh(flags, counts, sizeof counts);
  CHECK_STR_CONTAINS(counts, "disk_cache=miss");
  snprintf(flags, sizeof flags, "--threads=1 --fusion=off --cache-dir=%s", dir);
  cxla_literal *c = run_fresh(flags, counts, sizeof counts);
  CHECK_STR_CONTAINS(counts, "disk_cache=miss");
  CHECK_EQ_INT(count_files(dir, ".cxc"), 3);
  /* --trace does not change the code: it shares the entry */
  snprintf(flags, sizeof flags, "--threads=1 --cache-dir=%s --trace=%s/t.json", dir, dir);
  cxla_literal *d = run_fresh(flags, counts, sizeof counts);
  CHECK_STR_CONTAINS(counts, "disk_cache=hit");
  CHECK(same_bytes(d, a));
  cxla_literal_destroy(a);
  cxla_literal_destroy(b);
  cxla_literal_destroy(c);
  cxla_literal_destroy(d);
  remove_dir(dir);
}

/* Rewrites the entry's crc32 after a forged change, so that only the field changed can
 * reject it. */
static void reseal(unsigned char *p, size_t n) {
  uLong c = crc32(crc32(0L, Z_NULL, 0), p, (uInt)(n - 4));
  for (int i = 0; i < 4; i++) p[n - 4 + (size_t)i] = (unsigned char)(c >> (8 * i));
}

TEST(disk_cache_rejects_damaged_entries) {
  char dir[] = "/tmp/cxla_dc_XXXXXX", flags[128], counts[1024], path[512];
  make_dir(dir);
  snprintf(flags, sizeof flags, "--threads=1 --cache-dir=%s", dir);
  cxla_literal *cold = run_fresh(flags, counts, sizeof counts);
  size_t n = 0;
  unsigned char *good = entry_path(dir, path, sizeof path) ? read_bytes(path, &n) : NULL;
  CHECK_MSG(good && n > 64, "no entry written");
  /* an entry of another module, under this key's name */
  char other[] = "/tmp/cxla_dc_XXXXXX";
  make_dir(other);
  cxla_context *octx = NULL;
  if (cxla_context_create(&octx) == CXLA_OK) {
    char of[128];
    snprintf(of, sizeof of, "--threads=1 --cache-dir=%s", other);
    const char *t = "HloModule o\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT n = f32[4] negate(x)\n}\n";
    cxla_module *m = NULL;
    cxla_executable *e = NULL;
    cxla_compile_options o;
    cxla_compile_options_init(&o);
    o.backend = "cpu";
    CHECK(cxla_context_set_flags(octx, of) == CXLA_OK && cxla_module_parse(octx, t, strlen(t), "o", &m) == CXLA_OK &&
          cxla_compile(m, &o, &e) == CXLA_OK);
    cxla_executable_destroy(e);
    cxla_module_destroy(m);
    cxla_context_destroy(octx);
  }
  char opath[512];
  size_t on = 0;
  unsigned char *foreign = entry_path(other, opath, sizeof opath) ? read_bytes(opath, &on) : NULL;
  CHECK(foreign != NULL);
  for (int kind = 0; good && foreign && kind < 7; kind++) {
    unsigned char *b = malloc(n);
    memcpy(b, good, n);
    size_t len = n;
    switch (kind) {
    case 0: len = n / 2; break;                   /* truncated in the payload */
    case 1: len = 20; break;                      /* truncated in the header */
    case 2: b[n / 2] ^= 0x10; break;              /* one bit flipped in the code */
    case 3: b[n - 1] ^= 0x01; break;              /* one bit flipped in the checksum */
    case 4: memcpy(b + 16, "9", 1), reseal(b, n); break; /* written by another cxla version */
    case 5: b[8] = 7, reseal(b, n); break;        /* another entry format */
    case 6: free(b), b = malloc(on), memcpy(b, foreign, on), len = on; break; /* another compile's */
    }
    write_bytes(path, b, len);
    free(b);
    cxla_literal *got = run_fresh(flags, counts, sizeof counts);
    CHECK_MSG(strstr(counts, "disk_cache=rejected"), "damage %d: %s", kind, counts);
    CHECK(same_bytes(got, cold));
    cxla_literal_destroy(got);
    /* compiled again and written whole: the next compile loads it */
    got = run_fresh(flags, counts, sizeof counts);
    CHECK_MSG(strstr(counts, "disk_cache=hit"), "after damage %d: %s", kind, counts);
    CHECK(same_bytes(got, cold));
    cxla_literal_destroy(got);
  }
  free(good);
  free(foreign);
  cxla_literal_destroy(cold);
  remove_dir(dir);
  remove_dir(other);
}

typedef struct racer {
  const char *flags;
  cxla_literal *res;
  char counts[1024];
} racer;

static void *race(void *arg) {
  racer *r = arg;
  r->res = run_fresh(r->flags, r->counts, sizeof r->counts);
  return NULL;
}

TEST(disk_cache_concurrent_writers_leave_one_valid_entry) {
  char dir[] = "/tmp/cxla_dc_XXXXXX", flags[128], counts[1024];
  make_dir(dir);
  snprintf(flags, sizeof flags, "--threads=1 --cache-dir=%s", dir);
  racer r[4];
  pthread_t t[4];
  int started[4] = {0};
  for (int i = 0; i < 4; i++) {
    r[i] = (racer){flags, NULL, {0}};
    started[i] = pthread_create(&t[i], NULL, race, &r[i]) == 0;
  }
  for (int i = 0; i < 4; i++)
    if (started[i]) pthread_join(t[i], NULL);
  /* and a child process writing the same key at the same time as this one */
  pid_t pid = fork();
  if (pid == 0) {
    char c[1024];
    cxla_literal *l = run_fresh(flags, c, sizeof c);
    _exit(l ? 0 : 1);
  }
  cxla_literal *mine = run_fresh(flags, counts, sizeof counts);
  int status = 1;
  if (pid > 0) waitpid(pid, &status, 0);
  CHECK_MSG(pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0, "child process failed");
  CHECK_EQ_INT(count_files(dir, ".cxc"), 1);
  CHECK_EQ_INT(count_files(dir, ""), 1); /* no temporary file left behind */
  cxla_literal *after = run_fresh(flags, counts, sizeof counts);
  CHECK_STR_CONTAINS(counts, "disk_cache=hit");
  for (int i = 0; i < 4; i++) {
    CHECK(started[i] && same_bytes(r[i].res, after));
    cxla_literal_destroy(r[i].res);
  }
  CHECK(same_bytes(mine, after));
  cxla_literal_destroy(mine);
  cxla_literal_destroy(after);
  remove_dir(dir);
}

TEST(disk_cache_default_dir_is_the_users_cache_folder) {
  char dir[] = "/tmp/cxla_dc_XXXXXX", sub[300], counts[1024];
  make_dir(dir);
  const char *old = getenv("XDG_CACHE_HOME");
  char *saved = old ? strdup(old) : NULL;
  setenv("XDG_CACHE_HOME", dir, 1);
  cxla_literal *a = run_fresh("--threads=1 --cache-dir=default", counts, sizeof counts);
  CHECK_STR_CONTAINS(counts, "disk_cache=miss");
  snprintf(sub, sizeof sub, "%s/cxla", dir);
  CHECK_EQ_INT(count_files(sub, ".cxc"), 1);
  cx_flags f;
  cx_flags_init(&f);
  f.cache_dir = "off";
  CHECK(cx_disk_cache_dir(&f) == NULL);
  f.cache_dir = NULL;
  CHECK(cx_disk_cache_dir(&f) == NULL);
  if (saved) setenv("XDG_CACHE_HOME", saved, 1);
  else unsetenv("XDG_CACHE_HOME");
  free(saved);
  cxla_literal_destroy(a);
  remove_dir(sub);
  remove_dir(dir);
}

/* The format alone: every shorter prefix and every single-bit flip of an entry is refused;
 * the entry itself gives back its payload. */
TEST(disk_cache_entry_format_catches_every_cut_and_flip) {
  const char key[] = "module text\n--opt-level=2\n", payload[] = "object bytes \x01\x02\x03";
  unsigned char *e = NULL;
  size_t n = 0, plen = 0;
  const unsigned char *p = NULL;
  char why[256];
  CHECK(cx_disk_cache_encode(key, sizeof key - 1, payload, sizeof payload, &e, &n));
  if (!e) return;
  CHECK(cx_disk_cache_decode(e, n, key, sizeof key - 1, &p, &plen, why, sizeof why));
  CHECK(plen == sizeof payload && p && !memcmp(p, payload, plen));
  CHECK(!cx_disk_cache_decode(e, n, key, sizeof key - 2, &p, &plen, why, sizeof why)); /* another key */
  int missed = 0;
  for (size_t k = 0; k < n; k++) missed += cx_disk_cache_decode(e, k, key, sizeof key - 1, &p, &plen, why, sizeof why);
  for (size_t k = 0; k < n * 8; k++) {
    e[k / 8] ^= (unsigned char)(1u << (k % 8));
    missed += cx_disk_cache_decode(e, n, key, sizeof key - 1, &p, &plen, why, sizeof why);
    e[k / 8] ^= (unsigned char)(1u << (k % 8));
  }
  CHECK_EQ_INT(missed, 0);
  cx_free(e);
}

/* run_fresh with the code kept and, when code is not NULL, handed in: the result, the compile
 * counts, and a heap copy of the executable's own code in *kept (NULL when it has none). */
static cxla_literal *run_code(const char *flags, const unsigned char *code, size_t code_n, char *counts, size_t n,
                              unsigned char **kept, size_t *kept_n) {
  cxla_context *ctx = NULL;
  cxla_module *m = NULL;
  cxla_executable *e = NULL;
  cxla_buffer *arg = NULL, *out = NULL;
  cxla_literal *in = input(), *res = NULL;
  const char *text = module_text();
  counts[0] = 0;
  *kept = NULL;
  *kept_n = 0;
  if (!in || cxla_context_create(&ctx) != CXLA_OK || cxla_context_set_flags(ctx, flags) != CXLA_OK ||
      cxla_module_parse(ctx, text, strlen(text), "dc.hlo", &m) != CXLA_OK) {
    CHECK_MSG(0, "context, flags or parse");
  } else {
    cxla_compile_options o;
    cxla_compile_options_init(&o);
    o.backend = "cpu";
    o.keep_code = 1;
    o.code = code;
    o.code_size = code_n;
    const void *b = NULL;
    if (cxla_compile(m, &o, &e) != CXLA_OK || cxla_buffer_from_literal(ctx, "cpu", in, &arg) != CXLA_OK ||
        cxla_executable_execute(e, 1, &arg, &out) != CXLA_OK || cxla_buffer_to_literal(out, &res) != CXLA_OK) {
      CHECK_MSG(0, "compile or run (%s): %s", flags, cxla_context_errmsg(ctx));
    } else {
      snprintf(counts, n, "%s", cxla_executable_compile_counts(e));
      CHECK_OK(cxla_executable_code(e, &b, kept_n));
      if (b && (*kept = malloc(*kept_n))) memcpy(*kept, b, *kept_n);
    }
  }
  cxla_buffer_destroy(arg);
  cxla_buffer_destroy(out);
  cxla_executable_destroy(e);
  cxla_module_destroy(m);
  cxla_literal_destroy(in);
  cxla_literal *copy = res ? cxla_literal_clone(test_ctx(), res) : NULL;
  cxla_literal_destroy(res);
  cxla_context_destroy(ctx);
  return copy;
}

/* The same entries without a folder (what the PJRT plugin serializes): code kept by one
 * context is linked by another with no LLVM run; damaged code, and code of another key (here
 * another thread count, as code of another CPU would be), is never loaded: that compile runs
 * LLVM and computes the same bytes. */
TEST(disk_cache_code_handed_over_in_memory) {
  char counts[1024];
  unsigned char *code = NULL, *again = NULL;
  size_t n = 0, n2 = 0;
  cxla_literal *want = run_code("--threads=1", NULL, 0, counts, sizeof counts, &code, &n); /* compiled by LLVM */
  CHECK_MSG(strstr(counts, "disk_cache=miss") && strstr(counts, "llvm_modules=2"), "%s", counts);
  CHECK_MSG(code && n > 64 && !memcmp(code, "CXLACACH", 8), "no entry kept");
  cxla_literal *got = run_code("--threads=1", code, n, counts, sizeof counts, &again, &n2);
  CHECK_MSG(strstr(counts, "disk_cache=hit") && strstr(counts, "llvm_modules=0"), "%s", counts);
  CHECK(same_bytes(got, want));
  CHECK(again && n2 == n && !memcmp(again, code, n)); /* what it kept is what it loaded */
  cxla_literal_destroy(got);
  free(again);
  for (int kind = 0; code && kind < 4; kind++) {
    unsigned char *b = malloc(n);
    memcpy(b, code, n);
    size_t len = kind == 0 ? n / 2 : kind == 1 ? 12 : n;
    if (kind == 2) b[n / 2] ^= 0x04;
    got = run_code(kind == 3 ? "--threads=2" : "--threads=1", b, len, counts, sizeof counts, &again, &n2);
    CHECK_MSG(strstr(counts, "disk_cache=rejected") && !strstr(counts, "llvm_modules=0"), "damage %d: %s", kind,
              counts);
    CHECK(same_bytes(got, want));
    cxla_literal_destroy(got);
    free(again);
    free(b);
  }
  /* nothing kept without keep_code, nor by the interpreter */
  cxla_module *m = NULL;
  cxla_executable *e = NULL;
  const char *text = module_text();
  const void *b = NULL;
  size_t bn = 0;
  CHECK_OK(cxla_module_parse(test_ctx(), text, strlen(text), "dc.hlo", &m));
  for (int k = 0; m && k < 2; k++) {
    cxla_compile_options o;
    cxla_compile_options_init(&o);
    o.backend = k ? "interp" : "cpu";
    o.keep_code = k;
    CHECK_OK(cxla_compile(m, &o, &e));
    CHECK(cxla_executable_code(e, &b, &bn) == CXLA_ERR_UNSUPPORTED && !b && !bn);
    CHECK(strstr(cxla_context_errmsg(test_ctx()), k ? "keeps no machine code" : "without keep_code") != NULL);
    cxla_executable_destroy(e);
  }
  cxla_module_destroy(m);
  free(code);
  cxla_literal_destroy(want);
}
