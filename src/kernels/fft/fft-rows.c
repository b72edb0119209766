/*
 * fft-rows.c — the transforms of the fft-rows algorithm (algo/fft-rows.c): real FFTs of
 * VF_LANES overlapping segments of one image row at once, one segment per lane, and, per
 * output row, the sum over kernel rows of the segments' spectra times the kernel rows'
 * spectra followed by the inverse transform (fft-radix2.h). Lanes across segments make
 * every butterfly one vector operation with no shuffles; the segments are turned into
 * lanes (and the outputs back into rows) by VF_LANES x VF_LANES transposes. Compiled once
 * per ISA (simd/vec.h); contracts: fconv_fft_rows_*_fn in core/dispatch.h.
 */
#include <assert.h>

#include "kernels/fft/fft-radix2.h"

/* Spectrum: planes VF_LANES floats apart (fft-radix2.h). */
static ALWAYS_INLINE void forward_n(const int n, const float *ext, size_t hop, float *spec) {
    vf re[MAX_M], im[MAX_M];
    UNROLL
    for (int n0 = 0; n0 < n; n0 += VF_LANES) { /* samples n0.. of every lane's segment */
        vf t[VF_LANES];
        UNROLL
        for (int l = 0; l < VF_LANES; l++) t[l] = vf_loadu(ext + (size_t)l * hop + (size_t)n0);
        vf_transpose(t);
        UNROLL
        for (int j = 0; j < VF_LANES; j++) {
            if ((n0 + j) & 1) im[(n0 + j) / 2] = t[j];
            else re[(n0 + j) / 2] = t[j];
        }
    }
    fft_forward_real(n, re, im, spec, VF_LANES);
}

static ALWAYS_INLINE void inverse_n(const int n, const float *const *spec, const float *taps, size_t kh,
                                    size_t hop, float *y, size_t count) {
    vf re[MAX_M], im[MAX_M];
    fft_products_inverse(n, spec, VF_LANES, taps, kh, re, im);

    /* Sample t of lane l is output l*hop + t, t < hop: VF_LANES samples of every lane per
     * transpose, each lane's run stored where it lies in y. */
    UNROLL
    for (int t0 = 0; t0 < n; t0 += VF_LANES) { /* a constant bound, so the indices below are */
        if ((size_t)t0 >= hop) break;
        vf t[VF_LANES];
        UNROLL
        for (int j = 0; j < VF_LANES; j++) {
            const int s = t0 + j;
            t[j] = s & 1 ? im[s / 2] : re[s / 2];
        }
        vf_transpose(t);
        UNROLL
        for (size_t l = 0; l < VF_LANES; l++) {
            const size_t at = l * hop + (size_t)t0;
            if (at >= count) break;
            size_t len = hop - (size_t)t0 < VF_LANES ? hop - (size_t)t0 : VF_LANES;
            if (len > count - at) len = count - at;
            if (len == VF_LANES) vf_storeu(y + at, t[l]);
            else vf_storeu_partial(y + at, t[l], len);
        }
    }
}

void FCONV_ISA_SUFFIX(fconv_fft_rows_forward_kernel)(size_t n, const float *ext, size_t hop, float *spec) {
    assert(ext && spec && hop >= 1 && hop <= n);
    switch (n) {
    case 16: forward_n(16, ext, hop, spec); break;
    case 32: forward_n(32, ext, hop, spec); break;
    case 64: forward_n(64, ext, hop, spec); break;
    default: assert(n == 128); forward_n(128, ext, hop, spec); break;
    }
}

void FCONV_ISA_SUFFIX(fconv_fft_rows_inverse_kernel)(size_t n, const float *const *spec, const float *taps,
                                                     size_t kh, size_t hop, float *y, size_t count) {
    assert(spec && taps && y && kh >= 1 && hop >= 1 && hop <= n);
    switch (n) {
    case 16: inverse_n(16, spec, taps, kh, hop, y, count); break;
    case 32: inverse_n(32, spec, taps, kh, hop, y, count); break;
    case 64: inverse_n(64, spec, taps, kh, hop, y, count); break;
    default: assert(n == 128); inverse_n(128, spec, taps, kh, hop, y, count); break;
    }
}

void FCONV_ISA_SUFFIX(fconv_fft_rows_stream_row_kernel)(float *y, const float *src, size_t n) {
    assert(y && src);
    /* plain stores up to y's first vector boundary, streamed whole vectors, plain the rest */
    size_t head = vf_head_to_alignment(y, n), e = 0;
    for (; e < head; e++) y[e] = src[e];
    for (; e + VF_LANES <= n; e += VF_LANES) vf_stream(y + e, vf_loadu(src + e));
    vf_stream_fence();
    for (; e < n; e++) y[e] = src[e];
}
