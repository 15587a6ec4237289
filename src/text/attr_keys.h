/* attr_keys.h — how instruction attributes are written in HLO text: the keys ir/attrs.def
 * describes and, per op, which of them its text carries. The parser and the printer are loops
 * over these tables. */
#ifndef CX_ATTR_KEYS_H
#define CX_ATTR_KEYS_H
#include "ir/attrs.h"

typedef enum cx_attr_key_id {
#define CX_ATTR_KEY(id, ...) CX_KEY_##id,
#include "ir/attrs.def"
  CX_KEY_COUNT
} cx_attr_key_id;

typedef enum cx_attr_syntax {
  CX_SYN_INTS, CX_SYN_I64, CX_SYN_I32, CX_SYN_F32, CX_SYN_BOOL, CX_SYN_ENUM, CX_SYN_SLICE, CX_SYN_PADDING,
  CX_SYN_WINDOW, CX_SYN_DIM_LABELS, CX_SYN_WORD, CX_SYN_STRING, CX_SYN_VERBATIM, CX_SYN_COMP, CX_SYN_BRANCHES,
  CX_SYN_GROUPS
} cx_attr_syntax;
#define CX_SYN_COUNT (CX_SYN_GROUPS + 1)

typedef enum cx_attr_show { CX_SHOW_ALWAYS, CX_SHOW_IF_SET } cx_attr_show;

typedef struct cx_attr_key {
  const char *name;      /* as XLA writes it */
  cx_attr_id field;      /* the first field it writes; CX_ATTR_NONE for called computations */
  cx_attr_syntax syntax;
  cx_attr_show show;
  const char *what;      /* a bad value is "expected <what>" */
} cx_attr_key;

extern const cx_attr_key cx_attr_keys[CX_KEY_COUNT];

/* How a syntax holds its value: the kind of each field it writes, and how many consecutive
 * fields (slice and padding: start/limit/stride and lo/hi/interior; called computations: 0). */
typedef struct cx_attr_syntax_info {
  cx_attr_kind kind;
  int nfields;
  size_t pod_size;   /* POD syntaxes: the size of the field */
} cx_attr_syntax_info;
const cx_attr_syntax_info *cx_attr_syntax_of(cx_attr_syntax s);

/* The values of an ENUM key: value v is written names[v - base], for v in [base, base + n). */
typedef struct cx_attr_enum {
  const char *const *names;
  int n, base;
} cx_attr_enum;
const cx_attr_enum *cx_attr_key_enum(cx_attr_key_id k);

/* One key of an op's text and whether XLA's parser requires it. */
typedef struct cx_op_key {
  cx_attr_key_id key;
  int required;
} cx_op_key;
#define CX_OP_MAX_KEYS 10
/* The keys op's text carries: modelled attributes in the order XLA prints them, then called
 * computations in the order of cx_instr's called[]. Returns how many. */
int cx_op_attr_keys(cx_op op, cx_op_key out[CX_OP_MAX_KEYS]);
/* The key of op's text spelled s[0..len), or -1 (then the attribute is kept raw). */
int cx_op_attr_key_lookup(cx_op op, const char *s, size_t len);

#endif
