/* test_collective_corpus.c — the corpus of modules that run on several devices,
 * tests/hlo/devices/ (its README says how a file is written): each file states how many devices
 * it runs on, each device's inputs and its expected output. `collective_corpus` runs every file
 * on that many threads on the interpreter (against the expected outputs) and on the cpu backend
 * (bit for bit the interpreter's). `collective_corpus_mpi` runs, in this process, the files
 * made for as many devices as its run has: under `mpirun -np N` (tests/devices/mpi_test.sh)
 * each rank is one device over MPI; alone, the files for one device. */
#include <dirent.h>
#include <sys/stat.h>
#include "ir/literal.h"
#include "ir/verify.h"
#include "text/hlo.h"
#include "test.h"

#define MAX_DEV 16
#define MAX_IN 16

typedef struct corpus_file {
  char *text;
  size_t len;
  int devices, nin[MAX_DEV], nall, has_out[MAX_DEV];
  cx_sb in[MAX_DEV][MAX_IN], all[MAX_IN], out[MAX_DEV];
  double rtol, atol;
  double cpu_rtol, cpu_atol; /* < 0: the cpu must be the interpreter bit for bit */
} corpus_file;

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  cx_sb sb;
  cx_sb_init(&sb);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) cx_sb_putn(&sb, buf, n);
  fclose(f);
  *len = sb.len;
  return cx_sb_take(&sb);
}

static void free_file(corpus_file *c) {
  for (int d = 0; d < MAX_DEV; d++) {
    for (int i = 0; i < MAX_IN; i++) cx_sb_free(&c->in[d][i]);
    cx_sb_free(&c->out[d]);
  }
  for (int i = 0; i < MAX_IN; i++) cx_sb_free(&c->all[i]);
  cx_free(c->text);
}

/* Reads the directives; 0 with a message on a malformed file. */
static int directives(corpus_file *c, const char *rel) {
  cx_sb *last = NULL;
  int line = 0;
  for (const char *p = c->text, *end = c->text + c->len; p < end; line++) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    const char *s = p;
    while (s < eol && (*s == ' ' || *s == '\t')) s++;
    int n = (int)(eol - s), dev = -1, k = 0;
    char word[16];
    if (n > 3 && !strncmp(s, "// ", 3)) {
      s += 3, n -= 3;
      if (sscanf(s, "DEVICES: %d", &c->devices) == 1) {
        last = NULL;
      } else if (sscanf(s, "TOLERANCE: %lf %lf", &c->rtol, &c->atol) == 2) {
        last = NULL;
      } else if (sscanf(s, "CPU-TOLERANCE: %lf %lf", &c->cpu_rtol, &c->cpu_atol) == 2) {
        last = NULL;
      } else if (!strncmp(s, "...", 3)) {
        if (!last) { test_fail(__FILE__, __LINE__, "%s:%d: '// ...' continues nothing", rel, line + 1); return 0; }
        cx_sb_putc(last, ' ');
        cx_sb_putn(last, s + 3, (size_t)(n - 3));
      } else if (sscanf(s, "%15[A-Z] %d: %n", word, &dev, &k) == 2 && k > 0 && dev >= 0 && dev < MAX_DEV) {
        if (!strcmp(word, "OUTPUT") && !c->has_out[dev]) last = &c->out[dev], c->has_out[dev] = 1;
        else if (!strcmp(word, "INPUT") && c->nin[dev] < MAX_IN) last = &c->in[dev][c->nin[dev]++];
        else { test_fail(__FILE__, __LINE__, "%s:%d: bad %s directive", rel, line + 1, word); return 0; }
        cx_sb_putn(last, s + k, (size_t)(n - k));
      } else if (!strncmp(s, "INPUT: ", 7) && c->nall < MAX_IN) {
        last = &c->all[c->nall++];
        cx_sb_putn(last, s + 7, (size_t)(n - 7));
      } else {
        last = NULL;
      }
    } else {
      last = NULL;
    }
    p = eol + 1;
  }
  if (c->devices < 1 || c->devices > MAX_DEV) {
    test_fail(__FILE__, __LINE__, "%s: needs '// DEVICES: N' (1 to %d)", rel, MAX_DEV);
    return 0;
  }
  for (int d = 0; d < c->devices; d++)
    if (!c->has_out[d]) {
      test_fail(__FILE__, __LINE__, "%s: no OUTPUT %d", rel, d);
      return 0;
    }
  return 1;
}

static cxla_literal *literal(const cx_sb *sb, const char *rel, const char *what) {
  cxla_literal *l = NULL;
  if (cxla_literal_parse(test_ctx(), sb->buf ? sb->buf : "", &l) != CXLA_OK)
    test_fail(__FILE__, __LINE__, "%s: %s: %s", rel, what, cxla_context_errmsg(test_ctx()));
  return l;
}

/* Device d's argument buffers (its own INPUTs, else the shared ones). */
static int device_args(corpus_file *c, const char *rel, int d, const char *backend, cxla_buffer **bufs) {
  int n = c->nin[d] ? c->nin[d] : c->nall;
  for (int i = 0; i < n; i++) {
    cxla_literal *l = literal(c->nin[d] ? &c->in[d][i] : &c->all[i], rel, "INPUT");
    cxla_status s = l ? cxla_buffer_from_literal(test_ctx(), backend, l, &bufs[i]) : CXLA_ERR_INVALID_ARGUMENT;
    cxla_literal_destroy(l);
    if (s != CXLA_OK) return -1;
  }
  return n;
}

/* Runs the file on `backend`: all its devices as threads (mpi_rank < 0), or as this rank of
 * an MPI job. got[d] receives device d's result (NULL elsewhere). */
static int run_file(corpus_file *c, const char *rel, const char *backend, int mpi_rank, cxla_literal **got) {
  cxla_module *m = NULL;
  cxla_executable *e = NULL;
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = backend;
  cxla_buffer *bufs[MAX_DEV * MAX_IN] = {0}, *res[MAX_DEV] = {0};
  int nargs = 0, ok = cxla_module_parse(test_ctx(), c->text, c->len, rel, &m) == CXLA_OK && cxla_compile(m, &o, &e) == CXLA_OK;
  int first = mpi_rank < 0 ? 0 : mpi_rank, n = mpi_rank < 0 ? c->devices : 1;
  for (int d = 0; d < n && ok; d++) ok = (nargs = device_args(c, rel, first + d, backend, bufs + d * MAX_IN)) >= 0;
  if (ok && mpi_rank < 0) {
    cxla_buffer *packed[MAX_DEV * MAX_IN]; /* device d's arguments at d * nargs */
    for (int d = 0; d < n; d++)
      for (int i = 0; i < nargs; i++) packed[d * nargs + i] = bufs[d * MAX_IN + i];
    ok = cxla_executable_execute_replicas(e, n, nargs, packed, res) == CXLA_OK;
  } else if (ok) {
    ok = cxla_executable_execute(e, nargs, bufs, &res[0]) == CXLA_OK;
  }
  if (!ok) test_fail(__FILE__, __LINE__, "%s on %s: %s", rel, backend, cxla_context_errmsg(test_ctx()));
  for (int d = 0; d < n; d++) {
    got[first + d] = NULL;
    if (ok && cxla_buffer_to_literal(res[d], &got[first + d]) != CXLA_OK) ok = 0;
    cxla_buffer_destroy(res[d]);
  }
  for (int k = 0; k < MAX_DEV * MAX_IN; k++) cxla_buffer_destroy(bufs[k]);
  cxla_executable_destroy(e);
  cxla_module_destroy(m);
  return ok;
}

/* The printed module parses and verifies and prints the same again. */
static void round_trip(corpus_file *c, const char *rel) {
  cx_module *m = NULL, *back = NULL;
  cx_print_opts po = cx_print_opts_canonical();
  cx_sb a, b;
  cx_sb_init(&a);
  cx_sb_init(&b);
  if (cx_parse_module(test_ctx(), c->text, c->len, rel, &m) != CXLA_OK || cx_verify_module(m) != CXLA_OK) {
    test_fail(__FILE__, __LINE__, "%s: %s", rel, cxla_context_errmsg(test_ctx()));
  } else {
    cx_print_module(&a, m, &po);
    if (cx_parse_module(test_ctx(), a.buf, a.len, rel, &back) != CXLA_OK || cx_verify_module(back) != CXLA_OK)
      test_fail(__FILE__, __LINE__, "%s printed does not read back: %s", rel, cxla_context_errmsg(test_ctx()));
    else {
      cx_print_module(&b, back, &po);
      CHECK_MSG(a.len == b.len && !memcmp(a.buf, b.buf, a.len), "%s: printing is not a fixed point", rel);
    }
  }
  cx_sb_free(&a);
  cx_sb_free(&b);
  cx_module_free(m);
  cx_module_free(back);
}

static void check_outputs(corpus_file *c, const char *rel, const char *backend, cxla_literal **got, int first, int n) {
  for (int d = first; d < first + n; d++) {
    cxla_literal *want = literal(&c->out[d], rel, "OUTPUT");
    cx_sb why;
    cx_sb_init(&why);
    if (want && got[d] && !cx_literal_compare(got[d], want, c->rtol, c->atol, &why))
      test_fail(__FILE__, __LINE__, "%s on %s, device %d: %s", rel, backend, d, why.buf ? why.buf : "differs");
    cx_sb_free(&why);
    cxla_literal_destroy(want);
  }
}

/* One file: threads (mpi_rank -1), or this rank's device. Returns whether it ran. */
static void one_file(const char *path, const char *rel, int mpi_rank, int mpi_size, int *ran) {
  corpus_file c;
  memset(&c, 0, sizeof c);
  c.rtol = 1e-5, c.atol = 1e-6;
  c.cpu_rtol = c.cpu_atol = -1;
  if (!(c.text = slurp(path, &c.len))) {
    test_fail(__FILE__, __LINE__, "cannot read %s", path);
    return;
  }
  if (!directives(&c, rel) || (mpi_rank >= 0 && c.devices != mpi_size)) {
    free_file(&c);
    return;
  }
  (*ran)++;
  if (mpi_rank < 0) round_trip(&c, rel);
  cxla_literal *ref[MAX_DEV] = {0}, *cpu[MAX_DEV] = {0};
  int first = mpi_rank < 0 ? 0 : mpi_rank, n = mpi_rank < 0 ? c.devices : 1;
  if (run_file(&c, rel, "interp", mpi_rank, ref)) check_outputs(&c, rel, "interp", ref, first, n);
  if (run_file(&c, rel, "cpu", mpi_rank, cpu))
    for (int d = first; d < first + n; d++) {
      if (c.cpu_rtol < 0)
        CHECK_MSG(ref[d] && cpu[d] && cx_literal_equal(ref[d], cpu[d]), "%s: cpu device %d is not the interpreter's bit for bit",
                  rel, d);
      else
        CHECK_MSG(ref[d] && cpu[d] && cx_literal_compare(cpu[d], ref[d], c.cpu_rtol, c.cpu_atol, NULL),
                  "%s: cpu device %d differs from the interpreter beyond its CPU-TOLERANCE", rel, d);
    }
  for (int d = 0; d < MAX_DEV; d++) {
    cxla_literal_destroy(ref[d]);
    cxla_literal_destroy(cpu[d]);
  }
  free_file(&c);
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every .hlo file under tests/hlo/devices (one level of subfolders), sorted. */
static int list(char **names, int max) {
  char root[2048];
  snprintf(root, sizeof root, "%s/tests/hlo/devices", test_srcdir());
  const char *subs[] = {"", "jax"};
  int n = 0;
  for (int s = 0; s < 2; s++) {
    char dir[2300];
    snprintf(dir, sizeof dir, "%s%s%s", root, *subs[s] ? "/" : "", subs[s]);
    DIR *dp = opendir(dir);
    struct dirent *de;
    while (dp && (de = readdir(dp)) && n < max) {
      size_t k = strlen(de->d_name);
      if (k < 5 || strcmp(de->d_name + k - 4, ".hlo")) continue;
      char rel[600];
      snprintf(rel, sizeof rel, "%s%s%s", subs[s], *subs[s] ? "/" : "", de->d_name);
      names[n++] = cx_strdup(rel);
    }
    if (dp) closedir(dp);
  }
  qsort(names, (size_t)n, sizeof *names, by_name);
  return n;
}

static void run_corpus(int mpi_rank, int mpi_size) {
  char *names[512];
  int n = list(names, 512), ran = 0;
  CHECK_MSG(n >= 10, "tests/hlo/devices has %d files (CXLA_SRC=%s)", n, test_srcdir());
  for (int i = 0; i < n; i++) {
    char path[3000];
    snprintf(path, sizeof path, "%s/tests/hlo/devices/%s", test_srcdir(), names[i]);
    one_file(path, names[i], mpi_rank, mpi_size, &ran);
    cx_free(names[i]);
  }
  printf("    %d of %d files run (%s)\n", ran, n, mpi_rank < 0 ? "threads" : "this rank");
  CHECK(ran > 0);
}

TEST(collective_corpus) { run_corpus(-1, 0); }

TEST(collective_corpus_mpi) {
  int rank = 0, size = 1;
  CHECK_OK(cxla_context_device(test_ctx(), &rank, &size));
  run_corpus(rank, size);
}
