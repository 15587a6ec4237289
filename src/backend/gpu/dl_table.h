/* dl_table.h — a table of function pointers filled from a library opened with dlopen (the CUDA
 * driver, cuBLASLt): each entry names the symbol and where its pointer goes in the table. */
#ifndef CX_GPU_DL_TABLE_H
#define CX_GPU_DL_TABLE_H
#include <stddef.h>

typedef struct cx_dl_sym {
  size_t offset;      /* of the function pointer in the table struct */
  const char *name;   /* the exported symbol */
} cx_dl_sym;

/* Fills table from lib; NULL, or the name of the first symbol lib lacks (table then partly
 * filled: the caller drops it). */
const char *cx_dl_fill(void *lib, void *table, const cx_dl_sym *syms, size_t n);

/* Opens the first of names[] (or $env alone when it is set) that loads and has every symbol,
 * filling table: the library, or NULL with why in err ("what not found (tried ...)", or a
 * library without one of the symbols), `hint` ending the message. */
void *cx_dl_open_first(const char *env, const char *const *names, int nnames, void *table, const cx_dl_sym *syms,
                       size_t nsyms, const char *what, const char *hint, char *err, size_t errlen);

#endif
