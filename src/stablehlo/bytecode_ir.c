/* bytecode_ir.c — the IR section: ops, their properties and attribute dictionaries, results,
 * operands, successors, nested regions and blocks with arguments; use-list orders are read and
 * dropped (they only order uses, which the tree does not keep).
 *
 * Values: an operand is a number in its value scope (MLIR's ValueScope: one per region isolated
 * from above). Each region claims the next numValues numbers of its scope and defines them in
 * order (block arguments, then op results). A region keeps its own growing array of the values
 * it has defined, so a count in the file is never allocated before the values exist. Forward
 * references (a use before the definition, possible only in graph regions) are refused. */
#include <string.h>
#include "stablehlo/bytecode_int.h"

enum { M_ATTRS = 1, M_RESULTS = 2, M_OPERANDS = 4, M_SUCCESSORS = 8, M_REGIONS = 16,
       M_USE_LISTS = 32, M_PROPERTIES = 64 };

typedef struct rstate {
  struct rstate *up; /* the enclosing region of the same scope, or NULL */
  int64_t base, nvalues, ndefined, cap;
  cx_mlir_value **vals;
  cx_mlir_region *region;
} rstate;

static cxla_status read_op(cx_bc *bc, cx_bc_cur *c, rstate *rs, cx_mlir_block *blk, cx_mlir_op **out);

static cxla_status define(cx_bc *bc, const uint8_t *at, rstate *rs, cx_mlir_value *v) {
  if (rs->ndefined >= rs->nvalues)
    return cx_bc_fail(bc, at, "more values defined than the %lld the region declares", (long long)rs->nvalues);
  if (rs->ndefined == rs->cap) {
    int64_t cap = rs->cap ? rs->cap * 2 : 8;
    if (cap > rs->nvalues) cap = rs->nvalues;
    cx_mlir_value **nv = cx_bc_array(bc, cap, sizeof *nv);
    if (!nv) return CXLA_ERR_OUT_OF_MEMORY;
    if (rs->ndefined) memcpy(nv, rs->vals, (size_t)rs->ndefined * sizeof *nv);
    rs->vals = nv;
    rs->cap = cap;
  }
  rs->vals[rs->ndefined++] = v;
  v->id = bc->next_value_id++;
  return CXLA_OK;
}

static cxla_status operand(cx_bc *bc, cx_bc_cur *c, rstate *rs, cx_mlir_value **out) {
  const uint8_t *at = c->p;
  uint64_t i;
  CX_TRY(cx_bc_varint(bc, c, &i));
  for (rstate *r = rs; r; r = r->up) {
    if (i < (uint64_t)r->base) continue;
    if (i - (uint64_t)r->base >= (uint64_t)r->nvalues) break;
    int64_t k = (int64_t)(i - (uint64_t)r->base);
    if (k >= r->ndefined)
      return cx_bc_fail(bc, at, "operand refers to value %llu before it is defined (forward references are not supported)",
                        (unsigned long long)i);
    *out = r->vals[k];
    return CXLA_OK;
  }
  return cx_bc_fail(bc, at, "operand refers to value %llu, outside its scope", (unsigned long long)i);
}

/* Use-list orders of a range of n values: which values, then a permutation each. */
static cxla_status skip_use_lists(cx_bc *bc, cx_bc_cur *c, int64_t n) {
  uint64_t nvals = 1;
  if (n > 1) {
    int64_t k;
    CX_TRY(cx_bc_count(bc, c, 2, "use-list order", &k));
    nvals = (uint64_t)k;
  }
  for (uint64_t v = 0; v < nvals; v++) {
    uint64_t idx, dummy;
    int pairs;
    int64_t cnt;
    if (n > 1) {
      const uint8_t *at = c->p;
      CX_TRY(cx_bc_varint(bc, c, &idx));
      if (idx >= (uint64_t)n) return cx_bc_fail(bc, at, "use-list order for value %llu of %lld",
                                                (unsigned long long)idx, (long long)n);
    }
    const uint8_t *at = c->p;
    CX_TRY(cx_bc_varint_flag(bc, c, &dummy, &pairs));
    if (dummy > cx_bc_left(c)) return cx_bc_fail(bc, at, "use-list order longer than its data");
    cnt = (int64_t)dummy;
    for (int64_t k = 0; k < cnt; k++) CX_TRY(cx_bc_varint(bc, c, &dummy));
  }
  return CXLA_OK;
}

static cxla_status loc_attr(cx_bc *bc, cx_bc_cur *c, const cx_mlir_attr **loc) {
  const uint8_t *at = c->p;
  CX_TRY(cx_bc_attr_ref(bc, c, loc));
  if ((*loc)->kind != CX_MLIR_ATTR_LOC && (*loc)->kind != CX_MLIR_ATTR_OPAQUE)
    return cx_bc_fail(bc, at, "expected a location");
  return CXLA_OK;
}

static cxla_status block_header(cx_bc *bc, cx_bc_cur *c, rstate *rs, cx_mlir_block *b) {
  const uint8_t *at = c->p;
  uint64_t nops;
  int has_args;
  CX_TRY(cx_bc_varint_flag(bc, c, &nops, &has_args));
  /* an op takes at least 3 bytes (name, mask, location) */
  if (nops > cx_bc_left(c) / 3)
    return cx_bc_fail(bc, at, "block of %llu ops cannot fit in the remaining %zu bytes",
                      (unsigned long long)nops, cx_bc_left(c));
  b->num_ops = (int)nops;
  b->ops = cx_bc_array(bc, (int64_t)nops, sizeof *b->ops);
  if (nops && !b->ops) return CXLA_ERR_OUT_OF_MEMORY;
  if (!has_args) return CXLA_OK;
  int64_t nargs;
  CX_TRY(cx_bc_count(bc, c, 1, "block argument", &nargs));
  b->args = cx_bc_array(bc, nargs, sizeof *b->args);
  if (nargs && !b->args) return CXLA_ERR_OUT_OF_MEMORY;
  b->num_args = (int)nargs;
  for (int64_t i = 0; i < nargs; i++) {
    cx_mlir_value *v = &b->args[i];
    const uint8_t *aat = c->p;
    v->block = b;
    v->index = (int)i;
    if (bc->version >= 4) {
      uint64_t ti;
      int has_loc;
      CX_TRY(cx_bc_varint_flag(bc, c, &ti, &has_loc));
      CX_TRY(cx_bc_type_at(bc, aat, ti, &v->type));
      if (has_loc) CX_TRY(loc_attr(bc, c, &v->loc));
    } else {
      CX_TRY(cx_bc_type_ref(bc, c, &v->type));
      CX_TRY(loc_attr(bc, c, &v->loc));
    }
    if (v->loc && v->loc->kind == CX_MLIR_ATTR_LOC && v->loc->u.loc.kind == CX_MLIR_LOC_UNKNOWN) v->loc = NULL;
    CX_TRY(define(bc, aat, rs, v));
  }
  if (bc->version >= 3) {
    uint8_t has_orders;
    CX_TRY(cx_bc_byte(bc, c, &has_orders));
    if (has_orders) CX_TRY(skip_use_lists(bc, c, nargs));
  }
  return CXLA_OK;
}

static cxla_status read_region(cx_bc *bc, cx_bc_cur *c, rstate *up, cx_mlir_region *r) {
  int64_t nblocks;
  CX_TRY(cx_bc_count(bc, c, 1, "block", &nblocks));
  r->num_blocks = (int)nblocks;
  if (!nblocks) return CXLA_OK;
  const uint8_t *at = c->p;
  uint64_t nvalues;
  CX_TRY(cx_bc_varint(bc, c, &nvalues));
  /* every value is defined by at least one byte (its type) */
  if (nvalues > cx_bc_left(c))
    return cx_bc_fail(bc, at, "region declares %llu values but only %zu bytes remain",
                      (unsigned long long)nvalues, cx_bc_left(c));
  r->blocks = cx_bc_array(bc, nblocks, sizeof *r->blocks);
  if (!r->blocks) return CXLA_ERR_OUT_OF_MEMORY;
  rstate rs = {up, up ? up->base + up->nvalues : 0, (int64_t)nvalues, 0, 0, NULL, r};
  for (int64_t b = 0; b < nblocks; b++) {
    cx_mlir_block *blk = &r->blocks[b];
    blk->parent = r;
    CX_TRY(block_header(bc, c, &rs, blk));
    for (int i = 0; i < blk->num_ops; i++) CX_TRY(read_op(bc, c, &rs, blk, &blk->ops[i]));
  }
  return CXLA_OK;
}

/* Properties: vhlo ops store their attributes (names from VhloOps.td, sorted) as a list of
 * attribute references; builtin.module stores two optional ones; an op that was not
 * registered when written stores one attribute (a dictionary). Others are kept as bytes. */
static cxla_status read_props(cx_bc *bc, cx_bc_cur *c, const cx_bc_opname *on, cx_mlir_named_attr **out,
                              int *n) {
  const uint8_t *at = c->p;
  if (on->registered < 0)
    return cx_bc_fail(bc, at, "op %s has properties in bytecode version %llu, which has none", on->name,
                      (unsigned long long)bc->version);
  if (on->registered == 0) {
    const cx_mlir_attr *a;
    CX_TRY(cx_bc_attr_ref(bc, c, &a));
    if (a->kind == CX_MLIR_ATTR_DICT) {
      *out = (cx_mlir_named_attr *)a->u.dict.entries;
      *n = a->u.dict.n;
      return CXLA_OK;
    }
    cx_mlir_named_attr *e = cx_bc_alloc(bc, sizeof *e);
    if (!e) return CXLA_ERR_OUT_OF_MEMORY;
    e->name = "(properties)";
    e->value = a;
    *out = e;
    *n = 1;
    return CXLA_OK;
  }
  uint64_t idx;
  CX_TRY(cx_bc_varint(bc, c, &idx));
  if (idx >= (uint64_t)bc->nprops)
    return cx_bc_fail(bc, at, "properties index %llu out of range (%lld)", (unsigned long long)idx,
                      (long long)bc->nprops);
  cx_bc_cur pc = {bc->buf, bc->props[idx], bc->props_end};
  const uint8_t *data;
  size_t len;
  CX_TRY(cx_bc_blob(bc, &pc, &data, &len));
  cx_bc_cur p = {bc->buf, data, data + len};
  const char *const *names = NULL;
  int nn = cx_vhlo_prop_names(on->name, &names);
  int module = !strcmp(on->name, "builtin.module");
  if (nn < 0 && !module) {
    cx_mlir_named_attr *e = cx_bc_alloc(bc, sizeof *e);
    cx_mlir_attr *a = cx_bc_new_attr(bc, CX_MLIR_ATTR_OPAQUE, bc->dialect_names[on->dialect]);
    if (!e || !a) return CXLA_ERR_OUT_OF_MEMORY;
    a->u.opaque.raw = len ? cx_arena_memdup(bc->A, data, len) : NULL;
    a->u.opaque.raw_len = len;
    if (len && !a->u.opaque.raw) return cx_bc_oom(bc);
    e->name = "(properties)";
    e->value = a;
    *out = e;
    *n = 1;
    return CXLA_OK;
  }
  static const char *const module_names[] = {"sym_name", "sym_visibility"};
  if (module) {
    names = module_names;
    nn = 2;
  }
  cx_mlir_named_attr *e = cx_bc_array(bc, nn, sizeof *e);
  if (nn && !e) return CXLA_ERR_OUT_OF_MEMORY;
  int k = 0;
  for (int i = 0; i < nn; i++) {
    if (module) {
      const uint8_t *aat = p.p;
      uint64_t ai;
      int present;
      CX_TRY(cx_bc_varint_flag(bc, &p, &ai, &present));
      if (!present) continue;
      CX_TRY(cx_bc_attr_at(bc, aat, ai, &e[k].value));
    } else {
      CX_TRY(cx_bc_attr_ref(bc, &p, &e[k].value));
    }
    e[k++].name = names[i];
  }
  if (p.p != p.end) return cx_bc_fail(bc, p.p, "trailing bytes in the properties of %s", on->name);
  *out = e;
  *n = k;
  return CXLA_OK;
}

static cxla_status read_op_body(cx_bc *bc, cx_bc_cur *c, rstate *rs, cx_mlir_op *op, const cx_bc_opname *on) {
  uint8_t mask;
  const uint8_t *at = c->p;
  CX_TRY(cx_bc_byte(bc, c, &mask));
  if (mask & 0x80) return cx_bc_fail(bc, at, "unknown op encoding bits 0x%02X", mask);
  CX_TRY(loc_attr(bc, c, &op->loc));
  const cx_mlir_attr *dict = NULL;
  if (mask & M_ATTRS) {
    const uint8_t *dat = c->p;
    CX_TRY(cx_bc_attr_ref(bc, c, &dict));
    if (dict->kind != CX_MLIR_ATTR_DICT) return cx_bc_fail(bc, dat, "op attributes are not a dictionary");
  }
  cx_mlir_named_attr *props = NULL;
  int nprops = 0;
  if (mask & M_PROPERTIES) CX_TRY(read_props(bc, c, on, &props, &nprops));
  int ndict = dict ? dict->u.dict.n : 0;
  op->num_props = nprops;
  op->num_attrs = nprops + ndict;
  op->attrs = cx_bc_array(bc, op->num_attrs, sizeof *op->attrs);
  if (op->num_attrs && !op->attrs) return CXLA_ERR_OUT_OF_MEMORY;
  for (int i = 0; i < nprops; i++) op->attrs[i] = props[i];
  for (int i = 0; i < ndict; i++) op->attrs[nprops + i] = dict->u.dict.entries[i];
  if (mask & M_RESULTS) {
    int64_t n;
    CX_TRY(cx_bc_count(bc, c, 1, "result", &n));
    op->results = cx_bc_array(bc, n, sizeof *op->results);
    if (n && !op->results) return CXLA_ERR_OUT_OF_MEMORY;
    op->num_results = (int)n;
    for (int64_t i = 0; i < n; i++) {
      op->results[i].def = op;
      op->results[i].index = (int)i;
      CX_TRY(cx_bc_type_ref(bc, c, &op->results[i].type));
    }
  }
  if (mask & M_OPERANDS) {
    int64_t n;
    CX_TRY(cx_bc_count(bc, c, 1, "operand", &n));
    op->operands = cx_bc_array(bc, n, sizeof *op->operands);
    if (n && !op->operands) return CXLA_ERR_OUT_OF_MEMORY;
    op->num_operands = (int)n;
    for (int64_t i = 0; i < n; i++) CX_TRY(operand(bc, c, rs, &op->operands[i]));
  }
  if (mask & M_SUCCESSORS) {
    int64_t n;
    CX_TRY(cx_bc_count(bc, c, 1, "successor", &n));
    op->successors = cx_bc_array(bc, n, sizeof *op->successors);
    if (n && !op->successors) return CXLA_ERR_OUT_OF_MEMORY;
    op->num_successors = (int)n;
    for (int64_t i = 0; i < n; i++) {
      const uint8_t *sat = c->p;
      uint64_t b;
      CX_TRY(cx_bc_varint(bc, c, &b));
      if (!rs->region || b >= (uint64_t)rs->region->num_blocks)
        return cx_bc_fail(bc, sat, "successor block %llu out of range", (unsigned long long)b);
      op->successors[i] = &rs->region->blocks[b];
    }
  }
  if ((mask & M_USE_LISTS) && bc->version >= 3) CX_TRY(skip_use_lists(bc, c, op->num_results));
  uint64_t nregions = 0;
  if (mask & M_REGIONS) {
    const uint8_t *rat = c->p;
    CX_TRY(cx_bc_varint_flag(bc, c, &nregions, &op->isolated));
    if (nregions > cx_bc_left(c))
      return cx_bc_fail(bc, rat, "%llu regions cannot fit in the remaining bytes", (unsigned long long)nregions);
    op->regions = cx_bc_array(bc, (int64_t)nregions, sizeof *op->regions);
    if (nregions && !op->regions) return CXLA_ERR_OUT_OF_MEMORY;
    op->num_regions = (int)nregions;
  }
  /* results are defined before the regions are read (MLIR's order), unless the enclosing
   * region declares no values (the top level) */
  if (rs->nvalues)
    for (int i = 0; i < op->num_results; i++) CX_TRY(define(bc, at, rs, &op->results[i]));
  else /* nothing can refer to them, but ids stay unique */
    for (int i = 0; i < op->num_results; i++) op->results[i].id = bc->next_value_id++;
  if (!nregions) return CXLA_OK;
  cx_bc_cur sub, *rc = c;
  if (op->isolated && bc->version >= 2) {
    const uint8_t *sat = c->p;
    int id;
    CX_TRY(cx_bc_section(bc, c, &id, &sub));
    if (id != 4) return cx_bc_fail(bc, sat, "expected an IR section for the regions of %s", on->name);
    rc = &sub;
  }
  if (bc->depth >= CX_BC_MAX_DEPTH)
    return cx_bc_fail(bc, c->p, "regions nested more than %d deep", CX_BC_MAX_DEPTH);
  bc->depth++;
  for (int i = 0; i < op->num_regions; i++) {
    op->regions[i].parent = op;
    cxla_status s = read_region(bc, rc, op->isolated ? NULL : rs, &op->regions[i]);
    if (s != CXLA_OK) {
      bc->depth--;
      return s;
    }
  }
  bc->depth--;
  if (rc == &sub && sub.p != sub.end)
    return cx_bc_fail(bc, sub.p, "trailing bytes in the region section of %s", on->name);
  return CXLA_OK;
}

static cxla_status read_op(cx_bc *bc, cx_bc_cur *c, rstate *rs, cx_mlir_block *blk, cx_mlir_op **out) {
  const uint8_t *at = c->p;
  uint64_t ni;
  CX_TRY(cx_bc_varint(bc, c, &ni));
  if (ni >= (uint64_t)bc->nopnames)
    return cx_bc_fail(bc, at, "op name index %llu out of range (%lld)", (unsigned long long)ni,
                      (long long)bc->nopnames);
  const cx_bc_opname *on = &bc->opnames[ni];
  cx_mlir_op *op = cx_bc_alloc(bc, sizeof *op);
  if (!op) return CXLA_ERR_OUT_OF_MEMORY;
  op->name = on->name;
  op->dialect = bc->dialect_names[on->dialect];
  op->parent = blk;
  op->offset = (size_t)(at - bc->buf);
  *out = op;
  const cx_mlir_op *saved_op = bc->cur_op;
  const char *saved_name = bc->cur_opname;
  bc->cur_op = op;
  bc->cur_opname = op->name;
  cxla_status s = read_op_body(bc, c, rs, op, on);
  if (s == CXLA_OK) {
    bc->cur_op = saved_op;
    bc->cur_opname = saved_name;
  }
  return s;
}

cxla_status cx_bc_read_ir(cx_bc *bc, cx_bc_cur c) {
  /* the top level is one block of a region that declares no values */
  rstate top = {NULL, 0, 0, 0, 0, NULL, NULL};
  cx_mlir_block *b = &bc->tree->top;
  CX_TRY(block_header(bc, &c, &top, b));
  for (int i = 0; i < b->num_ops; i++) CX_TRY(read_op(bc, &c, &top, b, &b->ops[i]));
  if (c.p != c.end) return cx_bc_fail(bc, c.p, "trailing bytes after the top-level ops of the IR section");
  return CXLA_OK;
}
