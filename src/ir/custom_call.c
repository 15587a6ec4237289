/* custom_call.c — the custom-call target table and backend_config attributes. */
#include <stdlib.h>
#include <string.h>
#include "ir/custom_call.h"

static const cx_cc_info k_targets[CX_CC_TARGET_COUNT] = {
#define CX_CC_TARGET(id, name, kind, type) [CX_CCT_##id] = {name, CX_CC_##kind, type},
#include "ir/custom_calls.def"
};

int cx_cc_target_of(const cx_instr *in) {
  const char *t = in->op == CX_OP_CUSTOM_CALL ? in->a.custom_call_target : NULL;
  if (!t) return -1;
  for (int i = 0; i < CX_CC_TARGET_COUNT; i++)
    if (!strcmp(k_targets[i].name, t)) return i;
  return -1;
}

const cx_cc_info *cx_cc_info_of(cx_cc_target t) { return &k_targets[t]; }

static int word_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

int cx_cc_config_int(const cx_instr *in, const char *key, int64_t *v) {
  const char *cfg = in->a.backend_config;
  size_t n = strlen(key);
  for (const char *p = cfg ? strstr(cfg, key) : NULL; p; p = strstr(p + 1, key)) {
    if ((p > cfg && word_char(p[-1])) || word_char(p[n])) continue;
    const char *q = p + n;
    while (*q == ' ') q++;
    if (*q++ != '=') continue;
    while (*q == ' ') q++;
    if (!strncmp(q, "true", 4) || !strncmp(q, "false", 5)) {
      *v = q[0] == 't';
      return 1;
    }
    char *end;
    long long x = strtoll(q, &end, 10);
    if (end == q) return 0;
    *v = x;
    return 1;
  }
  return 0;
}
