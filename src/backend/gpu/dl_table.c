/* dl_table.c — see dl_table.h. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/gpu/dl_table.h"

const char *cx_dl_fill(void *lib, void *table, const cx_dl_sym *syms, size_t n) {
  for (size_t i = 0; i < n; i++) {
    void *f = dlsym(lib, syms[i].name);
    if (!f) return syms[i].name;
    memcpy((char *)table + syms[i].offset, &f, sizeof f); /* a data pointer's bits as a function pointer's */
  }
  return NULL;
}

void *cx_dl_open_first(const char *env, const char *const *names, int nnames, void *table, const cx_dl_sym *syms,
                       size_t nsyms, const char *what, const char *hint, char *err, size_t errlen) {
  const char *e = getenv(env);
  const char *one[1] = {e};
  if (e && *e) names = one, nnames = 1;
  for (int i = 0; i < nnames; i++) {
    void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) continue;
    const char *missing = cx_dl_fill(lib, table, syms, nsyms);
    if (!missing) return lib;
    snprintf(err, errlen, "%s is not a usable %s: it has no %s; %s", names[i], what, missing, hint);
    dlclose(lib);
    return NULL;
  }
  int n = snprintf(err, errlen, "%s not found (tried", what);
  for (int i = 0; i < nnames && n > 0 && (size_t)n < errlen; i++)
    n += snprintf(err + n, errlen - (size_t)n, "%s %s", i ? "," : "", names[i]);
  if (n > 0 && (size_t)n < errlen) snprintf(err + n, errlen - (size_t)n, "); %s", hint);
  return NULL;
}
