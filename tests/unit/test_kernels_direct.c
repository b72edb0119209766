/*
 * test_kernels_direct.c — the direct algorithm's SIMD kernel (core/dispatch.h
 * fconv_direct_rows_fn, and the filter2d multi-row fconv_direct_filter_rows_fn against it bit
 * for bit) on every ISA this machine runs, against a float64 reference and
 * against the scalar kernel, on sizes that cross every vector-width and block remainder;
 * then the plan-level contract: max_isa caps the ISA, and direct results are bit-identical
 * for 1 and 2 threads on each ISA. ISAs the CPU lacks are reported as skipped, not failed.
 */
#define _POSIX_C_SOURCE 200809L /* posix_memalign */
#include <float.h>

#include "core/dispatch.h"
#include "test-isa.h"
#include "test.h"

#define MAX_KH 70 /* beyond the drivers' 64 rows per call, so the kernel sees any count */

/* One random case of the kernel: compare `k` against float64, and against scalar. flags:
 * the kernel's (ACCUMULATE, RELU); with_bias: a random bias per row. */
static void check_case(const struct fconv_kernels *k, size_t nk, size_t n, size_t kh, size_t kw,
                       size_t dist, ptrdiff_t tap_step, int flags, int with_bias) {
    const int accumulate = flags & FCONV_ROWS_ACCUMULATE, relu = (flags & FCONV_ROWS_RELU) != 0;
    float bias[4];
    test_fill_random(bias, 4);
    const struct fconv_kernels *ref = fconv_kernels_exact(FCONV_ISA_SCALAR);
    const ptrdiff_t k_stride = (ptrdiff_t)(kh * kw) + 3; /* channels' taps not adjacent */
    size_t xlen = n + (kw - 1) * dist; /* exactly what the contract lets the kernel read */
    float *x[MAX_KH], *taps = malloc(sizeof(float) * (size_t)k_stride * 4);
    const float *xs[MAX_KH], *ts[MAX_KH];
    float *y[4], *y0[4], *ys[4];
    for (size_t a = 0; a < kh; a++) {
        x[a] = malloc(sizeof(float) * (xlen ? xlen : 1));
        test_fill_random(x[a], xlen);
        xs[a] = x[a];
    }
    test_fill_random(taps, (size_t)k_stride * 4);
    for (size_t a = 0; a < kh; a++) /* row a's taps, walked forwards or backwards */
        ts[a] = tap_step > 0 ? taps + a * kw : taps + a * kw + (kw - 1);
    for (size_t c = 0; c < nk; c++) {
        y[c] = malloc(sizeof(float) * (n ? n : 1));
        y0[c] = malloc(sizeof(float) * (n ? n : 1));
        ys[c] = malloc(sizeof(float) * (n ? n : 1));
        test_fill_random(y0[c], n);
        memcpy(y[c], y0[c], sizeof(float) * n);
        memcpy(ys[c], y0[c], sizeof(float) * n);
    }
    k->direct_rows(y, nk, n, xs, ts, tap_step, k_stride, kh, kw, dist, with_bias ? bias : NULL, flags);
    ref->direct_rows(ys, nk, n, xs, ts, tap_step, k_stride, kh, kw, dist, with_bias ? bias : NULL, flags);
    double worst = 0.0;
    for (size_t c = 0; c < nk; c++) {
        for (size_t e = 0; e < n; e++) {
            double sum = accumulate ? y0[c][e] : 0.0, mag = fabs(sum);
            for (size_t a = 0; a < kh; a++)
                for (size_t b = 0; b < kw; b++) {
                    double t = ts[a][(ptrdiff_t)b * tap_step + (ptrdiff_t)c * k_stride];
                    sum += t * xs[a][e + b * dist];
                    mag += fabs(t * xs[a][e + b * dist]);
                }
            if (with_bias) {
                sum += bias[c];
                mag += fabs(bias[c]);
            }
            if (relu && sum < 0.0) sum = 0.0; /* moves no value further from its reference */
            /* float32 accumulation of kh*kw+2 terms: |error| <= (terms) * eps * sum|terms| */
            double bound = (double)(kh * kw + 2) * FLT_EPSILON * mag + 1e-30;
            double err = fabs(y[c][e] - sum), diff = fabs((double)y[c][e] - ys[c][e]);
            if (err > worst) worst = err;
            CHECKF(err <= bound && diff <= 2 * bound,
                   "%s nk=%zu n=%zu kh=%zu kw=%zu dist=%zu step=%td flags=%d bias=%d: y[%zu][%zu]=%g ref=%.9g "
                   "scalar=%g bound=%g",
                   k->name, nk, n, kh, kw, dist, tap_step, flags, with_bias, c, e, y[c][e], sum, ys[c][e], bound);
            if (err > bound || diff > 2 * bound) goto done; /* one line per broken case */
        }
    }
done:
    for (size_t a = 0; a < kh; a++) free(x[a]);
    for (size_t c = 0; c < nk; c++) {
        free(y[c]);
        free(y0[c]);
        free(ys[c]);
    }
    free(taps);
}

/* Every n in [0, 2 * 8 * 16 + 17] crosses each block (8 vectors of up to 16 lanes), single
 * vector and partial-vector remainder of every ISA; the other parameters are sampled. */
static void test_kernel_all_isas(void) {
    for (int isa = FCONV_ISA_SCALAR; isa <= FCONV_ISA_AVX512; isa++) {
        const struct fconv_kernels *k = test_isa_kernels("test_kernels_direct", (fconv_isa)isa);
        if (!k) continue;
        CHECK_EQ_INT(k->isa, isa);
        for (size_t n = 0; n <= 2 * 8 * 16 + 17; n++) {
            size_t nk = (size_t)test_rand_int(1, 4), kh = (size_t)test_rand_int(1, 5);
            size_t kw = (size_t)test_rand_int(1, 8), dist = (size_t)test_rand_int(1, 3);
            const int flags = (test_rand_int(0, 1) ? FCONV_ROWS_ACCUMULATE : 0) | (test_rand_int(0, 1) ? FCONV_ROWS_RELU : 0);
            check_case(k, nk, n, kh, kw, dist, test_rand_int(0, 1) ? 1 : -1, flags, (int)test_rand_int(0, 1));
        }
        check_case(k, 1, 1000, 1, 255, 1, 1, 0, 0); /* a long 1D kernel */
        check_case(k, 4, 77, MAX_KH, 3, 1, 1, FCONV_ROWS_ACCUMULATE, 0); /* many rows: a conv2d's C*R */
        check_case(k, 1, 300, 11, 11, 3, -1, 0, 0);  /* 11x11 filter, 3 interleaved channels */
        check_case(k, 4, 200, 9, 3, 1, 1, FCONV_ROWS_RELU, 1); /* a conv2d layer's epilogue */
    }
}

/* The filter2d multi-row kernel (fconv_direct_filter_rows_fn) against the one-row kernel of
 * the same ISA called per output row on x_rows + r, channel after channel (the first as the
 * call's flags say, the others accumulating): bit-identical, every n crossing each block,
 * strip and remainder, every nr (four-row blocks and sliding bands), one channel or several,
 * forwards and backwards taps, with and without accumulate, streamed with the rows at one
 * alignment (n % 3 == 0: the band's head before its first aligned strip) or at several. */
#define MAX_FILTER_CHANNELS 4
#define MAX_FILTER_IN (MAX_FILTER_CHANNELS * (MAX_KH + FCONV_FILTER_ROWS_MAX))
static void check_filter_rows(const struct fconv_kernels *k, size_t nr, size_t n, size_t channels, size_t kh,
                              size_t kw, size_t dist, ptrdiff_t tap_step, int accumulate) {
    size_t xlen = n + (kw - 1) * dist, nin = kh + nr - 1;
    float *x[MAX_FILTER_IN], *taps = malloc(sizeof(float) * channels * kh * kw);
    float *y[FCONV_FILTER_ROWS_MAX], *y1[FCONV_FILTER_ROWS_MAX], *y2[FCONV_FILTER_ROWS_MAX];
    float *y2s[FCONV_FILTER_ROWS_MAX];
    const float *xs[MAX_FILTER_IN], *ts[MAX_FILTER_CHANNELS * MAX_KH];
    for (size_t i = 0; i < channels * nin; i++) {
        x[i] = malloc(sizeof(float) * (xlen ? xlen : 1));
        test_fill_random(x[i], xlen);
        xs[i] = x[i];
    }
    test_fill_random(taps, channels * kh * kw);
    for (size_t a = 0; a < channels * kh; a++) ts[a] = tap_step > 0 ? taps + a * kw : taps + a * kw + (kw - 1);
    for (size_t r = 0; r < nr; r++) {
        y[r] = malloc(sizeof(float) * (n ? n : 1));
        y1[r] = malloc(sizeof(float) * (n ? n : 1));
        y2[r] = aligned_alloc(64, (n + 32) / 16 * 16 * sizeof(float));
        y2s[r] = y2[r] + (n + r * (n % 3)) % 16; /* one alignment, or varied */
        test_fill_random(y[r], n);
        memcpy(y1[r], y[r], sizeof(float) * n);
        memcpy(y2s[r], y[r], sizeof(float) * n);
    }
    k->direct_filter_rows(y, nr, n, xs, ts, tap_step, channels, kh, kw, dist, accumulate);
    /* non-temporal stores (honoured or not, per the rows' alignments) change no bit */
    k->direct_filter_rows(y2s, nr, n, xs, ts, tap_step, channels, kh, kw, dist, accumulate | FCONV_ROWS_STREAM);
    for (size_t r = 0; r < nr; r++)
        CHECKF(n == 0 || memcmp(y[r], y2s[r], sizeof(float) * n) == 0,
               "%s filter_rows nr=%zu n=%zu channels=%zu kh=%zu kw=%zu acc=%d: STREAM changed row %zu", k->name,
               nr, n, channels, kh, kw, accumulate, r);
    for (size_t r = 0; r < nr; r++) {
        float *const yr[1] = {y1[r]};
        for (size_t c = 0; c < channels; c++)
            k->direct_rows(yr, 1, n, xs + c * nin + r, ts + c * kh, tap_step, 0, kh, kw, dist, NULL,
                           c ? FCONV_ROWS_ACCUMULATE : accumulate);
        CHECKF(n == 0 || memcmp(y[r], y1[r], sizeof(float) * n) == 0,
               "%s filter_rows nr=%zu n=%zu channels=%zu kh=%zu kw=%zu dist=%zu step=%td acc=%d: row %zu "
               "differs from the one-row kernel", k->name, nr, n, channels, kh, kw, dist, tap_step, accumulate, r);
    }
    for (size_t i = 0; i < channels * nin; i++) free(x[i]);
    for (size_t r = 0; r < nr; r++) {
        free(y[r]);
        free(y1[r]);
        free(y2[r]);
    }
    free(taps);
}

static void test_filter_rows_all_isas(void) {
    for (int isa = FCONV_ISA_SCALAR; isa <= FCONV_ISA_AVX512; isa++) {
        const struct fconv_kernels *k = fconv_kernels_exact((fconv_isa)isa);
        if (!k) continue; /* reported by test_kernel_all_isas */
        for (size_t n = 0; n <= 2 * 6 * 16 + 17; n++) {
            size_t nr = (size_t)test_rand_int(1, 4), kh = (size_t)test_rand_int(1, 7);
            size_t kw = (size_t)test_rand_int(1, 7), dist = (size_t)test_rand_int(1, 3);
            size_t channels = (size_t)test_rand_int(1, MAX_FILTER_CHANNELS);
            check_filter_rows(k, nr, n, channels, kh, kw, dist, test_rand_int(0, 1) ? 1 : -1,
                              (int)test_rand_int(0, 1));
        }
        for (size_t nr = 1; nr <= 4; nr++) {
            check_filter_rows(k, nr, 333, 1, 1, 1, 1, 1, 0);
            check_filter_rows(k, nr, 200, 1, 3, 3, 1, -1, 0);
            check_filter_rows(k, nr, 100, 1, MAX_KH - 3, 5, 3, 1, 1);
            check_filter_rows(k, nr, 1024 - 32, 3, 3, 3, 1, 1, 0); /* a 3 -> 1 3x3 layer's interior */
        }
        /* sliding bands: every kernel height they take and beyond, short and tall bands; with
         * several channels, four rows at a time (and a last row alone) */
        for (size_t kh = 2; kh <= 10; kh++)
            for (int t = 0; t < 12; t++) {
                size_t nr = t < 2 ? FCONV_FILTER_ROWS_MAX - (size_t)t : (size_t)test_rand_int(5, 40);
                size_t n = (size_t)test_rand_int(0, 3 * 6 * 16 + 40), kw = (size_t)test_rand_int(1, 9);
                size_t channels = t % 4 == 3 ? (size_t)test_rand_int(2, MAX_FILTER_CHANNELS) : 1;
                check_filter_rows(k, nr, n, channels, kh, kw, (size_t)test_rand_int(1, 3),
                                  test_rand_int(0, 1) ? 1 : -1, (int)test_rand_int(0, 1));
            }
        check_filter_rows(k, 32, 2048, 1, 7, 7, 1, -1, 0);  /* 2048^2 7x7's band */
        check_filter_rows(k, 32, 1030, 1, 5, 5, 3, 1, 0);   /* an RGB row */
        check_filter_rows(k, 9, 96, 1, 7, 73, 1, 1, 1);     /* 511 taps packed, and 518: four rows at a time */
        check_filter_rows(k, 9, 96, 1, 7, 74, 1, 1, 1);
        check_filter_rows(k, 9, 96, 2, 7, 7, 1, 1, 1);      /* two channels: 4 + 4 + 1 rows */
        check_filter_rows(k, 5, 100, 1, 7, 7, 1, 1, 1);     /* bands shorter than the kernel: */
        check_filter_rows(k, 6, 100, 1, 8, 3, 2, -1, 0);    /* nr + 1 < kh */
        check_filter_rows(k, 6, 100, 1, 7, 5, 1, 1, 0);     /* nr + 1 == kh, the shortest peeled */
    }
}

/* The row kernel with STREAM against plain stores, and plain stores against ACCUMULATE onto
 * zeros (which never cuts taps from aligned vectors): the same bits. Input rows start at
 * every offset from a 64-byte boundary and end where their heap buffers do, exactly as far
 * as the contract lets the kernel read (under AddressSanitizer an aligned load past the end
 * fails), with kernels from one tap to several groups of taps cut from the same aligned
 * vectors (dist 1), strided taps, and outputs at varied alignments: nk rows at the first
 * one's alignment (streamed) or not (plain stores). */
static void check_streamed_row(const struct fconv_kernels *k, size_t nk, size_t n, size_t kh, size_t kw, size_t dist,
                               size_t offset, int same_alignment) {
    size_t xlen = n + (kw - 1) * dist;
    float *x[3], *taps = malloc(sizeof(float) * nk * kh * kw);
    const float *xs[3], *ts[3];
    for (size_t a = 0; a < kh; a++) {
        void *buf = NULL;
        CHECK(posix_memalign(&buf, 64, sizeof(float) * (offset + xlen)) == 0);
        x[a] = buf;
        test_fill_random(x[a] + offset, xlen);
        xs[a] = x[a] + offset;
        ts[a] = taps + a * kw;
    }
    test_fill_random(taps, nk * kh * kw);
    float *y[4], *ys_buf[4], *ys[4];
    for (size_t r = 0; r < nk; r++) {
        y[r] = malloc(sizeof(float) * n);
        void *buf = NULL;
        CHECK(posix_memalign(&buf, 64, sizeof(float) * (n + 32)) == 0);
        ys_buf[r] = buf;
        ys[r] = ys_buf[r] + (offset * 7 + (same_alignment ? 0 : r)) % 16;
    }
    const ptrdiff_t k_stride = (ptrdiff_t)(kh * kw);
    float bias[4];
    test_fill_random(bias, 4);
    const int relu = offset % 3 ? FCONV_ROWS_RELU : 0; /* the epilogue on streamed blocks too */
    k->direct_rows(y, nk, n, xs, ts, 1, k_stride, kh, kw, dist, offset % 2 ? bias : NULL, relu);
    k->direct_rows(ys, nk, n, xs, ts, 1, k_stride, kh, kw, dist, offset % 2 ? bias : NULL, relu | FCONV_ROWS_STREAM);
    for (size_t r = 0; r < nk; r++)
        CHECKF(memcmp(y[r], ys[r], sizeof(float) * n) == 0,
               "%s streamed rows nk=%zu n=%zu kh=%zu kw=%zu dist=%zu same alignment %d: row %zu differs from "
               "plain stores", k->name, nk, n, kh, kw, dist, same_alignment, r);
    k->direct_rows(y, nk, n, xs, ts, 1, k_stride, kh, kw, dist, NULL, 0);
    for (size_t r = 0; r < nk; r++) memset(ys[r], 0, sizeof(float) * n);
    k->direct_rows(ys, nk, n, xs, ts, 1, k_stride, kh, kw, dist, NULL, FCONV_ROWS_ACCUMULATE);
    for (size_t r = 0; r < nk; r++)
        CHECKF(memcmp(y[r], ys[r], sizeof(float) * n) == 0,
               "%s rows nk=%zu n=%zu kh=%zu kw=%zu dist=%zu offset %zu: row %zu differs from ACCUMULATE onto zeros",
               k->name, nk, n, kh, kw, dist, offset, r);
    for (size_t a = 0; a < kh; a++) free(x[a]);
    for (size_t r = 0; r < nk; r++) {
        free(y[r]);
        free(ys_buf[r]);
    }
    free(taps);
}

static void test_streamed_row_all_isas(void) {
    for (int isa = FCONV_ISA_SCALAR; isa <= FCONV_ISA_AVX512; isa++) {
        const struct fconv_kernels *k = fconv_kernels_exact((fconv_isa)isa);
        if (!k) continue; /* reported by test_kernel_all_isas */
        for (size_t kw = 1; kw <= 40; kw += kw < 19 ? 1 : 7)
            for (size_t offset = 0; offset < 16; offset++) {
                size_t n = 5 * 128 + 16 * (size_t)test_rand_int(0, 8) + (size_t)test_rand_int(0, 15);
                check_streamed_row(k, 1, n, (size_t)test_rand_int(1, 3), kw, kw % 5 == 4 ? 2 : 1, offset, 1);
            }
        for (size_t nk = 2; nk <= 4; nk++)
            for (size_t offset = 0; offset < 16; offset += 5) {
                size_t n = 16 * (size_t)test_rand_int(0, 20) + (size_t)test_rand_int(0, 15);
                check_streamed_row(k, nk, n, (size_t)test_rand_int(1, 3), (size_t)test_rand_int(1, 5), 1,
                                   offset, (int)(offset % 2));
            }
    }
}

/* max_isa caps the plan's ISA; AUTO gives the default one. */
static void test_plan_isa(void) {
    fconv_filter2d_desc d = {.h = 20, .w = 40, .kh = 3, .kw = 3};
    fconv_plan *p = NULL;
    fconv_options o = {.algo = FCONV_ALGO_DIRECT, .max_isa = FCONV_ISA_SCALAR};
    CHECK(fconv_plan_filter2d(&d, &o, NULL, &p) == FCONV_OK);
    CHECK_EQ_INT(fconv_plan_isa(p), FCONV_ISA_SCALAR);
    fconv_plan_destroy(p);
    o.max_isa = FCONV_ISA_AUTO;
    CHECK(fconv_plan_filter2d(&d, &o, NULL, &p) == FCONV_OK);
    CHECK_EQ_INT(fconv_plan_isa(p), fconv_isa_default());
    fconv_plan_destroy(p);
    o.max_isa = (fconv_isa)99;
    CHECK(fconv_plan_filter2d(&d, &o, NULL, &p) == FCONV_EINVAL);
    CHECK_STR_CONTAINS(fconv_last_error(), "max_isa");
    CHECK_EQ_INT(fconv_plan_isa(NULL), FCONV_ISA_AUTO);
    CHECK(strcmp(fconv_isa_name(FCONV_ISA_AVX2), "avx2") == 0);
    CHECK(strcmp(fconv_isa_name((fconv_isa)42), "unknown") == 0);
    CHECK_STR_CONTAINS(fconv_isa_report(), "compiled: scalar");
}

/* Run one plan made with (isa, threads); y must hold its output. */
static void run_plan(int conv2d, const void *desc, fconv_isa isa, int threads, const float *x,
                     const float *w, float *y) {
    fconv_options o = {.algo = FCONV_ALGO_DIRECT, .threads = threads, .max_isa = isa};
    fconv_plan *p = NULL;
    fconv_status st = conv2d ? fconv_plan_conv2d(desc, &o, w, NULL, &p) : fconv_plan_filter2d(desc, &o, w, &p);
    CHECKF(st == FCONV_OK, "plan: %s", fconv_last_error());
    if (st != FCONV_OK) return;
    CHECK(fconv_execute(p, x, NULL, NULL, y) == FCONV_OK);
    fconv_plan_destroy(p);
}

/* Direct filter2d and conv2d through each ISA: 1 and 2 threads bit-identical, and every ISA
 * within float32 rounding of scalar. */
static void test_threads_bit_identical(void) {
    fconv_filter2d_desc f = {.h = 37, .w = 301, .channels = 3, .kh = 5, .kw = 7,
                             .mode = FCONV_MODE_SAME, .border = FCONV_BORDER_REFLECT};
    fconv_conv2d_desc c = {.n = 2, .c = 5, .h = 23, .w = 45, .k = 7, .r = 3, .s = 3,
                           .pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1};
    for (int conv2d = 0; conv2d <= 1; conv2d++) {
        size_t nx = conv2d ? 2 * 5 * 23 * 45 : 37 * 301 * 3, nw = conv2d ? 7 * 5 * 9 : 35;
        size_t ny = conv2d ? 2 * 7 * 23 * 45 : 37 * 301 * 3;
        const void *desc = conv2d ? (const void *)&c : (const void *)&f;
        float *x = malloc(nx * sizeof(float)), *w = malloc(nw * sizeof(float));
        float *y1 = malloc(ny * sizeof(float)), *y2 = malloc(ny * sizeof(float));
        float *yscalar = malloc(ny * sizeof(float));
        test_fill_random(x, nx);
        test_fill_random(w, nw);
        run_plan(conv2d, desc, FCONV_ISA_SCALAR, 1, x, w, yscalar);
        for (int isa = FCONV_ISA_SCALAR; isa <= FCONV_ISA_AVX512; isa++) {
            if (!fconv_kernels_exact((fconv_isa)isa)) continue;
            run_plan(conv2d, desc, (fconv_isa)isa, 1, x, w, y1);
            run_plan(conv2d, desc, (fconv_isa)isa, 2, x, w, y2);
            CHECKF(memcmp(y1, y2, ny * sizeof(float)) == 0, "%s %s: 1 and 2 threads differ",
                   conv2d ? "conv2d" : "filter2d", fconv_isa_name((fconv_isa)isa));
            double worst = 0.0;
            for (size_t i = 0; i < ny; i++) worst = fmax(worst, fabs((double)y1[i] - yscalar[i]));
            /* |terms| <= 45 (conv2d) or 35 (filter), each <= 1: far below 1e-4 in float32 */
            CHECKF(worst < 1e-4, "%s %s vs scalar: max diff %g", conv2d ? "conv2d" : "filter2d",
                   fconv_isa_name((fconv_isa)isa), worst);
        }
        free(x);
        free(w);
        free(y1);
        free(y2);
        free(yscalar);
    }
}

int main(void) {
    test_init();
    TEST(test_kernel_all_isas);
    TEST(test_streamed_row_all_isas);
    TEST(test_filter_rows_all_isas);
    TEST(test_plan_isa);
    TEST(test_threads_bit_identical);
    return test_finish();
}
