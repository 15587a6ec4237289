/* fpenv.h — the floating-point environment kernels run in: the x86 SSE/AVX control word
 * (MXCSR), whose FTZ bit (15) flushes denormal results to zero and DAZ bit (6) reads denormal
 * inputs as zero. XLA:CPU runs every execution with both set (TensorFlow's convention); cxla
 * does under --cpu-flush-denormals. The pool's workers take the poster's word for the job, so
 * a kernel computes alike on every thread. Elsewhere than x86 the word is 0 and setting it does
 * nothing: the flag has no effect there. */
#ifndef CX_RT_FPENV_H
#define CX_RT_FPENV_H

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

#endif
