/* pass_opts.h — the few options the pass pipeline reads, taken from the context's flags
 * (core/flags.h) by the backends that run it; and the check of the flag values only the passes
 * know, which cxla_context_set_flags makes after parsing them. */
#ifndef CX_PASS_OPTS_H
#define CX_PASS_OPTS_H
#include "core/flags.h"

typedef struct cx_pass_opts {
  int fusion;                /* --fusion: run the fusion passes (else one kernel per op) */
  const char *disable_pass;  /* --disable-pass: comma-separated pass names (NULL: none) */
  const char *dump_to;       /* --dump-to: dump folder (NULL or "": no dumps) */
  const char *dump_pass_re;  /* --dump-pass-re */
  const char *dump_format;   /* --dump-format */
} cx_pass_opts;

/* The options the pass pipeline reads, pointing into f's strings. */
cx_pass_opts cx_pass_opts_from_flags(const cx_flags *f);
/* Checks --disable-pass (known pass names that may be disabled) and --dump-format:
 * CXLA_ERR_INVALID_ARGUMENT naming the flag and what it accepts. */
cxla_status cx_pass_check_flags(cxla_context *ctx, const cx_flags *f);

#endif
