/*
 * test_algo_fft.c — what the generic algorithm test cannot see for fft and fft-tiled:
 * the fast-size search, overlap-save with many tiles (images and signals far larger than
 * the random problems), conv2d padding beyond the kernel with dilation and groups, an
 * unaligned workspace, an impulse reproducing the kernel, NaN not crashing, and the
 * reasons given for declining.
 */
#include <stdint.h>

#include "algo/fft-common.h"
#include "fastconv.h"
#include "ref/conv-ref.h"
#include "test.h"

#define BOUND 1e-5

static int is_fast(int64_t n) {
    for (int64_t f = 2; f <= 7; f++)
        while (n % f == 0) n /= f;
    return n == 1;
}

static void fast_size_is_smallest_7_smooth(void) {
    int64_t expect = 1;
    for (int64_t n = 1; n <= 5000; n++) {
        if (expect < n) {
            expect = n;
            while (!is_fast(expect)) expect++;
        }
        CHECKF(fconv_fft_fast_size(n) == expect, "fast_size(%lld) = %lld, want %lld", (long long)n,
               (long long)fconv_fft_fast_size(n), (long long)expect);
    }
    CHECK(is_fast(fconv_fft_fast_size(1000001)) && fconv_fft_fast_size(1000001) >= 1000001);
}

static float *random_floats(int64_t n, float scale, float offset) {
    float *p = malloc((size_t)n * sizeof *p);
    for (int64_t i = 0; i < n; i++) p[i] = test_rand_float() * scale + offset;
    return p;
}

/* Plan (weights at plan time), run with fconv_execute, return y (caller frees). */
static float *run_filter(const fconv_filter2d_desc *d, fconv_algo algo, int threads, const float *x,
                         const float *k, fconv_plan **plan_out) {
    fconv_options o = {.algo = algo, .threads = threads};
    fconv_status st = fconv_plan_filter2d(d, &o, k, plan_out);
    CHECKF(st == FCONV_OK, "plan: %s", fconv_last_error());
    if (st != FCONV_OK) return NULL;
    float *y = malloc((size_t)fconv_plan_output_elements(*plan_out) * sizeof *y);
    CHECK(fconv_execute(*plan_out, x, NULL, NULL, y) == FCONV_OK);
    return y;
}

static void tiled_filter_many_tiles(void) {
    static const int64_t kernels[][2] = {{9, 17}, {40, 3}, {1, 31}, {31, 1}};
    for (int b = 0; b <= FCONV_BORDER_WRAP; b++)
        for (int ki = 0; ki < 4; ki++) {
            fconv_filter2d_desc d = {.h = 300, .w = 261, .channels = 2, .kh = kernels[ki][0],
                                     .kw = kernels[ki][1], .mode = (fconv_mode)((b + ki) % 3),
                                     .border = (fconv_border)b, .border_value = 1.5f,
                                     .correlate = ki & 1};
            float *x = random_floats(d.h * d.w * d.channels, 127.5f, 127.5f); /* 0..255 */
            float *k = random_floats(d.kh * d.kw, 1.0f, 0.0f);
            for (int a = 0; a < 2; a++) {
                fconv_algo algo = a ? FCONV_ALGO_FFT_TILED : FCONV_ALGO_FFT;
                fconv_plan *plan;
                float *y = run_filter(&d, algo, 2, x, k, &plan);
                if (!y) continue;
                double err = fconv_ref_normalized_error(plan, x, k, NULL, y, 7, NULL);
                CHECKF(err <= BOUND, "%s border %d kernel %lldx%lld: error %.3g", fconv_algo_name(algo),
                       b, (long long)d.kh, (long long)d.kw, err);
                fconv_plan_destroy(plan);
                free(y);
            }
            free(x);
            free(k);
        }
}

static void tiled_long_signal(void) {
    fconv_conv1d_desc d = {.n = 200000, .m = 1000, .mode = FCONV_MODE_FULL};
    float *x = random_floats(d.n, 1000.0f, 0.0f), *k = random_floats(d.m, 1.0f, 0.0f);
    for (int a = 0; a < 2; a++) {
        fconv_options o = {.algo = a ? FCONV_ALGO_FFT_TILED : FCONV_ALGO_FFT, .threads = 2};
        fconv_plan *plan;
        CHECK(fconv_plan_conv1d(&d, &o, NULL, &plan) == FCONV_OK);
        float *y = malloc((size_t)fconv_plan_output_elements(plan) * sizeof *y);
        CHECK(fconv_execute(plan, x, k, NULL, y) == FCONV_OK);
        double err = fconv_ref_normalized_error(plan, x, k, NULL, y, 101, NULL);
        CHECKF(err <= BOUND, "conv1d %s: error %.3g", fconv_algo_name(o.algo), err);
        fconv_plan_destroy(plan);
        free(y);
    }
    free(x);
    free(k);
}

static void conv2d_wide_pads_dilation_groups(void) {
    fconv_conv2d_desc d = {.n = 2, .c = 4, .h = 11, .w = 7, .k = 6, .r = 3, .s = 4,
                           .pad_top = 5, .pad_left = 0, .pad_bottom = 1, .pad_right = 9,
                           .dilation_h = 2, .dilation_w = 3, .groups = 2, .has_bias = 1,
                           .activation = FCONV_ACTIVATION_RELU};
    fconv_options o = {.algo = FCONV_ALGO_FFT, .threads = 2};
    fconv_plan *plan;
    CHECKF(fconv_plan_conv2d(&d, &o, NULL, NULL, &plan) == FCONV_OK, "%s", fconv_last_error());
    int64_t nx = fconv_plan_input_elements(plan), nw = fconv_plan_weight_elements(plan);
    float *x = random_floats(nx, 1.0f, 0.0f), *w = random_floats(nw, 1.0f, 0.0f);
    float *bias = random_floats(d.k, 1.0f, 0.0f);
    float *y = malloc((size_t)fconv_plan_output_elements(plan) * sizeof *y);
    CHECK(fconv_execute(plan, x, w, bias, y) == FCONV_OK);
    double err = fconv_ref_normalized_error(plan, x, w, bias, y, 1, NULL);
    CHECKF(err <= BOUND, "error %.3g", err);
    fconv_plan_destroy(plan);
    free(x);
    free(w);
    free(bias);
    free(y);
}

/* Workspaces need no alignment (fastconv.h): an odd offset gives the same bits. */
static void unaligned_workspace(void) {
    fconv_filter2d_desc d = {.h = 90, .w = 77, .kh = 12, .kw = 9, .border = FCONV_BORDER_MIRROR};
    float *x = random_floats(d.h * d.w, 1.0f, 0.0f), *k = random_floats(d.kh * d.kw, 1.0f, 0.0f);
    for (int a = 0; a < 2; a++) {
        fconv_options o = {.algo = a ? FCONV_ALGO_FFT_TILED : FCONV_ALGO_FFT, .threads = 2};
        fconv_plan *plan;
        CHECK(fconv_plan_filter2d(&d, &o, k, &plan) == FCONV_OK);
        size_t ws = fconv_plan_workspace_size(plan), ny = (size_t)fconv_plan_output_elements(plan);
        char *buf = malloc(ws + 4);
        float *y1 = malloc(ny * sizeof *y1), *y2 = malloc(ny * sizeof *y2);
        CHECK(fconv_execute_with_workspace(plan, x, NULL, NULL, y1, buf, ws) == FCONV_OK);
        CHECK(fconv_execute_with_workspace(plan, x, NULL, NULL, y2, buf + 4, ws) == FCONV_OK);
        CHECK(memcmp(y1, y2, ny * sizeof *y1) == 0);
        fconv_plan_destroy(plan);
        free(buf);
        free(y1);
        free(y2);
    }
    free(x);
    free(k);
}

/* A unit impulse in 'full' mode reproduces the kernel around it (shift equivariance and
 * orientation in one check). */
static void impulse_reproduces_kernel(void) {
    fconv_filter2d_desc d = {.h = 40, .w = 50, .kh = 7, .kw = 5, .mode = FCONV_MODE_FULL};
    float *x = calloc((size_t)(d.h * d.w), sizeof *x), *k = random_floats(d.kh * d.kw, 1.0f, 0.0f);
    x[13 * d.w + 21] = 1.0f;
    for (int a = 0; a < 2; a++) {
        fconv_plan *plan;
        float *y = run_filter(&d, a ? FCONV_ALGO_FFT_TILED : FCONV_ALGO_FFT, 1, x, k, &plan);
        if (!y) continue;
        int64_t ow = d.w + d.kw - 1;
        double worst = 0.0;
        for (int64_t i = 0; i < d.h + d.kh - 1; i++)
            for (int64_t j = 0; j < ow; j++) {
                int64_t a0 = i - 13, b0 = j - 21;
                float want = a0 >= 0 && a0 < d.kh && b0 >= 0 && b0 < d.kw ? k[a0 * d.kw + b0] : 0.0f;
                double e = fabs((double)y[i * ow + j] - want);
                if (e > worst) worst = e;
            }
        CHECKF(worst <= 1e-6, "impulse: worst deviation %.3g", worst);
        fconv_plan_destroy(plan);
        free(y);
    }
    free(x);
    free(k);
}

/* NaN spreads (across the tile, or the whole output for fft) but never crashes, and the
 * output under the NaN is NaN as direct would give. */
static void nan_spreads_without_crash(void) {
    fconv_filter2d_desc d = {.h = 64, .w = 64, .kh = 5, .kw = 5};
    float *x = random_floats(d.h * d.w, 1.0f, 0.0f), *k = random_floats(d.kh * d.kw, 1.0f, 0.0f);
    x[30 * d.w + 30] = NAN;
    for (int a = 0; a < 2; a++) {
        fconv_plan *plan;
        float *y = run_filter(&d, a ? FCONV_ALGO_FFT_TILED : FCONV_ALGO_FFT, 2, x, k, &plan);
        if (!y) continue;
        CHECK(isnan(y[30 * d.w + 30]));
        fconv_plan_destroy(plan);
        free(y);
    }
    free(x);
    free(k);
}

static void declines_name_themselves(void) {
    fconv_conv2d_desc d = {.n = 1, .c = 2, .h = 9, .w = 9, .k = 2, .r = 3, .s = 3, .stride_h = 2};
    fconv_options o = {.algo = FCONV_ALGO_FFT};
    fconv_plan *plan;
    CHECK(fconv_plan_conv2d(&d, &o, NULL, NULL, &plan) == FCONV_EUNSUPPORTED);
    CHECK_STR_CONTAINS(fconv_last_error(), "fft needs stride 1");
    o.algo = FCONV_ALGO_FFT_TILED;
    d.stride_h = 1;
    CHECK(fconv_plan_conv2d(&d, &o, NULL, NULL, &plan) == FCONV_EUNSUPPORTED);
    CHECK_STR_CONTAINS(fconv_last_error(), "fft-tiled");
}

int main(void) {
    test_init();
    TEST(fast_size_is_smallest_7_smooth);
    TEST(tiled_filter_many_tiles);
    TEST(tiled_long_signal);
    TEST(conv2d_wide_pads_dilation_groups);
    TEST(unaligned_workspace);
    TEST(impulse_reproduces_kernel);
    TEST(nan_spreads_without_crash);
    TEST(declines_name_themselves);
    return test_finish();
}
