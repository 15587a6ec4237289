/* test_grad_jax.c — real jax modules (tests/hlo/jax, as jax dumps them before optimizations)
 * differentiated and checked against finite differences. Each is taken in f64 (its f32
 * shapes widened, so that finite differences are exact enough), and its result made a scalar
 * loss: sum(result * w) over a new random parameter w per float result leaf. Every float
 * parameter is differentiated. */
#include <string.h>
#include "grad_helpers.h"

static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
  if (s) s[n] = 0;
  fclose(f);
  return s;
}

/* every "f32[" becomes "f64[" (in place: same length) */
static void widen(char *s) {
  for (char *p = s; (p = strstr(p, "f32[")); p += 4) p[1] = '6', p[2] = '4';
}

/* the case from the module at tests/hlo/jax/<name>: 1, or 0 after a failed CHECK */
static int jax_case(gh_case *c, const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/tests/hlo/jax/%s", test_srcdir(), name);
  char *src = read_all(path);
  CHECK_MSG(src, "cannot read %s", path);
  if (!src) return 0;
  widen(src);
  cxla_module *m = NULL;
  cxla_context *ctx = test_ctx();
  char *t = NULL;
  int ok = cxla_module_parse(ctx, src, strlen(src), name, &m) == CXLA_OK && (t = cxla_module_to_string(m));
  CHECK_MSG(ok, "%s: %s", name, cxla_context_errmsg(ctx));
  free(src);
  if (!ok) {
    cxla_module_destroy(m);
    return 0;
  }
  /* the header without its attributes (the entry layout changes), the computations with an
   * adder before ENTRY, ENTRY without its ROOT's mark, then the loss */
  char *entry = strstr(t, "\nENTRY "), *root = entry ? strstr(entry, "  ROOT ") : NULL, *end = strrchr(t, '}');
  char *nl = strchr(t, '\n');
  if (!entry || !root || !end || !nl) {
    CHECK_MSG(0, "%s: unexpected text", name);
    free(t);
    cxla_module_destroy(m);
    return 0;
  }
  char rname[128];
  sscanf(root + 7, "%127[^ =]", rname);
  const char *comma = memchr(t, ',', (size_t)(nl - t));
  gh_add(c, "%.*s\n", (int)((comma ? comma : nl) - t), t);
  gh_add(c, "%.*s\ngh_add {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT r = f64[] add(a, b)\n}\n", (int)(entry - nl), nl);
  gh_add(c, "%.*s  %.*s", (int)(root - entry), entry, (int)(end - root - 7), root + 7);
  int np = cxla_module_num_parameters(m);
  for (int i = 0; i < np; i++) {
    cxla_shape s;
    cxla_module_parameter_shape(m, i, &s);
    c->nparams++;
    c->is_int[i] = s.type != CXLA_F64;
    if (c->is_int[i]) c->lo[i] = 0, c->hi[i] = 1;
    else c->wrt[c->nwrt++] = i;
  }
  cxla_shape rs;
  cxla_module_result_shape(m, &rs);
  int nleaves = rs.type == CXLA_TUPLE ? rs.ntuple : 1, last = -1;
  gh_add(c, "  gh_zero = f64[] constant(0)\n");
  for (int k = 0; k < nleaves; k++) {
    const cxla_shape *ls = rs.type == CXLA_TUPLE ? &rs.elems[k] : &rs;
    if (ls->type != CXLA_F64) continue;
    const char *sh = gh_shape(c, "f64", ls->dims, ls->rank);
    int64_t all[16];
    for (int d = 0; d < ls->rank; d++) all[d] = d;
    if (rs.type == CXLA_TUPLE) gh_add(c, "  gh_leaf%d = %s get-tuple-element(%s), index=%d\n", k, sh, rname, k);
    else gh_add(c, "  gh_leaf%d = %s copy(%s)\n", k, sh, rname);
    gh_add(c, "  gh_w%d = %s parameter(%d)\n  gh_m%d = %s multiply(gh_leaf%d, gh_w%d)\n", k, sh, c->nparams, k, sh, k, k);
    c->nparams++;
    gh_add(c, "  gh_s%d = f64[] reduce(gh_m%d, gh_zero), dimensions=%s, to_apply=gh_add\n", k, k, gh_list(c, all, ls->rank));
    if (last >= 0) gh_add(c, "  gh_acc%d = f64[] add(gh_acc%d, gh_s%d)\n", k, last, k);
    else gh_add(c, "  gh_acc%d = f64[] copy(gh_s%d)\n", k, k);
    last = k;
  }
  gh_add(c, "  ROOT gh_loss = f64[] copy(gh_acc%d)\n}\n", last);
  free(t);
  cxla_module_destroy(m);
  return 1;
}

TEST(grad_jax) {
  static const char *const files[] = {
    "jit_mlp.hlo", "jit_log_softmax_xent.hlo", "jit_softmax.hlo", "jit_layer_norm.hlo", "jit_attention.hlo",
    "jit_conv_layer.hlo", "jit_scan.hlo", "jit_fori_loop.hlo", "jit_cond.hlo", "jit_cumsum.hlo",
    "jit_where_clip.hlo", "jit_take_dynamic.hlo", "jit_multi_output.hlo", "jit_embedding_grad.hlo",
    "mlp_train_step_real.hlo", "attention_grad_real.hlo", "jit_prod.hlo", "jit_sort.hlo", "jit_cumprod.hlo",
    "jit_cummax.hlo", "jit_lax_top_k.hlo",
  };
  static gh_case c;
  for (int i = 0; i < GH_LEN(files); i++) {
    gh_init(&c, (uint64_t)i + 1);
    if (jax_case(&c, files[i])) gh_check(&c, files[i], 1);
  }
}
