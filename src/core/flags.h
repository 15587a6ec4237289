/* flags.h — user-facing options, read from CXLA_FLAGS and from CLI options (same syntax). One
 * table (flags.c) names every flag; docs/flags.md lists them. */
#ifndef CX_FLAGS_H
#define CX_FLAGS_H
#include "util/util.h"

typedef struct cx_flags {
  int fusion;             /* --fusion=on|off: off compiles every op as its own kernel */
  int threads;            /* --threads=N: worker threads for compiled code; 0 means all cores */
  int opt_level;          /* --opt-level=0..3: LLVM optimisation level (default 2) */
  int64_t max_loop_iterations; /* --max-loop-iterations=N: interpreter guard; 0 means none */
  char *dump_to;          /* --dump-to=DIR: HLO text + GraphViz after each pass */
  char *dump_pass_re;     /* --dump-pass-re=REGEX: which passes to dump (default all) */
  char *dump_format;      /* --dump-format=hlo,dot,svg: what a pass dump writes (default hlo,dot) */
  char *trace;            /* --trace=FILE: Chrome trace JSON of compile phases and kernels */
  char *disable_pass;     /* --disable-pass=NAME[,NAME]: pipeline passes to skip (checked names) */
  int collective_timeout; /* --collective-timeout=S: a collective waits S seconds for the other
                             devices of its run, then fails (0: for ever) */
  int gpu_tf32;           /* --gpu-tf32=on|off: f32 dots on the GPU may round their inputs to TF32 */
  int gpu_graphs;         /* --gpu-graphs=on|off: GPU loops and conditionals as CUDA graphs */
  char *gpu_libdevice;    /* --gpu-libdevice=PATH: CUDA's libdevice bitcode (backend/gpu/libdevice.h) */
  int cpu_onednn;         /* --cpu-onednn=on|off: cpu convolutions through oneDNN where it applies */
  int cpu_libmvec;        /* --cpu-libmvec=on|off: vectorised f64 math through glibc's libmvec */
  int cpu_flush_denormals; /* --cpu-flush-denormals=on|off: cpu executions with FTZ and DAZ set, as XLA:CPU */
  int cpu_idle_spin_us;   /* --cpu-idle-spin-us=N: the cpu pool's idle workers spin that long before sleeping */
  char *cache_dir;        /* --cache-dir=DIR|default|off: compiled code kept on disk (core/disk_cache.h) */
  char *pjrt_gpu;         /* --pjrt-gpu=auto|emu|off: the PJRT plugin's GPU device (docs/pjrt.md); NULL: auto */
  char *pjrt_async;       /* --pjrt-async=auto|on|off: which PJRT executions run on the stream thread; NULL: auto */
  /* Not flags: the compile options' donations (donate: bits of parameters 0-63; donate_params:
   * any), and the set they resolve to with the module header's (runtime/executable.c:
   * donated[p] for parameter p < ndonated; owned, freed by cx_flags_free, never copied). */
  uint64_t donate;
  const int *donate_params;
  int ndonate_params;
  uint8_t *donated;
  int ndonated;
  /* Not a flag: the executable cache's key of this compile (runtime/executable.c; borrowed,
   * NULL when there is none), which the disk cache extends with the target's. */
  const char *compile_key;
  size_t compile_key_len;
  /* Not flags: cxla_compile_options' keep_code (keep the compiled code as an entry of the disk
   * cache's format, for cxla_executable_code) and code (such an entry to load before looking
   * on disk; borrowed for the compile). */
  int keep_code;
  const unsigned char *code;
  size_t code_len;
} cx_flags;

void cx_flags_init(cx_flags *f);
void cx_flags_free(cx_flags *f);
cxla_status cx_flags_copy(cxla_context *ctx, cx_flags *dst, const cx_flags *src);
/* Parses whitespace-separated "--name=value" options into f; unknown names and values of the
 * wrong kind or range are errors. Values only a layer above knows are checked there
 * (cx_pass_check_flags: pass names, dump formats); cxla_context_set_flags does both. */
cxla_status cx_flags_parse(cxla_context *ctx, cx_flags *f, const char *text);
/* Appends flag `name`'s value (without "--"; as the flag is written: on/off, a number, the
 * text, "" for an unset text flag) to out; CXLA_ERR_INVALID_ARGUMENT for an unknown name. */
cxla_status cx_flags_get(cxla_context *ctx, const cx_flags *f, const char *name, cx_sb *out);
/* Parses one option ("--threads=2"); returns 0 if the name is not a cxla flag. */
int cx_flags_is_flag(const char *arg);
/* Appends one line per flag ("  --threads=N            worker threads (0: all cores)"), each
 * indented by `indent` spaces, for --help texts. */
void cx_flags_help(cx_sb *sb, int indent);
/* Appends every flag that can change a compiled executable ("--name=value\n" each; not
 * --trace), for executable-cache keys. New flags join automatically. */
void cx_flags_key(cx_sb *sb, const cx_flags *f);

#endif
