/* executable.c — cxla_compile, executables and buffers. Compile verifies the caller's module,
 * clones it and hands the clone to the chosen backend, so the executable never depends on the
 * caller's module again. Execute checks arguments against the ENTRY signature before any
 * backend sees them; the backend's execute is thread safe, and so is everything here that
 * runs per call (it only reads the executable).
 *
 * Compiles are cached per context (cache.c): the key is the verified module's canonical text,
 * the backend and every code-affecting flag, so a repeat compile (cxla_module_run in a loop, a
 * framework re-tracing the same function) gets a new handle on the same compiled core
 * ("cache=hit" in its stats). Handles and cache entries each hold a reference on the core. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/context.h"
#include "core/trace.h"
#include "core/transport.h"
#include "ir/clone.h"
#include "ir/groups.h"
#include "ir/verify.h"
#include "runtime/cache.h"
#include "runtime/executable.h"
#include "text/hlo.h"
#include "util/file.h"
#include "util/fpenv.h"

static void *make_cache(void *arg) {
  (void)arg;
  return cx_cache_create(CX_CACHE_DEFAULT_CAPACITY, cx_exe_core_ref, cx_exe_core_unref);
}

static void destroy_cache(void *p) { cx_cache_destroy(p); }

cx_cache *cx_context_cache(cxla_context *ctx) { return cx_context_slot(ctx, CX_SLOT_CACHE, make_cache, NULL, destroy_cache); }

void cxla_compile_options_init(cxla_compile_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->backend = "interp";
  o->opt_level = -1;
  o->threads = 0;
}

void cx_exe_core_ref(void *p) { atomic_fetch_add(&((cx_exe_core *)p)->refs, 1); }

void cx_exe_core_unref(void *p) {
  cx_exe_core *c = p;
  if (!c || atomic_fetch_sub(&c->refs, 1) != 1) return;
  if (c->backend && c->state) c->backend->destroy(c->state);
  for (int i = 0; i < c->nparams; i++) {
    if (c->param_shapes) cx_shape_free_heap(&c->param_shapes[i]);
    if (c->param_names) cx_free(c->param_names[i]);
  }
  cx_free(c->param_shapes);
  cx_free(c->param_names);
  cx_free(c->donated);
  cx_shape_free_heap(&c->result_shape);
  cx_free(c->name);
  cx_free(c->counts);
  cx_free(c);
}

void cxla_executable_destroy(cxla_executable *e) {
  if (!e) return;
  cx_exe_core_unref(e->core);
  cx_free(e->stats);
  cx_free(e->counts);
  cx_free(e);
}

/* Copies the ENTRY signature of m into c (heap copies: the backend owns m). */
static cxla_status copy_signature(cx_exe_core *c, cx_module *m) {
  cx_comp *en = m->entry;
  c->param_shapes = cx_calloc((size_t)(en->nparams ? en->nparams : 1), sizeof *c->param_shapes);
  c->param_names = cx_calloc((size_t)(en->nparams ? en->nparams : 1), sizeof *c->param_names);
  if (!c->param_shapes || !c->param_names) return cx_oom(c->ctx);
  for (int i = 0; i < en->nparams; i++) {
    if (!cx_shape_copy(&c->param_shapes[i], &en->params[i]->shape, NULL)) return cx_oom(c->ctx);
    c->nparams = i + 1;
    if (!(c->param_names[i] = cx_strdup(en->params[i]->name ? en->params[i]->name : "?"))) return cx_oom(c->ctx);
  }
  if (!cx_shape_copy(&c->result_shape, &en->root->shape, NULL)) return cx_oom(c->ctx);
  if (!(c->name = cx_strdup(m->name ? m->name : "module"))) return cx_oom(c->ctx);
  return CXLA_OK;
}

/* Context flags with the per-compile overrides from opts. */
static cxla_status compile_flags(cxla_context *ctx, const cxla_compile_options *o, cx_flags *f) {
  CX_TRY(cx_flags_copy(ctx, f, &ctx->flags));
  if (o->opt_level >= 0) {
    if (o->opt_level > 3) {
      cx_flags_free(f);
      return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "opt_level %d out of range [0, 3] (-1: from flags)", o->opt_level);
    }
    f->opt_level = o->opt_level;
  }
  if (o->threads < 0) {
    cx_flags_free(f);
    return cx_error(ctx, CXLA_ERR_INVALID_ARGUMENT, "threads %d is negative (0: from flags)", o->threads);
  }
  if (o->threads > 0) f->threads = o->threads;
  f->donate = o->donate;
  f->donate_params = o->donate_params;
  f->ndonate_params = o->num_donate_params;
  f->keep_code = o->keep_code != 0;
  f->code = o->code;
  f->code_len = o->code ? o->code_size : 0;
  return CXLA_OK;
}

/* Marks parameter p donated (named by `what`); a p the ENTRY does not have is an error. */
static cxla_status mark_donated(cx_module *m, cx_flags *f, long long p, const char *what) {
  if (p < 0 || p >= f->ndonated)
    return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "%s names parameter %lld: ENTRY %s has %d", what, p,
                    m->entry ? m->entry->name : "?", f->ndonated);
  f->donated[p] = 1;
  return CXLA_OK;
}

/* Parameters named by the module header's input_output_alias={ {0}: (1, {}, may-alias), ... }
 * (output index: (parameter, its index, kind)) and buffer_donor={ (1, {}), ... } (parameters
 * that may be reused for any result), as XLA prints them. */
static cxla_status header_donations(cx_module *m, cx_flags *f) {
  for (int i = 0; i < m->nraw; i++) {
    int alias = !strcmp(m->raw[i].key, "input_output_alias"), donor = !strcmp(m->raw[i].key, "buffer_donor");
    if ((!alias && !donor) || !m->raw[i].value) continue;
    for (const char *p = strchr(m->raw[i].value, alias ? ':' : '('); p; p = strchr(p + 1, alias ? ':' : '(')) {
      const char *q = alias ? p + 1 : p;
      while (*q == ' ') q++;
      if (*q != '(') continue;
      char *end;
      long long v = strtoll(q + 1, &end, 10);
      if (end != q + 1) CX_TRY(mark_donated(m, f, v, m->raw[i].key));
    }
  }
  return CXLA_OK;
}

/* The donated parameters: the options' mask and list, and the module header's. */
static cxla_status check_donations(cx_module *m, cx_flags *f) {
  int n = m->entry ? m->entry->nparams : 0;
  if (!(f->donated = cx_calloc((size_t)n + 1, 1))) return cx_oom(m->ctx);
  f->ndonated = n;
  for (int p = 0; p < 64; p++)
    if (f->donate >> p & 1) {
      if (p >= n)
        return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "donate: bit %d names no parameter (ENTRY %s has %d)", p,
                        m->entry ? m->entry->name : "?", n);
      f->donated[p] = 1;
    }
  if (f->ndonate_params && !f->donate_params)
    return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "num_donate_params is %d but donate_params is NULL",
                    f->ndonate_params);
  for (int k = 0; k < f->ndonate_params; k++) {
    char what[48];
    snprintf(what, sizeof what, "donate_params[%d]", k);
    CX_TRY(mark_donated(m, f, f->donate_params[k], what));
  }
  return header_donations(m, f);
}

/* The cache key: canonical text of the (verified) module (constants as their bytes), the
 * backend, and every flag that can change what compiles. Returns NULL with an OOM error set. */
static char *cache_key(cx_module *m, const cx_backend *be, const cx_flags *f, size_t *len) {
  cx_sb sb;
  cx_sb_init(&sb);
  cx_print_opts po = cx_print_opts_canonical();
  po.literal_bytes = 1;
  cx_print_module(&sb, m, &po);
  cx_sb_printf(&sb, "\n--backend=%s\n", be->name);
  cx_flags_key(&sb, f);
  cx_sb_puts(&sb, "donate=");
  for (int p = 0; p < f->ndonated; p++)
    if (f->donated[p]) cx_sb_printf(&sb, "%d,", p);
  cx_sb_putc(&sb, '\n');
  *len = sb.len;
  char *k = cx_sb_take(&sb);
  if (!k) cx_oom(m->ctx);
  return k;
}

/* Fills c (verified module, clone handed to the backend); appends phases to stats. */
static cxla_status compile_core(cx_module *m, const cx_backend *be, const cx_flags *flags, cx_exe_core *c,
                                cx_stats *stats, cx_trace *tr) {
  cxla_context *ctx = m->ctx;
  double t1 = cx_now_ms();
  cxla_status s = CXLA_OK;
  cx_module *clone = cx_module_clone(m);
  if (!clone) s = cx_oom(ctx);
  if (s == CXLA_OK && (!clone->entry || !cx_comp_index_params(clone->entry)))
    s = cx_error(ctx, CXLA_ERR_VERIFY, "module %s: ENTRY parameters are not numbered 0..n-1", m->name);
  double t2 = cx_now_ms();
  cx_sb_printf(&stats->times, "clone=%.3f ", t2 - t1);
  cx_trace_add_ms(tr, "clone", "compile", t1, t2);
  if (s == CXLA_OK) s = copy_signature(c, clone);
  if (s == CXLA_OK && !(c->donated = cx_calloc((size_t)c->nparams + 1, 1))) s = cx_oom(ctx);
  for (int p = 0; s == CXLA_OK && p < c->nparams && p < flags->ndonated; p++) c->donated[p] = flags->donated[p];
  if (s == CXLA_OK) {
    c->devices = cx_module_uses_devices(clone);
    cx_module_device_counts(clone, &c->replica_count, &c->num_partitions);
  }
  if (s == CXLA_OK) {
    c->backend = be;
    cx_module_cost(clone, &c->cost); /* before the backend's passes change it */
    size_t before = stats->counts.len;
    s = be->compile(ctx, clone, flags, &c->state, stats); /* takes clone, also on failure */
    clone = NULL;
    double t3 = cx_now_ms();
    char name[64];
    snprintf(name, sizeof name, "backend %s", be->name);
    cx_trace_add_ms(tr, name, "compile", t2, t3);
    if (s == CXLA_OK && !(c->counts = cx_strdup(stats->counts.buf ? stats->counts.buf + before : "")))
      s = cx_oom(ctx);
  }
  cx_module_free(clone);
  return s;
}

static cxla_status compile(cx_module *m, const cxla_compile_options *o, cxla_executable *e) {
  cxla_context *ctx = m->ctx;
  const cx_backend *be;
  CX_TRY(cx_backend_get(ctx, o->backend, &be));
  cx_trace *tr = cx_context_trace(ctx);
  cx_stats stats;
  cx_sb_init(&stats.times);
  cx_sb_init(&stats.counts);
  if (m->parse_ms > 0) cx_sb_printf(&stats.times, "parse=%.3f ", m->parse_ms);
  double t0 = cx_now_ms();
  cx_context_set_activity(ctx, "compiling", m->name);
  cxla_status s = cx_verify_module(m);
  if (s == CXLA_OK && !m->entry)
    s = cx_error(ctx, CXLA_ERR_VERIFY, "module %s has no ENTRY computation", m->name);
  if (s == CXLA_OK && !m->entry->root)
    s = cx_error(ctx, CXLA_ERR_VERIFY, "module %s: ENTRY computation %s has no ROOT", m->name, m->entry->name);
  double t1 = cx_now_ms();
  cx_sb_printf(&stats.times, "verify=%.3f ", t1 - t0);
  cx_trace_add_ms(tr, "verify", "compile", t0, t1);
  cx_flags flags;
  int have_flags = s == CXLA_OK && (s = compile_flags(ctx, o, &flags)) == CXLA_OK;
  if (have_flags) s = check_donations(m, &flags);
  /* Dumps are side effects the caller asked for, so --dump-to always compiles afresh. */
  cx_cache *cache = have_flags && !(flags.dump_to && flags.dump_to[0]) ? cx_context_cache(ctx) : NULL;
  char *key = NULL;
  size_t klen = 0;
  uint64_t hash = 0;
  if (cache || (have_flags && (flags.keep_code || flags.code))) {
    if (!(key = cache_key(m, be, &flags, &klen))) s = CXLA_ERR_OUT_OF_MEMORY;
    flags.compile_key = key; /* the disk cache's key starts with it (backends see it in flags) */
    flags.compile_key_len = klen;
    /* An executable that keeps its code is not one that does not: apart in this cache (the
     * code itself is the same, so the disk cache's key leaves it out). */
    if (key && flags.keep_code) {
      char *k2 = cx_realloc(key, klen + 12);
      if (k2) memcpy(k2 + klen, "keep_code\n", 11), klen += 10;
      else s = cx_oom(ctx);
      key = k2 ? k2 : key;
      flags.compile_key = key;
    }
    if (key) hash = cx_cache_hash(key, klen);
  }
  if (s == CXLA_OK && cache && key && (e->core = cx_cache_lookup(cache, key, klen, hash))) {
    double t2 = cx_now_ms();
    cx_sb_printf(&stats.times, "lookup=%.3f", t2 - t1);
    cx_sb_printf(&stats.counts, "%scache=hit", e->core->counts ? e->core->counts : "");
    cx_trace_add_ms(tr, "cache hit", "compile", t1, t2);
  } else if (s == CXLA_OK) {
    if (cache && key) cx_sb_printf(&stats.times, "lookup=%.3f ", cx_now_ms() - t1);
    cx_exe_core *c = cx_calloc(1, sizeof *c);
    if (!c) s = cx_oom(ctx);
    else {
      atomic_init(&c->refs, 1);
      c->ctx = ctx;
      e->core = c;
      s = compile_core(m, be, &flags, c, &stats, tr);
    }
    /* The cache is best effort: a failed insert only means the next compile is a miss. */
    if (s == CXLA_OK && cache && key) cx_cache_insert(cache, key, klen, hash, c);
    cx_sb_puts(&stats.counts, cache && key ? "cache=miss" : "cache=off");
  }
  if (have_flags) cx_flags_free(&flags);
  cx_free(key);
  double t9 = cx_now_ms();
  char span[160];
  snprintf(span, sizeof span, "compile %s", m->name ? m->name : "module");
  cx_trace_add_ms(tr, span, "compile", t0, t9);
  cx_context_set_activity(ctx, NULL, NULL);
  if (s == CXLA_OK && (!(e->stats = cx_sb_take(&stats.times)) || !(e->counts = cx_sb_take(&stats.counts))))
    s = cx_oom(ctx);
  cx_sb_free(&stats.times);
  cx_sb_free(&stats.counts);
  return s;
}

cxla_status cxla_compile(cxla_module *m, const cxla_compile_options *opts, cxla_executable **out) {
  if (!out) return m ? cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_compile: out is NULL") : CXLA_ERR_INVALID_ARGUMENT;
  *out = NULL;
  if (!m) return CXLA_ERR_INVALID_ARGUMENT;
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  if (opts) o = *opts;
  cxla_executable *e = cx_calloc(1, sizeof *e);
  if (!e) return cx_oom(m->ctx);
  e->ctx = m->ctx;
  unsigned env = cx_fpenv_enter(0); /* folding and code generation are IEEE (util/fpenv.h) */
  cxla_status s = compile(m, &o, e);
  cx_fpenv_leave(env);
  if (s != CXLA_OK) {
    cxla_executable_destroy(e);
    return s;
  }
  *out = e;
  return CXLA_OK;
}

const char *cxla_executable_compile_stats(cxla_executable *e) { return e && e->stats ? e->stats : ""; }
const char *cxla_executable_compile_counts(cxla_executable *e) { return e && e->counts ? e->counts : ""; }

cxla_status cxla_executable_code(cxla_executable *e, const void **bytes, size_t *n) {
  if (!e || !bytes || !n) return e ? cx_error(e->ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_executable_code: NULL argument")
                                   : CXLA_ERR_INVALID_ARGUMENT;
  *bytes = NULL;
  *n = 0;
  const cx_exe_core *c = e->core;
  const unsigned char *b = NULL;
  if (!c->backend->code)
    return cx_error(e->ctx, CXLA_ERR_UNSUPPORTED, "cxla_executable_code: backend %s keeps no machine code", c->backend->name);
  if (!c->backend->code(c->state, &b, n))
    return cx_error(e->ctx, CXLA_ERR_UNSUPPORTED,
                    "cxla_executable_code: module %s was compiled without keep_code (or with --dump-to)", c->name ? c->name : "?");
  *bytes = b;
  return CXLA_OK;
}

cxla_status cxla_executable_cost(cxla_executable *e, cxla_cost *out) {
  if (!e || !out) return e ? cx_error(e->ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_executable_cost: NULL argument")
                           : CXLA_ERR_INVALID_ARGUMENT;
  const cx_exe_core *c = e->core;
  out->flops = c->cost.flops, out->transcendentals = c->cost.transcendentals, out->bytes_accessed = c->cost.bytes;
  const cx_module *run = c->backend->compiled ? c->backend->compiled(c->state) : NULL;
  if (run) {
    cx_cost k;
    cx_module_cost(run, &k);
    out->bytes_accessed = k.bytes;
  }
  return CXLA_OK;
}

cxla_status cxla_executable_footprint(cxla_executable *e, cxla_footprint *out) {
  if (!e || !out) return e ? cx_error(e->ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_executable_footprint: NULL argument")
                           : CXLA_ERR_INVALID_ARGUMENT;
  const cx_exe_core *c = e->core;
  memset(out, 0, sizeof *out);
  for (int p = 0; p < c->nparams; p++) out->argument_bytes += cx_shape_leaves_bytes(&c->param_shapes[p]);
  out->output_bytes = cx_shape_leaves_bytes(&c->result_shape);
  if (c->backend->footprint) c->backend->footprint(c->state, out);
  return CXLA_OK;
}

/* The bytes of an argument's array leaf, for the donation check (donation_overlap). */
typedef struct arg_span {
  uintptr_t lo, hi;
  int arg;
} arg_span;

static int count_spans(const cxla_literal *l) {
  int n = 0;
  if (l->shape.type == CXLA_TUPLE)
    for (int i = 0; i < l->nelems; i++) n += count_spans(l->elems[i]);
  else n = l->data && cx_shape_bytes(&l->shape) > 0;
  return n;
}

static void fill_spans(const cxla_literal *l, int arg, arg_span *s, int *n) {
  if (l->shape.type == CXLA_TUPLE) {
    for (int i = 0; i < l->nelems; i++) fill_spans(l->elems[i], arg, s, n);
    return;
  }
  int64_t bytes = cx_shape_bytes(&l->shape);
  if (l->data && bytes > 0) s[(*n)++] = (arg_span){(uintptr_t)l->data, (uintptr_t)l->data + (uintptr_t)bytes, arg};
}

static int span_order(const void *a, const void *b) {
  uintptr_t x = ((const arg_span *)a)->lo, y = ((const arg_span *)b)->lo;
  return x < y ? -1 : x > y;
}

/* The two furthest ends among the spans swept so far, of two different arguments (arg -1:
 * none), so that a span can ask how far those of the other arguments reach. */
typedef struct reach {
  uintptr_t hi[2];
  int arg[2];
} reach;

static void reach_add(reach *r, const arg_span *s) {
  if (s->arg == r->arg[0]) {
    if (s->hi > r->hi[0]) r->hi[0] = s->hi;
  } else if (s->hi > r->hi[0]) {
    r->hi[1] = r->hi[0], r->arg[1] = r->arg[0];
    r->hi[0] = s->hi, r->arg[0] = s->arg;
  } else if (s->hi > r->hi[1]) r->hi[1] = s->hi, r->arg[1] = s->arg;
}

/* The argument of the furthest-reaching span before s that is not s's argument and overlaps
 * it, or -1. */
static int reach_overlap(const reach *r, const arg_span *s) {
  int k = r->arg[0] == s->arg;
  return r->arg[k] >= 0 && r->hi[k] > s->lo ? r->arg[k] : -1;
}

/* An argument by its buffer, for donated_twice. */
typedef struct arg_ref {
  const cxla_buffer *buf;
  int arg;
} arg_ref;

static int ref_order(const void *a, const void *b) {
  const arg_ref *x = a, *y = b;
  uintptr_t p = (uintptr_t)x->buf, q = (uintptr_t)y->buf;
  return p != q ? (p < q ? -1 : 1) : (x->arg > y->arg) - (x->arg < y->arg);
}

/* Whether a donated buffer is also passed in another position (sorted by buffer: O(n log n)):
 * *donated is the first donated position of such a buffer, *other its first other one. -1 on
 * OOM. */
static int donated_twice(const cx_exe_core *c, int nargs, cxla_buffer *const *args, int *donated, int *other) {
  arg_ref stack[64], *r = nargs <= 64 ? stack : cx_malloc(sizeof *r * (size_t)nargs);
  if (!r) return -1;
  for (int i = 0; i < nargs; i++) r[i] = (arg_ref){args[i], i};
  qsort(r, (size_t)nargs, sizeof *r, ref_order);
  int found = 0;
  for (int a = 0, b; a < nargs && !found; a = b) {
    int d = -1;
    for (b = a; b < nargs && r[b].buf == r[a].buf; b++)
      if (d < 0 && cx_exe_donates(c, r[b].arg)) d = r[b].arg;
    if (d >= 0 && b - a > 1) *donated = d, *other = r[a].arg == d ? r[a + 1].arg : r[a].arg, found = 1;
  }
  if (r != stack) cx_free(r);
  return found;
}

/* Whether a donated argument shares a byte with another argument: *donated and *other name
 * such a pair. The array leaves' spans are sorted by start and swept once (O(n log n): a
 * step of a big model passes thousands of arrays), each span checked against the furthest
 * reach of the earlier spans of other arguments: of all of them when it is donated, else of
 * the donated ones. -1 on OOM. */
static int donation_overlap(const cx_exe_core *c, int nargs, cxla_buffer *const *args, int *donated, int *other) {
  int n = 0;
  for (int i = 0; i < nargs; i++)
    if (args[i]->host) n += count_spans(args[i]->host);
  arg_span stack[64], *s = n <= 64 ? stack : cx_malloc(sizeof *s * (size_t)n);
  if (!s) return -1;
  n = 0;
  for (int i = 0; i < nargs; i++)
    if (args[i]->host) fill_spans(args[i]->host, i, s, &n);
  qsort(s, (size_t)n, sizeof *s, span_order);
  reach all = {{0, 0}, {-1, -1}}, don = all;
  int found = 0;
  for (int k = 0; k < n && !found; k++) {
    int is_donated = cx_exe_donates(c, s[k].arg), j;
    if (is_donated && (j = reach_overlap(&all, &s[k])) >= 0) *donated = s[k].arg, *other = j, found = 1;
    else if ((j = reach_overlap(&don, &s[k])) >= 0) *donated = j, *other = s[k].arg, found = 1;
    reach_add(&all, &s[k]);
    if (is_donated) reach_add(&don, &s[k]);
  }
  if (s != stack) cx_free(s);
  return found;
}

/* The backend's run of e, as one device of the run rep says or of the context's (one device,
 * unless under mpirun). */
static cxla_status run_backend(cxla_executable *e, const cx_replica *rep, int nargs, cxla_literal *const *args,
                               cxla_literal **out) {
  const cx_exe_core *c = e->core;
  if (!c->devices) return c->backend->execute(c->state, e->ctx, nargs, args, out);
  if (!c->backend->execute_on)
    return cx_error(e->ctx, CXLA_ERR_UNSUPPORTED, "backend %s does not run collectives, replica-id or partition-id",
                    c->backend->name);
  cx_replica own = cx_replica_single();
  if (!rep) {
    char why[400];
    CX_TRY(cx_context_transport(e->ctx, &own.tr));
    own.device = own.tr ? own.tr->rank : 0;
    own.timeout_s = e->ctx->flags.collective_timeout;
    if (cx_devices_for(c->replica_count, c->num_partitions, own.tr ? own.tr->size : 1, c->name, &own.dv, why,
                       sizeof why))
      return cx_error(e->ctx, CXLA_ERR_INVALID_ARGUMENT, "%s", why);
    rep = &own;
  }
  int hold = rep == &own && own.tr && own.tr->ops->hold;
  if (hold) own.tr->ops->hold(own.tr, 1);
  cxla_status s = c->backend->execute_on(c->state, e->ctx, rep, nargs, args, out);
  if (hold) own.tr->ops->hold(own.tr, 0);
  if (s != CXLA_OK && own.tr) own.tr->ops->fail(own.tr, cxla_context_errmsg(e->ctx)); /* its peers may wait for it */
  return s;
}

cxla_status cxla_executable_execute(cxla_executable *e, int nargs, cxla_buffer *const *args, cxla_buffer **result) {
  return cx_execute(e, NULL, nargs, args, result);
}

/* The argument checks every execute makes, before any backend sees them. */
static cxla_status check_args(cxla_executable *e, int nargs, cxla_buffer *const *args) {
  const cx_exe_core *c = e->core;
  for (int i = 0; i < nargs; i++) {
    char want[256], got[256];
    if (!args[i])
      return cx_error(e->ctx, CXLA_ERR_INVALID_ARGUMENT, "argument %d (parameter '%s') is NULL", i, c->param_names[i]);
    if (args[i]->donated)
      return cx_error(e->ctx, CXLA_ERR_INVALID_ARGUMENT,
                      "argument %d (parameter '%s') was donated to an earlier execution and holds no value", i,
                      c->param_names[i]);
    if (!args[i]->host && !args[i]->dev)
      return cx_error(e->ctx, CXLA_ERR_INVALID_ARGUMENT,
                      "argument %d (parameter '%s') holds no value (cxla_buffer_untuple moved its elements out)", i,
                      c->param_names[i]);
    if (cx_exe_donates(c, i) && args[i]->wrapped)
      return cx_error(e->ctx, CXLA_ERR_INVALID_ARGUMENT,
                      "argument %d (parameter '%s') is donated, but wraps the caller's memory (cxla_buffer_wrap), "
                      "which cxla cannot give to a result; pass a buffer cxla owns (cxla_buffer_from_data, an "
                      "earlier result)",
                      i, c->param_names[i]);
    const cx_shape *have = cx_buffer_value_shape(args[i]);
    if (!cx_shape_equal(have, &c->param_shapes[i]))
      return cx_error(e->ctx, CXLA_ERR_INVALID_ARGUMENT, "argument %d (parameter '%s'): expected %s, got %s", i,
                      c->param_names[i], cx_shape_str(&c->param_shapes[i], want, sizeof want),
                      cx_shape_str(have, got, sizeof got));
  }
  /* A donated buffer is overwritten: passing it again in another position, or another buffer
   * over its memory (a wrapped view of it), would be read after that. */
  int any = 0;
  for (int i = 0; i < nargs && !any; i++) any = cx_exe_donates(c, i);
  if (!any) return CXLA_OK;
  int d = -1, o = -1, twice = donated_twice(c, nargs, args, &d, &o);
  if (twice < 0) return cx_oom(e->ctx);
  if (twice)
    return cx_error(e->ctx, CXLA_ERR_INVALID_ARGUMENT,
                    "argument %d (parameter '%s') is donated, and the same buffer is also argument %d", d,
                    c->param_names[d], o);
  int overlap = donation_overlap(c, nargs, args, &d, &o);
  if (overlap < 0) return cx_oom(e->ctx);
  if (overlap)
    return cx_error(e->ctx, CXLA_ERR_INVALID_ARGUMENT,
                    "argument %d (parameter '%s') is donated, and argument %d reads the same memory", d,
                    c->param_names[d], o);
  return CXLA_OK;
}

/* A backend with a device: arguments already there are read in place, the others copied in;
 * the result stays there. */
static cxla_status run_on_device(cxla_executable *e, int nargs, cxla_buffer *const *args, cx_dev_value **out) {
  const cx_exe_core *c = e->core;
  const cx_device_mem *mem = c->backend->mem;
  void *device = mem->device_of(c->state);
  cx_dev_arg stack[16], *a = nargs <= 16 ? stack : cx_calloc((size_t)nargs, sizeof *a);
  if (!a) return cx_oom(e->ctx);
  cxla_status s = CXLA_OK;
  for (int i = 0; i < nargs && s == CXLA_OK; i++) {
    a[i] = (cx_dev_arg){0};
    if (args[i]->dev && args[i]->dev->device == device) a[i].dev = args[i]->dev;
    else {
      cxla_literal *l;
      s = cx_buffer_host(args[i], "cxla_executable_execute", &l);
      a[i].host = l;
    }
  }
  if (s == CXLA_OK) s = mem->execute(c->state, e->ctx, nargs, a, out);
  if (a != stack) cx_free(a);
  return s;
}

cxla_status cx_execute(cxla_executable *e, const cx_replica *rep, int nargs, cxla_buffer *const *args,
                       cxla_buffer **result) {
  if (!e) return CXLA_ERR_INVALID_ARGUMENT;
  if (!result) return cx_error(e->ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_executable_execute: result is NULL");
  *result = NULL;
  const cx_exe_core *c = e->core;
  if (nargs != c->nparams)
    return cx_error(e->ctx, CXLA_ERR_INVALID_ARGUMENT, "expected %d argument%s (one per ENTRY parameter), got %d",
                    c->nparams, c->nparams == 1 ? "" : "s", nargs);
  if (nargs && !args) return cx_error(e->ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_executable_execute: args is NULL");
  CX_TRY(check_args(e, nargs, args));
  int on_device = c->backend->mem && !c->devices;
  cxla_literal *stack_lits[16] = {0};
  cxla_literal **lits = on_device ? NULL : nargs <= 16 ? stack_lits : cx_calloc((size_t)nargs, sizeof *lits);
  if (!on_device && !lits) return cx_oom(e->ctx);
  cxla_status s = CXLA_OK;
  for (int i = 0; lits && i < nargs && s == CXLA_OK; i++) s = cx_buffer_host(args[i], "cxla_executable_execute", &lits[i]);
  cxla_literal *out = NULL;
  cx_dev_value *dev_out = NULL;
  if (s == CXLA_OK) {
    cx_trace *tr = cx_context_trace(e->ctx);
    int64_t t0 = tr ? cx_trace_now() : 0;
    cx_context_set_backend(e->ctx, c->backend->name);
    cx_context_set_activity(e->ctx, "running", c->name);
    /* IEEE unless the backend flushes (the cpu's --cpu-flush-denormals), whatever the caller's
     * thread set (util/fpenv.h) */
    unsigned env = cx_fpenv_enter(0);
    s = on_device ? run_on_device(e, nargs, args, &dev_out) : run_backend(e, rep, nargs, lits, &out);
    cx_fpenv_leave(env);
    cx_context_set_activity(e->ctx, NULL, NULL);
    cx_context_set_backend(e->ctx, NULL);
    if (tr) cx_trace_add(tr, c->name, "execute", t0, cx_trace_now(), NULL);
    /* Consumed, also when the execution failed: the program may have written into it. Its
     * literal (now perhaps holding a result's spare block) lives on until the buffer is
     * destroyed, so memory a caller reads in place is never freed under it; its device
     * memory (what the result did not take over) goes back to the device's cache. */
    for (int i = 0; i < nargs; i++)
      if (cx_exe_donates(c, i)) {
        args[i]->donated = 1;
        if (args[i]->dev) args[i]->dev->mem->release(args[i]->dev), args[i]->dev = NULL;
      }
  }
  if (lits != stack_lits) cx_free(lits);
  const cx_shape *got_shape = out ? &out->shape : dev_out ? &dev_out->shape : NULL;
  if (s == CXLA_OK && (!got_shape || !cx_shape_equal(got_shape, &c->result_shape))) {
    char want[256], got[256];
    s = cx_error(e->ctx, CXLA_ERR_INTERNAL, "backend %s returned %s for a result of shape %s", c->backend->name,
                 got_shape ? cx_shape_str(got_shape, got, sizeof got) : "nothing",
                 cx_shape_str(&c->result_shape, want, sizeof want));
  }
  cxla_buffer *buf = s != CXLA_OK ? NULL : dev_out ? cx_buffer_new_dev(e->ctx, c->backend, dev_out)
                                                   : cx_buffer_new(e->ctx, c->backend, out);
  if (s == CXLA_OK && !buf) s = cx_oom(e->ctx);
  if (s != CXLA_OK) {
    cxla_literal_destroy(out);
    if (dev_out) dev_out->mem->release(dev_out);
    return s;
  }
  *result = buf;
  return CXLA_OK;
}

uint64_t cxla_executable_donated_parameters(const cxla_executable *e) {
  uint64_t mask = 0;
  for (int p = 0; e && p < 64; p++) mask |= (uint64_t)cx_exe_donates(e->core, p) << p;
  return mask;
}

int cxla_executable_parameter_donated(const cxla_executable *e, int p) { return e ? cx_exe_donates(e->core, p) : 0; }

cxla_status cxla_module_run(cxla_module *m, const cxla_compile_options *opts, int nargs, cxla_literal *const *args,
                            cxla_literal **result) {
  if (!m || !result) return m ? cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_module_run: result is NULL")
                              : CXLA_ERR_INVALID_ARGUMENT;
  *result = NULL;
  if (nargs < 0 || (nargs && !args))
    return cx_error(m->ctx, CXLA_ERR_INVALID_ARGUMENT, "cxla_module_run: bad argument list");
  cxla_executable *e;
  CX_TRY(cxla_compile(m, opts, &e));
  /* Arguments are only read during execution, so borrowed literals are wrapped in temporary
   * buffers instead of being copied. */
  cxla_buffer *bufs = cx_calloc((size_t)(nargs ? nargs : 1), sizeof *bufs);
  cxla_buffer **ptrs = cx_calloc((size_t)(nargs ? nargs : 1), sizeof *ptrs);
  cxla_status s = bufs && ptrs ? CXLA_OK : cx_oom(m->ctx);
  for (int i = 0; i < nargs && s == CXLA_OK; i++) {
    bufs[i].ctx = m->ctx;
    bufs[i].backend = e->core->backend;
    /* a donated parameter consumes its buffer: it gets a copy of the caller's literal */
    bufs[i].host = cx_exe_donates(e->core, i) && args[i] ? cxla_literal_clone(m->ctx, args[i]) : args[i];
    if (!bufs[i].host && args[i]) s = cx_oom(m->ctx);
    ptrs[i] = args[i] ? &bufs[i] : NULL;
  }
  cxla_buffer *res = NULL;
  if (s == CXLA_OK) s = cxla_executable_execute(e, nargs, ptrs, &res);
  /* The result buffer is ours alone: hand its literal over instead of copying it. */
  if (s == CXLA_OK) s = cx_buffer_take_literal(res, result);
  cxla_buffer_destroy(res);
  /* The copies made for donated parameters: consumed (kept by the buffer until now) or not. */
  for (int i = 0; bufs && i < nargs; i++)
    if (cx_exe_donates(e->core, i)) cxla_literal_destroy(bufs[i].host);
  cx_free(bufs);
  cx_free(ptrs);
  cxla_executable_destroy(e);
  return s;
}
