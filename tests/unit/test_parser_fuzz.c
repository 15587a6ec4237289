/* test_parser_fuzz.c — thousands of deterministic random mutations of valid modules through
 * the parser (each input in an exactly sized heap block, so the sanitizer build catches any
 * read past the end); every mutant that parses must print to a parse/print fixed point. Also
 * a parse-speed measurement on generated JAX-style text (CXLA_PARSE_BENCH_MB, default 2). */
#include <time.h>
#include "ir/ir.h"
#include "text/hlo.h"
#include "test.h"

static const char *const seeds[] = {
    "HloModule jit_f, entry_computation_layout={(f32[8]{0})->f32[]}\n\n"
    "region_0.4 {\n  Arg_0.5 = f32[] parameter(0)\n  Arg_1.6 = f32[] parameter(1)\n  ROOT add.7 = f32[] add(Arg_0.5, Arg_1.6)\n}\n\n"
    "ENTRY main.10 {\n  Arg_0.1 = f32[8]{0} parameter(0), metadata={op_name=\"x\"}\n  constant.2 = f32[] constant(0)\n"
    "  reduce.8 = f32[] reduce(Arg_0.1, constant.2), dimensions={0}, to_apply=region_0.4, metadata={op_name=\"r\" source_line=4}\n"
    "  c = f32[2,2] constant({ { 1, -2.5 }, { inf, nan } })\n  t = (f32[], s32[2]) constant((1, {2, 3}))\n"
    "  ROOT sqrt.9 = f32[] sqrt(reduce.8)\n}\n",
    "HloModule tf\n%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(f32[] %a, f32[] %b)\n}\n"
    "ENTRY %main (x: f32[2,3]) -> f32[2] {\n  %x = f32[2,3]{1,0} parameter(0)\n  %z = f32[] constant(0)\n"
    "  %p = f32[3,4]{1,0} pad(f32[2,3]{1,0} %x, f32[] %z), padding=0_1x-1_2_1 /* c */\n"
    "  %w = f32[2,3] reduce-window(%x, %z), window={size=1x2 stride=1x1 pad=0_0x0_1}, to_apply=%add\n"
    "  ROOT %r = f32[2]{0} reduce(f32[2,3]{1,0} %x, f32[] %z), dimensions={1}, to_apply=%add // end\n}\n",
    "HloModule cf, is_scheduled=true\nENTRY main {\n  p = s32[] parameter(0)\n  w = s32[] while(p), condition=cond, body=body\n"
    "  b = pred[] constant(false)\n  c1 = s32[] conditional(b, p, p), true_computation=body, false_computation=body\n"
    "  g = f32[5,1] gather(f32[5,2] op, s32[5,1] ix), offset_dims={1}, collapsed_slice_dims={}, start_index_map={1}, index_vector_dim=1, slice_sizes={1,1}\n"
    "  op = f32[5,2] parameter(1)\n  ix = s32[5,1] parameter(2)\n"
    "  cv = f32[1,4] convolution(op, op), window={size=3 rhs_reversal=1}, dim_labels=bf0_oi0->bf0, backend_config={\"a\":[1,2]}\n"
    "  ROOT t = (s32[], s32[]) tuple(w, c1), sharding={{replicated}, {maximal device=0}}\n}\n"
    "cond {\n  x = s32[] parameter(0)\n  ROOT lt = pred[] compare(x, x), direction=LT\n}\n"
    "body {\n  x = s32[] parameter(0)\n  ROOT y = s32[] add(x, x)\n}\n",
};

static uint64_t rng_state;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

/* Characters that matter to the grammar, plus a few that never appear in it. */
static const char interesting[] = "{}()[],=%:\"'/*\n 0123456789-.x_<>?abfioTS\\@\xff";

/* 1-2 edits: mostly small ones (a digit, a grammar character, a short span) so that a good
 * share of mutants still parse and reach the printer; sometimes wild ones. */
static size_t mutate(char *buf, size_t len, size_t cap) {
  int n = 1 + (int)(rnd() % 2);
  for (int k = 0; k < n && len; k++) {
    size_t at = rnd() % len, span = 1 + rnd() % 12;
    switch (rnd() % 10) {
    case 0: case 1: buf[at] = interesting[rnd() % (sizeof interesting - 1)]; break;
    case 2: buf[at] = (char)(rnd() & 0xff); break;
    case 3: /* delete a span */
      if (at + span > len) span = len - at;
      memmove(buf + at, buf + at + span, len - at - span);
      len -= span;
      break;
    case 4: { /* duplicate a span from elsewhere */
      size_t from = rnd() % len;
      if (from + span > len) span = len - from;
      if (len + span > cap) break;
      char tmp[16];
      memcpy(tmp, buf + from, span);
      memmove(buf + at + span, buf + at, len - at);
      memcpy(buf + at, tmp, span);
      len += span;
      break;
    }
    case 5:
      if (rnd() % 4 == 0) len = at; /* truncate */
      break;
    case 6: /* insert nesting */
      if (len + 8 > cap) break;
      memmove(buf + at + 8, buf + at, len - at);
      memcpy(buf + at, (rnd() & 1) ? "((((((((" : "{{{{{{{{", 8);
      len += 8;
      break;
    default: /* change the next digit */
      while (at < len && (buf[at] < '0' || buf[at] > '9')) at++;
      if (at < len) buf[at] = (char)('0' + rnd() % 10);
      break;
    }
  }
  return len;
}

static char *print_text(const cx_module *m, const cx_print_opts *o) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_print_module(&sb, m, o);
  return cx_sb_take(&sb);
}

static int reprint_is_fixed_point(cx_module *m, const cx_print_opts *o) {
  char *a = print_text(m, o);
  cx_module *m2 = NULL;
  int ok = a && cx_parse_module(test_ctx(), a, strlen(a), "re.hlo", &m2) == CXLA_OK;
  char *b = ok ? print_text(m2, o) : NULL;
  ok = ok && b && !strcmp(a, b);
  if (!ok) test_fail(__FILE__, __LINE__, "not a fixed point (%s):\n%s", cxla_context_errmsg(test_ctx()), a ? a : "");
  free(a);
  free(b);
  cx_module_free(m2);
  return ok;
}

TEST(parser_fuzz_mutations) {
  /* CXLA_FUZZ_SEED / CXLA_FUZZ_ITERS explore further when run by hand. */
  const char *seed_env = getenv("CXLA_FUZZ_SEED"), *iter_env = getenv("CXLA_FUZZ_ITERS");
  rng_state = 0x9e3779b97f4a7c15ull ^ (seed_env ? strtoull(seed_env, NULL, 10) : 0);
  int iters = iter_env ? atoi(iter_env) : 4000;
  int parsed = 0, failed = 0;
  cx_print_opts canon = cx_print_opts_canonical(), old = {1, 1, 1, 1};
  for (int iter = 0; iter < iters; iter++) {
    const char *seed = seeds[iter % CX_ARRAY_LEN(seeds)];
    size_t len = strlen(seed), cap = len + 256;
    char *work = malloc(cap);
    memcpy(work, seed, len);
    len = mutate(work, len, cap);
    char *exact = malloc(len ? len : 1); /* no terminator: reading past len is a bug */
    memcpy(exact, work, len);
    free(work);
    cx_module *m = (cx_module *)&m;
    cxla_status s = cx_parse_module(test_ctx(), exact, len, "fuzz.hlo", &m);
    if (s == CXLA_OK) {
      parsed++;
      if (!reprint_is_fixed_point(m, &canon) || !reprint_is_fixed_point(m, &old)) {
        test_fail(__FILE__, __LINE__, "iteration %d input:\n%.*s", iter, (int)len, exact);
        failed++;
      }
      cx_module_free(m);
    } else {
      CHECK(m == NULL);
      const char *msg = cxla_context_errmsg(test_ctx());
      CHECK_MSG(!strncmp(msg, "fuzz.hlo:", 9) && strstr(msg, ": error: "), "iteration %d: bad message '%s'", iter, msg);
    }
    free(exact);
    if (failed > 3) break;
  }
  printf("    %d of %d mutants parsed\n", parsed, iters);
  CHECK(parsed > iters / 40); /* the mutations must not be so wild that nothing parses */
}

/* ---- speed ---- */

/* CPU time of this (single-threaded) process: steadier than wall time on a busy machine. */
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Canonical JAX-style text of about `bytes` bytes: one large ENTRY computation with metadata
 * on every instruction, as jax.jit dumps look. */
static char *bench_text(size_t bytes, int *ninstrs) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_puts(&sb, "HloModule jit_bench, entry_computation_layout={(f32[128,256]{1,0}, f32[256,256]{1,0})->f32[128]{0}}\n\n"
                  "region_0.1 {\n  Arg_0.2 = f32[] parameter(0)\n  Arg_1.3 = f32[] parameter(1)\n  ROOT add.4 = f32[] add(Arg_0.2, Arg_1.3)\n}\n\n"
                  "ENTRY main.5 {\n  Arg_0.6 = f32[128,256]{1,0} parameter(0), metadata={op_name=\"x\"}\n"
                  "  Arg_1.7 = f32[256,256]{1,0} parameter(1), metadata={op_name=\"w\"}\n");
  int id = 8, prev = 6, n = 2;
  const char *md = ", metadata={op_name=\"jit(step)/jit(main)/layer/dense\" source_file=\"/home/user/project/model.py\" source_line=";
  while (sb.len < bytes && !sb.oom) {
    int d = id++, c = id++, b = id++, a = id++, cmp = id++, s = id++;
    cx_sb_printf(&sb, "  dot.%d = f32[128,256]{1,0} dot(%s.%d, Arg_1.7), lhs_contracting_dims={1}, rhs_contracting_dims={0}%s%d}\n",
                 d, prev == 6 ? "Arg_0" : "select", prev, md, d % 500);
    cx_sb_printf(&sb, "  constant.%d = f32[] constant(0.5)\n", c);
    cx_sb_printf(&sb, "  broadcast.%d = f32[128,256]{1,0} broadcast(constant.%d), dimensions={}%s%d}\n", b, c, md, b % 500);
    cx_sb_printf(&sb, "  add.%d = f32[128,256]{1,0} add(dot.%d, broadcast.%d)%s%d}\n", a, d, b, md, a % 500);
    cx_sb_printf(&sb, "  compare.%d = pred[128,256]{1,0} compare(add.%d, broadcast.%d), direction=GT%s%d}\n", cmp, a, b, md, cmp % 500);
    cx_sb_printf(&sb, "  select.%d = f32[128,256]{1,0} select(compare.%d, add.%d, broadcast.%d)%s%d}\n", s, cmp, a, b, md, s % 500);
    prev = s;
    n += 6;
  }
  int z = id++;
  cx_sb_printf(&sb, "  constant.%d = f32[] constant(0)\n  ROOT reduce.%d = f32[128]{0} reduce(select.%d, constant.%d), dimensions={1}, to_apply=region_0.1\n}\n",
               z, id, prev, z);
  *ninstrs = n + 2;
  return cx_sb_take(&sb);
}

TEST(parser_speed) {
  const char *env = getenv("CXLA_PARSE_BENCH_MB");
  double mb = env ? atof(env) : 2.0;
  if (mb <= 0) mb = 2.0;
  int n = 0;
  char *text = bench_text((size_t)(mb * 1e6), &n);
  CHECK(text != NULL);
  if (!text) return;
  size_t len = strlen(text);
  double t0 = now_s();
  cx_module *m = NULL;
  cxla_status s = cx_parse_module(test_ctx(), text, len, "bench.hlo", &m);
  double t1 = now_s();
  CHECK_MSG(s == CXLA_OK, "%s", cxla_context_errmsg(test_ctx()));
  if (s == CXLA_OK) {
    CHECK_EQ_INT(m->entry->ninstrs, n);
    cx_print_opts o = cx_print_opts_canonical();
    char *out = print_text(m, &o);
    double t2 = now_s();
    CHECK(out && !strcmp(out, text)); /* the generated text is canonical */
    double size = (double)len / 1e6;
    printf("    parse %.1f MB (%d instructions): %.1f MB/s; parse+print %.1f MB/s (CPU time)\n", size, n, size / (t1 - t0),
           size / (t2 - t0));
    free(out);
    cx_module_free(m);
  }
  free(text);
}
