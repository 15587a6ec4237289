/* flags.c — parses CXLA_FLAGS-style option strings; one table names every flag. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/flags.h"

typedef enum { F_BOOL, F_INT, F_STR } flag_kind;
typedef struct {
  const char *name;
  flag_kind kind;
  size_t offset;
  int64_t lo, hi;
  const char *help;
  int runtime_only; /* does not change what compiles: left out of executable-cache keys */
  const char *choices; /* a text flag's only values, "a|b|c" (NULL: any text) */
} flag_def;

#define OFF(f) offsetof(cx_flags, f)
static const flag_def defs[] = {
    {"fusion", F_BOOL, OFF(fusion), 0, 1, "on|off: fuse ops into kernels (off: one kernel per op)"},
    {"threads", F_INT, OFF(threads), 0, 1024, "N: worker threads (0: all cores)"},
    {"opt-level", F_INT, OFF(opt_level), 0, 3, "0..3: LLVM optimisation level"},
    {"max-loop-iterations", F_INT, OFF(max_loop_iterations), 0, INT64_MAX,
     "N: stop interpreted while loops after N iterations (0: no limit)"},
    {"dump-to", F_STR, OFF(dump_to), 0, 0, "DIR: write HLO text and GraphViz after each pass, one prefix per compile"},
    {"dump-pass-re", F_STR, OFF(dump_pass_re), 0, 0, "REGEX: only dump passes matching it"},
    {"dump-format", F_STR, OFF(dump_format), 0, 0,
     "hlo,dot,svg: what each dump writes (default hlo,dot; svg runs GraphViz after the compile)"},
    {"trace", F_STR, OFF(trace), 0, 0, "FILE: write a Chrome trace of compile phases and kernels", 1},
    {"disable-pass", F_STR, OFF(disable_pass), 0, 0,
     "NAME[,NAME]: skip passes of the pipeline (see cxla compile --list-passes)"},
    {"collective-timeout", F_INT, OFF(collective_timeout), 0, 7 * 86400,
     "S: a collective fails after waiting S seconds for the other devices (0: waits for ever)", 1},
    {"gpu-tf32", F_BOOL, OFF(gpu_tf32), 0, 1,
     "on|off: f32 dots and convolutions on the GPU may round inputs to TF32 on tensor cores (faster, 10-bit mantissas; default off)"},
    {"gpu-graphs", F_BOOL, OFF(gpu_graphs), 0, 1,
     "on|off: GPU while loops and conditionals as CUDA graphs with conditional nodes, no host read-back per trip "
     "(default on; off, or a driver older than 12.4: the host reads each predicate back)"},
    {"gpu-libdevice", F_STR, OFF(gpu_libdevice), 0, 0,
     "PATH: CUDA's libdevice.10.bc, linked into GPU kernels for the f64 math functions (default: "
     "$CUDA_HOME, $CUDA_PATH, /usr/local/cuda, /usr/lib/nvidia-cuda-toolkit)"},
    {"cpu-onednn", F_BOOL, OFF(cpu_onednn), 0, 1,
     "on|off: f32/bf16 convolutions on the cpu backend through oneDNN where it applies (default on; off: im2col + OpenBLAS)"},
    {"cpu-flush-denormals", F_BOOL, OFF(cpu_flush_denormals), 0, 1,
     "on|off: cpu executions flush denormal floats to zero, inputs and results (FTZ and DAZ), as XLA:CPU does "
     "(default off: IEEE, as the interpreter; the PJRT plugin and cxla.jit turn it on)", 1},
    {"cpu-idle-spin-us", F_INT, OFF(cpu_idle_spin_us), 0, 1000000,
     "N: how long the cpu backend's idle worker threads spin for the next kernel before they sleep, in "
     "microseconds (default 200: back-to-back steps from Python find them awake; 0 gives the cores back at once)", 1},
    {"cpu-libmvec", F_BOOL, OFF(cpu_libmvec), 0, 1,
     "on|off: f64 sin, cos, tan, pow, atan2, cbrt, erf, tanh, expm1, log1p in vectorised loops through glibc's libmvec "
     "(default on: within 4 ulp, 2-8x faster; off: scalar libm, as the interpreter)"},
    {"cache-dir", F_STR, OFF(cache_dir), 0, 0,
     "DIR|default|off: keep compiled cpu code in DIR, load it instead of compiling again (default: "
     "$XDG_CACHE_HOME/cxla or ~/.cache/cxla; unset or off: no disk cache)", 1},
    {"pjrt-async", F_STR, OFF(pjrt_async), 0, 0,
     "auto|on|off: the PJRT plugin runs executions on its client's stream thread, in order, returning at once: "
     "on, every one; auto (the default), the GPU device's; off, none (each on the calling thread, as programs with "
     "host callbacks always run)", 1, "auto|on|off"},
    {"pjrt-gpu", F_STR, OFF(pjrt_gpu), 0, 0,
     "auto|emu|off: the PJRT plugin's GPU device: the gpu backend when a GPU and its driver are found "
     "(auto, the default), the emulated GPU (gpu-emu), or none", 1, "auto|emu|off"},
};

void cx_flags_init(cx_flags *f) {
  memset(f, 0, sizeof *f);
  f->fusion = 1;
  f->opt_level = 2;
  f->collective_timeout = 300;
  f->cpu_onednn = 1;
  f->cpu_libmvec = 1;
  f->cpu_idle_spin_us = 200;
  f->gpu_graphs = 1;
}

void cx_flags_free(cx_flags *f) {
  cx_free(f->donated);
  for (int i = 0; i < CX_ARRAY_LEN(defs); i++)
    if (defs[i].kind == F_STR) cx_free(*(char **)((char *)f + defs[i].offset));
  cx_flags_init(f);
}

cxla_status cx_flags_copy(cxla_context *ctx, cx_flags *dst, const cx_flags *src) {
  cx_flags tmp = *src;
  tmp.donated = NULL, tmp.ndonated = 0; /* one owner */
  for (int i = 0; i < CX_ARRAY_LEN(defs); i++) {
    if (defs[i].kind != F_STR) continue;
    char **slot = (char **)((char *)&tmp + defs[i].offset);
    if (*slot && !(*slot = cx_strdup(*slot))) {
      for (int j = 0; j < i; j++)
        if (defs[j].kind == F_STR) cx_free(*(char **)((char *)&tmp + defs[j].offset));
      return cx_oom(ctx);
    }
  }
  *dst = tmp;
  return CXLA_OK;
}

void cx_flags_key(cx_sb *sb, const cx_flags *f) {
  for (int i = 0; i < CX_ARRAY_LEN(defs); i++) {
    if (defs[i].runtime_only) continue;
    const void *slot = (const char *)f + defs[i].offset;
    cx_sb_printf(sb, "--%s=", defs[i].name);
    if (defs[i].kind == F_STR) cx_sb_puts(sb, *(char *const *)slot ? *(char *const *)slot : "");
    else if (defs[i].offset == OFF(max_loop_iterations)) cx_sb_printf(sb, "%lld", (long long)*(const int64_t *)slot);
    else cx_sb_printf(sb, "%d", *(const int *)slot);
    cx_sb_putc(sb, '\n');
  }
}

static const flag_def *find(const char *name, size_t n) {
  for (int i = 0; i < CX_ARRAY_LEN(defs); i++)
    if (strlen(defs[i].name) == n && !strncmp(defs[i].name, name, n)) return &defs[i];
  return NULL;
}

cxla_status cx_flags_get(cxla_context *ctx, const cx_flags *f, const char *name, cx_sb *out) {
  const flag_def *d = name ? find(name, strlen(name)) : NULL;
  if (!d) return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "no flag '--%s'", name ? name : "(null)");
  const void *slot = (const char *)f + d->offset;
  if (d->kind == F_STR) cx_sb_puts(out, *(char *const *)slot ? *(char *const *)slot : "");
  else if (d->kind == F_BOOL) cx_sb_puts(out, *(const int *)slot ? "on" : "off");
  else if (d->offset == OFF(max_loop_iterations)) cx_sb_printf(out, "%lld", (long long)*(const int64_t *)slot);
  else cx_sb_printf(out, "%d", *(const int *)slot);
  return out->oom ? cx_oom(ctx) : CXLA_OK;
}

/* Is v one of the '|'-separated words of choices? */
static int one_of(const char *choices, const char *v) {
  size_t n = strlen(v);
  for (const char *p = choices; *p;) {
    size_t w = strcspn(p, "|");
    if (w == n && !strncmp(p, v, n)) return 1;
    p += w + (p[w] == '|');
  }
  return 0;
}

int cx_flags_is_flag(const char *arg) {
  if (strncmp(arg, "--", 2)) return 0;
  const char *eq = strchr(arg, '=');
  size_t n = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
  return find(arg + 2, n) != NULL;
}

void cx_flags_help(cx_sb *sb, int indent) {
  for (int i = 0; i < CX_ARRAY_LEN(defs); i++) {
    /* help reads "VALUE: what it does"; the value part goes after '='. */
    const char *h = defs[i].help, *colon = strstr(h, ": ");
    char lhs[64];
    snprintf(lhs, sizeof lhs, "--%s=%.*s", defs[i].name, colon ? (int)(colon - h) : 0, h);
    cx_sb_printf(sb, "%*s%-28s %s\n", indent, "", lhs, colon ? colon + 2 : h);
  }
}

static cxla_status set_one(cxla_context *ctx, cx_flags *f, const char *tok, size_t len) {
  if (len < 3 || strncmp(tok, "--", 2))
    return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "flag '%.*s' must look like --name=value",
                    (int)len, tok);
  const char *eq = memchr(tok, '=', len);
  size_t nlen = eq ? (size_t)(eq - tok - 2) : len - 2;
  const flag_def *d = find(tok + 2, nlen);
  if (!d) {
    cx_sb known;
    cx_sb_init(&known);
    for (int i = 0; i < CX_ARRAY_LEN(defs); i++) cx_sb_printf(&known, "%s--%s", i ? ", " : "", defs[i].name);
    cxla_status s = cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "unknown flag '--%.*s' (known: %s)",
                             (int)nlen, tok + 2, known.buf ? known.buf : "");
    cx_sb_free(&known);
    return s;
  }
  const char *val = eq ? eq + 1 : NULL;
  size_t vlen = eq ? len - (size_t)(val - tok) : 0;
  char *v = val ? cx_strndup(val, vlen) : NULL;
  if (val && !v) return cx_oom(ctx);
  void *slot = (char *)f + d->offset;
  cxla_status st = CXLA_OK;
  if (d->kind == F_BOOL) {
    if (!v || !strcmp(v, "on") || !strcmp(v, "true") || !strcmp(v, "1")) *(int *)slot = 1;
    else if (!strcmp(v, "off") || !strcmp(v, "false") || !strcmp(v, "0")) *(int *)slot = 0;
    else st = cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "flag --%s wants on or off, not '%s'", d->name, v);
  } else if (d->kind == F_INT) {
    char *end = NULL;
    errno = 0;
    long long x = v ? strtoll(v, &end, 10) : 0;
    if (!v || !*v || *end || errno || x < d->lo || x > d->hi)
      st = cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "flag --%s wants an integer in [%lld, %lld], not '%s'",
                    d->name, (long long)d->lo, (long long)d->hi, v ? v : "");
    else if (d->offset == OFF(max_loop_iterations)) *(int64_t *)slot = x;
    else *(int *)slot = (int)x;
  } else {
    if (!v || !*v) st = cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "flag --%s wants a value", d->name);
    else if (d->choices && !one_of(d->choices, v))
      st = cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "flag --%s wants one of %s, not '%s'", d->name, d->choices, v);
    else {
      cx_free(*(char **)slot);
      *(char **)slot = v;
      v = NULL;
    }
  }
  cx_free(v);
  return st;
}

cxla_status cx_flags_parse(cxla_context *ctx, cx_flags *f, const char *text) {
  const char *p = text ? text : "";
  for (;;) {
    while (*p && isspace((unsigned char)*p)) p++;
    if (!*p) return CXLA_OK;
    const char *s = p;
    while (*p && !isspace((unsigned char)*p)) p++;
    CX_TRY(set_one(ctx, f, s, (size_t)(p - s)));
  }
}

