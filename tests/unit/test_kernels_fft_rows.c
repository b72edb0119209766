/*
 * test_kernels_fft_rows.c — the fft-rows transforms (kernels/fft) on every ISA this machine
 * runs, against float64 DFTs written out here: the forward's spectra (slot conventions of
 * core/dispatch.h), the inverse's products and inverse transform for several kernel heights,
 * hops and output counts (nothing written at or past count), and the streamed row copy at
 * every alignment. Buffers are exactly as long as the contracts let the kernels read, so
 * AddressSanitizer catches an over-read.
 */
#include <math.h>
#include <stdint.h>

#include "test-isa.h"
#include "test.h"

#define PI 3.14159265358979323846

static const size_t sizes[] = {16, 32, 64, 128};

/* Largest |v| of n doubles (at least 1e-30). */
static double max_abs(const double *v, size_t n) {
    double m = 1e-30;
    for (size_t i = 0; i < n; i++) m = fabs(v[i]) > m ? fabs(v[i]) : m;
    return m;
}

static void test_forward_all_isas(void) {
    for (int isa = FCONV_ISA_SCALAR; isa <= FCONV_ISA_AVX512; isa++) {
        const struct fconv_kernels *k = test_isa_kernels("test_kernels_fft_rows", (fconv_isa)isa);
        if (!k) continue;
        const size_t L = k->lanes;
        for (size_t si = 0; si < 4; si++) {
            const size_t n = sizes[si], hops[] = {1, n / 4, n / 2 + 3, n};
            for (size_t hi = 0; hi < 4; hi++) {
                const size_t hop = hops[hi], len = (L - 1) * hop + n;
                float *ext = malloc(len * sizeof *ext), *spec = fconv_alloc_aligned(n * L * sizeof *spec);
                test_fill_random(ext, len);
                k->fft_rows_forward(n, ext, hop, spec);
                double worst = 0.0, scale = 0.0;
                for (size_t l = 0; l < L; l++) {
                    const float *x = ext + l * hop;
                    double ref[2 * FCONV_FFT_ROWS_MAX_N], got[2 * FCONV_FFT_ROWS_MAX_N];
                    for (size_t q = 0; q <= n / 2; q++) { /* X[q] */
                        double re = 0.0, im = 0.0;
                        for (size_t t = 0; t < n; t++) {
                            re += x[t] * cos(2.0 * PI * (double)(q * t % n) / (double)n);
                            im -= x[t] * sin(2.0 * PI * (double)(q * t % n) / (double)n);
                        }
                        if (q == 0) ref[0] = re;
                        else if (q == n / 2) ref[1] = re;
                        else {
                            ref[2 * q] = 2.0 * re;
                            ref[2 * q + 1] = 2.0 * im;
                        }
                    }
                    for (size_t e = 0; e < n; e++) got[e] = spec[e * L + l];
                    scale = fmax(scale, max_abs(ref, n));
                    for (size_t e = 0; e < n; e++) worst = fmax(worst, fabs(got[e] - ref[e]));
                }
                CHECKF(worst <= 1e-5 * scale, "%s forward n=%zu hop=%zu: error %.3g of %.3g", k->name, n, hop,
                       worst, scale);
                free(ext);
                fconv_free_aligned(spec);
            }
        }
    }
}

/* The inverse of n points, kh spectra rows, hop, count outputs, against float64. */
static void check_inverse(const struct fconv_kernels *k, size_t n, size_t kh, size_t hop, size_t count) {
    const size_t L = k->lanes, total = L * hop;
    float *rows = fconv_alloc_aligned(kh * n * L * sizeof *rows), *taps = malloc(kh * n * sizeof *taps);
    float *y = malloc((total + 1) * sizeof *y);
    const float **spec = malloc(kh * sizeof *spec);
    test_fill_random(rows, kh * n * L);
    test_fill_random(taps, kh * n);
    for (size_t a = 0; a < kh; a++) spec[a] = rows + (kh - 1 - a) * n * L; /* any order of rows */
    for (size_t e = 0; e <= total; e++) y[e] = -7.0f;
    k->fft_rows_inverse(n, spec, taps, kh, hop, y, count);
    double worst = 0.0, scale = 1e-30;
    for (size_t l = 0; l < L; l++) {
        double yr[FCONV_FFT_ROWS_MAX_N / 2], yi[FCONV_FFT_ROWS_MAX_N / 2];
        for (size_t q = 0; q < n / 2; q++) { /* products in float64 */
            double sr = 0.0, si = 0.0;
            for (size_t a = 0; a < kh; a++) {
                double xr = spec[a][2 * q * L + l], xi = spec[a][(2 * q + 1) * L + l];
                double ur = taps[a * n + 2 * q], ui = taps[a * n + 2 * q + 1];
                if (q == 0) {
                    sr += ur * xr;
                    si += ui * xi;
                } else {
                    sr += ur * xr - ui * xi;
                    si += ur * xi + ui * xr;
                }
            }
            yr[q] = sr;
            yi[q] = si;
        }
        for (size_t t = 0; t < hop; t++) { /* sum over all n bins of Y[q] e^{+2 pi i q t / n} */
            double v = yr[0] + yi[0] * ((t & 1) ? -1.0 : 1.0);
            for (size_t q = 1; q < n / 2; q++) {
                double ang = 2.0 * PI * (double)(q * t % n) / (double)n;
                v += 2.0 * (yr[q] * cos(ang) - yi[q] * sin(ang));
            }
            scale = fmax(scale, fabs(v));
            if (l * hop + t < count) worst = fmax(worst, fabs(v - y[l * hop + t]));
        }
    }
    CHECKF(worst <= 2e-5 * scale, "%s inverse n=%zu kh=%zu hop=%zu count=%zu: error %.3g of %.3g", k->name, n, kh, hop,
           count, worst, scale);
    size_t bad = total + 1;
    for (size_t e = count; e <= total && bad > total; e++)
        if (y[e] != -7.0f) bad = e;
    CHECKF(bad > total, "%s inverse n=%zu hop=%zu count=%zu: wrote y[%zu]", k->name, n, hop, count, bad);
    fconv_free_aligned(rows);
    free(taps);
    free(y);
    free(spec);
}

static void test_inverse_all_isas(void) {
    for (int isa = FCONV_ISA_SCALAR; isa <= FCONV_ISA_AVX512; isa++) {
        const struct fconv_kernels *k = test_isa_kernels("test_kernels_fft_rows", (fconv_isa)isa);
        if (!k) continue;
        for (size_t si = 0; si < 4; si++) {
            const size_t n = sizes[si], L = k->lanes;
            const size_t cases[][3] = {{1, n, L * n}, {3, n / 2 + 1, L * (n / 2 + 1)}, {7, n - 6, 1},
                                       {2, 5, 3 * 5 + 2}, {1, 1, L}, {5, n / 4, L * (n / 4) - 1}};
            for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
                check_inverse(k, n, cases[c][0], cases[c][1], cases[c][2]);
        }
    }
}

static void test_stream_row_all_isas(void) {
    for (int isa = FCONV_ISA_SCALAR; isa <= FCONV_ISA_AVX512; isa++) {
        const struct fconv_kernels *k = test_isa_kernels("test_kernels_fft_rows", (fconv_isa)isa);
        if (!k) continue;
        float *buf = fconv_alloc_aligned(200 * sizeof *buf), src[160];
        test_fill_random(src, 160);
        for (size_t offset = 0; offset < 17; offset++)
            for (size_t n = 0; n <= 150; n += n < 40 ? 1 : 37) {
                for (size_t e = 0; e < 200; e++) buf[e] = -7.0f;
                k->fft_rows_stream_row(buf + offset, src, n);
                size_t bad = 200;
                for (size_t e = 0; e < 200 && bad == 200; e++) {
                    float want = e >= offset && e < offset + n ? src[e - offset] : -7.0f;
                    if (buf[e] != want) bad = e;
                }
                CHECKF(bad == 200, "%s stream_row offset %zu n %zu: buf[%zu] wrong", k->name, offset, n, bad);
            }
        fconv_free_aligned(buf);
    }
}

int main(void) {
    test_init();
    TEST(test_forward_all_isas);
    TEST(test_inverse_all_isas);
    TEST(test_stream_row_all_isas);
    return test_finish();
}
