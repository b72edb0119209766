/*
 * fft-radix2.h — what the segment transforms of fft-rows and fft-cols (kernels/fft) share:
 * twiddles, radix-2 stages, the real-FFT split steps and the spectrum products, all
 * VF_LANES independent transforms at once, one per lane. Included by one kernel source per
 * ISA (after simd/vec.h); every helper inlines into its caller, whose n is a constant.
 *
 * A real transform of n = 2M points is a complex one of M points (z[j] = x[2j] + i x[2j+1])
 * and a split step. The complex transforms are radix-2: decimation in frequency forward
 * (natural order in, bit-reversed out) and in time for the inverse (bit-reversed in,
 * natural out), so no permutation pass is needed; the split steps index through bitrev().
 * Scaling: the forward leaves X[k] doubled for 0 < k < M, the inverse is unnormalized (n
 * times the inverse DFT); the algorithms fold both into the kernel spectra.
 *
 * Spectrum layout: plane 2k holds slot k's real parts, plane 2k+1 its imaginary parts (one
 * vector per plane, planes `ps` floats apart); slot 0 holds the two real bins X[0] (as re)
 * and X[M] (as im).
 */
#ifndef FCONV_KERNELS_FFT_RADIX2_H
#define FCONV_KERNELS_FFT_RADIX2_H

#include "core/dispatch.h"
#include "simd/vec.h"

/* cos(2 pi k / 128) (128 = FCONV_FFT_ROWS_MAX_N), k < 64: every twiddle of every size. */
static const float twiddle_cos[64] = {
    1.0f, 9.987954562e-01f, 9.951847267e-01f, 9.891765100e-01f,
    9.807852804e-01f, 9.700312532e-01f, 9.569403357e-01f, 9.415440652e-01f,
    9.238795325e-01f, 9.039892931e-01f, 8.819212643e-01f, 8.577286100e-01f,
    8.314696123e-01f, 8.032075315e-01f, 7.730104534e-01f, 7.409511254e-01f,
    7.071067812e-01f, 6.715589548e-01f, 6.343932842e-01f, 5.956993045e-01f,
    5.555702330e-01f, 5.141027442e-01f, 4.713967368e-01f, 4.275550934e-01f,
    3.826834324e-01f, 3.368898534e-01f, 2.902846773e-01f, 2.429801799e-01f,
    1.950903220e-01f, 1.467304745e-01f, 9.801714033e-02f, 4.906767433e-02f,
    0.0f, -4.906767433e-02f, -9.801714033e-02f, -1.467304745e-01f,
    -1.950903220e-01f, -2.429801799e-01f, -2.902846773e-01f, -3.368898534e-01f,
    -3.826834324e-01f, -4.275550934e-01f, -4.713967368e-01f, -5.141027442e-01f,
    -5.555702330e-01f, -5.956993045e-01f, -6.343932842e-01f, -6.715589548e-01f,
    -7.071067812e-01f, -7.409511254e-01f, -7.730104534e-01f, -8.032075315e-01f,
    -8.314696123e-01f, -8.577286100e-01f, -8.819212643e-01f, -9.039892931e-01f,
    -9.238795325e-01f, -9.415440652e-01f, -9.569403357e-01f, -9.700312532e-01f,
    -9.807852804e-01f, -9.891765100e-01f, -9.951847267e-01f, -9.987954562e-01f,
};
#define TWIDDLE_N FCONV_FFT_ROWS_MAX_N

/* sin(2 pi k / 128) = cos(2 pi (32 - k) / 128), k < 64: the same floats a table of sines
 * held, bit for bit. */
static ALWAYS_INLINE float twiddle_sin(int k) { return twiddle_cos[k < 32 ? 32 - k : k - 32]; }

/* Every loop over samples, slots or butterflies is unrolled completely (n is a constant in
 * each instance), so array indices, bit reversals and twiddles are constants and the arrays
 * live in registers as far as they fit: rolled, GCC kept them in memory with computed
 * indices and the transforms took longer than the products. */
#if defined(__GNUC__) && !defined(__clang__)
#define UNROLL _Pragma("GCC unroll 128")
#else
#define UNROLL
#endif
#define MAX_M (FCONV_FFT_ROWS_MAX_N / 2)

/* Slots (complex bins) summed at once by the product loop: two accumulators each, beside
 * the two loaded spectrum vectors and two broadcast taps. */
#define SLOT_BLOCK (VF_LANES == 16 ? 8 : 4)

static ALWAYS_INLINE int bitrev(int k, const int m) {
    int r = 0;
    UNROLL
    for (int bit = 1; bit < m; bit <<= 1) r = (r << 1) | ((k & bit) ? 1 : 0);
    return r;
}

/* One radix-2 stage of butterflies `half` apart. Forward (decimation in frequency, exponent
 * -1): a + b, then (a - b) w^j. Inverse (decimation in time, exponent +1): a +- b w^j. */
static ALWAYS_INLINE void forward_stage(vf *re, vf *im, const int m, const int half) {
    const int step = TWIDDLE_N / (2 * half); /* w = exp(-2 pi i j / (2 half)) */
    UNROLL
    for (int s = 0; s < m; s += 2 * half) {
        UNROLL
        for (int j = 0; j < half; j++) {
            const int p = s + j, q = p + half;
            const vf dr = vf_sub(re[p], re[q]), di = vf_sub(im[p], im[q]);
            re[p] = vf_add(re[p], re[q]);
            im[p] = vf_add(im[p], im[q]);
            if (j == 0) {
                re[q] = dr;
                im[q] = di;
            } else { /* (dr + i di)(c - i s) */
                const vf c = vf_set1(twiddle_cos[j * step]), sn = vf_set1(twiddle_sin(j * step));
                re[q] = vf_fma(dr, c, vf_mul(di, sn));
                im[q] = vf_fnma(dr, sn, vf_mul(di, c));
            }
        }
    }
}

static ALWAYS_INLINE void inverse_stage(vf *re, vf *im, const int m, const int half) {
    const int step = TWIDDLE_N / (2 * half); /* w = exp(+2 pi i j / (2 half)) */
    UNROLL
    for (int s = 0; s < m; s += 2 * half) {
        UNROLL
        for (int j = 0; j < half; j++) {
            const int p = s + j, q = p + half;
            vf tr = re[q], ti = im[q];
            if (j != 0) { /* (br + i bi)(c + i s) */
                const vf c = vf_set1(twiddle_cos[j * step]), sn = vf_set1(twiddle_sin(j * step));
                tr = vf_fnma(im[q], sn, vf_mul(re[q], c));
                ti = vf_fma(re[q], sn, vf_mul(im[q], c));
            }
            re[q] = vf_sub(re[p], tr);
            im[q] = vf_sub(im[p], ti);
            re[p] = vf_add(re[p], tr);
            im[p] = vf_add(im[p], ti);
        }
    }
}

/* Complex DFT of size m (8..64), exponent -1, in place; natural order in, bit-reversed out.
 * One call per stage with a constant span, so that every loop has constant bounds. */
static ALWAYS_INLINE void complex_forward_dif(vf *re, vf *im, const int m) {
    if (m >= 64) forward_stage(re, im, m, 32);
    if (m >= 32) forward_stage(re, im, m, 16);
    if (m >= 16) forward_stage(re, im, m, 8);
    forward_stage(re, im, m, 4);
    forward_stage(re, im, m, 2);
    forward_stage(re, im, m, 1);
}

/* Complex DFT of size m (8..64), exponent +1, unnormalized, in place; bit-reversed in,
 * natural out. */
static ALWAYS_INLINE void complex_inverse_dit(vf *re, vf *im, const int m) {
    inverse_stage(re, im, m, 1);
    inverse_stage(re, im, m, 2);
    inverse_stage(re, im, m, 4);
    if (m >= 16) inverse_stage(re, im, m, 8);
    if (m >= 32) inverse_stage(re, im, m, 16);
    if (m >= 64) inverse_stage(re, im, m, 32);
}

/* Stores the spectrum of the real segment whose even samples are re[], odd im[] (the
 * complex transform's input, transformed in place here) at spec, planes ps apart. */
static ALWAYS_INLINE void fft_forward_real(const int n, vf *re, vf *im, float *spec, size_t ps) {
    const int m = n / 2;
    complex_forward_dif(re, im, m);
    const int step = TWIDDLE_N / n;
    vf_store(spec, vf_add(re[0], im[0]));
    vf_store(spec + ps, vf_sub(re[0], im[0]));
    UNROLL
    for (int k = 1; k < m; k++) {
        /* A = Z[k], B = conj(Z[M-k]): X[k] = (A + B) - i w^k (A - B), w = exp(-2 pi i / n) */
        const int p = bitrev(k, m), q = bitrev(m - k, m);
        const vf er = vf_add(re[p], re[q]), ei = vf_sub(im[p], im[q]);
        const vf dr = vf_sub(re[p], re[q]), di = vf_add(im[p], im[q]);
        const vf c = vf_set1(twiddle_cos[k * step]), sn = vf_set1(twiddle_sin(k * step));
        vf_store(spec + (size_t)(2 * k) * ps, vf_fnma(sn, dr, vf_fma(c, di, er)));
        vf_store(spec + (size_t)(2 * k + 1) * ps, vf_fnma(sn, di, vf_fnma(c, dr, ei)));
    }
}

/* Slots [k0, k0 + SLOT_BLOCK) of Y = sum_a taps[a] * X_a into yr, yi, where X_a's planes
 * start at x[a] (ps floats apart, any alignment); slot 0 (first) multiplies its two real
 * bins separately. */
static ALWAYS_INLINE void fft_products_block(const float *const *x, size_t ps, const float *taps, size_t ntaps,
                                             const int m, const int k0, const int first, vf *yr, vf *yi) {
    vf ar[SLOT_BLOCK], ai[SLOT_BLOCK];
    UNROLL
    for (int s = 0; s < SLOT_BLOCK; s++) ar[s] = ai[s] = vf_zero();
    for (size_t a = 0; a < ntaps; a++) {
        const float *xa = x[a] + (size_t)(2 * k0) * ps, *u = taps + a * (size_t)(2 * m) + 2 * k0;
        UNROLL
        for (int s = 0; s < SLOT_BLOCK; s++) {
            vf xr = vf_loadu(xa + (size_t)(2 * s) * ps), xi = vf_loadu(xa + (size_t)(2 * s + 1) * ps);
            IN_REGISTER(xr);
            IN_REGISTER(xi);
            const vf ur = vf_set1(u[2 * s]), ui = vf_set1(u[2 * s + 1]);
            if (first && s == 0) {
                ar[s] = vf_fma(xr, ur, ar[s]);
                ai[s] = vf_fma(xi, ui, ai[s]);
            } else {
                ar[s] = vf_fnma(xi, ui, vf_fma(xr, ur, ar[s]));
                ai[s] = vf_fma(xi, ur, vf_fma(xr, ui, ai[s]));
            }
        }
    }
    UNROLL
    for (int s = 0; s < SLOT_BLOCK; s++) {
        yr[k0 + s] = ar[s];
        yi[k0 + s] = ai[s];
    }
}

/* The real segment (even samples re[], odd im[]) whose spectrum is sum_a taps[a] * X_a:
 * the products, the inverse split into bit-reversed order, the inverse complex transform. */
static ALWAYS_INLINE void fft_products_inverse(const int n, const float *const *x, size_t ps, const float *taps,
                                               size_t ntaps, vf *re, vf *im) {
    const int m = n / 2;
    vf yr[MAX_M], yi[MAX_M];
    fft_products_block(x, ps, taps, ntaps, m, 0, 1, yr, yi);
    UNROLL
    for (int k0 = SLOT_BLOCK; k0 < m; k0 += SLOT_BLOCK) fft_products_block(x, ps, taps, ntaps, m, k0, 0, yr, yi);

    /* Z[k] = E + i O, E = Y[k] + conj(Y[M-k]), O = (Y[k] - conj(Y[M-k])) conj(w^k), into
     * bit-reversed positions; Y[0] and Y[M] are slot 0's two reals. */
    re[0] = vf_add(yr[0], yi[0]);
    im[0] = vf_sub(yr[0], yi[0]);
    const int step = TWIDDLE_N / n;
    UNROLL
    for (int k = 1; k < m; k++) {
        const vf er = vf_add(yr[k], yr[m - k]), ei = vf_sub(yi[k], yi[m - k]);
        const vf dr = vf_sub(yr[k], yr[m - k]), di = vf_add(yi[k], yi[m - k]);
        const vf c = vf_set1(twiddle_cos[k * step]), sn = vf_set1(twiddle_sin(k * step));
        const int p = bitrev(k, m);
        re[p] = vf_fnma(sn, dr, vf_fnma(c, di, er));
        im[p] = vf_fnma(sn, di, vf_fma(c, dr, ei));
    }
    complex_inverse_dit(re, im, m);
}

#endif
