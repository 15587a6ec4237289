/* parse_int.h — private to the HLO text parser (parser.c, parse_*.c): the parser state, error
 * exits and the pieces each file provides. Errors longjmp to the entry point, which frees the
 * module (everything IR lives in its arena) and the parser's few heap scratch buffers. */
#ifndef CX_PARSE_INT_H
#define CX_PARSE_INT_H
#include <setjmp.h>
#include "text/hlo.h"
#include "text/lexer.h"

/* Nesting limit for tuples (shapes and literals) so that hostile input cannot exhaust the
 * stack; XLA's own dumps never come close. */
#define CX_PARSE_MAX_DEPTH 64

/* A reference by name that is resolved later (operands after their computation, called
 * computations after the module). s points into the source text, without the '%'. */
typedef struct cx_ref {
  const char *s;
  size_t len;
  cx_loc loc;
  cx_instr *in;   /* the instruction that refers */
  int slot;       /* operand or called-computation index in `in` */
  int64_t shape;  /* operands: index of the written operand shape in p->opshapes, or -1 */
  void *target;   /* already resolved (a nested instruction, a computation the parser made);
                     s is then NULL */
} cx_ref;

/* An operand shape written in old-style text ("add(f32[2] %a, ...)"), checked against the
 * operand once names are resolved. */
typedef struct cx_opshape {
  cx_shape shape;
  cx_loc loc;
} cx_opshape;

/* Work left for the end of the module, when every name is resolved and every callee parsed:
 * the shapes of instructions written without one, and the checks that need them. */
typedef enum cx_late_kind {
  CX_LATE_OPSHAPE,    /* a written operand shape whose operand had no shape yet: in, slot, shape */
  CX_LATE_SIGNATURE,  /* a signature's result shape against a ROOT without one: comp, shape */
  CX_LATE_BCAST_DIMS, /* a broadcast without dimensions=: its operand must be a scalar */
  CX_LATE_ASYNC_OP,   /* a -update/-done written with a wrapped opcode (op) to check */
  CX_LATE_COMP_NAME,  /* a computation the parser made (async-start sugar): needs a free name */
} cx_late_kind;

typedef struct cx_late {
  cx_late_kind kind;
  cx_instr *in;
  cx_comp *comp;
  int slot, op;
  cx_loc loc;
  cx_shape shape;
} cx_late;

/* Open-addressing name table over source-text slices (heap; freed by its owner). */
typedef struct cx_names {
  struct cx_name_slot *slots;
  size_t cap, n;
} cx_names;
/* Returns the value stored for the name, or NULL. */
void *cx_names_find(const cx_names *t, const char *s, size_t len);
/* Inserts name -> val. Returns NULL if inserted, the existing value if the name was already
 * there, or `t` itself if memory ran out. */
void *cx_names_add(cx_names *t, const char *s, size_t len, void *val);
void cx_names_free(cx_names *t);

typedef struct cx_parser {
  cx_module *m;
  cx_lexer lx;
  cx_token tok;            /* the current (not yet consumed) token */
  jmp_buf jb;
  cxla_status status;
  int depth;
  /* scratch (heap) */
  int64_t *ints;
  int64_t ints_cap;
  cx_ref *oprefs;          /* operand references of the computation being read */
  int64_t noprefs, oprefs_cap;
  cx_opshape *opshapes;    /* written operand shapes of the computation being read */
  int64_t nopshapes, opshapes_cap;
  cx_ref *callrefs;        /* called-computation references of the whole module */
  int64_t ncallrefs, callrefs_cap;
  cx_token *rawtok;        /* key/value token pairs of the raw attributes being read */
  int64_t rawtok_cap;
  cx_names instr_names;    /* per computation */
  cx_names comp_names;
  cx_late *late;           /* module-end work (parse_late.c) */
  int64_t nlate, late_cap;
  int nest;                /* depth of nested instructions ("add(x, multiply(y, z))") and of
                              computations written inline ("to_apply={ ... }") */
  struct cx_pscope *scopes; /* the instruction names of the computations an inline one is
                              read inside, innermost first (heap) */
  int in_constant;         /* parsing a constant's value: XLA's one-value shorthand applies */
  uint32_t elided_next;    /* the next word XLA's parser fills an elided constant "{...}" with */
} cx_parser;

/* ---- errors (never return) ---- */
_Noreturn void cx_perr(cx_parser *p, cx_loc loc, cxla_status code, const char *fmt, ...) CX_PRINTF(4, 5);
_Noreturn void cx_poom(cx_parser *p);
/* "expected <what>, got <current token>" at the current token. */
_Noreturn void cx_pexpected(cx_parser *p, const char *what);

/* ---- tokens ---- */
cx_loc cx_tok_loc(const cx_token *t);
/* Advances to the next token (reporting lexer errors) and returns the one consumed. */
cx_token cx_padvance(cx_parser *p);
int cx_pis(cx_parser *p, cx_tok_kind k);
/* Whether the current token is the word w (exactly). */
int cx_pis_word(cx_parser *p, const char *w);
/* Consumes a token of kind k or fails with "expected <what>". */
cx_token cx_pexpect(cx_parser *p, cx_tok_kind k, const char *what);
/* Consumes k if present; returns whether it was. */
int cx_paccept(cx_parser *p, cx_tok_kind k);
/* The kind of the token after the current one. */
cx_tok_kind cx_ppeek_kind(cx_parser *p);
/* A name token: a word, without its leading '%'. */
cx_token cx_pname(cx_parser *p, const char *what);
void cx_strip_percent(cx_token *t);

/* ---- numbers and lists ---- */
int64_t cx_pint(cx_parser *p, const char *what);
int cx_pbool(cx_parser *p);
/* "{1,2,3}" into p->ints; returns the count. */
int cx_pint_list(cx_parser *p);
void cx_pset_ints(cx_parser *p, cx_ints *dst, int n);
void *cx_palloc(cx_parser *p, size_t n);
char *cx_pstrndup(cx_parser *p, const char *s, size_t n);
/* Decodes a TK_STRING token into an arena string. */
char *cx_pstring(cx_parser *p, const cx_token *t);

/* ---- shapes (parse_shape.c) ---- */
/* Parses a shape; with_layout 1 parses a layout after array shapes; literal_ctx 1 parses a
 * '{' after the dims as a layout only if a literal value follows it (old literal syntax
 * "f32[2] {1, 2}" has none). */
void cx_pshape(cx_parser *p, cx_shape *out, int literal_ctx);
/* Whether the current token starts a shape (a word followed by '[', or a '(' that opens a
 * tuple shape). */
int cx_pat_shape(cx_parser *p);

/* ---- literals (parse_literal.c) ---- */
/* Parses a literal value of `shape` (whose optional repeated shape prefix is also accepted)
 * into a new literal owned by the module. */
cxla_literal *cx_pliteral(cx_parser *p, const cx_shape *shape, int allow_shape_prefix);

/* A constant's value for `shape`: a literal as cx_pliteral reads it (shape prefix allowed),
 * or XLA's shorthand of one value for an array, "f32[2,3] constant(7)", which XLA's parser
 * reads as element 0 = 7 and every other element 0 (so "constant(0)" is all zeros). */
cxla_literal *cx_pconstant(cx_parser *p, const cx_shape *shape);

/* ---- module-end work (parse_late.c) ---- */
cx_late *cx_plate(cx_parser *p, cx_late_kind kind, cx_instr *in, cx_loc loc);
/* Names every unnamed (nested) instruction of c "<opcode>.anon", "<opcode>.anon.1", ...,
 * avoiding the names c already has, as XLA's parser does. */
void cx_pname_anonymous(cx_parser *p, cx_comp *c);
/* After the module is read and its computations ordered: async chains (calls= of -update and
 * -done), the shapes of instructions written without one (shape inference, callees first),
 * then the checks that needed those shapes. */
void cx_pfinish(cx_parser *p);

/* ---- other formats (sniff.c) ---- */
/* For a text whose first token (`first`) is not 'HloModule': what it is instead (MLIR,
 * protobuf, a buffer-assignment dump, ...) and how to get HLO text, as one message; *loc is
 * where to report it (1:1 for binary data). NULL if it is none of those. */
const char *cx_sniff_foreign(const char *text, size_t len, const char *filename, const cx_token *first,
                             cx_loc *loc);

/* ---- attributes (parse_attrs.c) ---- */
/* Scans the verbatim value of a kept attribute that follows the '=' token eq. */
cx_token cx_praw_value(cx_parser *p, const cx_token *eq);
/* Appends a key/value pair to p->rawtok at index i. */
void cx_ppush_raw(cx_parser *p, int64_t i, const cx_token *key, const cx_token *value);
/* Stores the n pairs in p->rawtok as arena strings in *raw / *nraw. */
void cx_pstore_raw(cx_parser *p, int n, int *nraw, cx_raw_attr **raw);
/* Parses ", key=value" attributes after an instruction's operands into in->a and called-
 * computation references; checks required ones. op_tok locates "missing" errors. */
void cx_pattrs(cx_parser *p, cx_instr *in, const cx_token *op_tok);
/* replica_groups= (current token: the value's first): "{{0,1},{2,3}}", "{}", or XLA's iota form
 * "[2,2]<=[4]", "[2,2]<=[2,2]T(1,0)", checked; returns the value's text to keep verbatim (ops
 * that do not model them keep them raw). */
cx_token cx_preplica_groups(cx_parser *p);
/* The same into *out (NULL for {}); pairs: source_target_pairs= ({{0,1},{1,0}}, lists of two). */
void cx_pgroups(cx_parser *p, cx_groups **out, int pairs);
/* A nested instruction has no attributes: fails if its op needs one (dimensions= of a
 * broadcast excepted: a scalar operand needs none). */
void cx_pattrs_none(cx_parser *p, cx_instr *in, const cx_token *op_tok);
/* Async sugar ("custom-call-start(...), custom_call_target=..."): the attributes were read
 * onto the wrapped instruction; moves async-start's own ones (async_execution_thread,
 * output_to_operand_aliasing, sharding) to `start` and copies metadata-like ones to both.
 * With wrapped NULL (a -update or -done), drops what only the wrapped op would read. */
void cx_psplit_async_attrs(cx_parser *p, cx_instr *start, cx_instr *wrapped);
/* Parameter i of shape s of a computation w the parser makes for async-start sugar, named
 * "async_param[.i]" and located at loc. */
cx_instr *cx_pasync_param(cx_parser *p, cx_comp *w, const cx_shape *s, int i, cx_loc loc);
/* Records a called computation the parser made itself (no name to resolve). */
void cx_ppush_made_callref(cx_parser *p, cx_instr *in, cx_comp *c, int slot, cx_loc loc);
/* A computation written inline where a called computation's name would be ("to_apply={ x =
 * ... }", as XLA's parser reads it), at the current '{': read into a computation of the module,
 * which gets a free name ("inline", "inline.1", ...) when the module is done. */
cx_comp *cx_pinline_comp(cx_parser *p);

#endif
