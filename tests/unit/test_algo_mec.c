/*
 * test_algo_mec.c — what is particular to MEC: its workspace is the exact strip formula and
 * smaller than im2col's on typical layers and filters (the point of the algorithm), and the
 * paths the random shapes of test_algorithms.c reach rarely are right and thread-independent:
 * vertical dilation (R accumulated GEMMs), few output rows (rows in sequence, each GEMM split
 * over threads), more than 512 output columns (several GEMM tiles per row) and more than 64
 * filters (several output-channel blocks, re-laid out one at a time); and both its and
 * im2col's 1x1 layers, an image per thread where the batch allows.
 */
#include <stdint.h>

#include <math.h>

#include "core/dispatch.h"
#include "fastconv.h"
#include "ref/conv-ref.h"
#include "test-cpu.h"
#include "test.h"

#define ERROR_BOUND 2e-6 /* mec's documented bound */

static size_t conv2d_workspace(const fconv_conv2d_desc *d, fconv_algo algo, int with_weights) {
    fconv_plan *plan;
    int64_t nw = d->k * (d->c / (d->groups ? d->groups : 1)) * d->r * d->s;
    float *w = with_weights ? calloc((size_t)nw, sizeof *w) : NULL;
    fconv_options o = {.algo = algo, .threads = 1};
    fconv_status st = fconv_plan_conv2d(d, &o, w, NULL, &plan);
    free(w);
    CHECKF(st == FCONV_OK, "%s: %s", fconv_algo_name(algo), fconv_last_error());
    if (st != FCONV_OK) return 0;
    size_t bytes = fconv_plan_workspace_size(plan);
    fconv_plan_destroy(plan);
    return bytes;
}

static size_t filter_workspace(const fconv_filter2d_desc *d, fconv_algo algo) {
    fconv_plan *plan;
    fconv_options o = {.algo = algo, .threads = 1};
    fconv_status st = fconv_plan_filter2d(d, &o, NULL, &plan);
    CHECKF(st == FCONV_OK, "%s: %s", fconv_algo_name(algo), fconv_last_error());
    if (st != FCONV_OK) return 0;
    size_t bytes = fconv_plan_workspace_size(plan);
    fconv_plan_destroy(plan);
    return bytes;
}

/* What a caller must pass for an algorithm that uses `bytes`: the plan adds 63 bytes so that
 * execute can align any pointer to 64 (internal.h, fconv_caller_workspace_bytes). */
static size_t caller_bytes(size_t bytes) { return bytes ? bytes + 63 : 0; }

/* The example: im2col 576 x 3136 floats (7.2 MB), MEC 56 strips of 58 x 3 x 64. */
static void test_workspace_formula(void) {
    fconv_conv2d_desc d = {.n = 1, .c = 64, .h = 56, .w = 56, .k = 64, .r = 3, .s = 3,
                           .pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1};
    CHECK_EQ_INT(conv2d_workspace(&d, FCONV_ALGO_MEC, 1), caller_bytes(56 * 58 * 3 * 64 * 4));
    /* Weights given at execute time are re-laid out in the workspace, 64 filters at a time. */
    CHECK_EQ_INT(conv2d_workspace(&d, FCONV_ALGO_MEC, 0),
                 caller_bytes(56 * 58 * 3 * 64 * 4 + 64 * 64 * 9 * 4));
    d.k = 256;
    CHECK_EQ_INT(conv2d_workspace(&d, FCONV_ALGO_MEC, 0),
                 caller_bytes(56 * 58 * 3 * 64 * 4 + 64 * 64 * 9 * 4));
    d.k = 64;
    CHECK_EQ_INT(conv2d_workspace(&d, FCONV_ALGO_IM2COL, 1), caller_bytes(576 * 3136 * 4));
    /* 1x1 stride 1: no lowering at all; weights given at execute time are packed for the
     * GEMM (128 rows rounded up to the ISA's MR: 132 for AVX2's 6, x 64 channels), one group
     * at a time. */
    fconv_conv2d_desc pointwise = {.n = 2, .c = 64, .h = 28, .w = 28, .k = 128, .r = 1, .s = 1};
    const size_t mr = fconv_kernels_for(FCONV_ISA_AUTO)->gemm_mr, rows = (128 + mr - 1) / mr * mr;
    CHECK_EQ_INT(conv2d_workspace(&pointwise, FCONV_ALGO_MEC, 1), 0);
    CHECK_EQ_INT(conv2d_workspace(&pointwise, FCONV_ALGO_MEC, 0), caller_bytes(rows * 64 * 4));
    CHECK_EQ_INT(conv2d_workspace(&pointwise, FCONV_ALGO_IM2COL, 0), caller_bytes(rows * 64 * 4));
}

static void test_smaller_than_im2col(void) {
    const fconv_conv2d_desc layers[] = {
        {.n = 1, .c = 64, .h = 56, .w = 56, .k = 64, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1,
         .pad_bottom = 1, .pad_right = 1},                                      /* ResNet 3x3 */
        {.n = 1, .c = 3, .h = 224, .w = 224, .k = 64, .r = 7, .s = 7, .stride_h = 2, .stride_w = 2,
         .pad_top = 3, .pad_left = 3, .pad_bottom = 3, .pad_right = 3},        /* ResNet conv1 */
        {.n = 1, .c = 128, .h = 56, .w = 56, .k = 128, .r = 3, .s = 3, .stride_h = 2, .stride_w = 2,
         .pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1},        /* downsampling */
        {.n = 4, .c = 256, .h = 14, .w = 14, .k = 256, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1,
         .pad_bottom = 1, .pad_right = 1},                                      /* batch 4 */
        {.n = 1, .c = 32, .h = 27, .w = 27, .k = 96, .r = 5, .s = 5, .pad_top = 2, .pad_left = 2,
         .pad_bottom = 2, .pad_right = 2, .groups = 2},                         /* AlexNet-like */
        {.n = 1, .c = 64, .h = 32, .w = 32, .k = 64, .r = 3, .s = 3, .pad_top = 2, .pad_left = 2,
         .pad_bottom = 2, .pad_right = 2, .dilation_h = 2, .dilation_w = 2},   /* dilated */
    };
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++)
        for (int with_weights = 0; with_weights < 2; with_weights++) {
            size_t mec = conv2d_workspace(&layers[i], FCONV_ALGO_MEC, with_weights);
            size_t im2col = conv2d_workspace(&layers[i], FCONV_ALGO_IM2COL, with_weights);
            CHECKF(mec < im2col, "layer %zu (weights at plan time: %d): mec %zu >= im2col %zu bytes",
                   i, with_weights, mec, im2col);
        }
    const fconv_filter2d_desc filters[] = {
        {.h = 1024, .w = 1024, .kh = 7, .kw = 7, .mode = FCONV_MODE_SAME},
        {.h = 480, .w = 640, .channels = 3, .kh = 5, .kw = 5, .mode = FCONV_MODE_FULL,
         .border = FCONV_BORDER_REFLECT},
        {.h = 512, .w = 512, .kh = 3, .kw = 3, .mode = FCONV_MODE_VALID, .correlate = 1},
    };
    for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++) {
        size_t mec = filter_workspace(&filters[i], FCONV_ALGO_MEC);
        size_t im2col = filter_workspace(&filters[i], FCONV_ALGO_IM2COL);
        CHECKF(mec < im2col, "filter %zu: mec %zu >= im2col %zu bytes", i, mec, im2col);
    }
}

/* algo on 1 and 2 threads (weights at plan time, then at execute time) against the reference. */
static void check_algo_conv2d(const fconv_conv2d_desc *d, fconv_algo algo) {
    int64_t cg = d->c / (d->groups ? d->groups : 1);
    size_t nx = (size_t)(d->n * d->c * d->h * d->w), nw = (size_t)(d->k * cg * d->r * d->s);
    float *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w), bias[256];
    test_fill_random(x, nx);
    test_fill_random(w, nw);
    test_fill_random(bias, 256);
    const float *b = d->has_bias ? bias : NULL;
    fconv_plan *p1, *p2;
    fconv_status st = fconv_plan_conv2d(d, &(fconv_options){.algo = algo, .threads = 1}, w, b, &p1);
    CHECKF(st == FCONV_OK, "%s", fconv_last_error());
    if (st != FCONV_OK) goto out;
    st = fconv_plan_conv2d(d, &(fconv_options){.algo = algo, .threads = 2}, NULL, NULL, &p2);
    CHECKF(st == FCONV_OK, "%s", fconv_last_error());
    if (st != FCONV_OK) {
        fconv_plan_destroy(p1);
        goto out;
    }
    size_t ny = (size_t)fconv_plan_output_elements(p1);
    float *y1 = malloc(ny * sizeof *y1), *y2 = malloc(ny * sizeof *y2);
    CHECK(fconv_execute(p1, x, NULL, NULL, y1) == FCONV_OK);
    CHECK(fconv_execute(p2, x, w, b, y2) == FCONV_OK);
    CHECK(memcmp(y1, y2, ny * sizeof *y1) == 0);
    double norm = fconv_ref_normalized_error(p1, x, w, b, y1, 1, NULL);
    CHECKF(norm <= ERROR_BOUND, "normalized error %.3g", norm);
    free(y1);
    free(y2);
    fconv_plan_destroy(p1);
    fconv_plan_destroy(p2);
out:
    free(x);
    free(w);
}

static void check_conv2d(const fconv_conv2d_desc *d) { check_algo_conv2d(d, FCONV_ALGO_MEC); }

static void test_rare_paths(void) {
    /* Vertical dilation 3 with stride 2, asymmetric padding, groups, bias and ReLU. */
    check_conv2d(&(fconv_conv2d_desc){.n = 2, .c = 6, .h = 17, .w = 15, .k = 4, .r = 3, .s = 2,
                                      .stride_h = 2, .stride_w = 3, .pad_top = 2, .pad_left = 1,
                                      .pad_bottom = 0, .pad_right = 3, .dilation_h = 3,
                                      .dilation_w = 2, .groups = 2, .has_bias = 1,
                                      .activation = FCONV_ACTIVATION_RELU});
    /* One output row of 1098 columns: rows in sequence, three GEMM tiles split over threads. */
    check_conv2d(&(fconv_conv2d_desc){.n = 1, .c = 2, .h = 3, .w = 1100, .k = 3, .r = 3, .s = 3,
                                      .has_bias = 1});
    /* Three rows with vertical dilation: sequence of rows, accumulated GEMMs. */
    check_conv2d(&(fconv_conv2d_desc){.n = 1, .c = 3, .h = 7, .w = 600, .k = 5, .r = 2, .s = 1,
                                      .dilation_h = 5, .groups = 1});
    /* 130 filters: three blocks of output channels, the last one partial. */
    check_conv2d(&(fconv_conv2d_desc){.n = 2, .c = 5, .h = 9, .w = 11, .k = 130, .r = 3, .s = 3,
                                      .pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1,
                                      .has_bias = 1, .activation = FCONV_ACTIVATION_RELU});
    /* Depthwise (C/G = 1: the weights need no re-layout). */
    check_conv2d(&(fconv_conv2d_desc){.n = 1, .c = 8, .h = 12, .w = 12, .k = 8, .r = 3, .s = 3,
                                      .pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1,
                                      .groups = 8});
}

/* 1x1 layers, which both run as one GEMM per image on the input in place: batches the
 * threads divide go an image per thread (single-threaded GEMMs), others image by image with
 * each GEMM split; either way the bits of one thread. */
static void test_pointwise(void) {
    for (int64_t n = 1; n <= 4; n++) {
        const fconv_conv2d_desc d = {.n = n, .c = 19, .h = 9, .w = 13, .k = 37, .r = 1, .s = 1,
                                     .has_bias = 1, .activation = FCONV_ACTIVATION_RELU};
        check_algo_conv2d(&d, FCONV_ALGO_MEC);
        check_algo_conv2d(&d, FCONV_ALGO_IM2COL);
    }
    /* groups: image by image, group by group */
    check_algo_conv2d(&(fconv_conv2d_desc){.n = 2, .c = 8, .h = 5, .w = 7, .k = 6, .r = 1, .s = 1, .groups = 2},
                      FCONV_ALGO_IM2COL);
}

/* A 1x1 layer's output streamed (its whole tiles through non-temporal stores: the CPU figure
 * lowered so that this small one streams) into y on a cache line and 1 and 5 floats past one
 * (the columns before the first line boundary then a product of their own): the same bits as
 * plain stores on one thread, on 2 threads, for a batch of 1 and of 2 (an image per thread),
 * on the best ISA and on AVX2 (whose 8 last columns of 104 go to the few-column kernel). */
static void test_pointwise_streamed(void) {
    fconv_cpu_info *cpu = test_cpu_figures();
    const double saved = cpu->gemm_stream_output_bytes;
    for (int avx2 = 0; avx2 <= 1; avx2++)
        for (int64_t n = 1; n <= 2; n++)
            for (int shape = 0; shape < 2; shape++) {
                const fconv_conv2d_desc d = {.n = n, .c = 24, .h = shape ? 13 : 9, .w = shape ? 8 : 16, .k = 40,
                                             .r = 1, .s = 1, .has_bias = 1, .activation = FCONV_ACTIVATION_RELU};
                const size_t nx = (size_t)(n * 24 * d.h * d.w), nw = 40 * 24, ny = (size_t)(n * 40 * d.h * d.w);
                float *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w), bias[40];
                float *want = malloc(ny * sizeof *want), *ybuf = fconv_alloc_aligned((ny + 16) * sizeof *ybuf);
                test_fill_random(x, nx);
                test_fill_random(w, nw);
                test_fill_random(bias, 40);
                for (int threads = 1; threads <= 2; threads++) {
                    fconv_plan *plan;
                    const fconv_options o = {.algo = FCONV_ALGO_IM2COL, .threads = threads,
                                             .max_isa = avx2 ? FCONV_ISA_AVX2 : FCONV_ISA_AUTO};
                    fconv_status st = fconv_plan_conv2d(&d, &o, w, bias, &plan);
                    CHECKF(st == FCONV_OK, "%s", fconv_last_error());
                    if (st != FCONV_OK) continue;
                    if (threads == 1) { /* plain stores */
                        cpu->gemm_stream_output_bytes = INFINITY;
                        CHECK(fconv_execute(plan, x, NULL, NULL, want) == FCONV_OK);
                        double err = fconv_ref_normalized_error(plan, x, w, bias, want, 1, NULL);
                        CHECKF(err <= ERROR_BOUND, "normalized error %.3g", err);
                    }
                    cpu->gemm_stream_output_bytes = 0.0;
                    for (size_t off = 0; off <= 5; off += off ? 4 : 1) {
                        test_fill_random(ybuf, ny + 16);
                        CHECK(fconv_execute(plan, x, NULL, NULL, ybuf + off) == FCONV_OK);
                        CHECKF(memcmp(want, ybuf + off, ny * sizeof *want) == 0,
                               "%s batch %lld, %lldx%lld, %d threads, y %zu floats past a line: streamed differs",
                               avx2 ? "avx2" : "best ISA", (long long)n, (long long)d.h, (long long)d.w, threads, off);
                    }
                    cpu->gemm_stream_output_bytes = saved;
                    fconv_plan_destroy(plan);
                }
                free(x);
                free(w);
                free(want);
                fconv_free_aligned(ybuf);
            }
}

/* A shallow 1x1 layer's input read in place by the packed GEMM, or packed where it lies off a
 * vector boundary and the CPU figure says so (fconv_cpu_info.gemm_b_in_place_aligned_only):
 * from x on a line and 1 and 4 floats past one, either way, on one thread and two, the same
 * bits. */
static void test_pointwise_b_off_line(void) {
    fconv_cpu_info *cpu = test_cpu_figures();
    const int saved = cpu->gemm_b_in_place_aligned_only;
    /* 528 pixels: the packed GEMM's (from 512 columns), rows 33 lines apart, spread over L1's sets */
    const fconv_conv2d_desc d = {.n = 2, .c = 48, .h = 22, .w = 24, .k = 40, .r = 1, .s = 1};
    const size_t nx = 2 * 48 * 22 * 24, nw = 40 * 48, ny = 2 * 40 * 22 * 24;
    float *xbuf = fconv_alloc_aligned((nx + 16) * sizeof *xbuf), *w = malloc(nw * sizeof *w);
    float *want = malloc(ny * sizeof *want), *y = malloc(ny * sizeof *y);
    test_fill_random(xbuf, nx + 16);
    test_fill_random(w, nw);
    for (int threads = 1; threads <= 2; threads++) {
        fconv_plan *plan;
        fconv_status st = fconv_plan_conv2d(&d, &(fconv_options){.algo = FCONV_ALGO_IM2COL, .threads = threads}, w,
                                            NULL, &plan);
        CHECKF(st == FCONV_OK, "%s", fconv_last_error());
        if (st != FCONV_OK) continue;
        for (size_t off = 0; off <= 4; off += off ? 3 : 1) {
            const float *x = xbuf + off;
            cpu->gemm_b_in_place_aligned_only = 0;
            CHECK(fconv_execute(plan, x, NULL, NULL, want) == FCONV_OK);
            double err = fconv_ref_normalized_error(plan, x, w, NULL, want, 1, NULL);
            CHECKF(err <= ERROR_BOUND, "normalized error %.3g", err);
            cpu->gemm_b_in_place_aligned_only = 1;
            CHECK(fconv_execute(plan, x, NULL, NULL, y) == FCONV_OK);
            CHECKF(memcmp(want, y, ny * sizeof *y) == 0,
                   "%d threads, x %zu floats past a line: B packed differs from B read in place", threads, off);
        }
        cpu->gemm_b_in_place_aligned_only = saved;
        fconv_plan_destroy(plan);
    }
    fconv_free_aligned(xbuf);
    free(w);
    free(want);
    free(y);
}

int main(void) {
    test_init();
    fconv_algo_info info;
    if (fconv_algo_get_info(FCONV_ALGO_MEC, &info) != FCONV_OK ||
        fconv_algo_get_info(FCONV_ALGO_IM2COL, &info) != FCONV_OK)
        return TEST_SKIP_CODE;
    TEST(test_workspace_formula);
    TEST(test_smaller_than_im2col);
    TEST(test_rare_paths);
    TEST(test_pointwise);
    TEST(test_pointwise_streamed);
    TEST(test_pointwise_b_off_line);
    return test_finish();
}
