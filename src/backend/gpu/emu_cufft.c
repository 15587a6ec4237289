/* emu_cufft.c — cuFFT on the host for gpu-emu (see cufft_lib.h): what the gpu backend's fft
 * steps ask cuFFT for, computed by FFTW (fftwf_ for C2C/R2C/C2R, fftw_ for Z2Z/D2Z/Z2D) as
 * cuFFT documents it: batches of contiguous transforms of rank 1 to 3 in row-major order,
 * unnormalized in both directions, C2R free to overwrite its input. A plan asks for a work
 * area (one transform's input, so that the path that gives it one is exercised) and its
 * executions check that it and the data lie in the emulated device's allocations. */
#include <fftw3.h>
#include <pthread.h>
#include <string.h>
#include "backend/gpu/cufft_lib.h"
#include "backend/gpu/emu.h"

enum { S_OK = 0, S_INVALID_PLAN = 1, S_ALLOC_FAILED = 2, S_INVALID_TYPE = 3, S_INVALID_VALUE = 4, S_EXEC_FAILED = 6,
       S_SETUP_FAILED = 7, S_INVALID_SIZE = 8, MAX_PLANS = 256 };

typedef struct plan {
  int used, made, rank, type, batch, n[3];
  int idist, odist;
  size_t work_size;
  void *work;
} plan;

static plan g_plans[MAX_PLANS];
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* FFTW's planner is shared with the cpu backend's (backend/cpu/fft.c), which may plan on
 * another thread */
static void thread_safe(void) {
  fftw_make_planner_thread_safe();
  fftwf_make_planner_thread_safe();
}

static plan *get(int h) { return h >= 0 && h < MAX_PLANS && g_plans[h].used ? &g_plans[h] : NULL; }

static int create(int *h) {
  pthread_once(&g_once, thread_safe);
  pthread_mutex_lock(&g_mu);
  int i = 0;
  while (i < MAX_PLANS && g_plans[i].used) i++;
  if (i < MAX_PLANS) g_plans[i] = (plan){.used = 1};
  pthread_mutex_unlock(&g_mu);
  return i < MAX_PLANS ? (*h = i, S_OK) : S_ALLOC_FAILED;
}

static int destroy(int h) {
  plan *p = get(h);
  if (!p) return S_INVALID_PLAN;
  pthread_mutex_lock(&g_mu);
  memset(p, 0, sizeof *p);
  pthread_mutex_unlock(&g_mu);
  return S_OK;
}

static int set_auto(int h, int a) { return get(h) && (a == 0 || a == 1) ? S_OK : S_INVALID_PLAN; }
static int set_stream(int h, CUstream s) { return get(h) && s ? S_OK : S_INVALID_PLAN; }

static int is_double(int type) { return type == CX_FFT_Z2Z || type == CX_FFT_D2Z || type == CX_FFT_Z2D; }
/* bytes of one input and one output element */
static size_t in_size(int type) {
  size_t part = is_double(type) ? 8 : 4;
  return type == CX_FFT_R2C || type == CX_FFT_D2Z ? part : 2 * part;
}
static size_t out_size(int type) {
  size_t part = is_double(type) ? 8 : 4;
  return type == CX_FFT_C2R || type == CX_FFT_Z2D ? part : 2 * part;
}

static int make(int h, int rank, int *n, int *inembed, int istride, int idist, int *onembed, int ostride, int odist,
                int type, int batch, size_t *work_size) {
  plan *p = get(h);
  if (!p) return S_INVALID_PLAN;
  if (type != CX_FFT_C2C && type != CX_FFT_R2C && type != CX_FFT_C2R && type != CX_FFT_Z2Z && type != CX_FFT_D2Z &&
      type != CX_FFT_Z2D)
    return S_INVALID_TYPE;
  /* the contiguous layout only (what the gpu backend asks for): no embeddings, unit strides */
  if (rank < 1 || rank > 3 || batch < 1 || inembed || onembed || istride != 1 || ostride != 1) return S_INVALID_VALUE;
  long whole = 1, half = 1;
  for (int i = 0; i < rank; i++) {
    if (n[i] < 1) return S_INVALID_SIZE;
    whole *= n[i];
    half *= i + 1 < rank ? n[i] : n[i] / 2 + 1;
  }
  long want_in = type == CX_FFT_C2R || type == CX_FFT_Z2D ? half : whole;
  long want_out = type == CX_FFT_R2C || type == CX_FFT_D2Z ? half : whole;
  if (idist < want_in || odist < want_out) return S_INVALID_VALUE;
  p->rank = rank, p->type = type, p->batch = batch, p->idist = idist, p->odist = odist, p->made = 1;
  memcpy(p->n, n, sizeof *n * (size_t)rank);
  p->work_size = (size_t)idist * in_size(type);
  *work_size = p->work_size;
  return S_OK;
}

static int set_work(int h, void *w) {
  plan *p = get(h);
  if (!p) return S_INVALID_PLAN;
  p->work = w;
  return S_OK;
}

/* the plan's arrays in device memory, and its work area */
static int usable(const plan *p, const void *in, const void *out) {
  return p->made && cx_emu_device_ok((CUdeviceptr)(uintptr_t)in, (size_t)p->idist * (size_t)p->batch * in_size(p->type)) &&
         cx_emu_device_ok((CUdeviceptr)(uintptr_t)out, (size_t)p->odist * (size_t)p->batch * out_size(p->type)) &&
         (!p->work_size || cx_emu_device_ok((CUdeviceptr)(uintptr_t)p->work, p->work_size));
}

/* plans one execution on these arrays (FFTW_ESTIMATE leaves them as they are) and runs it */
static int exec(int h, void *in, void *out, int type, int sign) {
  plan *p = get(h);
  if (!p || !p->made) return S_INVALID_PLAN;
  if (p->type != type) return S_INVALID_TYPE;
  if (!usable(p, in, out)) return S_INVALID_VALUE;
  unsigned flags = FFTW_ESTIMATE | (type == CX_FFT_C2R || type == CX_FFT_Z2D ? FFTW_DESTROY_INPUT : 0);
  int r = p->rank, b = p->batch, id = p->idist, od = p->odist;
  if (is_double(type)) {
    fftw_plan f = type == CX_FFT_Z2Z ? fftw_plan_many_dft(r, p->n, b, in, NULL, 1, id, out, NULL, 1, od, sign, flags)
                  : type == CX_FFT_D2Z ? fftw_plan_many_dft_r2c(r, p->n, b, in, NULL, 1, id, out, NULL, 1, od, flags)
                                       : fftw_plan_many_dft_c2r(r, p->n, b, in, NULL, 1, id, out, NULL, 1, od, flags);
    if (!f) return S_EXEC_FAILED;
    fftw_execute(f);
    fftw_destroy_plan(f);
  } else {
    fftwf_plan f = type == CX_FFT_C2C ? fftwf_plan_many_dft(r, p->n, b, in, NULL, 1, id, out, NULL, 1, od, sign, flags)
                   : type == CX_FFT_R2C ? fftwf_plan_many_dft_r2c(r, p->n, b, in, NULL, 1, id, out, NULL, 1, od, flags)
                                        : fftwf_plan_many_dft_c2r(r, p->n, b, in, NULL, 1, id, out, NULL, 1, od, flags);
    if (!f) return S_EXEC_FAILED;
    fftwf_execute(f);
    fftwf_destroy_plan(f);
  }
  return S_OK;
}

static int direction_ok(int d) { return d == CX_FFT_FORWARD || d == CX_FFT_INVERSE; }
static int c2c(int h, void *in, void *out, int d) { return direction_ok(d) ? exec(h, in, out, CX_FFT_C2C, d) : S_INVALID_VALUE; }
static int z2z(int h, void *in, void *out, int d) { return direction_ok(d) ? exec(h, in, out, CX_FFT_Z2Z, d) : S_INVALID_VALUE; }
static int r2c(int h, void *in, void *out) { return exec(h, in, out, CX_FFT_R2C, FFTW_FORWARD); }
static int c2r(int h, void *in, void *out) { return exec(h, in, out, CX_FFT_C2R, FFTW_BACKWARD); }
static int d2z(int h, void *in, void *out) { return exec(h, in, out, CX_FFT_D2Z, FFTW_FORWARD); }
static int z2d(int h, void *in, void *out) { return exec(h, in, out, CX_FFT_Z2D, FFTW_BACKWARD); }

static const cx_cufft g_emu_fft = {
  .lib = (void *)&g_emu_fft, .Create = create, .SetAutoAllocation = set_auto, .MakePlanMany = make,
  .SetWorkArea = set_work, .SetStream = set_stream, .Destroy = destroy, .ExecC2C = c2c, .ExecR2C = r2c,
  .ExecC2R = c2r, .ExecZ2Z = z2z, .ExecD2Z = d2z, .ExecZ2D = z2d,
};

const cx_cufft *cx_cufft_emu(void) { return &g_emu_fft; }
