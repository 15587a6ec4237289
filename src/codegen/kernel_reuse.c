/* kernel_reuse.c — the kernels of an executable by the key of what they compute
 * (kernel_reuse.h). */
#include <stdio.h>
#include <string.h>
#include "codegen/kernel_reuse.h"

void cx_kalias_describe(const cx_kalias *a, char *out) {
  int k = snprintf(out, CX_KALIAS_TEXT, "alias %llx", (unsigned long long)a->mask);
  /* at most 64 pairs of two numbers below 64: " 63>63" is 6 bytes, 64 of them 384 */
  for (int i = 0; i < 64 && k > 0 && k < CX_KALIAS_TEXT; i++)
    if (a->mask >> i & 1) k += snprintf(out + k, (size_t)(CX_KALIAS_TEXT - k), " %d>%d", i, a->to[i]);
}

const cx_kreuse_entry *cx_kreuse_find(const cx_kreuse *r, const char *key) {
  for (int64_t i = 0; i < r->n; i++)
    if (!strcmp(r->e[i].key, key)) return &r->e[i];
  return NULL;
}

int cx_kreuse_add(cx_kreuse *r, char *key, const cx_kernel *k, int64_t index) {
  if (!cx_vec_reserve((void **)&r->e, &r->cap, r->n + 1, sizeof *r->e)) {
    cx_free(key);
    return 0;
  }
  r->e[r->n] = (cx_kreuse_entry){.key = key, .k = *k, .index = index};
  r->n++;
  return 1;
}

void cx_kreuse_free(cx_kreuse *r) {
  for (int64_t i = 0; i < r->n; i++) cx_free(r->e[i].key);
  cx_free(r->e);
  memset(r, 0, sizeof *r);
}
