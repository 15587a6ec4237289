/* infer_fft.c — the shape rule of fft, XLA's InferFftShape: fft_length names the sizes of the
 * 1 to 3 innermost dimensions it transforms. FFT and IFFT map complex to complex of the same
 * shape; RFFT takes f32/f64 whose innermost dims are fft_length and gives c64/c128 with the
 * last one cut to fft_length[-1]/2 + 1 (the half spectrum); IRFFT takes that half spectrum
 * and gives the real fft_length-shaped signal. For FFT and IFFT cxla also asks the innermost
 * dims to be fft_length (XLA's rule leaves them unchecked: no other length has a meaning). */
#include "ir/infer.h"

static const char *const k_names[] = {"FFT", "IFFT", "RFFT", "IRFFT"};

cxla_status cx_infer_fft(cx_infer *ic, cx_shape *out) {
  const cx_attrs *a = &ic->in->a;
  CX_TRY(cx_vneed_array(ic, 0, "operand"));
  const cx_shape *x = cx_vop(ic, 0);
  int r = a->fft_length.n;
  if ((unsigned)a->fft_type > CX_FFT_IRFFT) return cx_vfail(ic, "invalid fft_type %d", (int)a->fft_type);
  const char *name = k_names[a->fft_type];
  if (r < 1 || r > 3) return cx_vfail(ic, "FFT only supports ranks 1-3; got fft_length of %d elements", r);
  if (x->rank < r)
    return cx_vfail(ic, "FFT of rank %d requires input of at least that rank; got %s", r, cx_vshape(ic, x));
  for (int i = 0; i < r; i++)
    if (a->fft_length.v[i] < 0) return cx_vfail(ic, "fft_length must not be negative, got %lld", (long long)a->fft_length.v[i]);
  int real_in = a->fft_type == CX_FFT_RFFT;
  if (real_in && x->type != CXLA_F32 && x->type != CXLA_F64)
    return cx_vfail(ic, "RFFT requires f32 or f64 input type, found %s", cx_vtype(x->type));
  if (!real_in && !cx_type_is_complex(x->type))
    return cx_vfail(ic, "%s requires complex input type, found %s", name, cx_vtype(x->type));
  /* every transformed dim but an IRFFT's last must equal its fft_length */
  int last = x->rank - 1, checked = a->fft_type == CX_FFT_IRFFT ? r - 1 : r;
  for (int i = 0; i < checked; i++) {
    int d = x->rank - r + i;
    if (x->dims[d] != a->fft_length.v[i])
      return cx_vfail(ic, "%s requires the innermost dimensions to match fft_length, but dimension %d of %s is %lld "
                      "and should be %lld", name, d, cx_vshape(ic, x), (long long)x->dims[d],
                      (long long)a->fft_length.v[i]);
  }
  int64_t n = a->fft_length.v[r - 1], half = n / 2 + 1;
  *out = *x;
  cx_vplain(out);
  switch (a->fft_type) {
  case CX_FFT_FFT: case CX_FFT_IFFT: break;
  case CX_FFT_RFFT:
    out->type = cx_type_complex_of(x->type);
    if (n != 0) out->dims[last] = half; /* zero-sized dimensions keep their size */
    break;
  case CX_FFT_IRFFT:
    if ((x->dims[last] != 0 || n != 0) && x->dims[last] != half)
      return cx_vfail(ic, "IRFFT requires the innermost dimension to be fft_length/2+1, but dimension %d of %s is %lld "
                      "and should be %lld", last, cx_vshape(ic, x), (long long)x->dims[last], (long long)half);
    out->type = cx_type_part(x->type);
    out->dims[last] = n;
    break;
  }
  return CXLA_OK;
}
