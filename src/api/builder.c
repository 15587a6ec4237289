/* builder.c — the builder's lifecycle, sticky errors, operand handles, and the elementwise,
 * parameter and constant ops. Every op goes through cx_b_new + cx_b_done, so each result
 * shape comes from the verifier's cx_infer_shape and each shape error is the verifier's
 * message, prefixed with "builder NAME: ". */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include "api/api.h"
#include "ir/verify.h"
#include "util/fpenv.h"

static _Atomic int32_t next_tag;

/* ---- errors ---------------------------------------------------------------------------------- */

static cxla_op vfail(cxla_builder *b, const char *op, cxla_status code, const char *fmt, va_list ap) {
  cxla_op none = {0};
  if (b->status != CXLA_OK) return none;
  char msg[1600];
  vsnprintf(msg, sizeof msg, fmt, ap);
  b->status = code;
  cx_sb sb;
  cx_sb_init(&sb);
  cx_sb_printf(&sb, "builder %s: %s%s%s", b->name ? b->name : "?", op ? op : "", op ? ": " : "", msg);
  b->msg = cx_sb_take(&sb); /* NULL on OOM: the context still gets the text below */
  cx_error(b->m->ctx, code, "builder %s: %s%s%s", b->name ? b->name : "?", op ? op : "", op ? ": " : "", msg);
  return none;
}

cxla_op cx_b_fail(cxla_builder *b, const char *op, cxla_status code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cxla_op r = vfail(b, op, code, fmt, ap);
  va_end(ap);
  return r;
}

int cx_b_ok(cxla_builder *b) { return b && b->status == CXLA_OK; }

/* Re-words a verifier message for the builder: instructions built here have no source
 * location, so the verifier writes "FILENAME: error: <op> <name>: <what>" (or "<op>: <what>");
 * keep "<what>" and prefix "builder NAME: <op>: ". `in` is the failed instruction, if any. */
static cxla_op fail_from_ctx(cxla_builder *b, const char *op, const cx_instr *in, cxla_status code) {
  const char *msg = cxla_context_errmsg(b->m->ctx);
  const char *e = strstr(msg, ": error: ");
  const char *rest = e ? e + 9 : msg;
  size_t n = strlen(op);
  if (!strncmp(rest, op, n)) {
    const char *p = rest + n;
    if (in && in->name && *p == ' ' && !strncmp(p + 1, in->name, strlen(in->name))) p += 1 + strlen(in->name);
    if (p[0] == ':' && p[1] == ' ') rest = p + 2;
  }
  return cx_b_fail(b, op, code, "%s", rest);
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

cxla_builder *cxla_builder_create(cxla_module *m, const char *name) {
  if (!m) return NULL;
  cxla_builder *b = cx_calloc(1, sizeof *b);
  if (!b) { cx_oom(m->ctx); return NULL; }
  b->m = m;
  b->tag = (int32_t)(atomic_fetch_add(&next_tag, 1) % 1023) + 1;
  const char *cname = name ? name : cx_module_unique_name(m, "computation");
  b->name = cname ? cx_strdup(cname) : NULL;
  b->c = b->name ? cx_comp_new(m, b->name) : NULL;
  if (!b->c) {
    cx_free(b->name);
    cx_free(b);
    cx_oom(m->ctx);
    return NULL;
  }
  /* Bad names stick as the builder's first error, like any other builder error. */
  if (!cx_api_valid_name(b->name))
    cx_b_fail(b, NULL, CXLA_ERR_INVALID_ARGUMENT, "'%s' is not a valid computation name", b->name);
  else if (cx_module_find_comp(m, b->name))
    cx_b_fail(b, NULL, CXLA_ERR_INVALID_ARGUMENT, "module %s already has a computation named %s", m->name, b->name);
  return b;
}

void cxla_builder_destroy(cxla_builder *b) {
  if (!b) return;
  /* The computation's memory belongs to the module arena and goes with the module. */
  cx_free(b->name);
  cx_free(b->msg);
  cx_free(b);
}

cxla_status cxla_builder_status(cxla_builder *b) {
  if (!b) return CXLA_ERR_INVALID_ARGUMENT;
  if (b->status != CXLA_OK && b->msg) cx_error(b->m->ctx, b->status, "%s", b->msg);
  return b->status;
}

static cxla_status finish(cxla_builder *b, cxla_op root, int is_entry, cxla_computation **out) {
  if (b->status != CXLA_OK) return cxla_builder_status(b);
  cx_module *m = b->m;
  cx_comp *c = b->c;
  if (root.id <= 0) {
    cx_b_fail(b, "finish", CXLA_ERR_INVALID_ARGUMENT, "the root is the invalid op (the result of a failed call?)");
    return cxla_builder_status(b);
  }
  cx_instr *r = cx_b_get(b, root, "finish", 0);
  if (!r) return cxla_builder_status(b);
  if (is_entry && m->entry) {
    cx_b_fail(b, "finish", CXLA_ERR_INVALID_ARGUMENT, "module %s already has an ENTRY computation (%s)", m->name,
              m->entry->name);
    return cxla_builder_status(b);
  }
  if (cx_module_find_comp(m, c->name)) {
    cx_b_fail(b, "finish", CXLA_ERR_INVALID_ARGUMENT, "module %s already has a computation named %s", m->name, c->name);
    return cxla_builder_status(b);
  }
  c->root = r;
  c->is_entry = is_entry != 0;
  if (!cx_comp_index_params(c)) {
    if (c->nparams && !c->params) cx_b_fail(b, "finish", CXLA_ERR_OUT_OF_MEMORY, "out of memory");
    else cx_b_fail(b, "finish", CXLA_ERR_VERIFY, "parameter numbers must be 0..%d, each used once", c->nparams - 1);
    return cxla_builder_status(b);
  }
  cxla_status vs = cx_verify_comp(c);
  if (vs != CXLA_OK) {
    fail_from_ctx(b, "finish", NULL, vs);
    return cxla_builder_status(b);
  }
  if (!cx_module_add_comp(m, c)) {
    cx_b_fail(b, "finish", CXLA_ERR_OUT_OF_MEMORY, "out of memory");
    return cxla_builder_status(b);
  }
  if (out) *out = c;
  return CXLA_OK;
}

cxla_status cxla_builder_finish(cxla_builder *b, cxla_op root, int is_entry, cxla_computation **out) {
  if (out) *out = NULL;
  if (!b) return CXLA_ERR_INVALID_ARGUMENT;
  cxla_status s = finish(b, root, is_entry, out);
  cxla_builder_destroy(b);
  return s;
}

/* ---- operands and instruction creation ---------------------------------------------------- */

cx_instr *cx_b_get(cxla_builder *b, cxla_op x, const char *op, int i) {
  if (!cx_b_ok(b)) return NULL;
  if (x.id <= 0) {
    cx_b_fail(b, op, CXLA_ERR_INVALID_ARGUMENT, "operand %d is the invalid op (the result of a failed call?)", i);
    return NULL;
  }
  int32_t tag = x.id >> CX_OP_INDEX_BITS, index = (x.id & CX_OP_INDEX_MASK) - 1;
  if (tag != b->tag) {
    cx_b_fail(b, op, CXLA_ERR_INVALID_ARGUMENT, "operand %d belongs to another builder", i);
    return NULL;
  }
  if (index < 0 || index >= b->c->ninstrs) {
    cx_b_fail(b, op, CXLA_ERR_INVALID_ARGUMENT, "operand %d is not an op of this builder (id %d)", i, (int)x.id);
    return NULL;
  }
  return b->c->instrs[index];
}

int cx_b_get_n(cxla_builder *b, int n, const cxla_op *xs, cx_instr **ins, const char *op, int first) {
  if (!cx_b_ok(b)) return 0;
  if (n < 0) { cx_b_fail(b, op, CXLA_ERR_INVALID_ARGUMENT, "negative operand count %d", n); return 0; }
  if (n && !xs) { cx_b_fail(b, op, CXLA_ERR_INVALID_ARGUMENT, "operand array is NULL"); return 0; }
  for (int i = 0; i < n; i++)
    if (!(ins[i] = cx_b_get(b, xs[i], op, first + i))) return 0;
  return 1;
}

int cx_b_check_comp(cxla_builder *b, cxla_computation *c, const char *op, const char *role) {
  if (!cx_b_ok(b)) return 0;
  if (!c) { cx_b_fail(b, op, CXLA_ERR_INVALID_ARGUMENT, "%s computation is NULL", role); return 0; }
  if (c->module != b->m) {
    cx_b_fail(b, op, CXLA_ERR_INVALID_ARGUMENT, "%s computation %s belongs to another module", role, c->name);
    return 0;
  }
  if (cx_module_comp_index(b->m, c) < 0) {
    cx_b_fail(b, op, CXLA_ERR_INVALID_ARGUMENT, "%s computation %s is not finished", role, c->name);
    return 0;
  }
  return 1;
}

cx_instr *cx_b_new(cxla_builder *b, cx_op op, int nops, cx_instr *const *ops, const cx_shape *declared) {
  if (!cx_b_ok(b)) return NULL;
  if (b->c->ninstrs >= CX_OP_INDEX_MASK - 1) {
    cx_b_fail(b, cx_op_name(op), CXLA_ERR_UNSUPPORTED, "more than %d ops in one builder", CX_OP_INDEX_MASK - 2);
    return NULL;
  }
  cx_shape placeholder;
  memset(&placeholder, 0, sizeof placeholder); /* CXLA_INVALID: inference must replace it */
  cx_instr *in = cx_instr_new(b->c, op, declared ? declared : &placeholder, nops, ops);
  if (!in) cx_b_fail(b, cx_op_name(op), CXLA_ERR_OUT_OF_MEMORY, "out of memory");
  return in;
}

static void drop(cxla_builder *b, cx_instr *in) {
  if (b->c->ninstrs && b->c->instrs[b->c->ninstrs - 1] == in) b->c->ninstrs--;
}

cxla_op cx_b_oom(cxla_builder *b, cx_instr *in) {
  drop(b, in);
  return cx_b_fail(b, cx_op_name(in->op), CXLA_ERR_OUT_OF_MEMORY, "out of memory");
}

int cx_b_ints(cxla_builder *b, cx_instr *in, cx_ints *dst, int n, const int64_t *v) {
  if (n > 0 && !v) {
    drop(b, in);
    cx_b_fail(b, cx_op_name(in->op), CXLA_ERR_INVALID_ARGUMENT, "an array argument of %d entries is NULL", n);
    return 0;
  }
  if (!cx_ints_set(b->m, dst, n, v)) { cx_b_oom(b, in); return 0; }
  return 1;
}

int cx_b_window(cxla_builder *b, cx_instr *in, int rank, const cxla_window_dim *w) {
  if (rank && !w) {
    drop(b, in);
    cx_b_fail(b, cx_op_name(in->op), CXLA_ERR_INVALID_ARGUMENT, "window is NULL");
    return 0;
  }
  in->a.window.rank = rank;
  if (!rank) return 1;
  cx_window_dim *d = cx_arena_alloc(&b->m->arena, sizeof *d * (size_t)rank);
  if (!d) { cx_b_oom(b, in); return 0; }
  for (int i = 0; i < rank; i++) {
    d[i].size = w[i].size;
    d[i].stride = w[i].stride ? w[i].stride : 1;
    d[i].pad_lo = w[i].pad_lo;
    d[i].pad_hi = w[i].pad_hi;
    d[i].lhs_dilate = w[i].lhs_dilate ? w[i].lhs_dilate : 1;
    d[i].rhs_dilate = w[i].rhs_dilate ? w[i].rhs_dilate : 1;
    d[i].reversal = w[i].reversal != 0;
  }
  in->a.window.d = d;
  return 1;
}

cxla_op cx_b_done(cxla_builder *b, cx_instr *in) {
  cxla_op none = {0};
  if (!in->name) {
    const char *name = cx_module_unique_name(b->m, cx_op_name(in->op));
    if (!name) return cx_b_oom(b, in);
    in->name = name;
  }
  cx_shape shape;
  cxla_status s = cx_infer_shape(in, &shape);
  if (s != CXLA_OK) {
    drop(b, in);
    fail_from_ctx(b, cx_op_name(in->op), in, s);
    return none;
  }
  in->shape = shape;
  cxla_op r = {(int32_t)((b->tag << CX_OP_INDEX_BITS) | b->c->ninstrs)};
  return r;
}

cxla_status cxla_builder_get_shape(cxla_builder *b, cxla_op x, cxla_shape *out) {
  if (!b || !out) return CXLA_ERR_INVALID_ARGUMENT;
  int32_t tag = x.id >> CX_OP_INDEX_BITS, index = (x.id & CX_OP_INDEX_MASK) - 1;
  if (x.id <= 0 || tag != b->tag || index < 0 || index >= b->c->ninstrs)
    return cx_error(b->m->ctx, CXLA_ERR_INVALID_ARGUMENT, "builder %s: get_shape: op %d is not an op of this builder",
                    b->name, (int)x.id);
  cx_shape_to_public(&b->c->instrs[index]->shape, out, &b->m->arena);
  return CXLA_OK;
}

/* ---- parameters and constants -------------------------------------------------------------- */

static int name_taken(cx_module *m, cx_comp *c, const char *name) {
  for (int i = 0; i < c->ninstrs; i++)
    if (c->instrs[i]->name && !strcmp(c->instrs[i]->name, name)) return 1;
  for (int k = 0; k < m->ncomps; k++)
    for (int i = 0; i < m->comps[k]->ninstrs; i++)
      if (m->comps[k]->instrs[i]->name && !strcmp(m->comps[k]->instrs[i]->name, name)) return 1;
  return 0;
}

/* cx_shape_from_public trusts its input; a caller's shape may have NULL arrays or absurd
 * nesting, so check it first. */
static int public_shape_ok(const cxla_shape *s, int depth) {
  if (depth > 64) return 0;
  if (s->type == CXLA_TUPLE) {
    if (s->ntuple < 0 || (s->ntuple && !s->elems)) return 0;
    for (int i = 0; i < s->ntuple; i++)
      if (!public_shape_ok(&s->elems[i], depth + 1)) return 0;
    return 1;
  }
  return s->rank >= 0 && s->rank <= CXLA_MAX_RANK && (!s->rank || s->dims);
}

cxla_op cxla_builder_parameter(cxla_builder *b, int64_t number, const cxla_shape *shape, const char *name) {
  cxla_op none = {0};
  if (!cx_b_ok(b)) return none;
  if (!shape) return cx_b_fail(b, "parameter", CXLA_ERR_INVALID_ARGUMENT, "shape is NULL");
  if (number < 0 || number > INT32_MAX)
    return cx_b_fail(b, "parameter", CXLA_ERR_INVALID_ARGUMENT, "parameter number %lld out of range", (long long)number);
  if (name && !cx_api_valid_name(name))
    return cx_b_fail(b, "parameter", CXLA_ERR_INVALID_ARGUMENT, "'%s' is not a valid HLO name", name);
  if (name && name_taken(b->m, b->c, name))
    return cx_b_fail(b, "parameter", CXLA_ERR_INVALID_ARGUMENT, "name '%s' is already used", name);
  cx_shape s;
  if (!public_shape_ok(shape, 0))
    return cx_b_fail(b, "parameter", CXLA_ERR_INVALID_ARGUMENT, "bad shape (rank out of [0, %d], NULL dims, "
                     "NULL or negative tuple elements)", CXLA_MAX_RANK);
  if (!cx_shape_from_public(&s, shape, &b->m->arena))
    return cx_b_fail(b, "parameter", CXLA_ERR_OUT_OF_MEMORY, "out of memory");
  cx_instr *in = cx_b_new(b, CX_OP_PARAMETER, 0, NULL, &s);
  if (!in) return none;
  in->a.index = number;
  char prefix[40];
  snprintf(prefix, sizeof prefix, "Arg_%lld", (long long)number);
  in->name = name ? cx_arena_strdup(&b->m->arena, name) : cx_module_unique_name(b->m, prefix);
  if (!in->name) return cx_b_oom(b, in);
  return cx_b_done(b, in);
}

cxla_op cxla_builder_constant(cxla_builder *b, const cxla_literal *lit) {
  cxla_op none = {0};
  if (!cx_b_ok(b)) return none;
  if (!lit) return cx_b_fail(b, "constant", CXLA_ERR_INVALID_ARGUMENT, "literal is NULL");
  cx_instr *in = cx_b_new(b, CX_OP_CONSTANT, 0, NULL, &lit->shape);
  if (!in) return none;
  cxla_literal *copy = cxla_literal_clone(b->m->ctx, lit);
  if (!copy || !cx_module_own_literal(b->m, copy)) return cx_b_oom(b, in);
  in->a.literal = copy;
  return cx_b_done(b, in);
}

cxla_op cxla_builder_constant_scalar(cxla_builder *b, cxla_type type, double value) {
  cxla_op none = {0};
  if (!cx_b_ok(b)) return none;
  if (!cx_type_is_array(type))
    return cx_b_fail(b, "constant", CXLA_ERR_INVALID_ARGUMENT, "type %d is not an array element type", (int)type);
  cxla_literal *lit = cxla_literal_create(b->m->ctx, type, 0, NULL);
  if (!lit) return cx_b_fail(b, "constant", CXLA_ERR_OUT_OF_MEMORY, "out of memory");
  unsigned env = cx_fpenv_enter(0); /* a denormal value stays one (util/fpenv.h) */
  cxla_literal_set_f64(lit, 0, value);
  cx_fpenv_leave(env);
  cxla_op r = cxla_builder_constant(b, lit);
  cxla_literal_destroy(lit);
  return r;
}

/* ---- elementwise ------------------------------------------------------------------------------ */

cxla_op cx_b_elementwise(cxla_builder *b, cx_op op, int n, const cxla_op *xs) {
  cxla_op none = {0};
  cx_instr *ops[3];
  if (!cx_b_ok(b)) return none;
  if (!cx_op_is_elementwise(op) || cx_op_arity(op) != n)
    return cx_b_fail(b, cx_op_name(op), CXLA_ERR_INTERNAL, "not an elementwise op of arity %d", n);
  if (!cx_b_get_n(b, n, xs, ops, cx_op_name(op), 0)) return none;
  cx_instr *in = cx_b_new(b, op, n, ops, NULL);
  return in ? cx_b_done(b, in) : none;
}

/* Elementwise ops that need attributes have their own calls. */
static const char *const k_own_call[CX_OP_COUNT] = {
  [CX_OP_COMPARE] = "cxla_builder_compare", [CX_OP_CONVERT] = "cxla_builder_convert",
  [CX_OP_BITCAST_CONVERT] = "cxla_builder_bitcast_convert",
  [CX_OP_REDUCE_PRECISION] = "cxla_builder_reduce_precision",
};

static cxla_op by_name(cxla_builder *b, const char *opname, int n, const cxla_op *xs) {
  cxla_op none = {0};
  if (!cx_b_ok(b)) return none;
  const char *call = n == 1 ? "unary" : "binary";
  if (!opname) return cx_b_fail(b, call, CXLA_ERR_INVALID_ARGUMENT, "op name is NULL");
  int op = cx_op_lookup(opname, (int)strlen(opname));
  if (op < 0) return cx_b_fail(b, call, CXLA_ERR_INVALID_ARGUMENT, "unknown op '%s'", opname);
  if (!cx_op_is_elementwise((cx_op)op))
    return cx_b_fail(b, call, CXLA_ERR_INVALID_ARGUMENT, "'%s' is not an elementwise op", opname);
  if (cx_op_arity((cx_op)op) != n)
    return cx_b_fail(b, call, CXLA_ERR_INVALID_ARGUMENT, "'%s' takes %d operands, not %d", opname,
                     cx_op_arity((cx_op)op), n);
  const char *own = k_own_call[op];
  if (own) return cx_b_fail(b, call, CXLA_ERR_INVALID_ARGUMENT, "'%s' needs attributes: use %s", opname, own);
  return cx_b_elementwise(b, (cx_op)op, n, xs);
}

cxla_op cxla_builder_unary(cxla_builder *b, const char *opname, cxla_op x) { return by_name(b, opname, 1, &x); }
cxla_op cxla_builder_binary(cxla_builder *b, const char *opname, cxla_op x, cxla_op y) {
  cxla_op xs[2] = {x, y};
  return by_name(b, opname, 2, xs);
}

/* The named wrappers: public name -> ops.def entry. */
#define CX_BUILDER_UNARY(X)                                                                      \
  X(abs, ABS) X(negate, NEGATE) X(sign, SIGN) X(exp, EXP) X(expm1, EXPM1) X(log, LOG)            \
  X(log1p, LOG1P) X(logistic, LOGISTIC) X(sqrt, SQRT) X(rsqrt, RSQRT) X(cbrt, CBRT) X(sin, SIN)  \
  X(cos, COS) X(tan, TAN) X(tanh, TANH) X(floor, FLOOR) X(ceil, CEIL) X(round_afz, ROUND_AFZ)    \
  X(round_even, ROUND_EVEN) X(is_finite, IS_FINITE) X(not, NOT) X(popcnt, POPCNT) X(clz, CLZ)    \
  X(erf, ERF) X(copy, COPY)
#define CX_BUILDER_BINARY(X)                                                                     \
  X(add, ADD) X(sub, SUBTRACT) X(mul, MULTIPLY) X(div, DIVIDE) X(rem, REMAINDER) X(pow, POWER)   \
  X(atan2, ATAN2) X(max, MAXIMUM) X(min, MINIMUM) X(and, AND) X(or, OR) X(xor, XOR)              \
  X(shl, SHIFT_LEFT) X(shr_arith, SHIFT_RIGHT_ARITHMETIC) X(shr_logical, SHIFT_RIGHT_LOGICAL)

#define X(fn, ID)                                                                                \
  cxla_op cxla_builder_##fn(cxla_builder *b, cxla_op x) { return cx_b_elementwise(b, CX_OP_##ID, 1, &x); }
CX_BUILDER_UNARY(X)
#undef X
#define X(fn, ID)                                                                                \
  cxla_op cxla_builder_##fn(cxla_builder *b, cxla_op x, cxla_op y) {                             \
    cxla_op xs[2] = {x, y};                                                                      \
    return cx_b_elementwise(b, CX_OP_##ID, 2, xs);                                               \
  }
CX_BUILDER_BINARY(X)
#undef X

cxla_op cxla_builder_select(cxla_builder *b, cxla_op pred, cxla_op on_true, cxla_op on_false) {
  cxla_op xs[3] = {pred, on_true, on_false};
  return cx_b_elementwise(b, CX_OP_SELECT, 3, xs);
}

cxla_op cxla_builder_clamp(cxla_builder *b, cxla_op lo, cxla_op x, cxla_op hi) {
  cxla_op xs[3] = {lo, x, hi};
  return cx_b_elementwise(b, CX_OP_CLAMP, 3, xs);
}

cxla_op cxla_builder_compare(cxla_builder *b, cxla_op x, cxla_op y, cxla_compare_dir dir, const char *cmp_type) {
  cxla_op none = {0};
  cx_instr *ops[2];
  cxla_op xs[2] = {x, y};
  if (!cx_b_get_n(b, 2, xs, ops, "compare", 0)) return none;
  if ((unsigned)dir > CXLA_GE)
    return cx_b_fail(b, "compare", CXLA_ERR_INVALID_ARGUMENT, "bad comparison direction %d", (int)dir);
  static const char *const types[] = {"FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
  cx_cmp_type ct = CX_CMP_DEFAULT;
  for (int i = 0; cmp_type && i < 4; i++)
    if (!strcmp(cmp_type, types[i])) ct = (cx_cmp_type)(CX_CMP_FLOAT + i);
  if (cmp_type && ct == CX_CMP_DEFAULT)
    return cx_b_fail(b, "compare", CXLA_ERR_INVALID_ARGUMENT,
                     "comparison type '%s' (expected FLOAT, TOTALORDER, SIGNED or UNSIGNED)", cmp_type);
  cx_instr *in = cx_b_new(b, CX_OP_COMPARE, 2, ops, NULL);
  if (!in) return none;
  in->a.dir = dir;
  in->a.cmp_type = ct;
  return cx_b_done(b, in);
}

/* convert and bitcast-convert declare the element type; the dims follow the operand (for a
 * bitcast between types of different widths the last dim grows or shrinks as XLA defines). */
static cxla_op convert_op(cxla_builder *b, cx_op op, cxla_op x, cxla_type to) {
  cxla_op none = {0};
  cx_instr *opnd = cx_b_get(b, x, cx_op_name(op), 0);
  if (!opnd) return none;
  if (!cx_type_is_array(to))
    return cx_b_fail(b, cx_op_name(op), CXLA_ERR_INVALID_ARGUMENT, "target type %d is not an array element type", (int)to);
  cx_shape s = cx_shape_array(to, opnd->shape.type == CXLA_TUPLE ? 0 : opnd->shape.rank, opnd->shape.dims);
  int from_bits = cx_type_bits(opnd->shape.type), to_bits = cx_type_bits(to);
  if (op == CX_OP_BITCAST_CONVERT && from_bits && to_bits != from_bits) {
    if (to_bits < from_bits && s.rank < CXLA_MAX_RANK) s.dims[s.rank++] = from_bits / to_bits;
    else if (to_bits > from_bits && s.rank > 0 && s.dims[s.rank - 1] == to_bits / from_bits) s.rank--;
  }
  cx_instr *in = cx_b_new(b, op, 1, &opnd, &s);
  return in ? cx_b_done(b, in) : none;
}

cxla_op cxla_builder_convert(cxla_builder *b, cxla_op x, cxla_type to) { return convert_op(b, CX_OP_CONVERT, x, to); }
cxla_op cxla_builder_bitcast_convert(cxla_builder *b, cxla_op x, cxla_type to) {
  return convert_op(b, CX_OP_BITCAST_CONVERT, x, to);
}
