/*
 * test_algo_implicit_gemm.c — what the random shapes of test_algorithms.c rarely reach in
 * implicit-gemm: output-channel counts that fill 2, 3 and 4 vectors of a tile and blocks past
 * the first (the random layers have at most 9 channels per group: one vector on AVX-512),
 * pixel counts that leave a partial last tile (a narrow tile with whole channel blocks), a
 * one-pixel output (the transposing store's stride is 1), windows that stay inside the image (no padded copy), reach one side's
 * padding only or lie wholly in it (the kernel rows a tile skips), batches split into
 * passes of padded copies, taps in chunks (3x3 kernels too, under a slow shared-cache rate),
 * NaN through ReLU, the workspace formula, and an NHWC output stored non-temporally; the layers
 * and the in-place windows in both layouts (NCHW and NHWC). Run once per ISA (tests.cmake).
 */
#include <math.h>
#include <stdint.h>

#include "core/internal.h"
#include "fastconv.h"
#include "ref/conv-ref.h"
#include "test-cpu.h"
#include "test.h"

#define BOUND 2e-6 /* implicit-gemm's documented bound */

static float *random_array(int64_t n) {
    float *p = malloc((size_t)n * sizeof *p);
    test_fill_random(p, (size_t)n);
    return p;
}

/* Weights at plan time on 1 thread against the reference, and execute-time weights on 2
 * threads: the same bits. */
static void check_layer_in(fconv_conv2d_desc d) {
    char what[200];
    snprintf(what, sizeof what, "%s n%lld c%lld %lldx%lld k%lld %lldx%lld stride %lld,%lld pad %lld,%lld,%lld,%lld dil %lld,%lld g%lld",
             d.layout == FCONV_LAYOUT_NHWC ? "nhwc" : "nchw",
             (long long)d.n, (long long)d.c, (long long)d.h, (long long)d.w, (long long)d.k, (long long)d.r,
             (long long)d.s, (long long)d.stride_h, (long long)d.stride_w, (long long)d.pad_top,
             (long long)d.pad_left, (long long)d.pad_bottom, (long long)d.pad_right, (long long)d.dilation_h,
             (long long)d.dilation_w, (long long)d.groups);
    int64_t g = d.groups ? d.groups : 1, n = d.n ? d.n : 1;
    float *x = random_array(n * d.c * d.h * d.w), *w = random_array(d.k * d.c / g * d.r * d.s);
    float *bias = d.has_bias ? random_array(d.k) : NULL;
    fconv_plan *p1, *p2;
    fconv_status s1 = fconv_plan_conv2d(&d, &(fconv_options){.algo = FCONV_ALGO_IMPLICIT_GEMM, .threads = 1}, w,
                                        bias, &p1);
    CHECKF(s1 == FCONV_OK, "%s: %s", what, fconv_last_error());
    fconv_status s2 = fconv_plan_conv2d(&d, &(fconv_options){.algo = FCONV_ALGO_IMPLICIT_GEMM, .threads = 2},
                                        NULL, NULL, &p2);
    CHECKF(s2 == FCONV_OK, "%s: %s", what, fconv_last_error());
    if (s1 == FCONV_OK && s2 == FCONV_OK) {
        int64_t ny = fconv_plan_output_elements(p1);
        float *y1 = malloc((size_t)ny * sizeof *y1), *y2 = malloc((size_t)ny * sizeof *y2);
        CHECK(fconv_execute(p1, x, NULL, NULL, y1) == FCONV_OK);
        CHECK(fconv_execute(p2, x, w, bias, y2) == FCONV_OK);
        double norm = fconv_ref_normalized_error(p1, x, w, bias, y1, 1, NULL);
        CHECKF(norm <= BOUND, "%s: normalized error %.3g", what, norm);
        CHECKF(memcmp(y1, y2, (size_t)ny * sizeof *y1) == 0, "%s: 1 and 2 threads differ", what);
        free(y1);
        free(y2);
    }
    if (s1 == FCONV_OK) fconv_plan_destroy(p1);
    if (s2 == FCONV_OK) fconv_plan_destroy(p2);
    free(x);
    free(w);
    free(bias);
}

/* Both layouts: NHWC runs the same tiles with its taps in (r, s, c) order and its pixels' channels
 * side by side in x and y. */
static void check_layer(fconv_conv2d_desc d) {
    d.layout = FCONV_LAYOUT_NCHW;
    check_layer_in(d);
    d.layout = FCONV_LAYOUT_NHWC;
    check_layer_in(d);
}

static void test_channel_blocks(void) {
    /* 1 .. 70 output channels: 1-4 vectors of 16 (8, 1), a second block (AVX-512: 64 + 6). */
    const int64_t ks[] = {1, 5, 16, 17, 33, 40, 48, 63, 64, 70, 130};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        check_layer((fconv_conv2d_desc){.n = 1, .c = 3, .h = 9, .w = 8, .k = ks[i], .r = 3, .s = 3, .pad_top = 1,
                                        .pad_left = 1, .pad_bottom = 1, .pad_right = 1, .has_bias = 1,
                                        .activation = FCONV_ACTIVATION_RELU});
    /* Groups whose blocks are partial; batch of 3. */
    check_layer((fconv_conv2d_desc){.n = 3, .c = 6, .h = 7, .w = 5, .k = 66, .r = 2, .s = 3, .groups = 3,
                                    .pad_top = 1, .pad_right = 2, .has_bias = 1});
}

static void test_pixels_and_windows(void) {
    /* 45 pixels (a partial last tile for every tile width), stride 2 and dilation 2 */
    check_layer((fconv_conv2d_desc){.n = 2, .c = 4, .h = 10, .w = 19, .k = 24, .r = 3, .s = 3, .stride_h = 2,
                                    .stride_w = 2, .dilation_h = 2, .dilation_w = 2, .pad_top = 2, .pad_left = 1,
                                    .pad_bottom = 1, .pad_right = 2});
    /* no padding: the image read in place; padding the windows never reach: also in place */
    check_layer((fconv_conv2d_desc){.n = 1, .c = 5, .h = 11, .w = 13, .k = 20, .r = 3, .s = 2});
    check_layer((fconv_conv2d_desc){.n = 1, .c = 5, .h = 12, .w = 12, .k = 20, .r = 3, .s = 3, .stride_h = 3,
                                    .stride_w = 3, .pad_bottom = 2, .pad_right = 2});
    /* one output pixel: y's channel stride is 1 */
    check_layer((fconv_conv2d_desc){.n = 2, .c = 7, .h = 3, .w = 3, .k = 37, .r = 3, .s = 3, .has_bias = 1});
    /* a kernel larger than the image, stride larger than the kernel */
    check_layer((fconv_conv2d_desc){.n = 1, .c = 2, .h = 2, .w = 3, .k = 18, .r = 5, .s = 4, .pad_top = 2,
                                    .pad_left = 1, .pad_bottom = 2, .pad_right = 2});
    check_layer((fconv_conv2d_desc){.n = 1, .c = 3, .h = 23, .w = 17, .k = 9, .r = 2, .s = 2, .stride_h = 4,
                                    .stride_w = 5, .pad_top = 1});
    /* padding deeper than the kernel: the first and last rows' windows lie wholly in it (no
     * tap: the bias alone), the next ones in part (kernel rows skipped per tile) */
    check_layer((fconv_conv2d_desc){.n = 2, .c = 3, .h = 5, .w = 6, .k = 20, .r = 3, .s = 3, .pad_top = 4,
                                    .pad_left = 1, .pad_bottom = 4, .pad_right = 1, .has_bias = 1,
                                    .activation = FCONV_ACTIVATION_RELU});
    check_layer((fconv_conv2d_desc){.n = 1, .c = 5, .h = 9, .w = 4, .k = 17, .r = 3, .s = 3, .stride_h = 2,
                                    .dilation_h = 3, .pad_top = 5, .pad_bottom = 6, .has_bias = 1});
    /* padded copies of 2.8 MB (9x9 pad 4: four windows of each row reach the padding): three
     * images to a pass, then the fourth alone. One output channel: the passes depend on the
     * images' bytes alone, and with 8 this layer's 1.5 G multiply-adds (and the reference's)
     * took ~63 s of the scalar run under ASan, most of CI's sanitizer phase. */
    check_layer((fconv_conv2d_desc){.n = 4, .c = 64, .h = 96, .w = 96, .k = 1, .r = 9, .s = 9, .pad_top = 4,
                                    .pad_left = 4, .pad_bottom = 4, .pad_right = 4, .has_bias = 1});
    /* runs of ~100 tiles (1x1, 256 channels: a block's weights and a run's inputs in L2)
     * shorter than a thread's share, the last one partial, over 2 channel blocks (5 on AVX2) */
    check_layer((fconv_conv2d_desc){.n = 1, .c = 256, .h = 40, .w = 40, .k = 66, .r = 1, .s = 1, .has_bias = 1});
    /* whole tiles only (84 pixels: 4, 6 and 7 divide it), read in place: runs of tiles in one
     * kernel call that go on from one image into the next, over 2 channel blocks */
    check_layer((fconv_conv2d_desc){.n = 3, .c = 16, .h = 7, .w = 12, .k = 70, .r = 1, .s = 1, .has_bias = 1});
    check_layer((fconv_conv2d_desc){.n = 3, .c = 5, .h = 9, .w = 14, .k = 33, .r = 3, .s = 3,
                                    .activation = FCONV_ACTIVATION_RELU});
    /* read in place, input and output past FCONV_CACHED_BYTES: the tile's streaming prefetches */
    check_layer((fconv_conv2d_desc){.n = 2, .c = 64, .h = 128, .w = 130, .k = 5, .r = 1, .s = 1, .has_bias = 1});
    /* ResNet-50's stem, cropped: 7x7 stride 2 pad 3 */
    check_layer((fconv_conv2d_desc){.n = 1, .c = 3, .h = 30, .w = 26, .k = 64, .r = 7, .s = 7, .stride_h = 2,
                                    .stride_w = 2, .pad_top = 3, .pad_left = 3, .pad_bottom = 3, .pad_right = 3,
                                    .has_bias = 1, .activation = FCONV_ACTIVATION_RELU});
}

/* Windows reaching into the padding by whole kernel rows per tile and by the columns of each
 * row's first and last window read the image in place (84 outputs a row: a whole number of
 * tiles on every ISA): no workspace, and the same bits as the same layer on the image padded
 * by hand (no padding, every tap read), on 1 and 2 threads. */
static void check_edged_as_padded(fconv_conv2d_desc d, int threads, fconv_layout layout) {
    d.layout = layout;
    fconv_conv2d_desc padded = d;
    padded.h = d.h + d.pad_top + d.pad_bottom;
    padded.w = d.w + d.pad_left + d.pad_right;
    padded.pad_top = padded.pad_left = padded.pad_bottom = padded.pad_right = 0;
    int64_t n = d.n ? d.n : 1, g = d.groups ? d.groups : 1;
    float *x = random_array(n * d.c * d.h * d.w), *w = random_array(d.k * d.c / g * d.r * d.s);
    float *xp = calloc((size_t)(n * d.c * padded.h * padded.w), sizeof *xp);
    if (d.layout == FCONV_LAYOUT_NHWC) /* each row's pixels, all channels of each */
        for (int64_t i = 0; i < n * d.h; i++)
            memcpy(xp + ((i / d.h * padded.h + i % d.h + d.pad_top) * padded.w + d.pad_left) * d.c, x + i * d.w * d.c,
                   (size_t)(d.w * d.c) * sizeof *x);
    else
        for (int64_t plane = 0; plane < n * d.c; plane++)
            for (int64_t i = 0; i < d.h; i++)
                memcpy(xp + (plane * padded.h + i + d.pad_top) * padded.w + d.pad_left, x + (plane * d.h + i) * d.w,
                       (size_t)d.w * sizeof *x);
    fconv_plan *p1, *p2;
    const fconv_options o = {.algo = FCONV_ALGO_IMPLICIT_GEMM, .threads = threads};
    CHECK(fconv_plan_conv2d(&d, &o, w, NULL, &p1) == FCONV_OK);
    CHECK(fconv_plan_conv2d(&padded, &o, w, NULL, &p2) == FCONV_OK);
    CHECK_EQ_INT(fconv_plan_workspace_size(p1), 0); /* no copy */
    int64_t ny = fconv_plan_output_elements(p1);
    CHECK_EQ_INT(ny, fconv_plan_output_elements(p2));
    float *y1 = malloc((size_t)ny * sizeof *y1), *y2 = malloc((size_t)ny * sizeof *y2);
    CHECK(fconv_execute(p1, x, NULL, NULL, y1) == FCONV_OK);
    CHECK(fconv_execute(p2, xp, NULL, NULL, y2) == FCONV_OK);
    CHECKF(memcmp(y1, y2, (size_t)ny * sizeof *y1) == 0,
           "%s %lldx%lld kernel %lldx%lld stride %lld: edged and padded differ",
           d.layout == FCONV_LAYOUT_NHWC ? "nhwc" : "nchw", (long long)d.h, (long long)d.w, (long long)d.r,
           (long long)d.s, (long long)d.stride_h);
    fconv_plan_destroy(p1);
    fconv_plan_destroy(p2);
    free(x);
    free(xp);
    free(w);
    free(y1);
    free(y2);
}

static void test_edged_padding(void) {
    for (int run = 0; run < 4; run++) {
        const int threads = 1 + run % 2;
        const fconv_layout layout = run < 2 ? FCONV_LAYOUT_NCHW : FCONV_LAYOUT_NHWC;
        /* 3x3/2 pad 1: the first window of a row one column left of x, the top row's a row above */
        check_edged_as_padded((fconv_conv2d_desc){.n = 2, .c = 40, .h = 10, .w = 168, .k = 70, .r = 3, .s = 3,
                                                  .stride_h = 2, .stride_w = 2, .pad_top = 1, .pad_left = 1,
                                                  .pad_bottom = 1, .pad_right = 1},
                              threads, layout);
        /* the same past FCONV_CACHED_BYTES of input and output (8.8 MB): NCHW's edged tiles
         * with the streaming input's prefetches */
        if (layout == FCONV_LAYOUT_NCHW)
            check_edged_as_padded((fconv_conv2d_desc){.n = 1, .c = 72, .h = 170, .w = 168, .k = 20, .r = 3,
                                                      .s = 3, .stride_h = 2, .stride_w = 2, .pad_top = 1,
                                                      .pad_left = 1, .pad_bottom = 1, .pad_right = 1},
                                  threads, layout);
        /* 3x3 pad 1, stride 1: both ends of every row, top and bottom rows */
        check_edged_as_padded((fconv_conv2d_desc){.n = 1, .c = 9, .h = 6, .w = 84, .k = 20, .r = 3, .s = 3,
                                                  .pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1},
                              threads, layout);
        /* 5x5/2 pad 2: two columns at each end; dilation 2 pad 2: one */
        check_edged_as_padded((fconv_conv2d_desc){.n = 1, .c = 5, .h = 9, .w = 167, .k = 17, .r = 5, .s = 5,
                                                  .stride_h = 2, .stride_w = 2, .pad_top = 2, .pad_left = 2,
                                                  .pad_bottom = 2, .pad_right = 2},
                              threads, layout);
        check_edged_as_padded((fconv_conv2d_desc){.n = 1, .c = 6, .h = 11, .w = 167, .k = 8, .r = 3, .s = 3,
                                                  .stride_h = 2, .stride_w = 2, .dilation_h = 2, .dilation_w = 2,
                                                  .pad_top = 2, .pad_left = 2, .pad_bottom = 2, .pad_right = 2},
                              threads, layout);
        /* asymmetric: two rows above, one column left, none below or right */
        check_edged_as_padded((fconv_conv2d_desc){.n = 1, .c = 7, .h = 8, .w = 85, .k = 5, .r = 3, .s = 3,
                                                  .pad_top = 2, .pad_left = 1},
                              threads, layout);
        /* a one-column kernel, padded left and right: a row's first and last windows lie
         * wholly in the padding (their pixels sum no tap, the bias alone) */
        check_edged_as_padded((fconv_conv2d_desc){.n = 1, .c = 6, .h = 5, .w = 82, .k = 9, .r = 3, .s = 1,
                                                  .pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1},
                              threads, layout);
    }
}

/* A NaN input reaches exactly the outputs whose windows hold it, ReLU or not. */
static void test_nan(void) {
    fconv_conv2d_desc d = {.n = 1, .c = 2, .h = 6, .w = 6, .k = 20, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1,
                           .pad_bottom = 1, .pad_right = 1, .activation = FCONV_ACTIVATION_RELU};
    float x[72], w[360], y[720];
    for (int i = 0; i < 72; i++) x[i] = 1.0f;
    for (int i = 0; i < 360; i++) w[i] = -1.0f; /* every finite output is negative: ReLU gives 0 */
    x[6 * 6 + 2 * 6 + 3] = NAN;                 /* channel 1, row 2, column 3 */
    fconv_plan *p;
    CHECK(fconv_plan_conv2d(&d, &(fconv_options){.algo = FCONV_ALGO_IMPLICIT_GEMM, .threads = 1}, w, NULL, &p) ==
          FCONV_OK);
    CHECK(fconv_execute(p, x, NULL, NULL, y) == FCONV_OK);
    for (int k = 0; k < 20; k++)
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++) {
                int reached = i >= 1 && i <= 3 && j >= 2 && j <= 4;
                float v = y[(k * 6 + i) * 6 + j];
                CHECKF(reached ? isnan(v) : v == 0.0f, "channel %d (%d, %d): %g", k, i, j, (double)v);
            }
    fconv_plan_destroy(p);
}

static size_t workspace(const fconv_conv2d_desc *d, int with_weights) {
    int64_t nw = d->k * d->c / (d->groups ? d->groups : 1) * d->r * d->s;
    float *w = with_weights ? calloc((size_t)nw, sizeof *w) : NULL;
    fconv_plan *p;
    fconv_status st = fconv_plan_conv2d(d, &(fconv_options){.algo = FCONV_ALGO_IMPLICIT_GEMM, .threads = 1}, w,
                                        NULL, &p);
    free(w);
    CHECKF(st == FCONV_OK, "%s", fconv_last_error());
    if (st != FCONV_OK) return 0;
    size_t bytes = fconv_plan_workspace_size(p);
    fconv_plan_destroy(p);
    return bytes;
}

/* The padded copy holds the rows and columns the windows touch, all channels; execute-time
 * weights add the packed ones (a whole block's width per tap, every ISA's block divides 64).
 * The plan adds 63 bytes so execute can align the caller's pointer. */
/* One-column kernels whose block of weights outgrows a chunk (256 KiB) on every ISA (scalar
 * blocks are 4 channels wide: more than 16384 taps), so each tile goes over its taps in
 * chunks, its sums passed from one to the next: the same bits as one pass (1 and 2 threads
 * agree, the reference within the bound), with kernel rows skipped at the top and bottom, a
 * tile wholly in the padding (bias only), a partial last tile, groups, bias and ReLU. */
static void test_tap_chunks(void) {
    check_layer((fconv_conv2d_desc){.n = 1, .c = 5500, .h = 5, .w = 4, .k = 5, .r = 3, .s = 1, .pad_top = 1,
                                    .pad_left = 1, .pad_bottom = 1, .pad_right = 1, .has_bias = 1,
                                    .activation = FCONV_ACTIVATION_RELU});
    check_layer((fconv_conv2d_desc){.n = 2, .c = 5500, .h = 4, .w = 4, .k = 6, .r = 3, .s = 1, .pad_top = 3,
                                    .stride_h = 2, .has_bias = 1});
    check_layer((fconv_conv2d_desc){.n = 1, .c = 17000, .h = 3, .w = 3, .k = 3, .r = 1, .s = 1, .has_bias = 1});
    check_layer((fconv_conv2d_desc){.n = 1, .c = 11000, .h = 4, .w = 3, .k = 70, .r = 3, .s = 1, .groups = 2,
                                    .pad_top = 1, .pad_bottom = 1, .activation = FCONV_ACTIVATION_RELU});
    /* chunks on edged tiles (84 outputs a row): the columns left out of each row's end pixels */
    check_layer((fconv_conv2d_desc){.n = 1, .c = 5500, .h = 2, .w = 82, .k = 5, .r = 3, .s = 1, .pad_top = 1,
                                    .pad_left = 1, .pad_bottom = 1, .pad_right = 1, .has_bias = 1});
}

/* Wider kernels are chunked too where the cores read the shared cache more slowly than the tile
 * uses a block's weights past L2 (Intel's rate, forced here as a test-only override of the CPU
 * figure, restored after): 3x3 layers with more than 768 KiB of weights a block on every ISA
 * (scalar blocks are 4 channels wide), edged and padded-copy tiles, stride 1 and 2. Chunked
 * (a sums buffer in the workspace, a run's later tiles asking for the next chunk's weights)
 * under the slow rate and not under Zen's, with the same bits
 * (the scalar tile, at ~7 GFLOP/s, never outruns a cache: not chunked there either); against
 * the reference, 1 and 2 threads, under the slow one. */
static void test_wide_kernel_chunks(void) {
    fconv_cpu_info *cpu = test_cpu_figures();
    const double saved = cpu->shared_read_bytes_per_s;
    const fconv_conv2d_desc layers[] = {
        {.n = 1, .c = 5500, .h = 7, .w = 7, .k = 5, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
         .pad_right = 1, .has_bias = 1, .activation = FCONV_ACTIVATION_RELU},
        {.n = 2, .c = 5500, .h = 12, .w = 12, .k = 3, .r = 3, .s = 3, .stride_h = 2, .stride_w = 2, .pad_top = 1,
         .pad_left = 1, .pad_bottom = 1, .pad_right = 1},
    };
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++)
        for (int l = 0; l < 2; l++) {
            fconv_conv2d_desc d = layers[i];
            d.layout = l ? FCONV_LAYOUT_NHWC : FCONV_LAYOUT_NCHW;
            float *x = random_array(d.n * d.c * d.h * d.w), *w = random_array(d.k * d.c * d.r * d.s);
            float *bias = random_array(d.k), *y[2] = {NULL, NULL};
            size_t bytes[2] = {0, 0};
            for (int slow = 0; slow < 2; slow++) {
                cpu->shared_read_bytes_per_s = slow ? FCONV_SHARED_READ_BYTES_PER_S_INTEL : FCONV_SHARED_READ_BYTES_PER_S_DEFAULT;
                fconv_plan *p;
                if (fconv_plan_conv2d(&d, &(fconv_options){.algo = FCONV_ALGO_IMPLICIT_GEMM, .threads = 2}, w,
                                      d.has_bias ? bias : NULL, &p) != FCONV_OK) {
                    CHECKF(0, "layer %zu: %s", i, fconv_last_error());
                    continue;
                }
                bytes[slow] = fconv_plan_workspace_size(p);
                y[slow] = malloc((size_t)fconv_plan_output_elements(p) * sizeof(float));
                CHECK(fconv_execute(p, x, NULL, NULL, y[slow]) == FCONV_OK);
                if (slow) {
                    const int vector_tile = fconv_plan_isa(p) >= FCONV_ISA_AVX2;
                    CHECKF((bytes[1] > bytes[0]) == vector_tile, "layer %zu layout %d, %s: %zu bytes, unchunked %zu", i,
                           l, vector_tile ? "no sums between chunks" : "chunked", bytes[1], bytes[0]);
                    CHECKF(y[0] && memcmp(y[0], y[1], (size_t)fconv_plan_output_elements(p) * sizeof(float)) == 0,
                           "layer %zu layout %d: chunked taps changed the sums", i, l);
                    check_layer_in(d);
                }
                fconv_plan_destroy(p);
            }
            free(x);
            free(w);
            free(bias);
            free(y[0]);
            free(y[1]);
        }
    cpu->shared_read_bytes_per_s = saved;
}

/* Where the tile outruns the shared cache (Intel's rate, forced as above), a worker's later
 * tiles of a block ask for the next block's weights even unchunked where the block has few
 * tiles: runs of whole tiles (1x1 on 7^2: 7 tiles a block, a partial last block), edged and
 * padded tiles (3x3/2, pad 1, two images), two groups. Against the reference, plan-time and
 * execute-time weights, 1 and 2 threads the same bits (the asking only names lines). */
static void test_next_weights_asked(void) {
    fconv_cpu_info *cpu = test_cpu_figures();
    const double saved = cpu->shared_read_bytes_per_s;
    cpu->shared_read_bytes_per_s = FCONV_SHARED_READ_BYTES_PER_S_INTEL;
    const fconv_conv2d_desc layers[] = {
        {.n = 1, .c = 300, .h = 7, .w = 7, .k = 200, .r = 1, .s = 1, .has_bias = 1},
        {.n = 2, .c = 40, .h = 15, .w = 15, .k = 70, .r = 3, .s = 3, .stride_h = 2, .stride_w = 2, .pad_top = 1,
         .pad_left = 1, .pad_bottom = 1, .pad_right = 1, .activation = FCONV_ACTIVATION_RELU},
        {.n = 1, .c = 64, .h = 9, .w = 9, .k = 160, .r = 3, .s = 3, .groups = 2, .pad_top = 1, .pad_left = 1,
         .pad_bottom = 1, .pad_right = 1, .has_bias = 1},
    };
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) check_layer(layers[i]);
    cpu->shared_read_bytes_per_s = saved;
}

static void test_workspace(void) {
    /* at Zen's shared-cache rate: below it (Intel's) the 9x9 layers' taps go in chunks, whose
     * sums add to the workspace (test_wide_kernel_chunks) */
    fconv_cpu_info *cpu = test_cpu_figures();
    const double saved = cpu->shared_read_bytes_per_s;
    cpu->shared_read_bytes_per_s = FCONV_SHARED_READ_BYTES_PER_S_DEFAULT;
    fconv_conv2d_desc stem = {.n = 2, .c = 3, .h = 224, .w = 224, .k = 64, .r = 7, .s = 7, .stride_h = 2,
                              .stride_w = 2, .pad_top = 3, .pad_left = 3, .pad_bottom = 3, .pad_right = 3};
    /* 111 * 2 + 7 = 229 rows and columns (a row's first two windows reach the padding: copied);
     * both images copied at once (8 MiB hold them) */
    size_t padded = (size_t)2 * 3 * 229 * 229 * 4;
    padded = (padded + 63) / 64 * 64;
    CHECK_EQ_INT(workspace(&stem, 1), padded + 63);
    CHECK_EQ_INT(workspace(&stem, 0), padded + (size_t)64 * 147 * 4 + 63);
    fconv_conv2d_desc inside = {.n = 1, .c = 16, .h = 20, .w = 20, .k = 64, .r = 3, .s = 3};
    CHECK_EQ_INT(workspace(&inside, 1), 0);
    /* padding past the kernel's extent: copied, 2 * 3 + 9 = 15 rows, 21 * 2 + 3 = 45 columns */
    fconv_conv2d_desc deep = {.n = 1, .c = 3, .h = 10, .w = 40, .k = 8, .r = 3, .s = 3, .stride_h = 2, .stride_w = 2,
                              .pad_top = 3, .pad_left = 3, .pad_bottom = 3, .pad_right = 3};
    CHECK_EQ_INT(workspace(&deep, 1), ((size_t)3 * 15 * 45 * 4 + 63) / 64 * 64 + 63);
    /* a 9x9 kernel, pad 4 (four windows of each row reach the padding): images of 4 MiB and
     * more, two, then one copy at a time */
    fconv_conv2d_desc big = {.n = 5, .c = 64, .h = 120, .w = 120, .k = 8, .r = 9, .s = 9, .pad_top = 4,
                             .pad_left = 4, .pad_bottom = 4, .pad_right = 4};
    CHECK_EQ_INT(workspace(&big, 1), (size_t)2 * 64 * 128 * 128 * 4 + 63);
    big.h = big.w = 248;
    CHECK_EQ_INT(workspace(&big, 1), (size_t)64 * 256 * 256 * 4 + 63);
    cpu->shared_read_bytes_per_s = saved;
}

/* 64 output channels fill whole channel blocks on every ISA, so a last tile with fewer pixels
 * than the tile holds takes a narrow tile (only its pixels' multiply-adds): every pixel count
 * up to 13 leaves every remainder of AVX-512's 7, AVX2's 6 and scalar's 4 pixels; then a
 * narrow last tile read in place from a streaming input (8384 pixels: 5 past whole 7-pixel
 * tiles, 2 past 6), and one whose taps go in chunks (64 x 5000 weights: 1.2 MiB a block). */
static void test_narrow_tiles(void) {
    for (int64_t pixels = 1; pixels <= 13; pixels++)
        check_layer((fconv_conv2d_desc){.n = 1, .c = 8, .h = 1, .w = pixels, .k = 64, .r = 1, .s = 1, .has_bias = 1,
                                        .activation = FCONV_ACTIVATION_RELU});
    check_layer((fconv_conv2d_desc){.n = 2, .c = 64, .h = 64, .w = 131, .k = 64, .r = 1, .s = 1, .has_bias = 1});
    check_layer((fconv_conv2d_desc){.n = 1, .c = 5000, .h = 1, .w = 5, .k = 64, .r = 1, .s = 1, .has_bias = 1});
}

/* y of layer d on 2 threads, weights at plan time; *workspace its bytes, *ny its floats. */
static float *run_layer(const fconv_conv2d_desc *d, const float *x, const float *w, size_t *workspace, size_t *ny) {
    fconv_plan *p;
    if (fconv_plan_conv2d(d, &(fconv_options){.algo = FCONV_ALGO_IMPLICIT_GEMM, .threads = 2}, w, NULL, &p) !=
        FCONV_OK) {
        CHECKF(0, "%s", fconv_last_error());
        return NULL;
    }
    *workspace = fconv_plan_workspace_size(p);
    *ny = (size_t)fconv_plan_output_elements(p);
    float *y = malloc(*ny * sizeof *y);
    CHECK(fconv_execute(p, x, NULL, NULL, y) == FCONV_OK);
    fconv_plan_destroy(p);
    return y;
}

/* Tiles as wide as the tile that holds every weight vector in registers (where 512-bit loads
 * issue one a cycle: AVX-512 6 pixels rather than 7) and edged rows that are not a whole
 * number of tiles (each row's tiles then as even as they go: Q = 28 as 6, 6, 6, 5, 5 or as
 * 7 x 4, Q = 14, 7, 37 and 2): every output the same bits with the CPU figure set either way,
 * against the reference, read in place where the channel blocks are whole (no workspace),
 * through the padded copy where they are not (70 channels, Q = 37) and where one window
 * reaches both sides' padding (Q = 1). */
static void test_row_tiles(void) {
    fconv_cpu_info *cpu = test_cpu_figures();
    const int saved = cpu->wide_loads_slow;
    const fconv_conv2d_desc layers[] = {
        {.n = 1, .c = 24, .h = 56, .w = 56, .k = 64, .r = 3, .s = 3, .stride_h = 2, .stride_w = 2, .pad_top = 1,
         .pad_left = 1, .pad_bottom = 1, .pad_right = 1},
        {.n = 2, .c = 16, .h = 28, .w = 28, .k = 128, .r = 3, .s = 3, .stride_h = 2, .stride_w = 2, .pad_top = 1,
         .pad_left = 1, .pad_bottom = 1, .pad_right = 1},
        {.n = 4, .c = 8, .h = 14, .w = 14, .k = 64, .r = 3, .s = 3, .stride_h = 2, .stride_w = 2, .pad_top = 1,
         .pad_left = 1, .pad_bottom = 1, .pad_right = 1},
        {.n = 1, .c = 5, .h = 20, .w = 37, .k = 64, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
         .pad_right = 1},
        {.n = 3, .c = 4, .h = 40, .w = 2, .k = 64, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
         .pad_right = 1},
        {.n = 2, .c = 4, .h = 50, .w = 1, .k = 64, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
         .pad_right = 1},
        {.n = 1, .c = 5, .h = 20, .w = 37, .k = 70, .r = 3, .s = 3, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
         .pad_right = 1},
    };
    const int in_place[] = {1, 1, 1, 1, 1, 0, 0};
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++)
        for (int l = 0; l < 2; l++) {
            fconv_conv2d_desc d = layers[i];
            d.layout = l ? FCONV_LAYOUT_NHWC : FCONV_LAYOUT_NCHW;
            float *x = random_array(d.n * d.c * d.h * d.w), *w = random_array(d.k * d.c * d.r * d.s), *y[2];
            size_t bytes[2], ny = 0;
            for (int slow = 0; slow < 2; slow++) {
                cpu->wide_loads_slow = slow;
                y[slow] = run_layer(&d, x, w, &bytes[slow], &ny);
                check_layer_in(d);
                CHECKF((bytes[slow] == 0) == in_place[i], "layer %zu layout %d slow %d: %zu bytes of workspace",
                       i, l, slow, bytes[slow]);
            }
            CHECKF(y[0] && y[1] && memcmp(y[0], y[1], ny * sizeof(float)) == 0,
                   "layer %zu layout %d: the tile widths' sums differ", i, l);
            free(x);
            free(w);
            free(y[0]);
            free(y[1]);
        }
    cpu->wide_loads_slow = saved;
}

/* An NHWC output past the last-level cache (FCONV_LLC_BYTES): 64-byte aligned, its whole
 * tiles leave through non-temporal stores; one float past a line, plain stores. Against the
 * reference, and the same bits either way on 1 and 2 threads (each worker fences its own
 * stores); a partial last tile (270400 pixels) and edged rows among them. */
static void test_nontemporal_output(void) {
    const fconv_conv2d_desc d = {.n = 1, .c = 1, .h = 520, .w = 520, .k = 32, .r = 3, .s = 3, .pad_top = 1,
                                 .pad_left = 1, .pad_bottom = 1, .pad_right = 1, .has_bias = 1,
                                 .activation = FCONV_ACTIVATION_RELU, .layout = FCONV_LAYOUT_NHWC};
    float *x = random_array(d.h * d.w), *w = random_array(d.k * 9), *bias = random_array(d.k);
    const size_t ny = (size_t)(d.k * d.h * d.w);
    CHECK(ny * sizeof(float) > FCONV_LLC_BYTES);
    float *ybuf = aligned_alloc(64, (ny + 16) * sizeof(float)), *y1 = malloc(ny * sizeof *y1);
    for (int threads = 1; threads <= 2; threads++) {
        fconv_plan *plan;
        CHECK(fconv_plan_conv2d(&d, &(fconv_options){.algo = FCONV_ALGO_IMPLICIT_GEMM, .threads = threads}, w, bias,
                                &plan) == FCONV_OK);
        for (size_t shift = 0; shift <= 1; shift++) {
            float *y = ybuf + shift;
            CHECK(fconv_execute(plan, x, NULL, NULL, y) == FCONV_OK);
            if (threads == 1 && shift == 0) {
                double norm = fconv_ref_normalized_error(plan, x, w, bias, y, 1, NULL);
                CHECKF(norm <= BOUND, "non-temporal NHWC output: normalized error %.3g", norm);
                memcpy(y1, y, ny * sizeof *y1);
            } else {
                CHECKF(memcmp(y1, y, ny * sizeof *y) == 0, "non-temporal NHWC output: %d threads, y %zu floats past a line differs",
                       threads, shift);
            }
        }
        fconv_plan_destroy(plan);
    }
    free(ybuf);
    free(y1);
    free(x);
    free(w);
    free(bias);
}

int main(void) {
    test_init();
    fconv_algo_info info;
    if (fconv_algo_get_info(FCONV_ALGO_IMPLICIT_GEMM, &info) != FCONV_OK) return TEST_SKIP_CODE;
    TEST(test_channel_blocks);
    TEST(test_pixels_and_windows);
    TEST(test_edged_padding);
    TEST(test_nan);
    TEST(test_tap_chunks);
    TEST(test_wide_kernel_chunks);
    TEST(test_next_weights_asked);
    TEST(test_narrow_tiles);
    TEST(test_row_tiles);
    TEST(test_workspace);
    TEST(test_nontemporal_output);
    return test_finish();
}
