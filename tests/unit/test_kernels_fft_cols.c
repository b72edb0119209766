/*
 * test_kernels_fft_cols.c — the fft-cols transforms (kernels/fft/fft-cols.c) on every ISA
 * this machine runs: forward transforms of every lane block of a small grid, then the
 * inverse with the spectra of a random kernel's columns (fconv_fft_segment_spectra), must
 * give the grid's 2D correlation with that kernel, computed in float64 here, for every
 * transform size, several kernel shapes, lane distances (interleaved channels), row counts
 * and partial vectors, with plain and streamed stores; nothing outside the rows x len
 * block written. Buffers are as long as the contracts let the kernels read, so
 * AddressSanitizer catches an over-read.
 */
#include <math.h>
#include <stdint.h>

#include "algo/fft-common.h"
#include "test-isa.h"
#include "test.h"

static const size_t sizes[] = {16, 32, 64, 128};

/* n x n transforms of kh x kw kernels, lanes dist apart; rows outputs of len lanes. */
static void check(const struct fconv_kernels *k, size_t n, size_t kh, size_t kw, size_t dist, size_t rows,
                  size_t len, int stream) {
    const size_t L = k->lanes, hop = n - kh + 1;
    const size_t width = (L + (kw - 1) * dist + L - 1) / L * L; /* grid floats per row: whole vectors */
    const size_t ps = width, ys = 3 * L;                         /* plane and output row strides */
    float *grid = malloc(n * width * sizeof *grid), *kc = malloc(kh * kw * sizeof *kc);
    float *kt = malloc(kh * kw * sizeof *kt), *taps = malloc(kw * n * sizeof *taps);
    float *spec = fconv_alloc_aligned(n * ps * sizeof *spec), *y = fconv_alloc_aligned(hop * ys * sizeof *y);
    const float **at = malloc(n * sizeof *at);
    test_fill_random(grid, n * width);
    test_fill_random(kc, kh * kw);
    for (size_t a = 0; a < kh; a++)
        for (size_t b = 0; b < kw; b++) kt[b * kh + a] = kc[a * kw + b];
    fconv_fft_segment_spectra(kt, (int64_t)kw, (int64_t)kh, (int64_t)n, taps);
    for (size_t e0 = 0; e0 < width; e0 += L) {
        for (size_t t = 0; t < n; t++) at[t] = grid + t * width + e0;
        k->fft_cols_forward(n, at, spec + e0, ps);
    }
    for (size_t e = 0; e < hop * ys; e++) y[e] = -7.0f;
    k->fft_cols_inverse(n, spec, ps, dist, taps, kw, y, ys, rows, len, stream);
    if (stream) fconv_stream_fence();

    double worst = 0.0, scale = 1e-30;
    size_t stray = SIZE_MAX;
    for (size_t t = 0; t < hop; t++)
        for (size_t l = 0; l < ys; l++) {
            const float got = y[t * ys + l];
            if (t >= rows || l >= len) {
                if (got != -7.0f && stray == SIZE_MAX) stray = t * ys + l;
                continue;
            }
            double want = 0.0, mag = 0.0;
            for (size_t a = 0; a < kh; a++)
                for (size_t b = 0; b < kw; b++) {
                    const double p = (double)kc[a * kw + b] * grid[(t + a) * width + l + b * dist];
                    want += p;
                    mag += fabs(p);
                }
            scale = fmax(scale, mag);
            worst = fmax(worst, fabs(got - want));
        }
    CHECKF(worst <= 2e-6 * scale, "%s n=%zu kernel %zux%zu dist %zu rows %zu len %zu stream %d: error %.3g of %.3g",
           k->name, n, kh, kw, dist, rows, len, stream, worst, scale);
    CHECKF(stray == SIZE_MAX, "%s n=%zu kernel %zux%zu rows %zu len %zu: wrote y[%zu]", k->name, n, kh, kw, rows,
           len, stray);
    free(grid);
    free(kc);
    free(kt);
    free(taps);
    free(at);
    fconv_free_aligned(spec);
    fconv_free_aligned(y);
}

static void test_transforms_all_isas(void) {
    for (int isa = FCONV_ISA_SCALAR; isa <= FCONV_ISA_AVX512; isa++) {
        const struct fconv_kernels *k = test_isa_kernels("test_kernels_fft_cols", (fconv_isa)isa);
        if (!k) continue;
        const size_t L = k->lanes;
        for (size_t si = 0; si < 4; si++) {
            const size_t n = sizes[si];
            /* kh, kw, dist, rows (0: the whole hop), len, stream */
            const size_t cases[][6] = {{1, 1, 1, 0, L, 0},         {3, 3, 1, 0, L, 1},
                                       {7, 5, 3, 2, L, 0},         {n / 4 + 1, 2, 1, 1, L > 1 ? L - 1 : 1, 0},
                                       {n / 2, 7, 2, 0, 1, 0},     {3 * n / 4 + 1, 1, 1, 0, L, 1},
                                       {2, n / 2 + 3, 1, 0, L, 0}};
            for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
                const size_t kh = cases[c][0], hop = n - kh + 1;
                check(k, n, kh, cases[c][1], cases[c][2], cases[c][3] ? cases[c][3] : hop, cases[c][4],
                      (int)cases[c][5]);
            }
        }
    }
}

int main(void) {
    test_init();
    TEST(test_transforms_all_isas);
    return test_finish();
}
