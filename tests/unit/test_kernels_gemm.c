/*
 * test_kernels_gemm.c — fastconv's own GEMM (kernels/gemm: the packed driver and the per-ISA
 * micro-kernel) on every ISA this machine runs, against a float64 reference, on shapes that
 * cross every MR / NR / KC / tile remainder, both transposes and accumulate; results must be
 * bit-identical for 1 and 2 threads, and with A packed beforehand, streamed or with the fused
 * bias / ReLU epilogue, and with the wide tile (AVX-512) or without. ISAs the CPU lacks are
 * reported as skipped.
 */
#include <float.h>

#include "core/dispatch.h"
#include "core/internal.h"
#include "kernels/gemm/gemm.h"
#include "test-cpu.h"
#include "test-isa.h"
#include "test.h"

static size_t table_mr(fconv_isa isa) {
    switch (isa) {
    case FCONV_ISA_AVX2: return fconv_gemm_mr__avx2();
    case FCONV_ISA_AVX512: return fconv_gemm_mr__avx512();
    default: return fconv_gemm_mr__scalar();
    }
}
static size_t table_nr(fconv_isa isa) {
    switch (isa) {
    case FCONV_ISA_AVX2: return fconv_gemm_nr__avx2();
    case FCONV_ISA_AVX512: return fconv_gemm_nr__avx512();
    default: return fconv_gemm_nr__scalar();
    }
}

static void check_gemm(const struct fconv_kernels *kern, size_t m, size_t n, size_t k, int ta, int tb,
                       int accumulate) {
    size_t lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 1, ldc = n + 2; /* padded rows */
    size_t na = (ta ? k : m) * lda, nb = (tb ? n : k) * ldb; /* k = 0: empty A or B */
    float *a = malloc(sizeof(float) * (na + 1)), *b = malloc(sizeof(float) * (nb + 1));
    float *c0 = malloc(sizeof(float) * m * ldc), *c1 = malloc(sizeof(float) * m * ldc);
    float *c2 = malloc(sizeof(float) * m * ldc), *c3 = malloc(sizeof(float) * m * ldc);
    test_fill_random(a, na + 1);
    test_fill_random(b, nb + 1);
    test_fill_random(c0, m * ldc);
    memcpy(c1, c0, sizeof(float) * m * ldc);
    memcpy(c2, c0, sizeof(float) * m * ldc);
    memcpy(c3, c0, sizeof(float) * m * ldc);
    /* the job grid follows the thread count; the bits must not */
    fconv_gemm_packed(kern, 1, ta, tb, m, n, k, a, lda, b, ldb, accumulate, c1, ldc);
    fconv_gemm_packed(kern, 2, ta, tb, m, n, k, a, lda, b, ldb, accumulate, c2, ldc);
    fconv_gemm_packed(kern, 3, ta, tb, m, n, k, a, lda, b, ldb, accumulate, c3, ldc);
    CHECKF(memcmp(c1, c2, sizeof(float) * m * ldc) == 0, "%s m=%zu n=%zu k=%zu: 1 and 2 threads differ",
           kern->name, m, n, k);
    CHECKF(memcmp(c1, c3, sizeof(float) * m * ldc) == 0, "%s m=%zu n=%zu k=%zu: 1 and 3 threads differ",
           kern->name, m, n, k);
    if (!ta && !tb && !accumulate) { /* A packed beforehand: the same bits, for any thread count */
        float *ap = fconv_alloc_aligned(sizeof(float) * (fconv_gemm_packed_a_floats(kern, m, k) + 1));
        fconv_gemm_pack_a(kern, m, k, a, lda, ap);
        for (int threads = 1; threads <= 3; threads += 2) {
            memcpy(c2, c0, sizeof(float) * m * ldc);
            fconv_gemm_prepacked(kern, threads, m, n, k, ap, b, ldb, c2, ldc, 0, NULL, 0);
            CHECKF(memcmp(c1, c2, sizeof(float) * m * ldc) == 0,
                   "%s m=%zu n=%zu k=%zu: prepacked A on %d threads differs", kern->name, m, n, k, threads);
        }
        /* Streamed into a C whose rows all start on a cache line (the non-temporal tiles),
         * then into the unaligned one (plain stores): the same bits. */
        const size_t lds = (n + 15) / 16 * 16;
        float *cs = fconv_alloc_aligned(sizeof(float) * (m * lds + 16));
        for (int threads = 1; threads <= 2; threads++) {
            test_fill_random(cs, m * lds);
            fconv_gemm_prepacked(kern, threads, m, n, k, ap, b, ldb, cs, lds, 1, NULL, 0);
            int same = 1;
            for (size_t i = 0; i < m; i++) same &= memcmp(c1 + i * ldc, cs + i * lds, sizeof(float) * n) == 0;
            CHECKF(same, "%s m=%zu n=%zu k=%zu: prepacked A streamed (aligned C) on %d threads differs", kern->name,
                   m, n, k, threads);
            /* rows that all begin `off` floats past a line: the columns before the first
             * boundary, the streamed ones and the few-column kernel's each a product of their
             * own, the same bits */
            for (size_t off = 1; off < 16; off += 6) {
                test_fill_random(cs, m * lds + 16);
                fconv_gemm_prepacked(kern, threads, m, n, k, ap, b, ldb, cs + off, lds, 1, NULL, 0);
                same = 1;
                for (size_t i = 0; i < m; i++) same &= memcmp(c1 + i * ldc, cs + off + i * lds, sizeof(float) * n) == 0;
                CHECKF(same, "%s m=%zu n=%zu k=%zu: prepacked A streamed (C %zu floats past a line) on %d threads differs",
                       kern->name, m, n, k, off, threads);
            }
        }
        memcpy(c2, c0, sizeof(float) * m * ldc);
        fconv_gemm_prepacked(kern, 2, m, n, k, ap, b, ldb, c2, ldc, FCONV_PREPACKED_STREAM_C, NULL, 0);
        CHECKF(memcmp(c1, c2, sizeof(float) * m * ldc) == 0, "%s m=%zu n=%zu k=%zu: prepacked A streamed differs",
               kern->name, m, n, k);
        /* B from memory: the tiles ask for the next sliver ahead (gemm_ukernel_ahead), 1 and 3
         * threads, streamed or not: the same bits */
        for (unsigned flags = FCONV_PREPACKED_B_FROM_MEMORY; flags <= 3; flags++)
            for (int threads = 1; threads <= 3; threads += 2) {
                memcpy(c2, c0, sizeof(float) * m * ldc);
                fconv_gemm_prepacked(kern, threads, m, n, k, ap, b, ldb, c2, ldc, flags, NULL, 0);
                CHECKF(memcmp(c1, c2, sizeof(float) * m * ldc) == 0,
                       "%s m=%zu n=%zu k=%zu: prepacked A, B from memory (flags %u), %d threads differs", kern->name,
                       m, n, k, flags, threads);
            }
        /* The fused epilogue (bias, ReLU, each and both) on 1 and 3 threads: C = A B, then
         * fconv_bias_relu_rows on every row, bit for bit, over several k steps too; the
         * padding between rows of C untouched. */
        float *bias = malloc(sizeof(float) * (m + 1));
        test_fill_random(bias, m + 1);
        for (int e = 1; e < 4; e++) {
            const float *bi = e & 1 ? bias : NULL;
            const int relu = e >> 1;
            memcpy(c3, c1, sizeof(float) * m * ldc);
            fconv_bias_relu_rows(c3, ldc, m, (int64_t)n, bi, relu);
            for (int threads = 1; threads <= 3; threads += 2) {
                memcpy(c2, c0, sizeof(float) * m * ldc);
                fconv_gemm_prepacked(kern, threads, m, n, k, ap, b, ldb, c2, ldc, 1, bi, relu);
                CHECKF(memcmp(c3, c2, sizeof(float) * m * ldc) == 0,
                       "%s m=%zu n=%zu k=%zu: prepacked A with bias %d relu %d on %d threads differs", kern->name,
                       m, n, k, bi != NULL, relu, threads);
            }
            /* streamed whole tiles (rows on cache lines, or 3 floats past) with the epilogue in
             * their registers */
            for (size_t off = 0; off <= 3; off += 3) {
                test_fill_random(cs, m * lds + 16);
                fconv_gemm_prepacked(kern, 2, m, n, k, ap, b, ldb, cs + off, lds, 1, bi, relu);
                int same = 1;
                for (size_t i = 0; i < m; i++) same &= memcmp(c3 + i * ldc, cs + off + i * lds, sizeof(float) * n) == 0;
                CHECKF(same, "%s m=%zu n=%zu k=%zu: prepacked A streamed (%zu floats past a line) with bias %d relu %d "
                       "differs", kern->name, m, n, k, off, bi != NULL, relu);
            }
        }
        free(bias);
        fconv_free_aligned(cs);
        fconv_free_aligned(ap);
    }
    int bad = 0;
    for (size_t i = 0; i < m && !bad; i++) {
        for (size_t j = 0; j < ldc && !bad; j++) {
            if (j >= n) { /* the padding between rows of C is never written */
                CHECKF(c1[i * ldc + j] == c0[i * ldc + j], "%s: C padding written at (%zu, %zu)", kern->name, i, j);
                bad |= c1[i * ldc + j] != c0[i * ldc + j];
                continue;
            }
            double sum = accumulate ? c0[i * ldc + j] : 0.0, mag = fabs(sum);
            for (size_t p = 0; p < k; p++) {
                double t = (double)(ta ? a[p * lda + i] : a[i * lda + p]) * (tb ? b[j * ldb + p] : b[p * ldb + j]);
                sum += t;
                mag += fabs(t);
            }
            double bound = (double)(k + 2) * FLT_EPSILON * mag + 1e-30;
            double err = fabs(c1[i * ldc + j] - sum);
            CHECKF(err <= bound, "%s m=%zu n=%zu k=%zu ta=%d tb=%d acc=%d: C[%zu][%zu] = %g, ref %.9g",
                   kern->name, m, n, k, ta, tb, accumulate, i, j, c1[i * ldc + j], sum);
            bad |= err > bound;
        }
    }
    free(a);
    free(b);
    free(c0);
    free(c1);
    free(c2);
    free(c3);
}

/* The micro-kernel (half: its half-width twin) alone on packed panels it defines: every mr,
 * every nr up to its width, k = 0, 1 and odd, every store mode, nothing written
 * outside the mr x nr tile. */
static void check_ukernel(const struct fconv_kernels *kern, int half) {
    const size_t MR = kern->gemm_mr, width = half ? kern->gemm_nr / 2 : kern->gemm_nr, ldc = width + 3;
    const fconv_gemm_ukernel_fn fn = half ? kern->gemm_ukernel_half : kern->gemm_ukernel;
    static const size_t ks[] = {0, 1, 7, 64};
    float *a = malloc(sizeof(float) * MR * 64), *b = fconv_alloc_aligned(sizeof(float) * width * 64);
    float *c0 = malloc(sizeof(float) * (MR + 1) * ldc), *c = malloc(sizeof(float) * (MR + 1) * ldc);
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
        for (size_t mr = 1; mr <= MR; mr++)
            for (size_t nr = 1; nr <= width; nr++)
                for (int store = FCONV_GEMM_STORE; store <= FCONV_GEMM_STREAM; store++) {
                    const size_t k = ks[ki];
                    test_fill_random(a, MR * 64);
                    test_fill_random(b, width * 64);
                    for (size_t p = 0; p < k; p++) { /* the panels' zero padding */
                        for (size_t i = mr; i < MR; i++) a[p * MR + i] = 0.0f;
                        for (size_t j = nr; j < width; j++) b[p * width + j] = 0.0f;
                    }
                    test_fill_random(c0, (MR + 1) * ldc);
                    memcpy(c, c0, sizeof(float) * (MR + 1) * ldc);
                    fn(k, a, b, width, c, ldc, store, mr, nr, NULL, 0);
                    for (size_t i = 0; i <= MR; i++)
                        for (size_t j = 0; j < ldc; j++) {
                            if (i >= mr || j >= nr) {
                                CHECKF(c[i * ldc + j] == c0[i * ldc + j], "%s ukernel%s mr=%zu nr=%zu k=%zu: "
                                       "wrote outside the tile at (%zu, %zu)", kern->name, half ? "_half" : "",
                                       mr, nr, k, i, j);
                                continue;
                            }
                            double sum = store == FCONV_GEMM_ACCUMULATE ? c0[i * ldc + j] : 0.0, mag = fabs(sum);
                            for (size_t p = 0; p < k; p++) {
                                sum += (double)a[p * MR + i] * b[p * width + j];
                                mag += fabs((double)a[p * MR + i] * b[p * width + j]);
                            }
                            CHECKF(fabs(c[i * ldc + j] - sum) <= (double)(k + 2) * FLT_EPSILON * mag + 1e-30,
                                   "%s ukernel%s mr=%zu nr=%zu k=%zu store=%d: C[%zu][%zu] = %g, ref %.9g",
                                   kern->name, half ? "_half" : "", mr, nr, k, store, i, j, c[i * ldc + j], sum);
                        }
                }
    free(a);
    fconv_free_aligned(b);
    free(c0);
    free(c);
}

/* The few-column kernel: every mr, nc <= 8 <= nr, a padded ldb; zeros past nc, nothing
 * written past nr or mr. k: one step, one pair of steps (AVX-512 pairs them), and a long odd
 * run (whole chains, leftover pairs, a last single step). */
static void check_ukernel_cols(const struct fconv_kernels *kern) {
    static const size_t ks[] = {1, 2, 37};
    const size_t MR = kern->gemm_mr, nr = 11, ldb = 13, ldc = nr + 2, kmax = 37;
    float *abuf = malloc(sizeof(float) * MR * kmax), *bbuf = malloc(sizeof(float) * ldb * kmax);
    float *c0 = malloc(sizeof(float) * (MR + 1) * ldc), *c = malloc(sizeof(float) * (MR + 1) * ldc);
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
        /* the panels end where their buffers end: AddressSanitizer sees any read past them */
        const size_t k = ks[ki];
        const float *a = abuf + MR * (kmax - k), *b = bbuf + ldb * (kmax - k);
        for (size_t mr = 1; mr <= MR; mr++)
            for (size_t nc = 0; nc <= 8; nc++) {
                test_fill_random(abuf, MR * kmax);
                test_fill_random(bbuf, ldb * kmax);
                test_fill_random(c0, (MR + 1) * ldc);
                memcpy(c, c0, sizeof(float) * (MR + 1) * ldc);
                kern->gemm_ukernel_cols(k, a, b, ldb, c, ldc, mr, nc, nr);
                for (size_t i = 0; i <= MR; i++)
                    for (size_t j = 0; j < ldc; j++) {
                        if (i >= mr || j >= nr) {
                            CHECKF(c[i * ldc + j] == c0[i * ldc + j],
                                   "%s ukernel_cols k=%zu mr=%zu nc=%zu: wrote (%zu, %zu)", kern->name, k, mr, nc, i,
                                   j);
                            continue;
                        }
                        double sum = 0.0, mag = 0.0;
                        for (size_t p = 0; p < k && j < nc; p++) {
                            sum += (double)a[p * MR + i] * b[p * ldb + j];
                            mag += fabs((double)a[p * MR + i] * b[p * ldb + j]);
                        }
                        CHECKF(fabs(c[i * ldc + j] - sum) <= (double)(k + 2) * FLT_EPSILON * mag,
                               "%s ukernel_cols k=%zu mr=%zu nc=%zu: C[%zu][%zu] = %g, ref %.9g", kern->name, k, mr,
                               nc, i, j, c[i * ldc + j], sum);
                    }
            }
    }
    free(abuf);
    free(bbuf);
    free(c0);
    free(c);
}

/* The half-width tile over several A panels (gemm_ukernel_half_rows, or its shuffled form:
 * `half_rows`, named `what`): for every panel count 1..7 (the kernel's own group of panels,
 * part groups and leftovers) and k = 0, 1, 2 and odd, exactly the bits of gemm_ukernel_half
 * run panel by panel, and nothing written past the rows and columns. The panels end where
 * their buffer ends: AddressSanitizer sees any read past them. */
static void check_ukernel_half_rows(const struct fconv_kernels *kern, fconv_gemm_ukernel_half_rows_fn half_rows,
                                    const char *what) {
    static const size_t ks[] = {0, 1, 2, 37};
    const size_t MR = kern->gemm_mr, width = kern->gemm_nr / 2, ldc = width + 3, pmax = 7, kmax = 37;
    float *abuf = malloc(sizeof(float) * MR * kmax * pmax), *b = fconv_alloc_aligned(sizeof(float) * width * kmax);
    float *c = malloc(sizeof(float) * (pmax * MR + 1) * ldc), *want = malloc(sizeof(float) * (pmax * MR + 1) * ldc);
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
        for (size_t panels = 1; panels <= pmax; panels++) {
            const size_t k = ks[ki], rows = panels * MR;
            const float *a = abuf + MR * kmax * pmax - panels * MR * k;
            test_fill_random(abuf, MR * kmax * pmax);
            test_fill_random(b, width * kmax);
            test_fill_random(c, (pmax * MR + 1) * ldc);
            memcpy(want, c, sizeof(float) * (pmax * MR + 1) * ldc);
            for (size_t s = 0; s < panels; s++)
                kern->gemm_ukernel_half(k, a + s * MR * k, b, width, want + s * MR * ldc, ldc, FCONV_GEMM_STORE, MR,
                                        width, NULL, 0);
            half_rows(k, a, panels, b, width, c, ldc);
            for (size_t i = 0; i <= rows; i++)
                for (size_t j = 0; j < ldc; j++)
                    CHECKF(memcmp(&c[i * ldc + j], &want[i * ldc + j], sizeof(float)) == 0,
                           "%s %s panels=%zu k=%zu: C[%zu][%zu] = %.9g, want %.9g", kern->name, what, panels, k, i, j,
                           c[i * ldc + j], want[i * ldc + j]);
        }
    free(abuf);
    fconv_free_aligned(b);
    free(c);
    free(want);
}

/* The wide tile (gemm_ukernel_wide: half an A panel by two B slivers), each half of the panel,
 * every live row count, k = 0, 1, 2 and odd, every store mode, with and without bias and ReLU,
 * B read in place, from packed slivers, or packed on the way: exactly the bits of gemm_ukernel
 * on the whole panel against each sliver, nothing written past the rows, and the packed
 * slivers equal to B's. The panel ends where its buffer ends, for AddressSanitizer (B's last
 * row 16 floats short of its buffer's end: its rows are padded to keep streamed tiles aligned). */
/* gemm_ukernel_ahead: gemm_ukernel's C bit for bit, stores and epilogues alike, whatever rows
 * of `next` it asks for (none, fewer than its k steps take, more than they do). */
static void check_ukernel_ahead(const struct fconv_kernels *kern) {
    static const size_t ks[] = {0, 1, 2, 37};
    const size_t MR = kern->gemm_mr, NR = kern->gemm_nr, kmax = 37, ldc = NR + 16;
    float *a = malloc(sizeof(float) * MR * kmax), *b = fconv_alloc_aligned(sizeof(float) * NR * kmax);
    float *next = malloc(sizeof(float) * 40 * (NR + 3)), *bias = malloc(sizeof(float) * MR);
    float *want = fconv_alloc_aligned(sizeof(float) * MR * ldc), *c = fconv_alloc_aligned(sizeof(float) * MR * ldc);
    test_fill_random(a, MR * kmax);
    test_fill_random(b, NR * kmax);
    test_fill_random(next, 40 * (NR + 3));
    test_fill_random(bias, MR);
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
        for (int store = FCONV_GEMM_STORE; store <= FCONV_GEMM_STREAM; store++)
            for (int e = 0; e < 4; e++)
                for (size_t rows = 0; rows <= 40; rows += 20) {
                    const size_t k = ks[ki];
                    const float *bi = e & 1 ? bias : NULL;
                    const int relu = e >> 1;
                    test_fill_random(want, MR * ldc);
                    memcpy(c, want, sizeof(float) * MR * ldc);
                    kern->gemm_ukernel(k, a, b, NR, want, ldc, store, MR, NR, bi, relu);
                    kern->gemm_ukernel_ahead(k, a, b, NR, c, ldc, store, MR, NR, bi, relu, rows ? next + 1 : NULL,
                                             NR + 3, rows);
                    fconv_stream_fence();
                    CHECKF(memcmp(c, want, sizeof(float) * MR * ldc) == 0,
                           "%s ukernel_ahead k=%zu store %d epilogue %d, %zu rows ahead: differs from ukernel",
                           kern->name, k, store, e, rows);
                }
    free(a);
    fconv_free_aligned(b);
    free(next);
    free(bias);
    fconv_free_aligned(want);
    fconv_free_aligned(c);
}

static void check_ukernel_wide(const struct fconv_kernels *kern) {
    static const size_t ks[] = {0, 1, 2, 37};
    const size_t MR = kern->gemm_mr, NR = kern->gemm_nr, half = MR / 2, kmax = 37;
    const size_t ldb = 2 * NR + 16, ldc = 2 * NR + 16; /* whole vectors: streamed tiles too */
    float *abuf = malloc(sizeof(float) * MR * kmax), *bbuf = fconv_alloc_aligned(sizeof(float) * ldb * kmax);
    float *packed = fconv_alloc_aligned(sizeof(float) * 2 * NR * kmax);
    float *got = fconv_alloc_aligned(sizeof(float) * 2 * NR * kmax), *bias = malloc(sizeof(float) * MR);
    float *c0 = fconv_alloc_aligned(sizeof(float) * (MR + 1) * ldc);
    float *c = fconv_alloc_aligned(sizeof(float) * (MR + 1) * ldc);
    float *want = fconv_alloc_aligned(sizeof(float) * (MR + 1) * ldc);
    test_fill_random(bias, MR);
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
        const size_t k = ks[ki];
        const float *a = abuf + MR * (kmax - k), *b = bbuf + ldb * (kmax - k);
        test_fill_random(abuf, MR * kmax);
        test_fill_random(bbuf, ldb * kmax);
        for (size_t p = 0; p < k; p++) memcpy(packed + p * NR, b + p * ldb, sizeof(float) * NR);
        for (size_t p = 0; p < k; p++) memcpy(packed + NR * k + p * NR, b + NR + p * ldb, sizeof(float) * NR);
        for (int store = FCONV_GEMM_STORE; store <= FCONV_GEMM_STREAM; store++)
            for (int e = 0; e < 4; e++) {
                const float *bi = e & 1 ? bias : NULL;
                const int relu = e >> 1;
                test_fill_random(c0, (MR + 1) * ldc);
                memcpy(want, c0, sizeof(float) * MR * ldc);
                kern->gemm_ukernel(k, a, b, ldb, want, ldc, store, MR, NR, bi, relu);
                kern->gemm_ukernel(k, a, b + NR, ldb, want + NR, ldc, store, MR, NR, bi, relu);
                for (size_t h = 0; h < MR; h += half)
                    for (size_t mr = 1; mr <= half; mr++)
                        for (int from = 0; from < 3; from++) { /* in place, packed, packed on the way */
                            memcpy(c, c0 + h * ldc, sizeof(float) * (half + 1) * ldc); /* rows h.. */
                            memset(got, 0, sizeof(float) * 2 * NR * kmax);
                            kern->gemm_ukernel_wide(k, a + h, from == 1 ? packed : b, from == 1 ? NR : ldb,
                                                    from == 1 ? NR * k : NR, from == 2 ? got : NULL, c, ldc, store,
                                                    mr, bi ? bi + h : NULL, relu);
                            int same = 1;
                            for (size_t i = 0; i <= half; i++) {
                                const size_t cols = i < mr ? 2 * NR : 0; /* C's padding columns untouched */
                                same &= memcmp(c + i * ldc, want + (h + i) * ldc, sizeof(float) * cols) == 0;
                                same &= memcmp(c + i * ldc + cols, c0 + (h + i) * ldc + cols,
                                               sizeof(float) * (ldc - cols)) == 0;
                            }
                            CHECKF(same, "%s ukernel_wide half %zu mr=%zu k=%zu store=%d bias %d relu %d from %d: "
                                   "not gemm_ukernel's bits", kern->name, h, mr, k, store, bi != NULL, relu, from);
                            if (from == 2)
                                CHECKF(memcmp(got, packed, sizeof(float) * 2 * NR * k) == 0,
                                       "%s ukernel_wide k=%zu: packed slivers differ from B", kern->name, k);
                        }
            }
    }
    free(abuf);
    fconv_free_aligned(bbuf);
    fconv_free_aligned(packed);
    fconv_free_aligned(got);
    free(bias);
    fconv_free_aligned(c0);
    fconv_free_aligned(c);
    fconv_free_aligned(want);
}

/* B shallow enough to be read in place (k <= 64, ldb a whole number of vectors), once from
 * a vector boundary and once a float past it: where unaligned loads are slow the second is
 * packed instead (gemm-packed.c's b_in_place), elsewhere read in place too; either way the
 * same bits as the aligned run, for 1 and 2 threads. */
static void check_b_placement(const struct fconv_kernels *kern) {
    const size_t m = 24, n = 160, k = 48, ldb = n;
    float *a = malloc(sizeof(float) * m * k), *buf = fconv_alloc_aligned(sizeof(float) * (k * ldb + 1));
    float *b = fconv_alloc_aligned(sizeof(float) * k * ldb), *ap = fconv_alloc_aligned(sizeof(float) *
                                                                   fconv_gemm_packed_a_floats(kern, m, k));
    float *c0 = malloc(sizeof(float) * m * n), *c1 = malloc(sizeof(float) * m * n);
    test_fill_random(a, m * k);
    test_fill_random(b, k * ldb);
    memcpy(buf + 1, b, sizeof(float) * k * ldb);
    fconv_gemm_pack_a(kern, m, k, a, k, ap);
    for (int threads = 1; threads <= 2; threads++) {
        fconv_gemm_prepacked(kern, threads, m, n, k, ap, b, ldb, c0, n, 0, NULL, 0);
        fconv_gemm_prepacked(kern, threads, m, n, k, ap, buf + 1, ldb, c1, n, 0, NULL, 0);
        CHECKF(memcmp(c0, c1, sizeof(float) * m * n) == 0, "%s: B one float off a vector boundary changed "
               "the prepacked product's bits (%d threads)", kern->name, threads);
        fconv_gemm_packed(kern, threads, 0, 0, m, n, k, a, k, b, ldb, 0, c0, n);
        fconv_gemm_packed(kern, threads, 0, 0, m, n, k, a, k, buf + 1, ldb, 0, c1, n);
        CHECKF(memcmp(c0, c1, sizeof(float) * m * n) == 0, "%s: B one float off a vector boundary changed "
               "the product's bits (%d threads)", kern->name, threads);
    }
    free(a);
    fconv_free_aligned(buf);
    fconv_free_aligned(b);
    fconv_free_aligned(ap);
    free(c0);
    free(c1);
}

/* The products' bits with the wide tile and without (gemm_wide_tile, with wide_loads_slow so
 * that every k step takes it, set and unset): B in
 * place (k <= 64 from a vector boundary) or packed, A packed beforehand or not, several row
 * blocks, k steps and column chunks, streamed with the epilogue, 1 and 2 threads. */
static void check_wide_same_bits(const struct fconv_kernels *kern) {
    static const size_t shapes[][3] = {{64, 3136, 64}, {24, 400, 48}, {13, 200, 37}, {300, 1030, 140},
                                       {40, 1100, 700}, {256, 196, 256}};
    fconv_cpu_info *cpu = test_cpu_figures();
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const size_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
        float *a = malloc(sizeof(float) * m * k), *b = fconv_alloc_aligned(sizeof(float) * k * n);
        float *ap = fconv_alloc_aligned(sizeof(float) * fconv_gemm_packed_a_floats(kern, m, k));
        float *bias = malloc(sizeof(float) * m), *c[2][3];
        test_fill_random(a, m * k);
        test_fill_random(b, k * n);
        test_fill_random(bias, m);
        fconv_gemm_pack_a(kern, m, k, a, k, ap);
        for (int wide = 0; wide < 2; wide++) {
            cpu->gemm_wide_tile = wide;
            cpu->wide_loads_slow = wide; /* the wide tile at every depth */
            for (int v = 0; v < 3; v++) c[wide][v] = fconv_alloc_aligned(sizeof(float) * m * n);
            fconv_gemm_packed(kern, 1 + wide, 0, 0, m, n, k, a, k, b, n, 0, c[wide][0], n);
            fconv_gemm_prepacked(kern, 2 - wide, m, n, k, ap, b, n, c[wide][1], n, 0, NULL, 0);
            fconv_gemm_prepacked(kern, 2, m, n, k, ap, b, n, c[wide][2], n, 1, bias, 1);
        }
        for (int v = 0; v < 3; v++) {
            CHECKF(memcmp(c[0][v], c[1][v], sizeof(float) * m * n) == 0,
                   "%s m=%zu n=%zu k=%zu: the wide tile changed the bits (product %d)", kern->name, m, n, k, v);
            fconv_free_aligned(c[0][v]);
            fconv_free_aligned(c[1][v]);
        }
        free(a);
        fconv_free_aligned(b);
        fconv_free_aligned(ap);
        free(bias);
    }
}

static void test_gemm_all_isas(void) {
    for (int isa = FCONV_ISA_SCALAR; isa <= FCONV_ISA_AVX512; isa++) {
        const struct fconv_kernels *kern = test_isa_kernels("test_kernels_gemm", (fconv_isa)isa);
        if (!kern) continue;
        CHECK_EQ_INT(kern->gemm_mr, table_mr((fconv_isa)isa));
        CHECK_EQ_INT(kern->gemm_nr, table_nr((fconv_isa)isa));
        check_ukernel(kern, 0);
        check_ukernel(kern, 1);
        check_ukernel_cols(kern);
        check_ukernel_half_rows(kern, kern->gemm_ukernel_half_rows, "ukernel_half_rows");
        if (kern->gemm_ukernel_half_rows_shuffled)
            check_ukernel_half_rows(kern, kern->gemm_ukernel_half_rows_shuffled, "ukernel_half_rows_shuffled");
        CHECK(kern->gemm_ukernel_half_rows_shuffled != NULL || kern->isa != FCONV_ISA_AVX512);
        CHECK((kern->gemm_ukernel_wide != NULL) == (kern->isa == FCONV_ISA_AVX512));
        if (kern->gemm_ukernel_wide) check_ukernel_wide(kern);
        CHECK(kern->gemm_ukernel_ahead != NULL);
        if (kern->gemm_ukernel_ahead) check_ukernel_ahead(kern);
        /* the products with the wide tile (gemm_wide_tile) and without, on any machine */
        fconv_cpu_info *cpu = test_cpu_figures();
        const int saved = cpu->gemm_wide_tile, saved_loads = cpu->wide_loads_slow;
        /* 0: without; 1: k steps below 128 (two 512-bit loads a cycle); 2: every step */
        for (int wide = 0; wide <= (kern->gemm_ukernel_wide != NULL ? 2 : 0); wide++) {
            cpu->gemm_wide_tile = wide > 0;
            cpu->wide_loads_slow = wide == 2;
            check_b_placement(kern);
            /* every remainder of MR and NR, once each */
            for (size_t m = 1; m <= 2 * kern->gemm_mr + 1; m++)
                check_gemm(kern, m, 2 * kern->gemm_nr + 3, 5, 0, 0, 0);
            for (size_t n = 1; n <= 4 * kern->gemm_nr + 1; n++)
                check_gemm(kern, 7, n, 9, 0, 0, 1);
            for (size_t n = kern->gemm_nr + 1; n <= 2 * kern->gemm_nr + 16; n++) /* every last sliver, streamed */
                check_gemm(kern, 9, n, 7, 0, 0, 0);
            check_gemm(kern, 150, 1030, 140, 0, 0, 0); /* crosses MC 144 and NC 512 */
            check_gemm(kern, 40, 1100, 700, 0, 0, 1); /* A packed whole for 3 column chunks, 3 k steps */
            check_gemm(kern, 13, 37, 330, 1, 0, 1);  /* two k steps (k > KC_MAX 320), transposed A */
            check_gemm(kern, 8, 20, 320, 0, 0, 0);   /* k = KC_MAX: one step */
            check_gemm(kern, 300, 9, 70, 0, 0, 1);   /* several row blocks, one narrow column block */
            check_gemm(kern, 300, 200, 70, 0, 0, 0); /* several row blocks, pairs of slivers */
            check_gemm(kern, 64, 49, 700, 0, 0, 0);  /* 32 + 16 + 1 columns, 3 k steps */
            check_gemm(kern, 24, 196, 1024, 0, 0, 0); /* row groups, not column blocks */
            check_gemm(kern, 29, 41, 17, 0, 1, 0);   /* transposed B */
            check_gemm(kern, 29, 141, 17, 0, 1, 0);  /* transposed B, pairs of slivers */
            check_gemm(kern, 5, 6, 7, 1, 1, 1);
            check_gemm(kern, 3, 4, 0, 0, 0, 0);      /* k = 0: C = 0 */
            check_gemm(kern, 3, 4, 0, 0, 0, 1);      /* k = 0, accumulate: C unchanged */
        }
        if (kern->gemm_ukernel_wide) check_wide_same_bits(kern);
        cpu->gemm_wide_tile = saved;
        cpu->wide_loads_slow = saved_loads;
    }
}

int main(void) {
    test_init();
    TEST(test_gemm_all_isas);
    return test_finish();
}
