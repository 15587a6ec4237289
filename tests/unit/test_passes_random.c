/* test_passes_random.c — the whole simplification pipeline (inline, then simplify / fold /
 * cse / dce to a fixed point) on many generated modules, each checked against the original
 * on the interpreter with NaN, -0, infinities and integer extremes among the inputs. The
 * generator favours what the passes look for: identities with special constants, chains of
 * shape ops, convert round trips, constant subtrees, duplicates, calls, degenerate reduces.
 * Every value is an f32[2,3] or s32[2,3]; shape ops appear in round trips back to [2,3]. */
#include "ir/clone.h"
#include "passes_helpers.h"

typedef struct gen {
  cx_sb sb;
  uint64_t st;
  int n;             /* values so far */
  char type[256];    /* 'f' or 's' per value */
  int lines;         /* instruction lines (for duplicates) */
  char dup[64][208]; /* recent lines without their names, for CSE */
  int ndup;
} gen;

static uint64_t rnd(gen *g) {
  g->st = g->st * 6364136223846793005ull + 1442695040888963407ull;
  return g->st >> 33;
}
static int pick(gen *g, int n) { return (int)(rnd(g) % (uint64_t)n); }

static const char *ty(char t) { return t == 'f' ? "f32" : "s32"; }

/* A value of type t (or any type when t is 0); returns its index. */
static int val(gen *g, char t) {
  for (int tries = 0; tries < 64; tries++) {
    int k = g->n - 1 - pick(g, g->n < 8 ? g->n : 8); /* recent values, mostly */
    if (pick(g, 4) == 0) k = pick(g, g->n);
    if (!t || g->type[k] == t) return k;
  }
  for (int k = g->n - 1; k >= 0; k--)
    if (g->type[k] == t) return k;
  return 0;
}

/* Emits "v<N> = <shape> <rest>" and records the value. */
static int emit(gen *g, char t, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int emit(gen *g, char t, const char *fmt, ...) {
  char rest[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rest, sizeof rest, fmt, ap);
  va_end(ap);
  cx_sb_printf(&g->sb, "  v%d = %s[2,3] %s\n", g->n, ty(t), rest);
  if (g->ndup < 64) {
    snprintf(g->dup[g->ndup], sizeof g->dup[0], "%c%s", t, rest);
    g->ndup++;
  }
  g->type[g->n] = t;
  return g->n++;
}

/* A scratch value of another shape: "w<N> = ..." (never a pool value). */
static int wn;
static int scratch(gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int scratch(gen *g, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cx_sb_printf(&g->sb, "  w%d = ", wn);
  cx_sb_vprintf(&g->sb, fmt, ap);
  cx_sb_putc(&g->sb, '\n');
  va_end(ap);
  return wn++;
}

static const char *fconst[] = {"0", "-0", "1", "-1", "inf", "-inf", "nan", "2.5", "0.5"};
static const char *iconst[] = {"0", "1", "-1", "2147483647", "-2147483648", "3", "-7"};

static const char *special(gen *g, char t) {
  return t == 'f' ? fconst[pick(g, CX_ARRAY_LEN(fconst))] : iconst[pick(g, CX_ARRAY_LEN(iconst))];
}

/* A [2,3] operand filled with one special constant: broadcast or a full literal. */
static int splat(gen *g, char t) {
  const char *c = special(g, t);
  if (pick(g, 3)) {
    int k = scratch(g, "%s[] constant(%s)", ty(t), c);
    return scratch(g, "%s[2,3] broadcast(w%d), dimensions={}", ty(t), k);
  }
  return scratch(g, "%s[2,3] constant({{%s, %s, %s}, {%s, %s, %s}})", ty(t), c, c, c, c, c, c);
}

static void step(gen *g) {
  char t = pick(g, 2) ? 'f' : 's';
  int a = val(g, t), b = val(g, t);
  static const char *fbin[] = {"add", "subtract", "multiply", "divide", "maximum", "minimum", "power"};
  static const char *ibin[] = {"add", "subtract", "multiply", "divide", "maximum", "minimum", "and", "or", "xor",
                               "shift-left", "shift-right-arithmetic", "shift-right-logical", "remainder"};
  const char *bop = t == 'f' ? fbin[pick(g, CX_ARRAY_LEN(fbin))] : ibin[pick(g, CX_ARRAY_LEN(ibin))];
  switch (pick(g, 22)) {
  case 0: emit(g, t, "%s(v%d, v%d)", bop, a, b); break;
  case 1: case 2: {
    int k = splat(g, t);
    if (pick(g, 2)) emit(g, t, "%s(v%d, w%d)", bop, a, k);
    else emit(g, t, "%s(w%d, v%d)", bop, k, a);
    break;
  }
  case 3: {
    static const char *fun[] = {"negate", "abs", "copy", "exponential", "floor", "sign"};
    static const char *iun[] = {"negate", "abs", "copy", "not", "popcnt"};
    emit(g, t, "%s(v%d)", t == 'f' ? fun[pick(g, 6)] : iun[pick(g, 5)], a);
    break;
  }
  case 4: { /* convert round trips, exact or not */
    static const char *fmid[] = {"f64", "f16", "bf16", "s32", "f32"};
    static const char *imid[] = {"s64", "s8", "f32", "f64", "u32", "s32", "pred"};
    const char *mid = t == 'f' ? fmid[pick(g, 5)] : imid[pick(g, 7)];
    int k = scratch(g, "%s[2,3] convert(v%d)", mid, a);
    emit(g, pick(g, 3) ? t : (t == 'f' ? 's' : 'f'), "convert(w%d)", k);
    break;
  }
  case 5: {
    int k = scratch(g, "%s[3,2] transpose(v%d), dimensions={1,0}", ty(t), a);
    emit(g, t, "transpose(w%d), dimensions={1,0}", k);
    break;
  }
  case 6: {
    int k = scratch(g, "%s[6] reshape(v%d)", ty(t), a);
    int k2 = scratch(g, pick(g, 2) ? "%s[3,2] reshape(w%d)" : "%s[1,6] reshape(w%d)", ty(t), k);
    emit(g, t, "reshape(w%d)", k2);
    break;
  }
  case 7: {
    int s1 = scratch(g, "%s[2,1] slice(v%d), slice={[0:2], [0:1]}", ty(t), a);
    int s2 = scratch(g, "%s[2,2] slice(v%d), slice={[0:2], [1:3]}", ty(t), b);
    int e = scratch(g, "%s[0,3] slice(v%d), slice={[1:1], [0:3]}", ty(t), a);
    int c = scratch(g, "%s[2,3] concatenate(w%d, w%d), dimensions={1}", ty(t), s1, s2);
    emit(g, t, "concatenate(w%d, w%d), dimensions={0}", e, c);
    break;
  }
  case 8: emit(g, t, pick(g, 2) ? "slice(v%d), slice={[0:2], [0:3]}" : "reverse(v%d), dimensions={1}", a); break;
  case 9: {
    static const char *dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
    int c = scratch(g, "pred[2,3] compare(v%d, v%d), direction=%s", a, pick(g, 3) ? b : a, dirs[pick(g, 6)]);
    emit(g, t, "select(w%d, v%d, v%d)", c, a, b);
    break;
  }
  case 10: {
    int p = scratch(g, "pred[] constant(%s)", pick(g, 2) ? "true" : "false");
    int pb = scratch(g, "pred[2,3] broadcast(w%d), dimensions={}", p);
    emit(g, t, "select(w%d, v%d, v%d)", pb, a, pick(g, 2) ? a : b);
    break;
  }
  case 11: { /* reduce over a size-1 dimension: one fold step with init */
    int r = scratch(g, "%s[2,1,3] reshape(v%d)", ty(t), a);
    int z = scratch(g, "%s[] constant(%s)", ty(t), special(g, t));
    static const char *red[] = {"add", "max", "mul", "sub"};
    emit(g, t, "reduce(w%d, w%d), dimensions={1}, to_apply=%s_%c", r, z, red[pick(g, 4)], t);
    break;
  }
  case 12: {
    int z = scratch(g, "%s[] constant(%s)", ty(t), t == 'f' ? "-0" : "0");
    int r = scratch(g, "%s[2] reduce(v%d, w%d), dimensions={1}, to_apply=add_%c", ty(t), a, z, t);
    emit(g, t, "broadcast(w%d), dimensions={0}", r);
    break;
  }
  case 13: { /* dynamic-slice with constant (maybe out of range) starts */
    int i = scratch(g, "s32[] constant(%d)", pick(g, 6) - 2), j = scratch(g, "s32[] constant(%d)", pick(g, 5) - 1);
    int d0 = scratch(g, "%s[1,3] dynamic-slice(v%d, w%d, w%d), dynamic_slice_sizes={1,3}", ty(t), a, i, j);
    int d1 = scratch(g, "%s[1,3] dynamic-slice(v%d, w%d, w%d), dynamic_slice_sizes={1,3}", ty(t), b, j, i);
    emit(g, t, "concatenate(w%d, w%d), dimensions={0}", d0, d1);
    break;
  }
  case 14: {
    int u = scratch(g, "%s[1,2] slice(v%d), slice={[1:2], [0:3:2]}", ty(t), b);
    int i = scratch(g, "s32[] constant(%d)", pick(g, 5) - 2);
    emit(g, t, "dynamic-update-slice(v%d, w%d, w%d, w%d)", a, u, i, i);
    break;
  }
  case 15: /* a duplicate of an earlier instruction */
    if (g->ndup) {
      const char *d = g->dup[pick(g, g->ndup)];
      emit(g, d[0], "%s", d + 1);
    }
    break;
  case 16: { /* a constant subtree */
    int x = splat(g, t), y = splat(g, t);
    int k = scratch(g, "%s[2,3] %s(w%d, w%d)", ty(t), bop, x, y);
    emit(g, t, "add(v%d, w%d)", a, k);
    break;
  }
  case 17: {
    int tu = scratch(g, "(%s[2,3], %s[2,3]) tuple(v%d, v%d)", ty(t), ty(t), a, b);
    emit(g, t, "get-tuple-element(w%d), index=%d", tu, pick(g, 2));
    break;
  }
  case 18: {
    int z = scratch(g, "%s[] constant(%s)", ty(t), special(g, t));
    emit(g, t, "pad(v%d, w%d), padding=0_0x0_0", a, z);
    break;
  }
  case 19: emit(g, t, "map(v%d, v%d), dimensions={0,1}, to_apply=add_%c", a, b, t); break;
  case 20: emit(g, t, "call(v%d, v%d), to_apply=helper_%c", a, b, t); break;
  default: {
    int k = scratch(g, "%s[1,2,1,3] broadcast(v%d), dimensions={1,3}", ty(t), a);
    int k2 = scratch(g, "%s[2,3,1,1] transpose(w%d), dimensions={1,3,0,2}", ty(t), k);
    emit(g, t, "reshape(w%d)", k2);
    break;
  }
  }
}

static char *generate(uint64_t seed) {
  gen g;
  memset(&g, 0, sizeof g);
  g.st = seed * 0x9E3779B97F4A7C15ull + 7;
  wn = 0;
  cx_sb_init(&g.sb);
  cx_sb_puts(&g.sb, "HloModule rnd\n");
  for (int i = 0; i < 2; i++) {
    char t = "fs"[i];
    const char *T = ty(t);
    cx_sb_printf(&g.sb, "add_%c {\n  x = %s[] parameter(0)\n  y = %s[] parameter(1)\n  ROOT r = %s[] add(x, y)\n}\n", t, T, T, T);
    cx_sb_printf(&g.sb, "max_%c {\n  x = %s[] parameter(0)\n  y = %s[] parameter(1)\n  ROOT r = %s[] maximum(x, y)\n}\n", t, T, T, T);
    cx_sb_printf(&g.sb, "mul_%c {\n  x = %s[] parameter(0)\n  y = %s[] parameter(1)\n  ROOT r = %s[] multiply(y, x)\n}\n", t, T, T, T);
    cx_sb_printf(&g.sb, "sub_%c {\n  x = %s[] parameter(0)\n  y = %s[] parameter(1)\n  ROOT r = %s[] subtract(x, y)\n}\n", t, T, T, T);
    cx_sb_printf(&g.sb, "helper_%c {\n  x = %s[2,3] parameter(0)\n  y = %s[2,3] parameter(1)\n  n = %s[2,3] negate(y)\n"
                 "  m = %s[2,3] negate(n)\n  ROOT r = %s[2,3] subtract(x, m)\n}\n", t, T, T, T, T, T);
  }
  cx_sb_puts(&g.sb, "ENTRY main {\n");
  emit(&g, 'f', "parameter(0)");
  emit(&g, 's', "parameter(1)");
  emit(&g, 'f', "parameter(2)");
  g.ndup = 0;
  int steps = 6 + (int)(seed % 20);
  for (int i = 0; i < steps; i++) step(&g);
  /* the root keeps the last values alive; earlier ones may be dead */
  int first = g.n > 5 ? g.n - 5 : 0;
  cx_sb_puts(&g.sb, "  ROOT out = (");
  for (int k = first; k < g.n; k++) cx_sb_printf(&g.sb, "%s%s[2,3]", k > first ? ", " : "", ty(g.type[k]));
  cx_sb_puts(&g.sb, ") tuple(");
  for (int k = first; k < g.n; k++) cx_sb_printf(&g.sb, "%sv%d", k > first ? ", " : "", k);
  cx_sb_puts(&g.sb, ")\n}\n");
  return cx_sb_take(&g.sb);
}

TEST(passes_random_modules_keep_their_results) {
  int failures = 0, changed_some = 0;
  /* CXLA_RANDOM_MODULES=N runs N modules instead of 300 (for long bug hunts) */
  uint64_t nmod = getenv("CXLA_RANDOM_MODULES") ? strtoull(getenv("CXLA_RANDOM_MODULES"), NULL, 10) : 300;
  if (nmod < 300) nmod = 300;
  for (uint64_t seed = 1; seed <= nmod && failures < 3; seed++) {
    char *text = generate(seed);
    cx_module *m = text ? TP_PARSE(text) : NULL;
    if (!m) {
      CHECK_MSG(0, "seed %llu: generated module does not verify:\n%s", (unsigned long long)seed, text ? text : "");
      free(text);
      failures++;
      continue;
    }
    cx_module *orig = cx_module_clone(m);
    int before = m->entry->ninstrs;
    cxla_status s = tp_optimize(m);
    CHECK_MSG(s == CXLA_OK, "seed %llu: %s\n%s", (unsigned long long)seed, cxla_context_errmsg(test_ctx()), text);
    if (s == CXLA_OK) {
      changed_some += m->entry->ninstrs < before;
      int nfail = 0;
      for (int t = 0; t < 4; t++) {
        cxla_literal *args[8], *r1 = NULL, *r2 = NULL;
        int n = tp_random_args(orig, seed * 10 + (uint64_t)t, args, 8);
        if (t == 0) { /* the all-specials inputs too */
          tp_free_args(n, args);
          n = tp_random_args(orig, 0, args, 8);
        }
        cxla_status s1 = cx_interp_run(orig, n, args, &r1), s2 = cx_interp_run(m, n, args, &r2);
        cx_sb why;
        cx_sb_init(&why);
        if (s1 != s2 || (s1 == CXLA_OK && !tp_same(r1, r2, &why))) nfail++;
        if (nfail == 1 && (s1 != s2 || why.len)) {
          char *after = tp_print(m);
          CHECK_MSG(0, "seed %llu trial %d: %s (status %d vs %d)\noriginal:\n%s\nafter:\n%s", (unsigned long long)seed, t,
                    why.buf ? why.buf : "", s1, s2, text, after ? after : "");
          cx_free(after);
        }
        cx_sb_free(&why);
        cxla_literal_destroy(r1);
        cxla_literal_destroy(r2);
        tp_free_args(n, args);
      }
      failures += nfail > 0;
    }
    cx_module_free(orig);
    cx_module_free(m);
    free(text);
  }
  if (getenv("CXLA_SHOW_RANDOM")) { /* for eyeballing the generator: one module before and after */
    char *text = generate((uint64_t)atoi(getenv("CXLA_SHOW_RANDOM")));
    cx_module *m = TP_PARSE(text);
    if (m && tp_optimize(m) == CXLA_OK) {
      char *after = tp_print(m);
      printf("%s\n----\n%s", text, after ? after : "");
      cx_free(after);
    }
    cx_module_free(m);
    free(text);
  }
  CHECK_MSG(changed_some > 200, "only %d of 300 modules got smaller: the generator or the passes lost their bite", changed_some);
}
