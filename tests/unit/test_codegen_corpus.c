/* test_codegen_corpus.c — every module of tests/hlo (ops/, jax/, legacy/) through the CPU pass
 * pipeline with fusion on and off; every fusion the emitter accepts is compiled and run on
 * random inputs against the interpreter (the fused computation on the same inputs). Float
 * tolerances are loose because the emitter may contract a*b+c into an FMA and reassociate
 * reductions; the exact rules are tested op by op elsewhere. */
#include <dirent.h>
#include "codegen_harness.h"

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = n >= 0 ? cx_malloc((size_t)n + 1) : NULL;
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    cx_free(buf);
    buf = NULL;
  }
  if (buf) buf[n] = 0;
  fclose(f);
  return buf;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void run_dir(const char *sub, int *nrun, int *nunsup, int *nfiles) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/tests/hlo/%s", test_srcdir(), sub);
  DIR *d = opendir(dir);
  if (!d) {
    test_fail(__FILE__, __LINE__, "cannot open %s", dir);
    return;
  }
  char *names[512];
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < 512)
    if (strstr(e->d_name, ".hlo")) names[n++] = cx_strdup(e->d_name);
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, by_name);
  const char *filter = getenv("CXLA_CG_CORPUS");
  for (int i = 0; i < n; i++) {
    char path[1400];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    char *text = filter && !strstr(path, filter) ? NULL : slurp(path);
    if (text && !strstr(text, "// ERROR:")) {
      (*nfiles)++;
      for (int mode = 3; mode <= 4; mode++) {
        cgt_opts o = {.fusion_pass = mode, .skip_unsupported = 1, .no_specials = 1, .lo = -2, .hi = 2,
                      .ulps = 4, .atol = 1e-4, .rtol = 1e-4, .ilo = -3, .ihi = 12};
        if (cgt_check(text, &o, __FILE__, __LINE__)) test_fail(__FILE__, __LINE__, "%s/%s (fusion %s)", sub, names[i], mode == 3 ? "on" : "off");
        *nrun += o.nfusions;
        if (o.nunsupported && getenv("CXLA_CG_WHY")) printf("      ^ %s/%s\n", sub, names[i]);
        *nunsup += o.nunsupported;
      }
    }
    cx_free(text);
    cx_free(names[i]);
  }
}

TEST(codegen_corpus) {
  int nrun = 0, nunsup = 0, nfiles = 0;
  run_dir("ops", &nrun, &nunsup, &nfiles);
  run_dir("jax", &nrun, &nunsup, &nfiles);
  run_dir("legacy", &nrun, &nunsup, &nfiles);
  printf("    %d modules: %d fusions compiled and checked, %d left to the interpreter\n", nfiles, nrun, nunsup);
  if (!getenv("CXLA_CG_CORPUS")) CHECK(nrun > 300);
}
