/* fpenv.h — the floating-point environment kernels run in: the x86 SSE/AVX control word
 * (MXCSR), whose FTZ bit (15) flushes denormal results to zero and DAZ bit (6) reads denormal
 * inputs as zero. XLA:CPU runs every execution with both set (TensorFlow's convention); cxla
 * does under --cpu-flush-denormals. The pool's workers take the poster's word for the job, so
 * a kernel computes alike on every thread. Elsewhere than x86 the word is 0 and setting it does
 * nothing: the flag has no effect there.
 *
 * Everything else cxla computes (reading and printing constants, folding, the interpreter, an
 * execution without the flag) is IEEE whatever the calling thread set: frameworks call in from
 * worker threads that flush (XLA's and TensorFlow's pools), where a bf16 or f32 denormal constant
 * read through a float conversion would become 0. The public entries bracket their work with
 * cx_fpenv_enter / cx_fpenv_leave. */
#ifndef CX_UTIL_FPENV_H
#define CX_UTIL_FPENV_H

enum { CX_FPENV_DAZ = 1u << 6, CX_FPENV_FTZ = 1u << 15 };

static inline unsigned cx_fpenv_get(void) {
#if defined(__x86_64__) || (defined(__i386__) && defined(__SSE__))
  return __builtin_ia32_stmxcsr();
#else
  return 0;
#endif
}

static inline void cx_fpenv_set(unsigned word) {
#if defined(__x86_64__) || (defined(__i386__) && defined(__SSE__))
  __builtin_ia32_ldmxcsr(word);
#else
  (void)word;
#endif
}

/* FTZ and DAZ as `bits` (0, or both for a flushing execution), the rest of the word kept;
 * returns the word before, for cx_fpenv_leave. Loads the word only where it changes. */
static inline unsigned cx_fpenv_enter(unsigned bits) {
  unsigned old = cx_fpenv_get(), mask = CX_FPENV_FTZ | CX_FPENV_DAZ;
  if ((old & mask) != bits) cx_fpenv_set((old & ~mask) | bits);
  return old;
}

/* The caller's FTZ and DAZ back; the exception flags raised in between stay raised. */
static inline void cx_fpenv_leave(unsigned old) {
  unsigned now = cx_fpenv_get(), mask = CX_FPENV_FTZ | CX_FPENV_DAZ;
  if ((now & mask) != (old & mask)) cx_fpenv_set((now & ~mask) | (old & mask));
}

#endif
