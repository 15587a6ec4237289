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

#endif
