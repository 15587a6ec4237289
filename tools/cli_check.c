/* cli_check.c — `cxla run --check` and `--check-each`, the reference check of XLA's
 * run_hlo_module --reference_platform: the backend's result is compared leaf by leaf with the
 * interpreter's on the same inputs, and --check-each makes each instruction of ENTRY the
 * result in turn (a copy of the module with that ROOT) to name the first one whose value
 * differs beyond tolerance. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "api/tooling.h"

/* Reference values for --check-each are computed a chunk of instructions at a time (one
 * interpreter run whose ROOT is a tuple of them): one run per instruction would evaluate the
 * module's prefix again and again, and one run for all could hold every intermediate value. */
enum { CHUNK_INSTRS = 32 };
#define CHUNK_BYTES ((int64_t)256 << 20)

static cxla_status (*g_before)(void *user);
static void *g_before_user;

void cli_execute_set_hook(cxla_status (*before)(void *user), void *user) {
  g_before = before;
  g_before_user = user;
}

cxla_status cli_execute(cxla_context *ctx, cxla_module *m, const char *backend, int nargs, cxla_literal *const *args,
                        cxla_literal **out) {
  *out = NULL;
  if (g_before) CX_TRY(g_before(g_before_user)); /* the same infeed values for every run */
  cxla_compile_options o;
  cxla_compile_options_init(&o);
  o.backend = backend;
  cxla_executable *e = NULL;
  cxla_buffer *res = NULL;
  cxla_buffer **bufs = calloc((size_t)(nargs ? nargs : 1), sizeof *bufs);
  if (!bufs) return cx_oom(ctx);
  /* fresh buffers per run: a module that donates its parameters consumes them */
  cxla_status s = cxla_compile(m, &o, &e);
  for (int i = 0; i < nargs && s == CXLA_OK; i++) s = cxla_buffer_from_literal(ctx, backend, args[i], &bufs[i]);
  if (s == CXLA_OK) s = cxla_executable_execute(e, nargs, bufs, &res);
  if (s == CXLA_OK) s = cxla_buffer_to_literal(res, out);
  cxla_buffer_destroy(res);
  for (int i = 0; i < nargs; i++) cxla_buffer_destroy(bufs[i]);
  free(bufs);
  cxla_executable_destroy(e);
  return s;
}

static void put_err(cx_sb *sb, double v) { cx_sb_printf(sb, "%.3g", v); }

/* Compares one leaf; with sb, appends its report line (without a newline). */
static cxla_status diff_leaf(cxla_context *ctx, int index, const char *backend, const cxla_literal *got,
                             const cxla_literal *want, const cxla_literal *allow, const cli_tol *tol, cx_sb *sb,
                             int *bad) {
  cxla_type t = want->shape.type;
  if (t == CXLA_TOKEN || got->shape.type == CXLA_TOKEN) { /* tokens have no value to differ in */
    *bad = t != got->shape.type;
    if (sb) cx_sb_printf(sb, "[%d] token[] %s", index, *bad ? "MISMATCH: not a token on both" : "ok");
    return CXLA_OK;
  }
  double rtol, atol;
  cx_diff_default_tol(t, &rtol, &atol);
  if (cx_type_is_float(t)) {
    if (tol->rtol >= 0) rtol = tol->rtol;
    if (tol->atol >= 0) atol = tol->atol;
  }
  if (!cx_type_is_float(t)) allow = NULL;
  cx_diff d;
  CX_TRY(cx_literal_diff_allow(ctx, got, want, rtol, atol, allow, &d));
  *bad = d.nbad > 0;
  if (!sb) return CXLA_OK;
  char shape[512];
  cx_sb_printf(sb, "[%d] %s %s: max abs err ", index, cx_shape_str(&want->shape, shape, sizeof shape),
               d.nbad ? "MISMATCH" : "ok");
  put_err(sb, d.max_abs);
  cx_sb_puts(sb, ", max rel err ");
  put_err(sb, d.max_rel);
  if (cx_type_is_float(t)) cx_sb_printf(sb, " (rtol %g, atol %g", rtol, atol);
  else cx_sb_puts(sb, " (exact)");
  if (allow) {
    /* bounds that are not finite allow nothing (ir/literal_diff.h): counted apart, so that a
     * leaf whose analysis broke down does not read as one with no error to allow */
    double most = 0;
    int64_t n = cx_shape_elems(&allow->shape), wild = 0;
    for (int64_t i = 0; i < n; i++) {
      double v = ((const double *)allow->data)[i];
      if (isfinite(v)) most = fmax(most, v);
      else wild++;
    }
    if (wild < n) cx_sb_printf(sb, ", plus an error bound of up to %.3g per element", most);
    if (wild) cx_sb_printf(sb, "%s for %lld element%s whose bound is not finite", wild < n ? "; none" : ", no error bound",
                           (long long)wild, wild == 1 ? "" : "s");
  }
  if (cx_type_is_float(t)) cx_sb_putc(sb, ')');
  int64_t at = d.nbad ? d.first_bad : d.first_diff;
  if (at >= 0) {
    if (d.nbad)
      cx_sb_printf(sb, "; %lld of %lld elements beyond tolerance, first at ", (long long)d.nbad, (long long)d.n);
    else
      cx_sb_printf(sb, "; %lld of %lld elements differ, first at ", (long long)d.ndiff, (long long)d.n);
    cx_diff_index(sb, &want->shape, at);
    cx_sb_printf(sb, ": %s ", backend);
    cx_literal_print_elem(sb, got, at);
    cx_sb_puts(sb, ", interp ");
    cx_literal_print_elem(sb, want, at);
  }
  return CXLA_OK;
}

/* Compares every leaf of got with want's, each within its allowance (a tuple of f64 leaves
 * like want's, or NULL); with `indent`, prints one line per leaf. Sets *nleaves and *nbad
 * (leaves beyond tolerance). */
static cxla_status diff_leaves(cxla_context *ctx, const char *backend, cxla_literal *got, cxla_literal *want,
                               cxla_literal *allow, const cli_tol *tol, const char *indent, int *nleaves, int *nbad) {
  int n = cli_leaves(want, NULL, 0), ng = cli_leaves(got, NULL, 0);
  *nleaves = n;
  *nbad = 0;
  if (n != ng) return cx_error(ctx, CXLA_ERR_INTERNAL, "%s returned %d result leaves, interp %d", backend, ng, n);
  if (allow && cli_leaves(allow, NULL, 0) != n)
    return cx_error(ctx, CXLA_ERR_INTERNAL, "the error bound has %d leaves for %d results", cli_leaves(allow, NULL, 0), n);
  cxla_literal **w = calloc((size_t)(3 * n + 1), sizeof *w);
  if (!w) return cx_oom(ctx);
  cxla_literal **g = w + n, **al = w + 2 * n;
  cli_leaves(want, w, n);
  cli_leaves(got, g, n);
  if (allow) cli_leaves(allow, al, n);
  cxla_status s = CXLA_OK;
  for (int i = 0; i < n && s == CXLA_OK; i++) {
    cx_sb line;
    cx_sb_init(&line);
    int bad = 0;
    s = diff_leaf(ctx, i, backend, g[i], w[i], allow ? al[i] : NULL, tol, indent ? &line : NULL, &bad);
    if (s == CXLA_OK && line.oom) s = cx_oom(ctx);
    if (s == CXLA_OK && indent) printf("%s%s\n", indent, line.buf);
    *nbad += bad;
    cx_sb_free(&line);
  }
  free(w);
  return s;
}

/* The error bound of every result leaf (passes/error_bound.h): the interpreter runs m's analysis
 * on the same inputs. NULL, after saying why, when it cannot. */
static cxla_literal *error_bound(cxla_context *ctx, cxla_module *m, int nargs, cxla_literal *const *args) {
  cx_module *bm = cx_module_error_bound(m);
  cxla_literal *pair = NULL, *allow = NULL;
  if (bm && cli_execute(ctx, bm, "interp", nargs, args, &pair) == CXLA_OK && cxla_literal_tuple_size(pair) == 2)
    allow = cxla_literal_clone(ctx, cxla_literal_tuple_get(pair, 1));
  if (!allow) printf("check: no error bound (%s); fixed tolerances only\n", cxla_context_errmsg(ctx));
  cxla_literal_destroy(pair);
  if (bm) cx_module_free(bm);
  return allow;
}

int cli_check(cxla_context *ctx, cxla_module *m, int nargs, cxla_literal *const *args, const char *backend,
              cxla_literal *got, cxla_literal *want, const cli_tol *tol, int bounds, int *nleaves) {
  int nbad = 0;
  cxla_literal *allow = NULL;
  /* Only a result beyond the fixed tolerance pays for the analysis (a second interpreter run
   * about twice as long as the first). */
  if (bounds && diff_leaves(ctx, backend, got, want, NULL, tol, NULL, nleaves, &nbad) == CXLA_OK && nbad)
    allow = error_bound(ctx, m, nargs, args);
  if (diff_leaves(ctx, backend, got, want, allow, tol, "", nleaves, &nbad) != CXLA_OK) {
    cxla_literal_destroy(allow);
    cli_lib_error(ctx);
    return -1;
  }
  const char *how = allow ? " and the error bounds of docs/numerics.md" : "";
  if (nbad)
    printf("check: MISMATCH: %d of %d result lea%s differ%s from interp beyond tolerance%s\n", nbad, *nleaves,
           *nleaves == 1 ? "f" : "ves", nbad == 1 ? "s" : "", how);
  else
    printf("check: ok: %s %d result lea%s match%s interp within tolerance%s\n", *nleaves == 1 ? "the" : "all",
           *nleaves, *nleaves == 1 ? "f" : "ves", *nleaves == 1 ? "es" : "", how);
  cxla_literal_destroy(allow);
  return nbad;
}

/* ---- --check-each ---------------------------------------------------------------------------- */

static int has_token(const cx_shape *s) {
  if (s->type == CXLA_TOKEN) return 1;
  for (int i = 0; s->type == CXLA_TUPLE && i < s->ntuple; i++)
    if (has_token(&s->tuple[i])) return 1;
  return 0;
}

static int64_t value_bytes(const cx_shape *s) {
  if (s->type != CXLA_TUPLE) return cx_shape_bytes(s) < 0 ? CHUNK_BYTES : cx_shape_bytes(s);
  int64_t b = 0;
  for (int i = 0; i < s->ntuple; i++) b += value_bytes(&s->tuple[i]);
  return b;
}

/* The instructions worth compiling as the ROOT, in program order: what the ROOT uses (the
 * rest cannot change the result), less parameters and constants (inputs: both backends get
 * the same) and tuple / get-tuple-element (their values are other instructions'). */
static int candidates(cx_comp *e, cx_instr ***out) {
  int n = e->ninstrs, maxid = 0;
  for (int i = 0; i < n; i++) maxid = e->instrs[i]->id > maxid ? e->instrs[i]->id : maxid;
  int *pos = malloc(sizeof *pos * ((size_t)maxid + 1));
  uint8_t *live = calloc((size_t)n + 1, 1);
  *out = malloc(sizeof **out * ((size_t)n + 1));
  if (!pos || !live || !*out) {
    free(pos);
    free(live);
    free(*out);
    *out = NULL;
    return -1;
  }
  for (int i = 0; i < n; i++) pos[e->instrs[i]->id] = i;
  for (int i = n - 1; i >= 0; i--) {
    cx_instr *in = e->instrs[i];
    live[i] |= in == e->root;
    for (int k = 0; live[i] && k < in->nops; k++)
      if (in->ops[k]->parent == e) live[pos[in->ops[k]->id]] = 1;
  }
  int k = 0;
  for (int i = 0; i < n; i++) {
    cx_instr *in = e->instrs[i];
    if (!live[i] || in == e->root || has_token(&in->shape)) continue;
    if (in->op == CX_OP_PARAMETER || in->op == CX_OP_CONSTANT || in->op == CX_OP_TUPLE ||
        in->op == CX_OP_GET_TUPLE_ELEMENT)
      continue;
    (*out)[k++] = in;
  }
  free(pos);
  free(live);
  return k;
}

/* "r = f32[] reduce(e, zero), red.hlo:13" */
static void describe(cx_sb *sb, const cx_module *m, const cx_instr *in) {
  char shape[512];
  cx_sb_printf(sb, "%s = %s %s(", in->name ? in->name : "?", cx_shape_str(&in->shape, shape, sizeof shape),
               cx_op_name(in->op));
  for (int k = 0; k < in->nops; k++) cx_sb_printf(sb, "%s%s", k ? ", " : "", in->ops[k]->name ? in->ops[k]->name : "?");
  cx_sb_putc(sb, ')');
  if (in->loc.line > 0) cx_sb_printf(sb, ", %s:%d", m->filename ? m->filename : "?", in->loc.line);
}

/* The interpreter's values of cand[lo..*hi) (*hi chosen here): a tuple of them, or the one
 * value when the chunk has one instruction. */
static cxla_status reference_chunk(cxla_context *ctx, cx_module *m, cx_instr **cand, int ncand, int lo, int *hi,
                                   int nargs, cxla_literal *const *args, cxla_literal **ref) {
  int ids[CHUNK_INSTRS];
  int64_t bytes = 0;
  int n = 0;
  while (lo + n < ncand && n < CHUNK_INSTRS && (n == 0 || bytes + value_bytes(&cand[lo + n]->shape) <= CHUNK_BYTES)) {
    bytes += value_bytes(&cand[lo + n]->shape);
    ids[n] = cand[lo + n]->id;
    n++;
  }
  *hi = lo + n;
  cx_module *c = cx_module_clone_rooted(m, ids, n);
  if (!c) return CXLA_ERR_INVALID_ARGUMENT; /* the message is set */
  cxla_status s = cli_execute(ctx, c, "interp", nargs, args, ref);
  cx_module_free(c);
  return s;
}

int cli_check_each(cxla_context *ctx, cxla_module *mod, const char *backend, int nargs, cxla_literal *const *args,
                   const cli_tol *tol, int bounds, int root_differs, char *first, size_t nfirst) {
  cx_module *m = mod;
  cx_instr **cand = NULL;
  int ncand = candidates(m->entry, &cand);
  if (ncand < 0) return cli_error("out of memory");
  printf("check-each: comparing %d instruction%s of ENTRY with interp, each compiled for %s as the ROOT\n", ncand,
         ncand == 1 ? "" : "s", backend);
  fflush(stdout);
  cxla_literal *ref = NULL, *got = NULL, *allow = NULL;
  int lo = 0, hi = 0, found = -1, rc = CLI_OK;
  cx_sb sb;
  cx_sb_init(&sb);
  for (int k = 0; k < ncand && found < 0 && rc == CLI_OK; k++) {
    if (k >= hi) {
      cxla_literal_destroy(ref);
      ref = NULL;
      lo = k;
      if (reference_chunk(ctx, m, cand, ncand, lo, &hi, nargs, args, &ref) != CXLA_OK) {
        rc = cli_lib_error(ctx);
        break;
      }
    }
    cxla_literal *want = hi - lo > 1 ? cxla_literal_tuple_get(ref, k - lo) : ref;
    cx_module *c = cx_module_clone_rooted(m, &cand[k]->id, 1);
    cxla_status s = c ? cli_execute(ctx, c, backend, nargs, args, &got) : CXLA_ERR_INVALID_ARGUMENT;
    int nleaves = 0, nbad = 0;
    if (s == CXLA_OK) s = diff_leaves(ctx, backend, got, want, NULL, tol, NULL, &nleaves, &nbad);
    /* judged as --check judges the ROOT: beyond the fixed tolerance, again within the error
     * bound of this instruction's value (else a correct dot whose sum cancels is named) */
    if (s == CXLA_OK && nbad && bounds) {
      allow = error_bound(ctx, c, nargs, args);
      if (allow) s = diff_leaves(ctx, backend, got, want, allow, tol, NULL, &nleaves, &nbad);
    }
    cx_module_free(c);
    if (s != CXLA_OK) {
      describe(&sb, m, cand[k]);
      rc = cli_error("check-each: %s: %s", sb.buf ? sb.buf : "?", cxla_context_errmsg(ctx));
    } else if (nbad) {
      found = k;
      describe(&sb, m, cand[k]);
      printf("check-each: first instruction beyond tolerance (%d of %d): %s\n", k + 1, ncand, sb.buf ? sb.buf : "?");
      s = diff_leaves(ctx, backend, got, want, allow, tol, "  ", &nleaves, &nbad);
      if (s != CXLA_OK) rc = cli_lib_error(ctx);
    }
    cxla_literal_destroy(got);
    cxla_literal_destroy(allow);
    got = allow = NULL;
  }
  if (rc == CLI_OK && found < 0) {
    if (root_differs) {
      describe(&sb, m, m->entry->root);
      printf("check-each: every instruction before the ROOT matches; the first that differs is the ROOT: %s\n",
             sb.buf ? sb.buf : "?");
    } else {
      printf("check-each: all %d instruction%s match interp within tolerance\n", ncand, ncand == 1 ? "" : "s");
    }
  }
  if (rc == CLI_OK && (found >= 0 || root_differs))
    snprintf(first, nfirst, "%s", found >= 0 ? cand[found]->name : m->entry->root->name);
  else if (nfirst)
    first[0] = 0;
  cx_sb_free(&sb);
  cxla_literal_destroy(ref);
  free(cand);
  return rc;
}
