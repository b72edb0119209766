/*
 * fft-cols.c — the transforms of the fft-cols algorithm (algo/fft-cols.c): real FFTs down
 * VF_LANES adjacent image columns at once, one column per lane, and, per block of output
 * columns, the sum over kernel columns of the shifted columns' spectra times the kernel
 * columns' spectra followed by the inverse transform (fft-radix2.h). Sample t of every lane
 * is one vector of image row t and output t one vector of output row t, so unlike fft-rows
 * nothing is transposed, and the lanes never mix. Compiled once per ISA (simd/vec.h);
 * contracts: fconv_fft_cols_*_fn in core/dispatch.h.
 */
#include <assert.h>

#include "kernels/fft/fft-radix2.h"

static ALWAYS_INLINE void forward_n(const int n, const float *const *rows, float *spec, size_t ps) {
    vf re[MAX_M], im[MAX_M];
    UNROLL
    for (int j = 0; j < n / 2; j++) {
        re[j] = vf_loadu(rows[2 * j]);
        im[j] = vf_loadu(rows[2 * j + 1]);
    }
    fft_forward_real(n, re, im, spec, ps);
}

static ALWAYS_INLINE void inverse_n(const int n, const float *spec, size_t ps, size_t dist, const float *taps,
                                    size_t kw, float *y, size_t y_stride, size_t rows, size_t len, int stream) {
    const float *x[FCONV_FFT_COLS_MAX_TAPS];
    for (size_t b = 0; b < kw; b++) x[b] = spec + b * dist;
    vf re[MAX_M], im[MAX_M];
    fft_products_inverse(n, x, ps, taps, kw, re, im);
    UNROLL
    for (int t = 0; t < n; t++) {
        if ((size_t)t >= rows) break;
        const vf v = t & 1 ? im[t / 2] : re[t / 2];
        float *at = y + (size_t)t * y_stride;
        if (len < VF_LANES) vf_storeu_partial(at, v, len);
        else if (stream) vf_stream(at, v);
        else vf_storeu(at, v);
    }
}

void FCONV_ISA_SUFFIX(fconv_fft_cols_forward_kernel)(size_t n, const float *const *rows, float *spec, size_t ps) {
    assert(rows && spec && ps % VF_LANES == 0);
    switch (n) {
    case 16: forward_n(16, rows, spec, ps); break;
    case 32: forward_n(32, rows, spec, ps); break;
    case 64: forward_n(64, rows, spec, ps); break;
    default: assert(n == 128); forward_n(128, rows, spec, ps); break;
    }
}

void FCONV_ISA_SUFFIX(fconv_fft_cols_inverse_kernel)(size_t n, const float *spec, size_t ps, size_t dist,
                                                     const float *taps, size_t kw, float *y, size_t y_stride,
                                                     size_t rows, size_t len, int stream) {
    assert(spec && taps && y && kw >= 1 && kw <= FCONV_FFT_COLS_MAX_TAPS && rows >= 1 && rows <= n);
    assert(len >= 1 && len <= VF_LANES);
    assert(!stream || (len < VF_LANES || (uintptr_t)y % (VF_LANES * sizeof(float)) == 0));
    assert(!stream || (len < VF_LANES || y_stride % VF_LANES == 0));
    switch (n) {
    case 16: inverse_n(16, spec, ps, dist, taps, kw, y, y_stride, rows, len, stream); break;
    case 32: inverse_n(32, spec, ps, dist, taps, kw, y, y_stride, rows, len, stream); break;
    case 64: inverse_n(64, spec, ps, dist, taps, kw, y, y_stride, rows, len, stream); break;
    default: assert(n == 128); inverse_n(128, spec, ps, dist, taps, kw, y, y_stride, rows, len, stream); break;
    }
}
