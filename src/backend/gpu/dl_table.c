/* dl_table.c — see dl_table.h. */
#include <dlfcn.h>
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
