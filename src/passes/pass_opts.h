/* pass_opts.h — the few options the pass pipeline reads; the runtime fills them from its flags
 * (cx_flags_pass_opts), so that passes/ depends on nothing above it. */
#ifndef CX_PASS_OPTS_H
#define CX_PASS_OPTS_H

typedef struct cx_pass_opts {
  int fusion;                /* --fusion: run the fusion passes (else one kernel per op) */
  const char *disable_pass;  /* --disable-pass: comma-separated pass names (NULL: none) */
  const char *dump_to;       /* --dump-to: dump folder (NULL or "": no dumps) */
  const char *dump_pass_re;  /* --dump-pass-re */
  const char *dump_format;   /* --dump-format */
} cx_pass_opts;

#endif
