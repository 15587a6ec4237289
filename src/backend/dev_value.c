/* dev_value.c — the shell of a cx_dev_value (backend.h): shape and per-leaf arrays, made and
 * freed here for the backends that fill it and the runtime that splits tuples of it. */
#include "backend/backend.h"

cx_dev_value *cx_dev_value_new(const cx_shape *shape, void *device, const cx_device_mem *mem) {
  int n = cx_shape_leaf_count(shape);
  cx_dev_value *v = cx_calloc(1, sizeof *v);
  if (v) {
    v->addr = cx_calloc((size_t)n + 1, sizeof *v->addr);
    v->size = cx_calloc((size_t)n + 1, sizeof *v->size);
  }
  if (!v || !v->addr || !v->size || !cx_shape_copy(&v->shape, shape, NULL)) {
    if (v) cx_free(v->addr), cx_free(v->size);
    cx_free(v);
    return NULL;
  }
  v->nleaves = n;
  v->device = device;
  v->mem = mem;
  return v;
}

void cx_dev_value_free(cx_dev_value *v) {
  if (!v) return;
  cx_shape_free_heap(&v->shape);
  cx_free(v->addr);
  cx_free(v->size);
  cx_free(v);
}
