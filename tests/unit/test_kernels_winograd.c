/*
 * test_kernels_winograd.c — the Winograd F(2x2, 3x3) and F(4x4, 3x3) input gathers, F(3x3,
 * 4x4)'s stride-2 phase gather and the output scatters of all three (kernels/winograd) on
 * every ISA this machine runs, against their definitions: rows of every width around the
 * vector sizes, runs that start left of the row (padding), end past it, or lie inside, grids
 * of 1-16 tile rows with padding rows (and output rows past the map), and a guard that
 * nothing is written past the run, the row or the patch's alpha columns. ISAs the CPU lacks
 * are reported as skipped.
 */
#include "core/dispatch.h"
#include "test-isa.h"
#include "test.h"

#define GUARD 1234.5f

/* The gather of F(m x m): m = 3 is F(3x3, 4x4)'s phase gather (tiles 6 columns apart, 6
 * patch columns 2 apart), m = 2 and 4 F(2x2, 3x3)'s and F(4x4, 3x3)'s (tiles m apart, m + 2
 * adjacent patch columns). */
static void check_gather(const struct fconv_kernels *k, int64_t w, int64_t col0, size_t run, size_t m) {
    float *xr = malloc(sizeof(float) * (size_t)(w > 0 ? w : 1));
    const size_t step = run + 3, alpha = m == 3 ? 6 : m + 2;
    const int64_t tile_step = m == 3 ? 6 : (int64_t)m, col_step = m == 3 ? 2 : 1;
    float *dst = malloc(sizeof(float) * 6 * step);
    test_fill_random(xr, (size_t)(w > 0 ? w : 1));
    for (size_t e = 0; e < 6 * step; e++) dst[e] = GUARD;
    k->wino_gather(xr, col0, w, m, run, dst, step);
    int bad = 0;
    for (size_t j = 0; j < 6 && !bad; j++) /* rows alpha .. 5 must stay untouched */
        for (size_t e = 0; e < step && !bad; e++) {
            int64_t col = col0 + tile_step * (int64_t)e + col_step * (int64_t)j;
            float want = e >= run || j >= alpha ? GUARD : col >= 0 && col < w ? xr[col] : 0.0f;
            if (dst[j * step + e] != want) {
                CHECKF(0, "%s m=%zu w=%lld col0=%lld run=%zu: column %zu of tile %zu is %g, want %g", k->name, m,
                       (long long)w, (long long)col0, run, j, e, (double)dst[j * step + e], (double)want);
                bad = 1;
            }
        }
    free(xr);
    free(dst);
}

static void test_gather_all_isas(void) {
    for (int isa = FCONV_ISA_SCALAR; isa <= FCONV_ISA_AVX512; isa++) {
        const struct fconv_kernels *k = test_isa_kernels("test_kernels_winograd", (fconv_isa)isa);
        if (!k) continue;
        for (size_t m = 2; m <= 4; m++) {
            const int64_t tile_step = m == 3 ? 6 : (int64_t)m;
            for (int64_t w = 1; w <= 150; w += (w < 80 ? 1 : 7))
                for (int64_t col0 = -4; col0 <= 3; col0++) {
                    /* tiles starting inside or left of the row */
                    size_t fit = (size_t)((w - col0 + tile_step - 1) / tile_step);
                    check_gather(k, w, col0, fit, m);
                    check_gather(k, w, col0, fit + 2, m);              /* past the row: zeros */
                    check_gather(k, w, col0, fit > 5 ? fit - 5 : 1, m); /* stops inside */
                }
            for (int rep = 0; rep < 200; rep++) { /* long rows, runs anywhere in them */
                int64_t w = test_rand_int(1, 700), col0 = test_rand_int(-4, w);
                check_gather(k, w, col0, (size_t)test_rand_int(0, 200), m);
            }
        }
    }
}

/* The grid gather: ntiles / 4 tile rows of 6 patch rows each over rows of width w, some of
 * them NULL (padding), against the definition, with a guard past ntiles. */
static void check_gather_grid(const struct fconv_kernels *k, int64_t w, int64_t col0, size_t ntiles) {
    const size_t nrows = ntiles / 4 * 6, step = ntiles + 5;
    float *x = malloc(sizeof(float) * nrows * (size_t)w), *dst = malloc(sizeof(float) * 36 * step);
    const float *rows[4 * 6 * 4];
    test_fill_random(x, nrows * (size_t)w);
    for (size_t r = 0; r < nrows; r++) rows[r] = test_rand_int(0, 5) == 0 ? NULL : x + r * (size_t)w;
    for (size_t e = 0; e < 36 * step; e++) dst[e] = GUARD;
    k->wino_f4_gather_grid(rows, col0, w, ntiles, dst, step);
    int bad = 0;
    for (size_t ij = 0; ij < 36 && !bad; ij++)
        for (size_t t = 0; t < step && !bad; t++) {
            const float *row = t < ntiles ? rows[t / 4 * 6 + ij / 6] : NULL;
            int64_t col = col0 + 4 * (int64_t)(t % 4) + (int64_t)(ij % 6);
            float want = t >= ntiles ? GUARD : row && col >= 0 && col < w ? row[col] : 0.0f;
            if (dst[ij * step + t] != want) {
                CHECKF(0, "%s w=%lld col0=%lld ntiles=%zu: element (%zu, %zu) of tile %zu is %g, want %g", k->name,
                       (long long)w, (long long)col0, ntiles, ij / 6, ij % 6, t, (double)dst[ij * step + t],
                       (double)want);
                bad = 1;
            }
        }
    free(x);
    free(dst);
}

static void test_gather_grid_all_isas(void) {
    for (int isa = FCONV_ISA_SCALAR; isa <= FCONV_ISA_AVX512; isa++) {
        const struct fconv_kernels *k = test_isa_kernels("test_kernels_winograd", (fconv_isa)isa);
        if (!k) continue;
        for (int64_t w = 1; w <= 24; w++)
            for (int64_t col0 = -3; col0 <= 2; col0++)
                for (size_t ntiles = 4; ntiles <= 64; ntiles += 4) check_gather_grid(k, w, col0, ntiles);
    }
}

/* The grid scatter: ntiles / 4 tile rows of 4 output rows each, some NULL (past the map),
 * rows out_w wide with a guard after them. */
static void check_scatter_grid(const struct fconv_kernels *k, int64_t out_w, size_t ntiles, int with_bias, int relu) {
    const size_t nrows = ntiles / 4 * 4, step = ntiles + 3, width = (size_t)out_w + 20;
    float *src = malloc(sizeof(float) * 16 * step), *y = malloc(sizeof(float) * nrows * width);
    float *yrows[4 * 16];
    test_fill_random(src, 16 * step);
    src[step + 1] = NAN; /* tile 1, element (0, 1) */
    for (size_t e = 0; e < nrows * width; e++) y[e] = GUARD;
    for (size_t r = 0; r < nrows; r++) yrows[r] = test_rand_int(0, 6) == 0 ? NULL : y + r * width;
    float bias = -0.125f;
    k->wino_f4_scatter_grid(src, step, ntiles, yrows, out_w, with_bias ? &bias : NULL, relu);
    int bad = 0;
    for (size_t r = 0; r < nrows && !bad; r++)
        for (size_t q = 0; q < width && !bad; q++) {
            float want = GUARD;
            if (yrows[r] && (int64_t)q < out_w) {
                size_t t = r / 4 * 4 + q / 4, i = r % 4, j = q % 4;
                want = src[(i * 4 + j) * step + t];
                if (with_bias) want += bias;
                if (relu && want < 0.0f) want = 0.0f;
            }
            float got = y[r * width + q];
            if (!(got == want || (isnan(got) && isnan(want)))) {
                CHECKF(0, "%s out_w=%lld ntiles=%zu bias=%d relu=%d: row %zu column %zu is %g, want %g", k->name,
                       (long long)out_w, ntiles, with_bias, relu, r, q, (double)got, (double)want);
                bad = 1;
            }
        }
    free(src);
    free(y);
}

static void test_scatter_grid_all_isas(void) {
    for (int isa = FCONV_ISA_SCALAR; isa <= FCONV_ISA_AVX512; isa++) {
        const struct fconv_kernels *k = test_isa_kernels("test_kernels_winograd", (fconv_isa)isa);
        if (!k) continue;
        for (int64_t out_w = 1; out_w <= 16; out_w++)
            for (size_t ntiles = 4; ntiles <= 64; ntiles += 4)
                for (int v = 0; v < 4; v++) check_scatter_grid(k, out_w, ntiles, v & 1, v >> 1);
    }
}

/* stream: non-temporal stores asked for, y at `shift` floats past a 64-byte boundary (0:
 * aligned blocks are streamed, others take the plain path). */
static void check_scatter(const struct fconv_kernels *k, size_t m, int64_t out_w, int64_t q0, size_t run,
                          int with_bias, int relu, int stream, size_t shift) {
    const size_t step = run + 2, len = (size_t)out_w + 40;
    float *src = malloc(sizeof(float) * 4 * step), *ybuf = aligned_alloc(64, (sizeof(float) * (len + 64) + 63) / 64 * 64);
    float *y = ybuf + shift;
    test_fill_random(src, 4 * step);
    if (run > 1) src[1] = NAN; /* tile 1, column 0 */
    for (size_t e = 0; e < len; e++) y[e] = GUARD;
    float bias = 0.25f;
    k->wino_scatter(src, step, m, run, y, q0, out_w, with_bias ? &bias : NULL, relu, stream);
    int bad = 0;
    for (size_t e = 0; e < len && !bad; e++) {
        int64_t q = (int64_t)e, rel = q - q0;
        float want = GUARD;
        if (rel >= 0 && rel < (int64_t)(m * run) && q < out_w) {
            want = src[(size_t)rel % m * step + (size_t)rel / m];
            if (with_bias) want += bias;
            if (relu && want < 0.0f) want = 0.0f;
        }
        if (!(y[e] == want || (isnan(y[e]) && isnan(want)))) {
            CHECKF(0, "%s m=%zu out_w=%lld q0=%lld run=%zu bias=%d relu=%d stream=%d shift=%zu: y[%zu] = %g, want %g",
                   k->name, m, (long long)out_w, (long long)q0, run, with_bias, relu, stream, shift, e, (double)y[e],
                   (double)want);
            bad = 1;
        }
    }
    free(src);
    free(ybuf);
}

static void test_scatter_all_isas(void) {
    for (int isa = FCONV_ISA_SCALAR; isa <= FCONV_ISA_AVX512; isa++) {
        const struct fconv_kernels *k = test_isa_kernels("test_kernels_winograd", (fconv_isa)isa);
        if (!k) continue;
        for (size_t m = 2; m <= 4; m++)
            for (int64_t out_w = 1; out_w <= 150; out_w += (out_w < 80 ? 1 : 7))
                for (int64_t q0 = 0; q0 <= 2 * (int64_t)m && q0 < out_w; q0 += (int64_t)m) {
                    size_t fit = (size_t)(out_w - q0 + (int64_t)m - 1) / m;
                    for (int v = 0; v < 16; v++) {
                        const int stream = (v >> 2) & 1;
                        const size_t shift = (size_t)(v >> 3) * 3;
                        check_scatter(k, m, out_w, q0, fit, v & 1, (v >> 1) & 1, stream, shift);
                        check_scatter(k, m, out_w, q0, fit > 5 ? fit - 5 : 1, v & 1, (v >> 1) & 1, stream, shift);
                    }
                }
    }
}

int main(void) {
    test_init();
    TEST(test_gather_all_isas);
    TEST(test_gather_grid_all_isas);
    TEST(test_scatter_all_isas);
    TEST(test_scatter_grid_all_isas);
    return test_finish();
}
